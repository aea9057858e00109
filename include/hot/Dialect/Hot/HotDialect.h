//===- HotDialect.h - The hot dialect ---------------------------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_DIALECT_HOT_HOTDIALECT_H
#define HOT_DIALECT_HOT_HOTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "hot/Dialect/Hot/HotOpsDialect.h.inc"

#endif // HOT_DIALECT_HOT_HOTDIALECT_H
