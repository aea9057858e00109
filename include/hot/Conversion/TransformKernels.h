//===- TransformKernels.h - Hadamard/quantize and HLA GPU kernels -*- C++
//-*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// GPU kernels for the transforms of the two backward paths: the gx path's
// `hot.quantize(hot.hadamard(gy))` fused into warp-shuffle kernels, and the
// gw path's `hot.lowrank` along tokens. Both compute exactly the operations
// of docs/numerics.md in its order, so their results equal the CPU path's
// bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_CONVERSION_TRANSFORMKERNELS_H
#define HOT_CONVERSION_TRANSFORMKERNELS_H

#include "hot/Conversion/HotToGPU.h"
#include "hot/Dialect/Hot/HotOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::hot {

/// Which kernel of the hadamard + quantize family to build. A per-row
/// quantization is one kernel (`Row`); a per-tensor maxabs one is two:
/// `AbsMax` (one partial max|y| per warp) and `Tensor` (reduces the partials,
/// then quantizes like `Row` with the one scale). A per-tensor sawb one is
/// three: `AbsMax` (also each row's sums), `Scale` (one warp: the partials'
/// max and the row sums, in 32 partials and a tree, to the scale) and
/// `Tensor` (reads that
/// scale and quantizes).
enum class HadamardQuantizeStage { Row, AbsMax, Scale, Tensor };

/// A `[m, n]` f32 input transformed along its rows (the contiguous dim) in
/// blocks of `block` (1: no transform) and quantized with `maxabs` (or, with
/// `sawb`, SAWB) scales to `qmax`. Each warp handles whole rows; each lane `vectorWidth` consecutive
/// elements of every `32 * vectorWidth`-element chunk of a row, so butterfly
/// stages below `log2(vectorWidth)` stay in registers and the others are
/// `gpu.shuffle xor` across lanes.
struct HadamardQuantizeKernelSpec {
  HadamardQuantizeStage stage = HadamardQuantizeStage::Row;
  int64_t m = 0, n = 0, block = 1, qmax = 127;
  /// `Row` only: a block Hadamard along the rows (dim 0) of this block,
  /// computed as the rows are loaded (1: none): for row r, each lane loads
  /// its elements of the block's `columnBlock` rows and keeps the
  /// butterfly's output r (the stages of docs/numerics.md that lead to it,
  /// in registers). Per tensor, ColumnQuantizeKernelSpec's kernels do it.
  int64_t columnBlock = 1;
  bool stochastic = false;
  /// SAWB scales: each row's f64 sums of |y| and y^2 in docs/numerics.md's
  /// 128 interleaved partials (4 per lane, in registers) and a tree (xor
  /// shuffles and register adds); per tensor, `AbsMax` also stores them per
  /// row and `Scale` combines them (32 interleaved partials, then a tree).
  bool sawb = false;
  /// 4, 2 or 1: the widest that divides n.
  int64_t vectorWidth = 1;
  /// `Row` and `Tensor`: each lane loads its values of the whole row once and
  /// keeps them, transformed, in registers from the statistics to the quantize
  /// (the row is read once; `Tensor` issues the row's loads before it reduces
  /// the partials). Without it the row is transformed twice, which fits any
  /// row length. `AbsMax` (maxabs, no columnBlock): each step of a warp's
  /// grid stride loads all of `rowsPerStep` rows before it transforms any,
  /// so that every load of the step is in flight at once.
  bool rowInRegisters = false;
  /// `AbsMax` with rowInRegisters: consecutive rows per step of a warp (a
  /// power of two dividing m).
  int64_t rowsPerStep = 1;
  /// Warps (rows in flight) per thread block.
  int64_t warpsPerBlock = 8;
  /// Partial maxima read by `Tensor` and `Scale`. `AbsMax` stores one per
  /// warp: its grid is `numPartials / warpsPerBlock` blocks.
  int64_t numPartials = 8;
  /// The element type of x: f32 (null) or bf16/f16, which the kernel
  /// extends to f32 as it loads (exact: the same values as an arith.extf).
  Type inputElementType;

  /// Values of a row each lane holds: its vectorWidth values of each of the
  /// row's chunks of 32 * vectorWidth elements.
  int64_t getLaneValues() const;
  std::string getKernelName() const;
};

