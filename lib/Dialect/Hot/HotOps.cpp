//===- HotOps.cpp - Verifiers of the hot dialect's operations -------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Dialect/Hot/HotOps.h"
#include "hot/Dialect/Hot/Walsh.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::hot;

#define GET_OP_CLASSES
#include "hot/Dialect/Hot/HotOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

/// Rejects dynamically shaped tensors: every hot op needs static sizes to
/// know its blocks and its i32 bound.
static LogicalResult verifyStatic(Operation *op, Type type, StringRef what) {
  auto tensor = cast<RankedTensorType>(type);
  if (!tensor.hasStaticShape())
    return op->emitOpError() << "requires a statically shaped " << what
                             << ", got " << type;
  return success();
}

static LogicalResult verifyDim(Operation *op, int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError() << "dim " << dim << " is out of range for a rank-"
                             << rank << " tensor";
  return success();
}

static LogicalResult verifyBlockIsPowerOfTwo(Operation *op, int64_t block) {
  if (!isPowerOfTwo(block))
    return op->emitOpError() << "block must be a power of two, got " << block;
  return success();
}

/// The shape a scale tensor must have for a rank-2 operand of `shape`.
static SmallVector<int64_t> getScaleShape(ArrayRef<int64_t> shape,
                                          Granularity granularity) {
  switch (granularity) {
  case Granularity::PerTensor:
    return {};
  case Granularity::PerRow:
    return {shape[0]};
  case Granularity::PerCol:
    return {shape[1]};
  }
  llvm_unreachable("unknown granularity");
}

static LogicalResult verifyScaleShape(Operation *op, RankedTensorType operand,
                                      RankedTensorType scale,
                                      Granularity granularity) {
  SmallVector<int64_t> expected =
      getScaleShape(operand.getShape(), granularity);
  if (scale.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError()
           << "expects a " << stringifyGranularity(granularity)
           << " scale of type "
           << RankedTensorType::get(expected, scale.getElementType())
           << " for an operand of type " << operand << ", got " << scale;
  return success();
}

static LogicalResult verifyRank2(Operation *op, RankedTensorType type,
                                 StringRef what) {
  if (type.getRank() != 2)
    return op->emitOpError() << "expects a rank-2 " << what << ", got "
                             << type;
  return success();
}

//===----------------------------------------------------------------------===//
// HadamardOp
//===----------------------------------------------------------------------===//

LogicalResult HadamardOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  if (failed(verifyStatic(*this, type, "input")) ||
      failed(verifyDim(*this, getDim(), type.getRank())) ||
      failed(verifyBlockIsPowerOfTwo(*this, getBlock())))
    return failure();
  int64_t size = type.getDimSize(getDim());
  if (size % getBlock() != 0)
    return emitOpError() << "block " << getBlock()
                         << " does not divide the size " << size
                         << " of dimension " << getDim();
  return success();
}

//===----------------------------------------------------------------------===//
// LowRankOp
//===----------------------------------------------------------------------===//

int64_t LowRankOp::getProjectedSize(int64_t size, int64_t block,
                                    int64_t rank) {
  return (size / block) * rank + size % block;
}

LogicalResult LowRankOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyStatic(*this, type, "input")) ||
      failed(verifyStatic(*this, resultType, "result")) ||
      failed(verifyDim(*this, getDim(), type.getRank())) ||
      failed(verifyBlockIsPowerOfTwo(*this, getBlock())))
    return failure();
  int64_t block = getBlock(), rank = getRank();
  if (rank < 1 || rank > block)
    return emitOpError() << "rank must be in [1, " << block << "], got "
                         << rank;
  if (getSelection() == Selection::Triangle) {
    std::optional<int64_t> side = getTriangleSide(block);
    if (!side)
      return emitOpError() << "triangle selection needs a block that is the "
                              "square of a power of two, got "
                           << block;
    if (rank != getTriangleRank(*side))
      return emitOpError() << "triangle selection on a " << *side << "x"
                           << *side << " grid keeps rank "
                           << getTriangleRank(*side) << ", got " << rank;
  }
  int64_t size = type.getDimSize(getDim());
  if (size % block != 0 && !getAllowTail())
    return emitOpError() << "block " << block << " does not divide the size "
                         << size << " of dimension " << getDim()
                         << "; add 'allow_tail' to pass the " << size % block
                         << " trailing elements through";
  SmallVector<int64_t> expected(type.getShape());
  expected[getDim()] = getProjectedSize(size, block, rank);
  if (resultType.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "expects result type "
                         << RankedTensorType::get(expected,
                                                  type.getElementType())
                         << ", got " << resultType;
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  auto qType = cast<RankedTensorType>(getQ().getType());
  if (failed(verifyStatic(*this, type, "input")) ||
      failed(verifyRank2(*this, type, "input")))
    return failure();
  if (getBits() < 2 || getBits() > 8)
    return emitOpError() << "bits must be in [2, 8] (values are stored in "
                            "i8), got "
                         << getBits();
  bool stochastic = getRounding() == Rounding::Stochastic;
  if (stochastic && !getSeed())
    return emitOpError() << "stochastic rounding requires a seed operand";
  if (!stochastic && getSeed())
    return emitOpError() << "a seed is only meaningful with stochastic "
                            "rounding";
  if (type.getNumElements() == 0)
    return emitOpError() << "expects a non-empty input (an empty group has "
                            "no scale)";
  if (stochastic && type.getNumElements() >= kMaxStochasticElements)
    return emitOpError() << "stochastic rounding hashes 32-bit element "
                            "indices; the input has "
                         << type.getNumElements() << " elements";
  if (qType.getShape() != type.getShape())
    return emitOpError() << "expects the quantized result to have the shape "
                            "of the input, got "
                         << qType;
  return verifyScaleShape(*this, type,
                          cast<RankedTensorType>(getScale().getType()),
                          getGranularity());
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  auto qType = cast<RankedTensorType>(getQ().getType());
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyStatic(*this, qType, "operand")) ||
      failed(verifyRank2(*this, qType, "operand")))
    return failure();
  if (resultType.getShape() != qType.getShape())
    return emitOpError() << "expects the result to have the shape of the "
                            "operand, got "
                         << resultType;
  return verifyScaleShape(*this, qType,
                          cast<RankedTensorType>(getScale().getType()),
                          getGranularity());
}

