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
/// max and the row sums in row order to the scale) and `Tensor` (reads that
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
  bool stochastic = false;
  /// SAWB scales: each row's f64 sums of |y| and y^2 in element order (one
  /// lane adds the warp's values one after the other, fetched by shuffles);
  /// per tensor, `AbsMax` also stores them per row and `Tensor` adds them in
  /// row order (docs/numerics.md).
  bool sawb = false;
  /// 4, 2 or 1: the widest that divides n.
  int64_t vectorWidth = 1;
  /// Warps (rows in flight) per thread block.
  int64_t warpsPerBlock = 8;
  /// Thread blocks of the `AbsMax` kernel (the partials are
  /// `absMaxBlocks * warpsPerBlock`).
  int64_t absMaxBlocks = 1;

  int64_t numPartials() const { return absMaxBlocks * warpsPerBlock; }
  std::string getKernelName() const;
};

/// Builds (or finds) the kernel of `spec` in `module`. Arguments: `Row`:
/// x memref<m x n x f32>, q memref<m x n x i8>, scale memref<m x f32>
/// [, seed i64]; `AbsMax`: x, partials memref<P x f32> [, row sums
/// memref<2 x m x f64> with sawb]; `Scale`: partials, row sums, scale
/// memref<f32>; `Tensor`: x, partials (maxabs only), q, scale memref<f32>
/// [, seed i64]. `Scale` is one warp; the others use `warpsPerBlock`.
gpu::GPUFuncOp
buildHadamardQuantizeKernel(OpBuilder &builder, Location loc,
                            gpu::GPUModuleOp module,
                            const HadamardQuantizeKernelSpec &spec);

/// A `[outer, n, inner]` f32 input projected along its middle dim: each
/// thread owns one column of one block of `block` tokens, runs the butterfly
/// in registers, scales and stores the `rows.size()` kept coefficients; the
/// `n mod block` tail rows are copied by the threads of one extra block row.
struct LowRankKernelSpec {
  int64_t outer = 1, n = 0, inner = 1, block = 16;
  SmallVector<int64_t> rows;
  /// Threads per block, along `inner`.
  int64_t threads = 256;

  int64_t numBlocks() const { return n / block; }
  int64_t tail() const { return n % block; }
  int64_t projectedSize() const {
    return numBlocks() * int64_t(rows.size()) + tail();
  }
  std::string getKernelName() const;
};

/// Builds (or finds) the kernel of `spec` in `module`: arguments
/// x memref<outer x n x inner x f32>, y memref<outer x n' x inner x f32>.
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
};

/// Replaces `op` (a maxabs or sawb, `per_row` or `per_tensor` quantization,
/// of a `hot.hadamard` along dim 1 or of any rank-2 f32 tensor) by launches
/// of the fused kernels on its (pre-transform) input. Fails with a remark naming
/// the reason for every other form, which the generic path lowers.
LogicalResult lowerHadamardQuantizeToGPU(RewriterBase &rewriter, QuantizeOp op,
                                         const TransformsToGPUOptions &options);

/// Replaces `op` (f32, static shape, block <= maxLowRankBlock) by a launch of
/// the kernel of buildLowRankKernel. Fails with a remark otherwise.
LogicalResult lowerLowRankToGPU(RewriterBase &rewriter, LowRankOp op,
                                const TransformsToGPUOptions &options);

} // namespace mlir::hot

#endif // HOT_CONVERSION_TRANSFORMKERNELS_H
