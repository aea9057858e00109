//===- Pipelines.h - Registered pass pipelines of hot -----------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_CONVERSION_PIPELINES_H
#define HOT_CONVERSION_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::hot {

/// Options of the `hot-lower-to-cpu` pipeline.
struct HotLowerToCPUOptions : public PassPipelineOptions<HotLowerToCPUOptions> {
  PassOptions::Option<bool> cInterface{
      *this, "c-interface",
      llvm::cl::desc("Emit _mlir_ciface_ wrappers (memref descriptors passed "
                     "by pointer) for every function"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> resultsToOutParams{
      *this, "results-to-out-params",
      llvm::cl::desc("Turn tensor results into caller-allocated trailing "
                     "memref arguments"),
      llvm::cl::init(true)};
};

/// Builds `hot-lower-to-cpu`: hot ops to linalg, bufferization with identity
/// layouts at function boundaries, loops, and the LLVM dialect, ready for
/// mlir-translate --mlir-to-llvmir or mlir-runner.
void buildHotLowerToCPUPipeline(OpPassManager &pm,
                                const HotLowerToCPUOptions &options);

/// Registers every pipeline of the project with the global registry.
void registerHotPipelines();

} // namespace mlir::hot

#endif // HOT_CONVERSION_PIPELINES_H