/// Builds (or finds) the kernel of `spec` in `module`. Arguments: `Row`:
/// x memref<m x n x f32> (or the input element type), q memref<m x n x i8>, scale memref<m x f32>
/// [, seed i64]; `AbsMax`: x, partials memref<P x f32> [, row sums
/// memref<2 x m x f64> with sawb]; `Scale`: partials, row sums, scale
/// memref<f32>; `Tensor`: x, partials (maxabs only), q, scale memref<f32>
/// [, seed i64]. `Scale` is one warp; the others use `warpsPerBlock`.
gpu::GPUFuncOp
buildHadamardQuantizeKernel(OpBuilder &builder, Location loc,
                            gpu::GPUModuleOp module,
                            const HadamardQuantizeKernelSpec &spec);

/// Which kernel of the column-block family to build: `Statistics` (max|y|
/// partials and, with sawb, each row's f64 sums) or `Quantize` (reduces them
/// to the scale, then quantizes).
enum class ColumnQuantizeStage { Statistics, Quantize };

/// Threads of a column-block kernel's thread block: one per partial of a
/// row's SAWB sums (docs/numerics.md).
inline constexpr int64_t kColumnQuantizeThreads = 128;

/// A per-tensor quantize of an `[m, n]` input transformed along dim 0 in
/// blocks of `block` rows (W's hadamard on the gx path), in two kernels of
/// m / block thread blocks of kColumnQuantizeThreads threads. A thread block
/// owns one block of rows; thread t owns columns t, t + 128, ..., loads the
/// block's values of each and runs the whole butterfly in registers, so
/// every value of the input is read once per kernel and no lane waits on
/// another. Column t of every row is SAWB's partial t (docs/numerics.md), so
/// each thread adds its rows' partial sums in order in registers; the tree
/// over the 128 partials goes through shared memory. The Quantize kernel's
/// first warp reduces the Statistics kernel's partials to the scale while
/// the block's first loads are in flight; it can store q as a product's
/// K-contiguous operand (a block's values of a column are consecutive
/// bytes), replacing a transpose.
struct ColumnQuantizeKernelSpec {
  ColumnQuantizeStage stage = ColumnQuantizeStage::Statistics;
  int64_t m = 0, n = 0, block = 16, qmax = 7;
  bool stochastic = false, sawb = false;
  /// Columns per thread whose loads are issued together.
  int64_t columnsAhead = 1;
  /// Quantize: 0 stores q as memref<m x n x i8>; otherwise as the K-major
  /// operand memref<n x kBytes x i8> of a product (row c holds column c's m
  /// values, two per byte with `packS4`, the even row in the low nibble;
  /// kBytes is exactly their size).
  int64_t kBytes = 0;
  bool packS4 = false;
  /// The element type of the input: f32 (null) or bf16/f16.
  Type inputElementType;

  int64_t numBlocks() const { return m / block; }
  /// The max|y| partials: one per warp of the Statistics kernel.
  int64_t numPartials() const {
    return numBlocks() * (kColumnQuantizeThreads / 32);
  }
  /// Columns per thread.
  int64_t numColumnSteps() const {
    return (n + kColumnQuantizeThreads - 1) / kColumnQuantizeThreads;
  }
  std::string getKernelName() const;
};

/// Builds (or finds) the kernel of `spec` in `module`. Arguments: x
/// memref<m x n x f32> (or the input element type), the partials
/// memref<numPartials() x f32>, with sawb the row sums memref<2 x m x f64>;
/// then, for Quantize, q (see kBytes) and the scale memref<f32> [, the seed
/// i64]. Launch it on numBlocks() blocks of kColumnQuantizeThreads threads.
gpu::GPUFuncOp buildColumnQuantizeKernel(OpBuilder &builder, Location loc,
                                         gpu::GPUModuleOp module,
                                         const ColumnQuantizeKernelSpec &spec);

/// What a lowrank kernel does (see LowRankKernelSpec).
enum class LowRankStage {
  /// Stores the projection y, and the statistics it is asked for.
  Project,
  /// Only the statistics: y is computed, not stored.
  Statistics,
  /// Reduces a Statistics kernel's per-channel partials of y to y's
  /// per-channel scales (one thread per `vectorWidth` channels).
  Scales,
  /// Quantizes hadamard(x) (with inputMaxBlock > 0) and y: per-tensor
  /// scales from a Statistics kernel's partials, per-channel ones from a
  /// Scales kernel. y itself is not stored.
  Quantize,
};

/// The maximum of |y| a lowrank kernel computes (Project, Statistics), or
/// the granularity of y's scales (Quantize).
enum class OutputMax {
  None,
  /// One over all of y: per_tensor.
  Tensor,
  /// One per channel (a column of the [outer * n', inner] view): per_col.
  Column,
};

