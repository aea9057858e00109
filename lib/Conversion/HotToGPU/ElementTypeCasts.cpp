//===- ElementTypeCasts.cpp - Kernels that read and write narrow floats ---===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// A bf16 or f16 training graph reaches the hot ops through element-type
// casts: the rewrite extends gy, x and W to f32 (hot ops compute in f32), and
// the graph truncates the f32 products back. As separate kernels these casts
// would write and re-read an f32 copy of every operand. Instead the transform
// kernels read the narrow tensor and extend each value as they load it, and
// the product's epilogue truncates as it stores: the same values (extf is
// exact; the epilogue's truncf is the graph's), a fraction of the bytes.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/TransformKernels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::hot;

/// Whether `type` is a float type the kernels read or write in place of f32.
static bool isNarrowFloat(Type type) { return type.isBF16() || type.isF16(); }

/// The input of `op` when it is an elementwise CastOp on ranked tensors with
/// the default rounding and no fast-math flags: the op itself on tensors,
/// or a linalg.generic of identity maps whose body is only that cast of its
/// input.
template <typename CastOp> static Value getCastInput(Operation *op) {
  auto isPlainCast = [](CastOp cast) {
    if (cast->getAttr("roundingmode"))
      return false;
    auto fastMath = cast->template getAttrOfType<arith::FastMathFlagsAttr>(
        "fastmath");
    return !fastMath || fastMath.getValue() == arith::FastMathFlags::none;
  };
  if (auto cast = dyn_cast_or_null<CastOp>(op))
    return isa<RankedTensorType>(cast.getType()) && isPlainCast(cast)
               ? cast.getIn()
               : Value();
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic->getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return Value();
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto cast = yield.getValues().front().getDefiningOp<CastOp>();
  if (body.getOperations().size() != 2 || !cast || !isPlainCast(cast) ||
      cast.getIn() != body.getArgument(0))
    return Value();
  return generic.getDpsInputOperand(0)->get();
}

Value mlir::hot::stripReshapes(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

/// The bf16 or f16 tensor that `value` (f32) extends, through reshapes.
static Value getNarrowSource(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.getElementType().isF32() || !type.hasStaticShape())
    return Value();
  Value narrow = getCastInput<arith::ExtFOp>(stripReshapes(value).getDefiningOp());
  auto narrowType =
      narrow ? dyn_cast<RankedTensorType>(narrow.getType()) : nullptr;
  if (!narrowType || !isNarrowFloat(narrowType.getElementType()) ||
      !narrowType.hasStaticShape())
    return Value();
  return narrow;
}

Value mlir::hot::getDataRoot(Value value) {
  Value root = stripReshapes(value);
  if (Value narrow = getNarrowSource(value))
    root = stripReshapes(narrow);
  return root;
}

Type mlir::hot::getKernelSourceElementType(Value value) {
  Value narrow = getNarrowSource(value);
  return cast<ShapedType>((narrow ? narrow : value).getType()).getElementType();
}

Value mlir::hot::getKernelSource(OpBuilder &b, Location loc, Value value) {
  Value narrow = getNarrowSource(value);
  if (!narrow)
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  return reshapeTo(b, loc, narrow,
                   type.clone(getElementTypeOrSelf(narrow.getType())));
}

Value mlir::hot::reshapeTo(OpBuilder &b, Location loc, Value value,
                           RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from == type)
    return value;
  if (std::optional<SmallVector<ReassociationIndices>> groups =
          getReassociationIndicesForCollapse(from.getShape(), type.getShape()))
    return tensor::CollapseShapeOp::create(b, loc, type, value, *groups);
  auto flat =
      RankedTensorType::get({from.getNumElements()}, from.getElementType());
  ReassociationIndices all;
  if (from.getRank() != 1) {
    all = llvm::to_vector(llvm::seq<int64_t>(0, from.getRank()));
    value = tensor::CollapseShapeOp::create(
        b, loc, flat, value, ArrayRef<ReassociationIndices>{all});
  }
  if (type.getRank() == 1)
    return value;
  all = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  return tensor::ExpandShapeOp::create(b, loc, type, value,
                                       ArrayRef<ReassociationIndices>{all});
}

Operation *mlir::hot::getFusableTruncation(Value value) {
  if (!value.hasOneUse() ||
      !cast<RankedTensorType>(value.getType()).getElementType().isF32())
    return nullptr;
  Operation *user = *value.getUsers().begin();
  if (getCastInput<arith::TruncFOp>(user) != value)
    return nullptr;
  Type result = getElementTypeOrSelf(user->getResult(0).getType());
  return isNarrowFloat(result) ? user : nullptr;
}
