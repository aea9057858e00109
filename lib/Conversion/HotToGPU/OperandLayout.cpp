//===- OperandLayout.cpp - K-contiguous, padded, packed MMA operands ------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/HotToGPU.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace mlir::hot;

std::string OperandKOrder::getSuffix() const {
  if (isNatural())
    return "";
  return "_tl" + std::to_string(samples) + "x" + std::to_string(fullRows);
}

int64_t OperandKOrder::getSampleStride(bool tail) const {
  if (samples <= 1)
    return 0;
  if (!tailsLast)
    return rowsPerSample;
  return tail ? tailRows() : fullRows;
}

int64_t OperandKOrder::getFirstPosition(bool tail) const {
  if (!tail)
    return 0;
  return tailsLast ? samples * fullRows : fullRows;
}

Value OperandKOrder::emitPosition(OpBuilder &builder, Location loc,
                                  Value sample, Value row, bool tail) const {
  ImplicitLocOpBuilder b(loc, builder);
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  assert(rowsPerSample > 0 && "the position needs the projection's sizes");
  if (isNatural())
    return arith::AddIOp::create(
        b, arith::MulIOp::create(b, sample, cst(rowsPerSample)), row);
  if (!tail)
    return arith::AddIOp::create(
        b, arith::MulIOp::create(b, sample, cst(fullRows)), row);
  // After every sample's full rows: sample's tail rows.
  Value inTail = arith::SubIOp::create(b, row, cst(fullRows));
  Value first =
      arith::AddIOp::create(b, cst(samples * fullRows),
                            arith::MulIOp::create(b, sample, cst(tailRows())));
  return arith::AddIOp::create(b, first, inTail);
}

Value OperandKOrder::emitNaturalIndex(OpBuilder &builder, Location loc,
                                      Value position) const {
  if (isNatural())
    return position;
  ImplicitLocOpBuilder b(loc, builder);
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  auto naturalOf = [&](Value offset, int64_t perSample, int64_t firstRow) {
    Value sample = arith::DivUIOp::create(b, offset, cst(perSample));
    Value row = arith::AddIOp::create(
        b, arith::RemUIOp::create(b, offset, cst(perSample)), cst(firstRow));
    return arith::AddIOp::create(
        b, arith::MulIOp::create(b, sample, cst(rowsPerSample)), row);
  };
  int64_t full = samples * fullRows;
  Value isFull =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, position, cst(full));
  Value fromFull = naturalOf(position, fullRows, 0);
  // Clamped, so that the unselected division stays in range.
  Value tailOffset = arith::SelectOp::create(
      b, isFull, cst(0), arith::SubIOp::create(b, position, cst(full)));
  Value fromTail = naturalOf(tailOffset, tailRows(), fullRows);
  return arith::SelectOp::create(b, isFull, fromFull, fromTail);
}

int64_t mlir::hot::getPaddedKBytes(int64_t k, IntMmaKind kind) {
  int64_t bytes = kind == IntMmaKind::S4 ? llvm::divideCeil(k, 2) : k;
  return llvm::alignTo(bytes, 16);
}

Value mlir::hot::buildKContiguousOperand(OpBuilder &builder, Location loc,
                                         Value operand, bool kMajor,
                                         int64_t kBytes, IntMmaKind kind) {
  auto type = cast<RankedTensorType>(operand.getType());
  int64_t rows = type.getDimSize(kMajor ? 1 : 0);
  int64_t k = type.getDimSize(kMajor ? 0 : 1);
  MLIRContext *ctx = builder.getContext();
  Type i8 = builder.getI8Type();
  auto resultType = RankedTensorType::get({rows, kBytes}, i8);
  Value init = tensor::EmptyOp::create(builder, loc, resultType.getShape(), i8);
  SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(2, ctx)};
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);

  auto body = [&](OpBuilder &nested, Location nestedLoc, ValueRange) {
    ImplicitLocOpBuilder b(nestedLoc, nested);
    Value row = linalg::IndexOp::create(b, 0);
    Value byte = linalg::IndexOp::create(b, 1);
    Value zeroIndex = arith::ConstantIndexOp::create(b, 0);
    Value zero = arith::ConstantIntOp::create(b, i8, 0);
    // The value at (row, kk), or 0 past K (zeros leave the integer sum
    // unchanged); the read index is clamped so that it stays in bounds.
    auto valueAt = [&](Value kk) -> Value {
      Value inK = arith::CmpIOp::create(
          b, arith::CmpIPredicate::ult, kk,
          arith::ConstantIndexOp::create(b, k));
      Value safeK = arith::SelectOp::create(b, inK, kk, zeroIndex);
      SmallVector<Value> indices =
          kMajor ? SmallVector<Value>{safeK, row} : SmallVector<Value>{row, safeK};
      Value v = tensor::ExtractOp::create(b, operand, indices);
      return arith::SelectOp::create(b, inK, v, zero);
    };
    Value result;
    if (kind != IntMmaKind::S4) {
      result = valueAt(byte);
    } else {
      // Two s4 values per byte, the even K index in the low nibble.
      Value two = arith::ConstantIndexOp::create(b, 2);
      Value even = arith::MulIOp::create(b, byte, two);
      Value odd = arith::AddIOp::create(
          b, even, arith::ConstantIndexOp::create(b, 1));
      Value low = arith::AndIOp::create(b, valueAt(even),
                                        arith::ConstantIntOp::create(b, i8, 15));
      Value high = arith::ShLIOp::create(b, valueAt(odd),
                                         arith::ConstantIntOp::create(b, i8, 4));
      result = arith::OrIOp::create(b, low, high);
    }
    linalg::YieldOp::create(b, result);
  };
  return linalg::GenericOp::create(builder, loc, TypeRange{resultType},
                                   ValueRange{}, ValueRange{init}, maps,
                                   iterators, body)
      .getResult(0);
}
