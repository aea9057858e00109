//===- HotFolders.cpp - Folds of the hot dialect's operations -------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Dialect/Hot/HotOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::hot;

/// Returns true if `attr` is a dense splat of zeros.
static bool isZeroSplat(Attribute attr) {
  auto dense = dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  if (isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().isZero();
  return dense.getSplatValue<APInt>().isZero();
}

OpFoldResult HadamardOp::fold(FoldAdaptor adaptor) {
  // A block of one is the identity.
  if (getBlock() == 1)
    return getInput();
  // Ĥ is an involution: hadamard(hadamard(x)) = x along the same blocks.
  if (auto inner = getInput().getDefiningOp<HadamardOp>())
    if (inner.getDim() == getDim() && inner.getBlock() == getBlock())
      return inner.getInput();
  // A linear map sends zero to zero.
  if (isZeroSplat(adaptor.getInput()))
    return adaptor.getInput();
  return {};
}

OpFoldResult LowRankOp::fold(FoldAdaptor adaptor) {
  // A block of one keeps its one component, scaled by 1/sqrt(1): the identity.
  if (getBlock() == 1 && getInput().getType() == getType())
    return getInput();
  // With no full block along `dim`, every element is in the tail, which is
  // appended unchanged: the identity too.
  auto type = cast<RankedTensorType>(getInput().getType());
  int64_t size = type.getDimSize(getDim());
  if (getAllowTail() && !ShapedType::isDynamic(size) &&
      size < int64_t(getBlock()) && type == getType())
    return getInput();
  return {};
}

OpFoldResult IntMatmulOp::fold(FoldAdaptor adaptor) {
  // An exact product with an all-zero operand is zero.
  if (isZeroSplat(adaptor.getLhs()) || isZeroSplat(adaptor.getRhs()))
    return DenseElementsAttr::get(cast<ShapedType>(getType()),
                                  APInt::getZero(32));
  return {};
}
