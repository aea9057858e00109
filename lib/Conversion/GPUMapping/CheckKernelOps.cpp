//===- CheckKernelOps.cpp - Kernel ops NVPTX cannot lower -----------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// The hot-check-kernel-ops pass: located errors for the kernel ops on which
// LLVM's NVPTX backend would abort (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/Chips.h"
#include "hot/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::hot {
#define GEN_PASS_DEF_CHECKKERNELOPSPASS
#include "hot/Conversion/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;

namespace {

/// Why NVPTX cannot lower `op` for `smVersion`, or "".
std::string checkOp(Operation *op, unsigned smVersion) {
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    Type element = getElementTypeOrSelf(type);
    if (isa<Float80Type, Float128Type>(element)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "'" << op->getName() << "' uses " << element
         << ", which NVPTX has no arithmetic for";
      return text;
    }
  }
  if (auto truncf = dyn_cast<arith::TruncFOp>(op);
      truncf && truncf.getRoundingmodeAttr() && smVersion < 90) {
    Type in = getElementTypeOrSelf(truncf.getIn().getType());
    Type out = getElementTypeOrSelf(truncf.getType());
    if (out.isBF16() || in.isF64())
      return ("'arith.truncf' with a rounding mode from " +
              llvm::Twine(in.getIntOrFloatBitWidth()) + "-bit float to " +
              (out.isBF16() ? "bf16" : "a narrower float") +
              " has no NVPTX lowering before sm_90 (drop the rounding "
              "mode: the default rounds to nearest even)")
          .str();
  }
  return "";
}

struct CheckKernelOpsPass
    : hot::impl::CheckKernelOpsPassBase<CheckKernelOpsPass> {
  using Base::Base;

  void runOnOperation() override {
    unsigned smVersion = hot::getSMVersion(chip);
    bool failed = false;
    // The first such op of each kernel: one error per kernel, not one per
    // load, store and add of an f80 loop body.
    auto checkBody = [&](Operation *kernel) {
      kernel->walk([&](Operation *op) {
        std::string why = checkOp(op, smVersion);
        if (why.empty())
          return WalkResult::advance();
        op->emitError() << "cannot run on the GPU (" << chip << "): " << why;
        failed = true;
        return WalkResult::interrupt();
      });
    };
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isa<gpu::LaunchOp, gpu::GPUModuleOp>(op))
        return WalkResult::advance();
      checkBody(op);
      return WalkResult::skip();
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
