//===- Walsh.h - Walsh sequency order and low-rank selections ---*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// The rows of a Sylvester Hadamard matrix, reordered by sequency (number of
// sign changes), are the Walsh functions. HLA keeps the rows of lowest
// sequency; these helpers name them, for the verifiers and the lowerings.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_DIALECT_HOT_WALSH_H
#define HOT_DIALECT_HOT_WALSH_H

#include "hot/Dialect/Hot/HotAttrs.h"
#include "llvm/ADT/SmallVector.h"
#include <cstdint>
#include <optional>

namespace mlir::hot {

/// Returns true if `value` is a positive power of two.
inline bool isPowerOfTwo(int64_t value) {
  return value > 0 && (value & (value - 1)) == 0;
}

/// c_b = 1/sqrt(b) of the orthonormal Hadamard transform H_b / sqrt(b)
/// (docs/numerics.md), for a power of two `block` = 2^k, as a double that
/// rounds once to the element type: 2^(-k/2) is exact for even k, and for odd
/// k the correctly rounded sqrt(0.5) times a power of two (1.0 / sqrt(b)
/// would round twice).
double getHadamardNormalization(int64_t block);

/// The Sylvester row index of the Walsh function with `sequency` sign
/// changes among the rows of H_size (size a power of two): the bit reversal
/// of the Gray code of `sequency`.
int64_t sylvesterRowOfSequency(int64_t sequency, int64_t size);

/// The side `s` of the `s x s` sequency grid of a `triangle` selection, or
/// nullopt if `block` is not the square of a power of two.
std::optional<int64_t> getTriangleSide(int64_t block);

/// The rank that a `triangle` selection keeps for a block of side `s`:
/// s * (s + 1) / 2.
inline int64_t getTriangleRank(int64_t side) { return side * (side + 1) / 2; }

/// The Sylvester rows of H_block that a low-rank projection keeps, in output
/// order. `block`, `rank` and `selection` must satisfy the verifier of
/// `hot.lowrank`.
llvm::SmallVector<int64_t> getKeptWalshRows(int64_t block, int64_t rank,
                                            Selection selection);

} // namespace mlir::hot

#endif // HOT_DIALECT_HOT_WALSH_H
