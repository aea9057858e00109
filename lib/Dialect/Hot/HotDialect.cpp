//===- HotDialect.cpp - The hot dialect -----------------------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Dialect/Hot/HotDialect.h"
#include "hot/Dialect/Hot/HotAttrs.h"
#include "hot/Dialect/Hot/HotOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::hot;

#include "hot/Dialect/Hot/HotOpsDialect.cpp.inc"
#include "hot/Dialect/Hot/HotEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "hot/Dialect/Hot/HotAttrs.cpp.inc"

void HotDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "hot/Dialect/Hot/HotOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "hot/Dialect/Hot/HotAttrs.cpp.inc"
      >();
}

Operation *HotDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}
