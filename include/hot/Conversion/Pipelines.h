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

/// Options of `hot-training-pipeline`: those of hot-rewrite-backward-matmuls
/// (same names, same defaults), plus whether to compress saved activations.
struct HotTrainingPipelineOptions
    : public PassPipelineOptions<HotTrainingPipelineOptions> {
  PassOptions::Option<int64_t> gxBits{*this, "gx-bits",
                                      llvm::cl::desc("Grid bits on gx (0: none)"),
                                      llvm::cl::init(4)};
  PassOptions::Option<int64_t> gwBits{*this, "gw-bits",
                                      llvm::cl::desc("Grid bits on gw (0: none)"),
                                      llvm::cl::init(8)};
  PassOptions::Option<int64_t> gxBlock{
      *this, "gx-block", llvm::cl::desc("Largest Hadamard block along O"),
      llvm::cl::init(16)};
  PassOptions::Option<int64_t> hlaBlock{
      *this, "hla-block", llvm::cl::desc("HLA block along the tokens"),
      llvm::cl::init(16)};
  PassOptions::Option<int64_t> hlaRank{
      *this, "hla-rank", llvm::cl::desc("HLA rank (0: hla-block / 2)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> hlaSelection{
      *this, "hla-selection", llvm::cl::desc("prefix or triangle"),
      llvm::cl::init("prefix")};
  PassOptions::Option<bool> hlaBatch{
      *this, "hla-batch",
      llvm::cl::desc("HLA across a batch of independent samples"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> rounding{
      *this, "rounding", llvm::cl::desc("stochastic or nearest"),
      llvm::cl::init("stochastic")};
  PassOptions::Option<std::string> weightScale{
      *this, "weight-scale", llvm::cl::desc("sawb or maxabs"),
      llvm::cl::init("sawb")};
  PassOptions::Option<std::string> gxGranularity{
      *this, "gx-granularity", llvm::cl::desc("per_tensor or per_row"),
      llvm::cl::init("per_tensor")};
  PassOptions::Option<std::string> gwGranularity{
      *this, "gw-granularity", llvm::cl::desc("per_tensor or per_col"),
      llvm::cl::init("per_tensor")};
  PassOptions::Option<int64_t> seedArg{
      *this, "seed-arg",
      llvm::cl::desc("Index of the i64 seed argument (-1: hot.seed or new)"),
      llvm::cl::init(-1)};
  PassOptions::Option<bool> compressActivations{
      *this, "abc",
      llvm::cl::desc("Compress saved activations (hot-compress-activations)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> forward{
      *this, "forward",
      llvm::cl::desc("Split graphs: the forward function (for ABC)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> backward{
      *this, "backward",
      llvm::cl::desc("Split graphs: the backward function (for ABC)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> lqsDecisions{
      *this, "lqs-decisions",
      llvm::cl::desc("LQS decisions file to apply (hot-lqs-apply)"),
      llvm::cl::init("")};
  PassOptions::Option<bool> remarks{
      *this, "remarks", llvm::cl::desc("Emit remarks for every decision"),
      llvm::cl::init(true)};
};

/// Builds `hot-training-pipeline`: hot-annotate-backward-matmuls,
/// hot-rewrite-backward-matmuls, hot-compress-activations, then
/// canonicalize and CSE. Runs on a module.
void buildHotTrainingPipeline(OpPassManager &pm,
                              const HotTrainingPipelineOptions &options);

/// Builds `hot-lower-to-cpu`: hot ops to linalg, bufferization with identity
/// layouts at function boundaries, loops, and the LLVM dialect, ready for
/// mlir-translate --mlir-to-llvmir or mlir-runner.
void buildHotLowerToCPUPipeline(OpPassManager &pm,
                                const HotLowerToCPUOptions &options);

/// Registers `hot-training-pipeline` with the global registry.
void registerHotTrainingPipeline();

/// Registers every pipeline of the project with the global registry.
void registerHotPipelines();

} // namespace mlir::hot

#endif // HOT_CONVERSION_PIPELINES_H
