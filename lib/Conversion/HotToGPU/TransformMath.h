//===- TransformMath.h - Arithmetic shared by the transform kernels -*- C++
//-*-//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// The pieces the transform kernels share, each exactly the operations of
// docs/numerics.md: the block butterfly over values held in registers and
// across the lanes of a warp, warp-wide maxima, and the quantization of one
// value.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_LIB_CONVERSION_HOTTOGPU_WARPBUTTERFLY_H
#define HOT_LIB_CONVERSION_HOTTOGPU_WARPBUTTERFLY_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <algorithm>
#include <string>

namespace mlir::hot {

/// Lanes of a warp.
inline constexpr int64_t kWarpSize = 32;

/// 32-bit registers of an SM (sm_80 to sm_90), for the kernels' occupancy
/// hints (nvvm.minctasm).
inline constexpr int64_t kRegistersPerSM = 65536;

/// Blocks of `threads` threads that fit an SM at `registers` per thread (at
/// least 1): the nvvm.minctasm that holds a kernel to that budget.
inline int64_t getBlocksPerSM(int64_t threads, int64_t registers) {
  return std::max<int64_t>(1, kRegistersPerSM / (threads * registers));
}

/// Transforms blocks of `block` consecutive elements with the butterfly of
/// docs/numerics.md (lowest bit first; the element whose bit is clear gets
/// lo + hi, the other lo - hi), then multiplies by c_block (block > 1). The
/// elements are held `v.size()` consecutive ones per lane by consecutive
/// lanes: element position t has bit s in the register index for
/// 2^s < v.size(), and in lane bit (2^s / v.size()) otherwise, where the
/// partner comes from `gpu.shuffle xor` (`lane`, the index of the lane in
/// its warp, is read only then). Blocks must start at a multiple of `block`
/// lanes-times-values, and every lane of the warp must execute the shuffles.
/// Without `normalize`, the values are left unmultiplied: a max of their
/// magnitudes times c_block (emitNormalize) is the max of the transform's,
/// bit for bit, since rounding is monotonic.
void emitBlockButterfly(ImplicitLocOpBuilder &b, MutableArrayRef<Value> v,
                        int64_t block, Value lane, bool normalize = true);

/// `value` times c_block, the Hadamard normalization (value itself for
/// block 1).
Value emitNormalize(ImplicitLocOpBuilder &b, Value value, int64_t block);

/// max(acc, |v|) over `v`, with arith.maximumf (a NaN propagates).
Value emitAbsMax(ImplicitLocOpBuilder &b, ArrayRef<Value> v, Value acc);

/// Rows of a lane's fold issued per round trip to memory by
/// emitLaneStridedFold.
inline constexpr int64_t kFoldLoadsAhead = 16;

/// Folds rows lane, lane + 32, lane + 64, ... (< count) into `inits`, in that
/// order: acc = combine(acc, load(row)). The loads of up to kFoldLoadsAhead
/// rows per lane are issued before any of them is combined, so a warp waits
/// for one round trip to memory per chunk rather than per row (LLVM alone
/// unrolls by 4); the combines keep the rows' order, so the result is that
/// of the plain loop, bit for bit.
SmallVector<Value> emitLaneStridedFold(
    ImplicitLocOpBuilder &b, Value lane, int64_t count, ValueRange inits,
    function_ref<SmallVector<Value>(Value row)> load,
    function_ref<SmallVector<Value>(ValueRange acc, ValueRange loaded)>
        combine);

/// arith.maximumf of `value` over the 32 lanes of the warp (a butterfly
/// reduction: every lane gets the result).
Value emitWarpMax(ImplicitLocOpBuilder &b, Value value);

/// Emits `body` under `scf.if cond` (no results, no else); unconditionally
/// when `cond` is null.
void emitIfThen(ImplicitLocOpBuilder &b, Value cond, function_ref<void()> body);

/// The vector width of the transform kernels for rows of `n` f32: 4, 2 or 1,
/// the widest that divides n.
inline int64_t getVectorWidth(int64_t n) {
  return n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1;
}

/// Whether the transform kernels read elements of `type`: f32, or bf16 and
/// f16 (extended to f32 in registers, which is exact).
bool isTransformInputType(Type type);

/// The suffix of a transform kernel's name for its input element type:
/// none for f32, "_bf16" or "_f16".
std::string getInputTypeSuffix(Type type);

/// The `width` consecutive elements of `buffer` (f32, bf16 or f16) at
/// `indices`, loaded as one vector access and extended to f32; 0 where
/// `active` (when set) is false.
SmallVector<Value> emitLoadAsF32(ImplicitLocOpBuilder &b, Value buffer,
                                 ValueRange indices, int64_t width,
                                 Value active);

/// arith.maximumf of the `count` values of `partials` (a memref of f32),
/// in every lane of the warp: lane l reads l, l + 32, ..., then a warp
/// reduction.
Value emitPartialsMax(ImplicitLocOpBuilder &b, Value partials, int64_t count,
                      Value lane);

/// `value` of lane `src` (gpu.shuffle idx; an index), for f32 or, as two i32
/// shuffles, f64.
Value emitFromLane(ImplicitLocOpBuilder &b, Value value, Value src);

/// value + (value of lane `lane xor mask`): one step of a shuffle tree.
Value emitAddFromLaneXor(ImplicitLocOpBuilder &b, Value value, Value lane,
                         int64_t mask);

/// The per-tensor SAWB sums (s1, s2) of the `count` row sums in `rowSums`
/// (memref<2 x count x f64>), in every lane of the warp: docs/numerics.md's
/// 32 interleaved partials, lane p adding rows p, p + 32, ... in order, then
/// a tree of xor shuffles.
std::pair<Value, Value> emitSumRowSums(ImplicitLocOpBuilder &b, Value lane,
                                       Value rowSums, int64_t count);

/// SAWB's scale of a group of `size` values from its max|y| and f64 sums
/// (docs/numerics.md; the CPU path's operations), for the grid `qmax`.
Value emitSawbScale(ImplicitLocOpBuilder &b, Value max, Value sum,
                    Value sumOfSquares, int64_t size, int64_t qmax);

/// 1 / `scale` (an f32 division), what emitQuantizeValue multiplies by:
/// computed once per group.
Value emitReciprocal(ImplicitLocOpBuilder &b, Value scale);

/// NVVM's float-to-i32 conversions rounding toward -inf (cvt.rmi.s32.f32)
/// and toward zero (cvt.rzi.s32.f32): saturating, NaN to 0. The simulator
/// runs them as llvm.floor or llvm.trunc, then llvm.fptosi.sat.
inline constexpr llvm::StringLiteral kFloorToI32Intrinsic = "llvm.nvvm.f2i.rm";
inline constexpr llvm::StringLiteral kTruncToI32Intrinsic = "llvm.nvvm.f2i.rz";

/// The i8 quantization of `y` to [-qmax, qmax] with its group's reciprocal
/// scale `inverse` (emitReciprocal): v = y * inverse, then floor(v + u) with
/// u the uniform of (`key`, `index`) when `key` is set (stochastic rounding;
/// `index` is the element's i32 index; kFloorToI32Intrinsic), else round
/// half away from zero (kTruncToI32Intrinsic); NaN gives 0.
Value emitQuantizeValue(ImplicitLocOpBuilder &b, Value y, Value inverse,
                        int64_t qmax, Value key, Value index);

} // namespace mlir::hot

#endif // HOT_LIB_CONVERSION_HOTTOGPU_WARPBUTTERFLY_H
