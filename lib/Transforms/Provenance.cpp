//===- Provenance.cpp - What each value of a function is computed from ----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Provenance.h"

using namespace mlir;
using namespace mlir::hot;

Provenance::Provenance(Operation *function, ArrayRef<Value> sources)
    : function(function) {
  for (Value source : sources)
    sourceBits.try_emplace(source, sourceBits.size() + 1);
  // Post-order: an op after the ops nested in it, and after the ops that
  // define its operands (SSA order within a block).
  function->walk([&](Operation *op) {
    if (op == function)
      return;
    llvm::BitVector bits(sourceBits.size() + 1);
    for (Value operand : op->getOperands())
      collect(operand, bits);
    for (Region &region : op->getRegions())
      for (Operation &nested : region.getOps())
        if (auto it = reach.find(&nested); it != reach.end())
          bits |= it->second;
    reach[op] = std::move(bits);
  });
}

void Provenance::collect(Value value, llvm::BitVector &bits) const {
  if (auto it = sourceBits.find(value); it != sourceBits.end())
    bits.set(it->second);
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (owner == function)
      bits.set(0);
    else // A region's argument: computed from its op's operands, at most.
      for (Value operand : owner->getOperands())
        collect(operand, bits);
  } else if (auto it = reach.find(value.getDefiningOp()); it != reach.end()) {
    bits |= it->second;
  }
}

llvm::BitVector Provenance::getBits(Value value) const {
  llvm::BitVector bits(sourceBits.size() + 1);
  collect(value, bits);
  return bits;
}

bool Provenance::isComputedFrom(Value value, Value source) const {
  auto it = sourceBits.find(source);
  return value != source && it != sourceBits.end() &&
         getBits(value).test(it->second);
}

bool Provenance::isComputedFromAny(Value value, ArrayRef<Value> sources) const {
  llvm::BitVector bits = getBits(value);
  return llvm::any_of(sources, [&](Value source) {
    auto it = sourceBits.find(source);
    return it != sourceBits.end() && bits.test(it->second);
  });
}

bool Provenance::isConstant(Value value) const {
  return !getBits(value).test(0);
}
