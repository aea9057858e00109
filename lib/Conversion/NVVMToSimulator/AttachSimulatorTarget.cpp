//===- AttachSimulatorTarget.cpp - #hot.simulator first on gpu.modules ----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/Passes.h"
#include "hot/Dialect/Hot/HotAttrs.h"
#include "hot/Dialect/Hot/HotDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::hot {
#define GEN_PASS_DEF_ATTACHSIMULATORTARGETPASS
#include "hot/Conversion/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;

namespace {

struct AttachSimulatorTargetPass
    : public hot::impl::AttachSimulatorTargetPassBase<
          AttachSimulatorTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Attribute simulator = hot::SimulatorTargetAttr::get(ctx, optLevel, chip);
    for (auto module : getOperation().getOps<gpu::GPUModuleOp>()) {
      SmallVector<Attribute> targets = {simulator};
      if (ArrayAttr existing = module.getTargetsAttr())
        for (Attribute target : existing)
          if (target != simulator)
            targets.push_back(target);
      module.setTargetsAttr(ArrayAttr::get(ctx, targets));
    }
  }
};

} // namespace