//===----------------------------------------------------------------------===//
// IntMatmulOp
//===----------------------------------------------------------------------===//

/// The (rows, cols) of a stored operand as the product sees it.
static std::pair<int64_t, int64_t> getLogicalShape(RankedTensorType type,
                                                   bool transposed) {
  if (transposed)
    return {type.getDimSize(1), type.getDimSize(0)};
  return {type.getDimSize(0), type.getDimSize(1)};
}

int64_t IntMatmulOp::getContractionSize() {
  return getLogicalShape(cast<RankedTensorType>(getLhs().getType()),
                         getTransposeLhs())
      .second;
}

LogicalResult IntMatmulOp::verify() {
  auto lhsType = cast<RankedTensorType>(getLhs().getType());
  auto rhsType = cast<RankedTensorType>(getRhs().getType());
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyStatic(*this, lhsType, "lhs")) ||
      failed(verifyStatic(*this, rhsType, "rhs")) ||
      failed(verifyRank2(*this, lhsType, "lhs")) ||
      failed(verifyRank2(*this, rhsType, "rhs")))
    return failure();
  auto [m, k] = getLogicalShape(lhsType, getTransposeLhs());
  auto [rhsK, n] = getLogicalShape(rhsType, getTransposeRhs());
  if (k != rhsK)
    return emitOpError() << "contracts a lhs with K = " << k
                         << " against a rhs with K = " << rhsK;
  if (resultType.getShape() != ArrayRef<int64_t>{m, n})
    return emitOpError() << "expects result type "
                         << RankedTensorType::get({m, n},
                                                  resultType.getElementType())
                         << ", got " << resultType;
  if (k >= kMaxContractionSize)
    return emitOpError() << "contraction size K = " << k
                         << " can overflow the i32 accumulator; K must be "
                            "below "
                         << kMaxContractionSize << " (split the product)";
  return success();
}

//===----------------------------------------------------------------------===//
// RescaleOp
//===----------------------------------------------------------------------===//

/// Checks one scale of a rescale whose accumulator is `matmul`: if the scale
/// comes from quantizing `operand`, its groups must run along the product's
/// free dimension, never along the contracted K.
static LogicalResult verifyScaleIsOnFreeDim(RescaleOp op, Value scale,
                                            Value operand, bool transposed,
                                            bool isRowScale) {
  auto quantize = scale.getDefiningOp<QuantizeOp>();
  if (!quantize || quantize.getQ() != operand)
    return success();
  // A stored lhs [M, K] keeps its free dim in rows; a stored rhs [K, N] in
  // columns; a transpose swaps them.
  bool freeDimIsStoredRow = isRowScale != transposed;
  Granularity granularity = quantize.getGranularity();
  if (granularity == Granularity::PerTensor ||
      (granularity == Granularity::PerRow) == freeDimIsStoredRow)
    return success();
  return op.emitOpError()
         << "the " << (isRowScale ? "row" : "column") << " scale comes from "
         << stringifyGranularity(granularity) << " quantization of the "
         << (isRowScale ? "lhs" : "rhs")
         << " of the product, whose groups run along the contracted "
            "dimension K; only per_tensor or per_"
         << (freeDimIsStoredRow ? "row" : "col")
         << " scales factor out of the integer sum";
}

LogicalResult RescaleOp::verify() {
  auto accType = cast<RankedTensorType>(getAcc().getType());
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyStatic(*this, accType, "accumulator")) ||
      failed(verifyRank2(*this, accType, "accumulator")))
    return failure();
  if (resultType.getShape() != accType.getShape())
    return emitOpError() << "expects the result to have the shape of the "
                            "accumulator, got "
                         << resultType;
  auto checkScale = [&](Value scale, int64_t size,
                        StringRef what) -> LogicalResult {
    auto type = cast<RankedTensorType>(scale.getType());
    if (type.getRank() == 0 ||
        (type.getRank() == 1 && type.getDimSize(0) == size))
      return success();
    return emitOpError() << "expects the " << what
                         << " scale to be rank-0 or to have " << size
                         << " elements, got " << type;
  };
  if (failed(checkScale(getRowScale(), accType.getDimSize(0), "row")) ||
      failed(checkScale(getColScale(), accType.getDimSize(1), "column")))
    return failure();
  if (auto matmul = getAcc().getDefiningOp<IntMatmulOp>()) {
    if (failed(verifyScaleIsOnFreeDim(*this, getRowScale(), matmul.getLhs(),
                                      matmul.getTransposeLhs(), true)) ||
        failed(verifyScaleIsOnFreeDim(*this, getColScale(), matmul.getRhs(),
                                      matmul.getTransposeRhs(), false)))
      return failure();
  }
  return success();
}
