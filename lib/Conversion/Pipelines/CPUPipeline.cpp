//===- CPUPipeline.cpp - The hot-lower-to-cpu pipeline --------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Bufferize.h"
#include "hot/Conversion/Passes.h"
#include "hot/Conversion/Pipelines.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::hot::buildHotLowerToCPUPipeline(
    OpPassManager &pm, const HotLowerToCPUOptions &options) {
  addLinalgBufferizePasses(pm, options.resultsToOutParams);

  // Wrappers are requested before any pass declares library functions, so
  // that only the module's own functions get one.
  if (options.cInterface)
    pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // A function per loop nest: LLVM's loop passes cost minutes on one
  // function of a whole training step.
  if (options.outlineLoopNests)
    pm.addPass(hot::createOutlineLoopNestsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createSCFToControlFlowPass());
  // Math ops with an LLVM intrinsic first (round, floor, sqrt), libm calls
  // for the rest.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::hot::registerHotPipelines() {
  registerHotTrainingPipeline();
  registerHotLowerToNVVMPipeline();
  PassPipelineRegistration<HotLowerToCPUOptions>(
      "hot-lower-to-cpu",
      "Lower a module with hot ops to the LLVM dialect for CPU execution "
      "(hot ops to linalg, one-shot bufferization with identity layouts at "
      "function boundaries, results as out-params, loops, a function per "
      "loop nest, LLVM)",
      buildHotLowerToCPUPipeline);
}
