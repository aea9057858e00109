//===- HotToLinalg.h - Lowering of hot ops to linalg on tensors -*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_CONVERSION_HOTTOLINALG_H
#define HOT_CONVERSION_HOTTOLINALG_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::hot {

/// docs/numerics.md's order of the sawb sums: a row's elements go into
/// kSawbRowPartials interleaved partials, a per-tensor group's row sums into
/// kSawbRowSumPartials, each set then combined by a fixed tree.
constexpr int64_t kSawbRowPartials = 128;
constexpr int64_t kSawbRowSumPartials = 32;

/// Emits the block Hadamard transform of `input` along `dim` (one
/// linalg.generic per butterfly stage), with the numerics of hot.hadamard.
Value buildHadamardTransform(OpBuilder &builder, Location loc, Value input,
                             int64_t dim, int64_t block);

/// Emits the counter-based hash of docs/numerics.md as arith ops on i32:
/// the per-op key from an i64 seed, and the uniform f32 in [0, 1) of one
/// element from the key and the element's 32-bit linear index. The uniform
/// is `units` * kStochasticUnit, with units = f32(hash >> 8) an integer
/// below 2^24 (exact in f32, and so is the product).
Value buildStochasticKey(OpBuilder &builder, Location loc, Value seed);
Value buildStochasticUnits(OpBuilder &builder, Location loc, Value key,
                           Value linearIndex);
Value buildStochasticUniform(OpBuilder &builder, Location loc, Value key,
                             Value linearIndex);
inline constexpr float kStochasticUnit = 1.0f / float(1 << 24);

/// buildStochasticUnits times 256: f32(hash & ~0xff), one integer operation
/// fewer per element on a GPU (the and and the hash's last xor are one
/// LOP3), where the hash is most of a quantize kernel's instructions. Times
/// kStochasticUnitOf256 it is the uniform, exactly.
Value buildStochasticUnitsTimes256(OpBuilder &builder, Location loc, Value key,
                                   Value linearIndex);
inline constexpr float kStochasticUnitOf256 = kStochasticUnit / 256.0f;

/// Adds the patterns that lower every hot op to linalg/arith/math/tensor.
void populateHotToLinalgPatterns(RewritePatternSet &patterns);

} // namespace mlir::hot

#endif // HOT_CONVERSION_HOTTOLINALG_H