/// How the Quantize stage rounds one of its results.
struct LowRankQuantization {
  int64_t qmax = 127;
  bool stochastic = false;
};

/// A `[outer, n, inner]` f32 input projected along its middle dim (the
/// tokens of a sample; inner = channels): a `hot.lowrank`, a `hot.hadamard`
/// (all `block` rows kept in order, no tail), or (block 1) the input itself.
/// Each thread owns `vectorWidth` consecutive channels of `itemBlocks`
/// blocks of `block` tokens at a time (an item), runs the butterfly along
/// the tokens in registers, scales and stores the `rows.size()` kept
/// coefficients; the `n mod block` tail tokens are copied. Thread blocks
/// loop over the (sample, item) pairs with a stride of `gridY`.
///
/// The kernel can also compute the statistics of maxabs quantizations of
/// the same data, which then need no pass of their own: with
/// `inputMaxBlock` = h > 0, max|hadamard(x as [outer * n, inner], along 1,
/// block h)| (h = 1: max|x|; the butterfly runs across the channels of
/// neighbouring lanes), one partial per thread block (`numPartials()`);
/// with `outputMax`, max|y| (Tensor: one partial per thread block; Column:
/// a row of per-channel partials per block row, [gridY][inner]). When the
/// quantizations are all that reads y, a Statistics kernel and a Quantize
/// kernel replace the projection and the quantize kernels: y never reaches
/// memory.
struct LowRankKernelSpec {
  LowRankStage stage = LowRankStage::Project;
  int64_t outer = 1, n = 0, inner = 1, block = 16;
  SmallVector<int64_t> rows;
  /// Consecutive channels per thread (4, 2 or 1; divides `inner`): vector
  /// loads and stores.
  int64_t vectorWidth = 1;
  /// Threads per block, along `inner` (a multiple of 32).
  int64_t threads = 256;
  /// Thread blocks along y.
  int64_t gridY = 1;
  /// Statistics (see above); 0 / None: none. The Quantize stage reads them
  /// as what it quantizes: hadamard(x) with this block, and y per tensor or
  /// per channel.
  int64_t inputMaxBlock = 0;
  OutputMax outputMax = OutputMax::None;
  /// Quantize and Scales stages: the Statistics kernel's grid (its gridX is
  /// not this kernel's where their vector widths differ), and the rounding
  /// of hadamard(x) and of y.
  int64_t statisticsGridX = 0, statisticsGridY = 0;
  LowRankQuantization inputQuantization, outputQuantization;
  /// Quantize stage: with outputKBytes > 0, y's q is stored for a product
  /// that reads it K-contiguous: as [inner][outputKBytes], row c holding the
  /// outer x n' values of channel c in `outputKOrder` (whose sizes are this
  /// projection's), zeros after them.
  int64_t outputKBytes = 0;
  OperandKOrder outputKOrder;

  /// Token blocks per item (more than one for small blocks: independent
  /// loads in flight).
  int64_t itemBlocks = 1;
  /// Thread blocks per SM that ptxas is asked to fit (nvvm.minctasm; 0:
  /// none), which caps the kernel's registers.
  int64_t minBlocksPerSM = 0;
  /// The element type of x: f32 (null) or bf16/f16, extended to f32 as it
  /// is loaded (exact). Everything the kernel computes and stores is f32.
  Type inputElementType;

  int64_t numBlocks() const { return n / block; }
  int64_t tail() const { return n % block; }
  int64_t projectedSize() const {
    return numBlocks() * int64_t(rows.size()) + tail();
  }
  /// Items of a sample with `itemBlocks` full blocks.
  int64_t fullItems() const { return numBlocks() / itemBlocks; }
  /// Items of a sample: the full ones, and one for the remaining blocks and
  /// the tail tokens.
  int64_t blockRows() const {
    return fullItems() +
           (fullItems() * itemBlocks != numBlocks() || tail() ? 1 : 0);
  }
  int64_t numItems() const { return outer * blockRows(); }
  /// Thread blocks along x (along the channels).
  int64_t gridX() const;
  bool hasStatistics() const {
    return (stage == LowRankStage::Project ||
            stage == LowRankStage::Statistics) &&
           (inputMaxBlock > 0 || outputMax != OutputMax::None);
  }
  /// Per-tensor partials of a Project or Statistics kernel.
  int64_t numPartials() const { return gridX() * gridY; }
  /// The per-tensor partials this kernel writes (Project, Statistics) or
  /// reads (Quantize, Scales).
  int64_t tensorPartials() const {
    return stage == LowRankStage::Quantize || stage == LowRankStage::Scales
               ? statisticsGridX * statisticsGridY
               : numPartials();
  }
  /// The K order of this projection's rows as a product's operand.
  OperandKOrder getKOrder(bool tailsLast) const {
    return {outer, projectedSize(), numBlocks() * int64_t(rows.size()),
            tailsLast};
  }
  std::string getKernelName() const;
};

