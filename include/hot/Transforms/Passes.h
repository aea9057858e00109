//===- Passes.h - Training-graph passes of the hot project ------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_TRANSFORMS_PASSES_H
#define HOT_TRANSFORMS_PASSES_H

#include "hot/Dialect/Hot/HotDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::hot {

/// What `hot-report` writes.
enum class ReportFormat { Json, Table };

#define GEN_PASS_DECL
#include "hot/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "hot/Transforms/Passes.h.inc"

} // namespace mlir::hot

#endif // HOT_TRANSFORMS_PASSES_H
