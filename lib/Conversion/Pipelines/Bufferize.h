//===- Bufferize.h - The pipelines' common start ----------------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_LIB_CONVERSION_PIPELINES_BUFFERIZE_H
#define HOT_LIB_CONVERSION_PIPELINES_BUFFERIZE_H

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::hot {

/// What every lowering pipeline starts with: the remaining hot ops and
/// elementwise arith/math on tensors become linalg, then One-Shot
/// Bufferize across function boundaries with identity-layout memrefs (what
/// C callers and kernels expect), optionally tensor results turned into
/// caller-allocated trailing arguments, and the deallocation pipeline.
void addLinalgBufferizePasses(OpPassManager &pm, bool resultsToOutParams);

} // namespace mlir::hot

#endif // HOT_LIB_CONVERSION_PIPELINES_BUFFERIZE_H