/// Builds (or finds) the kernel of `spec` in `module`. Arguments: x
/// memref<outer x n x inner x f32> (or the input element type); Project: y memref<outer x n' x inner x
/// f32>; Project and Statistics: the partials of the input's statistic
/// (memref<numPartials() x f32>) and of the output's (the same, or
/// memref<gridY x inner x f32> per channel); Scales: the per-channel
/// partials (memref<statisticsGridY x inner x f32>) and the scales
/// memref<inner x f32> (no x); Quantize: [the input's partials, its q
/// memref<outer x n x inner x i8> and scale memref<f32>,] per tensor the
/// output's partials, its q memref<outer x n' x inner x i8> and scales
/// (memref<f32> written, or memref<inner x f32> read), then the seed (i64)
/// of each stochastic rounding. Launch it on a grid of gridX() x gridY
/// blocks of `threads` threads.
gpu::GPUFuncOp buildLowRankKernel(OpBuilder &builder, Location loc,
                                  gpu::GPUModuleOp module,
                                  const LowRankKernelSpec &spec);

/// Options of the transform kernels.
struct TransformsToGPUOptions {
  /// The gpu.module that receives the kernels.
  std::string gpuModuleName = "hot_kernels";
  /// Largest Hadamard block handled by the fused kernel (per vector width:
  /// block / vectorWidth lanes must fit a warp).
  int64_t maxHadamardBlock = 128;
  /// Largest HLA block (the whole block lives in one thread's registers).
  int64_t maxLowRankBlock = 32;
  /// Most values per lane of a row that the per-row hadamard + quantize
  /// kernel keeps in registers from its statistics to its quantize (the row
  /// is read once; longer rows are transformed twice).
  int64_t maxRowValuesInRegisters = 96;
  /// Whether lowrank kernels compute the statistics of the quantizes that
  /// share their data (lowerTransformsToGPU).
  bool shareStatistics = true;
  /// Whether a Quantize kernel writes a product's K-major operand
  /// K-contiguous itself, replacing its transpose (see OperandTransposes).
  bool writeOperandsKMajor = true;
  /// Whether the per-row and per-tensor quantize kernels compute a
  /// hadamard along dim 0 (W's on the gx path) as they load the rows, rather
  /// than leaving it to a block-transform kernel of its own.
  bool fuseColumnHadamard = true;
  /// Channels per thread of the lowrank Quantize kernels: 1, 2 or 4 (it
  /// must divide the channels), or 0 for the default (1 with per-tensor
  /// scales, the vector width with per-channel ones).
  int64_t quantizeChannelsPerThread = 0;
  /// The target chip (sm_XX), for occupancy hints that depend on it.
  std::string chip = "sm_80";
  /// The SMs that grids of blocks looping over items aim to fill (0: a
  /// typical part of the chip, see getSMCount).
  int64_t smCount = 0;
};

/// Partial maxima of |values| that a kernel computes for the per-tensor
/// maxabs quantize of the same values: `partials` is a memref<count x f32>.
struct PartialMaxima {
  Value partials;
  int64_t count = 0;
  /// The kernel that stores them (for remarks).
  std::string producer;
};

/// The Hadamard transform that the quantize kernel of `op` computes itself:
/// its input's `hot.hadamard` along dim 1 whose block fits a warp, or with
/// `columns` one along dim 0 whose block fits a thread's registers
/// (`columnBlock`). `source` is what the kernel reads (the hadamard's input,
/// or `op`'s input with both blocks 1); `notFused` says why an input
/// hadamard is left separate.
struct QuantizeSource {
  Value source;
  int64_t block = 1;
  int64_t columnBlock = 1;
  HadamardOp hadamard;
  std::string notFused;
};
QuantizeSource getQuantizeSource(QuantizeOp op,
                                 const TransformsToGPUOptions &options,
                                 bool columns = false);

