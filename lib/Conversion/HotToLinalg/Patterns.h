//===- Patterns.h - Lowering patterns of hot ops, by family -----*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// Private to lib/Conversion/HotToLinalg: each file lowers one family of ops.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_HOTTOLINALG_PATTERNS_H
#define LIB_CONVERSION_HOTTOLINALG_PATTERNS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::hot::detail {

/// hot.hadamard and hot.lowrank (Transforms.cpp).
void populateTransformLoweringPatterns(RewritePatternSet &patterns);
/// hot.quantize and hot.dequantize (Quantize.cpp).
void populateQuantizeLoweringPatterns(RewritePatternSet &patterns);
/// hot.int_matmul and hot.rescale (IntMatmul.cpp).
void populateIntMatmulLoweringPatterns(RewritePatternSet &patterns);

/// The indexing map from a rank-2 iteration space to a per-tensor (rank-0)
/// or per-row/per-column (rank-1) scale: `rowwise` selects d0, else d1.
AffineMap getScaleMap(MLIRContext *ctx, int64_t scaleRank, bool rowwise);

/// Emits `result[i, j] = f32(ints[i, j]) * s_1 * ... * s_n` (left to right,
/// in f32) converted to the element type of `resultType`, where scale `s_k`
/// is read through the map `scaleMaps[k]` of the rank-2 iteration space.
Value buildScaledIntToFloat(OpBuilder &builder, Location loc, Value ints,
                            ValueRange scales, ArrayRef<AffineMap> scaleMaps,
                            RankedTensorType resultType);

/// An all-parallel iterator list of `rank` entries.
SmallVector<utils::IteratorType> getParallelIterators(int64_t rank);

} // namespace mlir::hot::detail

#endif // LIB_CONVERSION_HOTTOLINALG_PATTERNS_H
