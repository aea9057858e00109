//===- OutlineKernels.cpp - Outline launches into one gpu.module ----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// The hot-outline-kernels pass: upstream's kernel outlining, then the
// kernels it made in one gpu.module instead of one module each (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/Passes.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::hot {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "hot/Conversion/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;

namespace {

struct OutlineKernelsPass
    : public hot::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  using OutlineKernelsPassBase::OutlineKernelsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::SmallPtrSet<Operation *, 4> before;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
      before.insert(gpuModule);

    OpPassManager outlining(ModuleOp::getOperationName());
    outlining.addPass(createGpuKernelOutliningPass());
    if (failed(runPipeline(outlining, module)))
      return signalPassFailure();

    SmallVector<gpu::GPUModuleOp> outlined;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
      if (!before.contains(gpuModule))
        outlined.push_back(gpuModule);
    if (outlined.empty())
      return;

    // The merged module takes the first outlined module's place and
    // attributes (the data layout outlining gave them all).
    OpBuilder builder(outlined.front());
    auto merged = gpu::GPUModuleOp::create(builder, outlined.front().getLoc(),
                                           moduleName);
    for (NamedAttribute attr : outlined.front()->getAttrs())
      if (attr.getName() != SymbolTable::getSymbolAttrName())
        merged->setAttr(attr.getName(), attr.getValue());
    SymbolTable(module).insert(merged);

    // Each kernel takes its old module's name; the launches follow.
    llvm::DenseMap<SymbolRefAttr, SymbolRefAttr> renamed;
    for (gpu::GPUModuleOp gpuModule : outlined) {
      StringAttr name = gpuModule.getSymNameAttr();
      for (auto kernel : llvm::make_early_inc_range(
               gpuModule.getBody()->getOps<gpu::GPUFuncOp>())) {
        renamed[SymbolRefAttr::get(
            name, FlatSymbolRefAttr::get(kernel.getNameAttr()))] =
            SymbolRefAttr::get(merged.getSymNameAttr(),
                               FlatSymbolRefAttr::get(name));
        kernel.setName(name);
        kernel->remove();
        merged.getBody()->push_back(kernel);
      }
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (SymbolRefAttr to = renamed.lookup(launch.getKernel()))
        launch.setKernelAttr(to);
    });
    for (gpu::GPUModuleOp gpuModule : outlined)
      gpuModule.erase();
  }
};

} // namespace