/// Replaces `op` (a maxabs or sawb, `per_row` or `per_tensor` quantization,
/// of a `hot.hadamard` along dim 1 or of any rank-2 f32 tensor) by launches
/// of the fused kernels on its (pre-transform) input. With `absMax` (a
/// per-tensor maxabs quantization only), the max|y| partials come from
/// another kernel and only the quantize kernel is launched. Fails with a
/// remark naming the reason for every other form, which the generic path
/// lowers.
LogicalResult
lowerHadamardQuantizeToGPU(RewriterBase &rewriter, QuantizeOp op,
                           const TransformsToGPUOptions &options,
                           const PartialMaxima *absMax = nullptr,
                           OperandTransposes *transposes = nullptr);

/// Statistics a lowrank kernel computes besides its projection (see
/// LowRankKernelSpec): the block of the Hadamard along the input's channels
/// whose max|.| to compute (1: the input itself; 0: none), and whether to
/// compute max|y|. The lowering sets `input` and `output`.
struct LowRankStatistics {
  int64_t inputMaxBlock = 0;
  bool outputMax = false;
  PartialMaxima input, output;
};

/// Replaces `op` (f32, static shape, block <= maxLowRankBlock) by a launch of
/// the kernel of buildLowRankKernel, computing `statistics` too when given.
/// Fails with a remark otherwise.
LogicalResult lowerLowRankToGPU(RewriterBase &rewriter, LowRankOp op,
                                const TransformsToGPUOptions &options,
                                LowRankStatistics *statistics = nullptr);

/// Replaces `op`, `input` (null, or a per-tensor maxabs quantize of the same
/// data with rows of op's channels, through a hadamard along them that fits
/// a warp) and `output` (the per-tensor or per_col maxabs quantize of op's
/// result, its only reader through reshapes; per_col with columns = op's
/// channels) by kernels inserted before `anchor`: Statistics, (per_col)
/// Scales and Quantize LowRankKernelSpecs. Every value they read must
/// dominate `anchor`, and `anchor` must dominate the quantizes. Fails,
/// changing nothing, where the lowrank cannot become a kernel. When the
/// output's q is read only by one of `transposes` (and
/// options.writeOperandsKMajor), the Quantize kernel writes that transpose's
/// result itself, and the transpose is erased and taken out of the list.
LogicalResult lowerLowRankAndQuantizesToGPU(
    RewriterBase &rewriter, LowRankOp op, QuantizeOp input, QuantizeOp output,
    Operation *anchor, const TransformsToGPUOptions &options,
    OperandTransposes &transposes);

/// Replaces `output` (a per-tensor or per_col maxabs quantize of a static
/// f32 matrix x) and `input` (a per-tensor maxabs quantize of hadamard(x)
/// along its rows, through a hadamard that fits a warp, or of x) by the
/// kernels of lowerLowRankAndQuantizesToGPU on x as [1, M, N] with block 1:
/// one statistics pass and one quantize pass over x instead of two each.
/// The same conditions on `anchor`, the same use of `transposes`.
LogicalResult lowerQuantizePairToGPU(RewriterBase &rewriter, QuantizeOp input,
                                     QuantizeOp output, Operation *anchor,
                                     const TransformsToGPUOptions &options,
                                     OperandTransposes &transposes);

/// Replaces `op` (a per_col maxabs quantize of a static f32 matrix) by the
/// kernels of lowerLowRankAndQuantizesToGPU on its input as [1, M, N] with
/// block 1: per-channel maxima, scales, then the quantize. Fails with a
/// remark otherwise.
LogicalResult lowerPerColumnQuantizeToGPU(RewriterBase &rewriter,
                                          QuantizeOp op,
                                          const TransformsToGPUOptions &options);

/// Replaces `op` (f32, static shape, block <= maxLowRankBlock) by a launch of
/// the kernel of buildLowRankKernel with every row kept. Fails with a remark
/// otherwise.
LogicalResult lowerHadamardToGPU(RewriterBase &rewriter, HadamardOp op,
                                 const TransformsToGPUOptions &options);

/// Lowers the transforms of `module` (after its products): with
/// `hadamardQuantize`, the quantizes and the hadamards they fuse; with
/// `lowRank`, the lowranks and the remaining hadamards. A per-tensor maxabs
/// quantize whose statistics a lowrank kernel can compute on its way (the
/// same data read by both, or the lowrank's result) gets them from there:
/// one pass over the data less. The transposes of the products' operands
/// that a quantize kernel takes over leave `transposes`.
void lowerTransformsToGPU(RewriterBase &rewriter, ModuleOp module,
                          const TransformsToGPUOptions &options,
                          bool hadamardQuantize, bool lowRank,
                          OperandTransposes &transposes);

} // namespace mlir::hot

#endif // HOT_CONVERSION_TRANSFORMKERNELS_H
