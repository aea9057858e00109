//===- Liveness.h - Peak live tensor bytes of a function -------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_TRANSFORMS_LIVENESS_H
#define HOT_TRANSFORMS_LIVENESS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::hot {

/// The most bytes of statically shaped tensors alive at once when the body
/// of `function` runs in program order: a value is alive from its definition
/// (arguments: from the entry) to its last use (uses inside nested regions
/// count at their ancestor in the body); i1 and sub-byte elements take a
/// byte. The ideal a buffer allocator could reach, not a measurement.
int64_t computePeakLiveTensorBytes(Operation *function);

/// The bytes a statically shaped tensor of `type` takes (0 for others).
int64_t getTensorBytes(Type type);

} // namespace mlir::hot

#endif // HOT_TRANSFORMS_LIVENESS_H
