//===- Bufferize.cpp - The pipelines' common start ------------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Bufferize.h"
#include "hot/Conversion/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::hot::addLinalgBufferizePasses(OpPassManager &pm,
                                         bool resultsToOutParams) {
  pm.addNestedPass<func::FuncOp>(createConvertHotToLinalgPass());
  // Elementwise arith/math on whole tensors (casts, adds) becomes linalg too,
  // so that everything bufferizes.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // Loops with tensor iter_args (a while loop of StableHLO, a scan) yield
  // new buffers; the ownership-based deallocation below frees them.
  bufferize.allowReturnAllocsFromLoops = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  if (resultsToOutParams) {
    bufferization::BufferResultsToOutParamsPassOptions outParams;
    // hoist-static-allocs would save a copy per result, but MLIR 22 crashes
    // on a function that returns the same buffer twice (AOTAutograd forwards
    // return a saved tensor and its alias as one value).
    outParams.hoistStaticAllocs = false;
    outParams.modifyPublicFunctions = true;
    pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  }
  bufferization::buildBufferDeallocationPipeline(pm);
}
