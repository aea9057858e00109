//===- Pipelines.h - Registered pass pipelines of hot -----------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_CONVERSION_PIPELINES_H
#define HOT_CONVERSION_PIPELINES_H

#include "hot/Dialect/Hot/HotAttrs.h"
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
  PassOptions::Option<bool> outlineLoopNests{
      *this, "outline-loop-nests",
      llvm::cl::desc("Give each top-level loop nest a function of its own, "
                     "never inlined (hot-outline-loop-nests): LLVM compiles "
                     "a training step in seconds rather than minutes"),
      llvm::cl::init(true)};
};

/// Options of the `hot-lower-to-nvvm` pipeline: those of convert-hot-to-gpu
/// (same names, same defaults, handed on; the lit test
/// Pipelines/forwarded-options.mlir checks each), then the pipeline's own.
struct HotLowerToNVVMOptions : public PassPipelineOptions<HotLowerToNVVMOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target chip: sm_80, sm_86, sm_89, sm_90, sm_90a, ..."),
      llvm::cl::init("sm_80")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (empty: the chip's PTX ISA, e.g. +ptx70 "
                     "for sm_80, +ptx78 for sm_89 and sm_90)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: isa (PTX, no CUDA "
                     "needed), bin or fatbin (need ptxas)"),
      llvm::cl::init("isa")};
  PassOptions::Option<int64_t> optLevel{
      *this, "opt-level", llvm::cl::desc("NVPTX optimization level"),
      llvm::cl::init(3)};
  PassOptions::Option<int64_t> tileM{
      *this, "tile-m",
      llvm::cl::desc("Kernel tile rows (0: automatic, see convert-hot-to-gpu)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> tileN{
      *this, "tile-n",
      llvm::cl::desc("Kernel tile columns (0: automatic)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> smCount{
      *this, "sm-count",
      llvm::cl::desc("SMs that automatic tiles and split K, and the grids "
                     "of the lowrank quantize kernels, aim to fill (0: by "
                     "chip)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> splitK{
      *this, "split-k",
      llvm::cl::desc("Thread blocks along K per output tile (0: chosen for "
                     "the chip's SMs; 1: never split)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> tileK{
      *this, "tile-k",
      llvm::cl::desc("Kernel tile K, in bytes (0: 64 for mma.sync, 128 for "
                     "wgmma)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> warpM{*this, "warp-m",
                                     llvm::cl::desc("Warp tile rows"),
                                     llvm::cl::init(64)};
  PassOptions::Option<int64_t> warpN{*this, "warp-n",
                                     llvm::cl::desc("Warp tile columns"),
                                     llvm::cl::init(32)};
  PassOptions::Option<int64_t> stages{
      *this, "stages",
      llvm::cl::desc("cp.async pipeline stages (0: 3 for mma.sync, 4 for "
                     "wgmma)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> int4{
      *this, "int4",
      llvm::cl::desc("s4 MMA for 4-bit operands on chips with INT4 cores"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> wgmma{
      *this, "wgmma",
      llvm::cl::desc("wgmma.mma_async kernels where the chip has them "
                     "(sm_90a)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> hadamardQuantize{
      *this, "hadamard-quantize",
      llvm::cl::desc("Fused hadamard + quantize kernels (else the generic "
                     "linalg mapping)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> lowRank{
      *this, "lowrank",
      llvm::cl::desc("lowrank kernels (else the generic linalg mapping)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> shareStatistics{
      *this, "share-statistics",
      llvm::cl::desc("lowrank kernels compute the maxima of the per-tensor "
                     "quantizes that share their data (and quantize both "
                     "when nothing else reads the projection)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseColumnHadamard{
      *this, "fuse-column-hadamard",
      llvm::cl::desc("The quantize kernels compute a hadamard along dim 0 "
                     "as they load the rows (else a block-transform kernel "
                     "writes it first)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> quantizeChannelsPerThread{
      *this, "quantize-channels-per-thread",
      llvm::cl::desc("Channels per thread of the lowrank quantize kernels "
                     "(1, 2 or 4; 0: the default)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> rowValuesInRegisters{
      *this, "row-values-in-registers",
      llvm::cl::desc("Most values per lane of a row that a per_row "
                     "hadamard + quantize kernel keeps in registers (the row "
                     "read once; 0: always transformed twice)"),
      llvm::cl::init(96)};
  PassOptions::Option<bool> fuseTransposes{
      *this, "fuse-transposes",
      llvm::cl::desc("The quantize kernel of a lowrank's result writes a "
                     "product's K-major operand K-contiguous (no transpose "
                     "kernel)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> cInterface{
      *this, "c-interface",
      llvm::cl::desc("Emit _mlir_ciface_ wrappers (memref descriptors passed "
                     "by pointer) for every function"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> resultsToOutParams{
      *this, "results-to-out-params",
      llvm::cl::desc("Turn tensor results into caller-allocated trailing "
                     "memref arguments (device-accessible, written by a copy "
                     "kernel)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> simulator{
      *this, "simulator",
      llvm::cl::desc("Also compile every gpu.module for the SIMT simulator "
                     "(#hot.simulator, first target, so the one embedded): "
                     "the program then runs on libhot_simulator_runtime.so"),
      llvm::cl::init(false)};
};

/// Options of `hot-training-pipeline`: those of hot-rewrite-backward-matmuls
/// (same names, same defaults, handed on; Pipelines/forwarded-options.mlir
/// checks each), plus whether to compress saved activations.
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
  PassOptions::Option<Selection> hlaSelection{
      *this, "hla-selection", llvm::cl::desc("Walsh components HLA keeps"),
      llvm::cl::init(Selection::Prefix),
      llvm::cl::values(clEnumValN(Selection::Prefix, "prefix", "1-D"),
                       clEnumValN(Selection::Triangle, "triangle", "2-D"))};
  PassOptions::Option<bool> hlaBatch{
      *this, "hla-batch",
      llvm::cl::desc("HLA across a batch of independent samples"),
      llvm::cl::init(false)};
  PassOptions::Option<Rounding> rounding{
      *this, "rounding", llvm::cl::desc("Rounding of the output gradients"),
      llvm::cl::init(Rounding::Stochastic),
      llvm::cl::values(
          clEnumValN(Rounding::Stochastic, "stochastic", "from the seed"),
          clEnumValN(Rounding::Nearest, "nearest", "half away from zero"))};
  PassOptions::Option<ScaleMode> weightScale{
      *this, "weight-scale", llvm::cl::desc("Scale of W on the gx path"),
      llvm::cl::init(ScaleMode::Sawb),
      llvm::cl::values(clEnumValN(ScaleMode::Sawb, "sawb", "SAWB"),
                       clEnumValN(ScaleMode::MaxAbs, "maxabs", "max |W|"))};
  PassOptions::Option<Granularity> gxGranularity{
      *this, "gx-granularity", llvm::cl::desc("Scales of gy on the gx path"),
      llvm::cl::init(Granularity::PerTensor),
      llvm::cl::values(
          clEnumValN(Granularity::PerTensor, "per_tensor", "one scale"),
          clEnumValN(Granularity::PerRow, "per_row", "one per token"))};
  PassOptions::Option<Granularity> gwGranularity{
      *this, "gw-granularity", llvm::cl::desc("Scales of gy on the gw path"),
      llvm::cl::init(Granularity::PerTensor),
      llvm::cl::values(
          clEnumValN(Granularity::PerTensor, "per_tensor", "one scale"),
          clEnumValN(Granularity::PerCol, "per_col", "one per channel"))};
  PassOptions::Option<int64_t> seedArg{
      *this, "seed-arg",
      llvm::cl::desc("Index of the i64 seed argument (-1: hot.seed or new)"),
      llvm::cl::init(-1)};
  PassOptions::Option<bool> frozenGx{
      *this, "frozen-gx",
      llvm::cl::desc("Rewrite the gx of frozen layers (no gw) too"),
      llvm::cl::init(true)};
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

/// Builds `hot-lower-to-nvvm`: hot.int_matmul (+ hot.rescale) to tensor-core
/// kernels (convert-hot-to-gpu), every other hot op through linalg,
/// bufferization and upstream's parallel-loop mapping to GPU kernels, then
/// NVVM, host code with gpu-to-llvm and the kernels serialized to PTX or a
/// binary.
void buildHotLowerToNVVMPipeline(OpPassManager &pm,
                                 const HotLowerToNVVMOptions &options);

/// The PTX feature string of `chip` (+ptx70 for sm_80, ...): the first PTX
/// ISA version that LLVM's NVPTX backend accepts for it. Empty for a chip
/// the pipeline does not know.
std::string getDefaultPTXFeatures(StringRef chip);

/// Checks the options of `hot-lower-to-nvvm` that the passes would otherwise
/// accept and LLVM's NVPTX backend abort on, or ignore: the chip (one the
/// kernels support and LLVM knows), a PTX version in `features` too old for
/// it, and the format. Reports through `error`.
LogicalResult
verifyHotLowerToNVVMOptions(const HotLowerToNVVMOptions &options,
                            function_ref<LogicalResult(const Twine &)> error);

/// Registers `hot-training-pipeline` with the global registry.
void registerHotTrainingPipeline();

/// Registers `hot-lower-to-nvvm` with the global registry.
void registerHotLowerToNVVMPipeline();

/// Registers every pipeline of the project with the global registry.
void registerHotPipelines();

} // namespace mlir::hot

#endif // HOT_CONVERSION_PIPELINES_H
