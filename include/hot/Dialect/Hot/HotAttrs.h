//===- HotAttrs.h - Attributes and enums of the hot dialect -----*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_DIALECT_HOT_HOTATTRS_H
#define HOT_DIALECT_HOT_HOTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "hot/Dialect/Hot/HotEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "hot/Dialect/Hot/HotAttrs.h.inc"

#endif // HOT_DIALECT_HOT_HOTATTRS_H
