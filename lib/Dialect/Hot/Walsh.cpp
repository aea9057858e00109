//===- Walsh.cpp - Walsh sequency order and low-rank selections -----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Dialect/Hot/Walsh.h"
#include "llvm/Support/MathExtras.h"
#include <cassert>
#include <cmath>

using namespace mlir;
using namespace mlir::hot;

double mlir::hot::getHadamardNormalization(int64_t block) {
  assert(isPowerOfTwo(block));
  unsigned bits = llvm::Log2_64(block);
  return std::ldexp(bits % 2 ? std::sqrt(0.5) : 1.0, -int(bits / 2));
}

int64_t mlir::hot::sylvesterRowOfSequency(int64_t sequency, int64_t size) {
  assert(isPowerOfTwo(size) && sequency >= 0 && sequency < size);
  unsigned bits = llvm::Log2_64(size);
  uint64_t gray = uint64_t(sequency) ^ (uint64_t(sequency) >> 1);
  uint64_t row = 0;
  for (unsigned i = 0; i < bits; ++i)
    if (gray & (uint64_t(1) << i))
      row |= uint64_t(1) << (bits - 1 - i);
  return int64_t(row);
}

std::optional<int64_t> mlir::hot::getTriangleSide(int64_t block) {
  if (!isPowerOfTwo(block))
    return std::nullopt;
  unsigned log2 = llvm::Log2_64(block);
  if (log2 % 2 != 0)
    return std::nullopt;
  return int64_t(1) << (log2 / 2);
}

SmallVector<int64_t> mlir::hot::getKeptWalshRows(int64_t block, int64_t rank,
                                                 Selection selection) {
  SmallVector<int64_t> rows;
  if (selection == Selection::Prefix) {
    for (int64_t k = 0; k < rank; ++k)
      rows.push_back(sylvesterRowOfSequency(k, block));
    return rows;
  }
  // Triangle: 2-D Walsh functions w_p (x) w_q with p + q < s, by diagonal.
  int64_t side = *getTriangleSide(block);
  for (int64_t diagonal = 0; diagonal < side; ++diagonal)
    for (int64_t p = 0; p <= diagonal; ++p)
      rows.push_back(sylvesterRowOfSequency(p, side) * side +
                     sylvesterRowOfSequency(diagonal - p, side));
  assert(int64_t(rows.size()) == rank && "triangle rank mismatch");
  return rows;
}
