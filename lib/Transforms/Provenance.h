//===- Provenance.h - What each value of a function is computed from -----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_LIB_TRANSFORMS_PROVENANCE_H
#define HOT_LIB_TRANSFORMS_PROVENANCE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::hot {

/// Which of a set of source values, and whether any argument of the
/// function, each value of a function is computed from. One post-order pass
/// over the function answers for every value, so that asking for every
/// layer of a graph stays linear in its size (one bit per source).
class Provenance {
public:
  Provenance(Operation *function, ArrayRef<Value> sources);

  /// True if `value` is computed from `source` (one of the sources).
  bool isComputedFrom(Value value, Value source) const;

  /// True if `value` is one of `sources` (all among the sources) or is
  /// computed from one.
  bool isComputedFromAny(Value value, ArrayRef<Value> sources) const;

  /// True if `value` is computed from no argument of the function.
  bool isConstant(Value value) const;

private:
  /// Adds to `bits` the sources `value` is, or is computed from.
  void collect(Value value, llvm::BitVector &bits) const;
  llvm::BitVector getBits(Value value) const;

  Operation *function;
  /// Bit 0 stands for the function's arguments.
  DenseMap<Value, unsigned> sourceBits;
  DenseMap<Operation *, llvm::BitVector> reach;
};

} // namespace mlir::hot

#endif // HOT_LIB_TRANSFORMS_PROVENANCE_H
