//===- WarpButterfly.cpp - Block Hadamard butterflies in GPU kernels ------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "WarpButterfly.h"
#include "hot/Dialect/Hot/Walsh.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::hot;

void mlir::hot::emitBlockButterfly(ImplicitLocOpBuilder &b,
                                   MutableArrayRef<Value> v, int64_t block,
                                   Value lane) {
  if (block == 1)
    return;
  int64_t width = v.size();
  unsigned bits = llvm::Log2_64(block);
  Value laneI32 = block > width ? Value(arith::IndexCastUIOp::create(
                                      b, b.getI32Type(), lane))
                                : Value();
  for (unsigned s = 0; s < bits; ++s) {
    int64_t span = int64_t(1) << s;
    if (span < width) {
      // Both elements are this lane's.
      for (int64_t e = 0; e < width; ++e) {
        if (e & span)
          continue;
        Value lo = v[e], hi = v[e + span];
        v[e] = arith::AddFOp::create(b, lo, hi);
        v[e + span] = arith::SubFOp::create(b, lo, hi);
      }
      continue;
    }
    int32_t laneBit = int32_t(span / width);
    Value bit = arith::AndIOp::create(
        b, laneI32, arith::ConstantOp::create(b, b.getI32IntegerAttr(laneBit)));
    Value isLow = arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq, bit,
        arith::ConstantOp::create(b, b.getI32IntegerAttr(0)));
    for (int64_t e = 0; e < width; ++e) {
      Value partner = gpu::ShuffleOp::create(b, v[e], laneBit, kWarpSize,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult();
      Value sum = arith::AddFOp::create(b, v[e], partner);
      Value diff = arith::SubFOp::create(b, partner, v[e]);
      v[e] = arith::SelectOp::create(b, isLow, sum, diff);
    }
  }
  Value scale = arith::ConstantOp::create(
      b, b.getF32FloatAttr(float(getHadamardNormalization(block))));
  for (Value &x : v)
    x = arith::MulFOp::create(b, x, scale);
}

Value mlir::hot::emitAbsMax(ImplicitLocOpBuilder &b, ArrayRef<Value> v,
                            Value acc) {
  for (Value x : v)
    acc = arith::MaximumFOp::create(b, acc, math::AbsFOp::create(b, x));
  return acc;
}

Value mlir::hot::emitWarpMax(ImplicitLocOpBuilder &b, Value value) {
  for (int32_t offset = kWarpSize / 2; offset > 0; offset /= 2) {
    Value other = gpu::ShuffleOp::create(b, value, offset, kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = arith::MaximumFOp::create(b, value, other);
  }
  return value;
}
