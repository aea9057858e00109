//===- HotOps.h - Operations of the hot dialect -----------------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_DIALECT_HOT_HOTOPS_H
#define HOT_DIALECT_HOT_HOTOPS_H

#include "hot/Dialect/Hot/HotAttrs.h"
#include "hot/Dialect/Hot/HotDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "hot/Dialect/Hot/HotOps.h.inc"

#endif // HOT_DIALECT_HOT_HOTOPS_H
