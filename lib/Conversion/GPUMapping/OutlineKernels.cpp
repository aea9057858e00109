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
    // attributes (the data layout outlining gave them all), and a unique
    // name.
    OpBuilder builder(&getContext());
    auto merged = gpu::GPUModuleOp::create(builder, outlined.front().getLoc(),
                                           moduleName);
    for (NamedAttribute attr : outlined.front()->getAttrs())
      if (attr.getName() != SymbolTable::getSymbolAttrName())
        merged->setAttr(attr.getName(), attr.getValue());
    SymbolTable(module).insert(merged, Block::iterator(outlined.front()));

    // Each kernel takes its old module's name (unique at the top level; in
    // the merged module too, renamed if another symbol has it) and the
    // launches follow. What outlining cloned beside a kernel (the functions
    // and globals it uses) is the same in every module that uses it: one
    // copy is kept.
    SymbolTable mergedSymbols(merged);
    llvm::DenseMap<SymbolRefAttr, SymbolRefAttr> renamed;
    for (gpu::GPUModuleOp gpuModule : outlined) {
      StringAttr name = gpuModule.getSymNameAttr();
      for (Operation &op :
           llvm::make_early_inc_range(gpuModule.getBody()->getOperations())) {
        auto kernel = dyn_cast<gpu::GPUFuncOp>(op);
        if (kernel && kernel.isKernel()) {
          SymbolRefAttr from = SymbolRefAttr::get(
              name, FlatSymbolRefAttr::get(kernel.getNameAttr()));
          kernel.setName(name);
          kernel->remove();
          StringAttr final = mergedSymbols.insert(kernel);
          renamed[from] = SymbolRefAttr::get(merged.getSymNameAttr(),
                                             FlatSymbolRefAttr::get(final));
          continue;
        }
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (symbol) {
          if (Operation *existing =
                  mergedSymbols.lookup(symbol.getNameAttr())) {
            if (OperationEquivalence::isEquivalentTo(
                    existing, &op, OperationEquivalence::IgnoreLocations)) {
              op.erase();
              continue;
            }
            // Outlining clones a symbol from the one definition it has at
            // the top level, so copies cannot differ.
            op.emitError("hot-outline-kernels: two outlined modules define ")
                << symbol.getNameAttr() << " differently";
            return signalPassFailure();
          }
        }
        op.remove();
        merged.getBody()->push_back(&op);
        if (symbol)
          mergedSymbols.insert(&op);
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
