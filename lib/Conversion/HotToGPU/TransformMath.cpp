//===- TransformMath.cpp - Arithmetic shared by the transform kernels -----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "TransformMath.h"
#include "hot/Conversion/HotToLinalg.h"
#include "hot/Dialect/Hot/Walsh.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/Support/MathExtras.h"
#include <cmath>

#include <algorithm>

using namespace mlir;
using namespace mlir::hot;

void mlir::hot::emitBlockButterfly(ImplicitLocOpBuilder &b,
                                   MutableArrayRef<Value> v, int64_t block,
                                   Value lane, bool normalize) {
  if (block == 1)
    return;
  int64_t width = v.size();
  unsigned bits = llvm::Log2_64(block);
  Value laneI32 =
      block > width
          ? Value(arith::IndexCastUIOp::create(b, b.getI32Type(), lane))
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
    // The lane whose bit is clear holds lo and gets lo + hi; its partner
    // holds hi and gets lo - hi. Both are fma(sign, mine, partner) with
    // sign = +1 or -1 by lane: sign * mine is exact, so the fma rounds once,
    // as the add or subtract does, bit for bit (zeros' signs, Inf and NaN
    // included), in one instruction instead of two and a select.
    int32_t laneBit = int32_t(span / width);
    Value bit = arith::AndIOp::create(
        b, laneI32, arith::ConstantOp::create(b, b.getI32IntegerAttr(laneBit)));
    Value isLow = arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq, bit,
        arith::ConstantOp::create(b, b.getI32IntegerAttr(0)));
    Value sign = arith::SelectOp::create(
        b, isLow, arith::ConstantOp::create(b, b.getF32FloatAttr(1)),
        arith::ConstantOp::create(b, b.getF32FloatAttr(-1)));
    for (int64_t e = 0; e < width; ++e) {
      Value partner = gpu::ShuffleOp::create(b, v[e], laneBit, kWarpSize,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult();
      v[e] = math::FmaOp::create(b, sign, v[e], partner);
    }
  }
  if (normalize)
    for (Value &x : v)
      x = emitNormalize(b, x, block);
}

Value mlir::hot::emitNormalize(ImplicitLocOpBuilder &b, Value value,
                               int64_t block) {
  if (block == 1)
    return value;
  return arith::MulFOp::create(
      b, value,
      arith::ConstantOp::create(
          b, b.getF32FloatAttr(float(getHadamardNormalization(block)))));
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

SmallVector<Value> mlir::hot::emitLaneStridedFold(
    ImplicitLocOpBuilder &b, Value lane, int64_t count, ValueRange inits,
    function_ref<SmallVector<Value>(Value row)> load,
    function_ref<SmallVector<Value>(ValueRange acc, ValueRange loaded)>
        combine) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  SmallVector<Value> acc(inits);
  // Whole chunks of `ahead` rows per lane, every row in range (fewer than
  // kFoldLoadsAhead when that leaves fewer rows to the loop below: 510
  // partials are one chunk of 15 rows per lane and 30 more rows).
  int64_t ahead = std::min(kFoldLoadsAhead, count / kWarpSize);
  int64_t chunk = kWarpSize * ahead;
  int64_t whole = ahead > 0 ? count / chunk * chunk : 0;
  if (whole > 0) {
    auto loop =
        scf::ForOp::create(b, index(0), index(whole), index(chunk), acc);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value first = arith::AddIOp::create(b, loop.getInductionVar(), lane);
    SmallVector<SmallVector<Value>> loaded;
    for (int64_t u = 0; u < ahead; ++u)
      loaded.push_back(
          load(arith::AddIOp::create(b, first, index(u * kWarpSize))));
    SmallVector<Value> folded(loop.getRegionIterArgs());
    for (ArrayRef<Value> values : loaded)
      folded = combine(folded, values);
    scf::YieldOp::create(b, folded);
    acc = loop.getResults();
  }
  // The rest, one row per iteration.
  Value restBegin =
      whole > 0 ? Value(arith::AddIOp::create(b, lane, index(whole))) : lane;
  auto rest =
      scf::ForOp::create(b, restBegin, index(count), index(kWarpSize), acc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rest.getBody());
    scf::YieldOp::create(
        b, combine(rest.getRegionIterArgs(), load(rest.getInductionVar())));
  }
  return rest.getResults();
}

Value mlir::hot::emitPartialsMax(ImplicitLocOpBuilder &b, Value partials,
                                 int64_t count, Value lane) {
  Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0));
  SmallVector<Value> max = emitLaneStridedFold(
      b, lane, count, zero,
      [&](Value row) -> SmallVector<Value> {
        return {memref::LoadOp::create(b, partials, ValueRange{row})};
      },
      [&](ValueRange acc, ValueRange loaded) -> SmallVector<Value> {
        return {arith::MaximumFOp::create(b, acc[0], loaded[0])};
      });
  return emitWarpMax(b, max[0]);
}

Value mlir::hot::emitFromLane(ImplicitLocOpBuilder &b, Value value, Value src) {
  Value srcI32 = arith::IndexCastUIOp::create(b, b.getI32Type(), src);
  auto shuffle = [&](Value v) -> Value {
    return gpu::ShuffleOp::create(
               b, v, srcI32,
               arith::ConstantOp::create(b, b.getI32IntegerAttr(kWarpSize)),
               gpu::ShuffleMode::IDX)
        .getShuffleResult();
  };
  if (value.getType().getIntOrFloatBitWidth() == 32)
    return shuffle(value);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value bits = arith::BitcastOp::create(b, i64, value);
  Value c32 = arith::ConstantOp::create(b, b.getI64IntegerAttr(32));
  Value lo = shuffle(arith::TruncIOp::create(b, i32, bits));
  Value hi = shuffle(
      arith::TruncIOp::create(b, i32, arith::ShRUIOp::create(b, bits, c32)));
  Value joined = arith::OrIOp::create(
      b, arith::ExtUIOp::create(b, i64, lo),
      arith::ShLIOp::create(b, arith::ExtUIOp::create(b, i64, hi), c32));
  return arith::BitcastOp::create(b, value.getType(), joined);
}

Value mlir::hot::emitAddFromLaneXor(ImplicitLocOpBuilder &b, Value value,
                                    Value lane, int64_t mask) {
  Value partner =
      arith::XOrIOp::create(b, lane, arith::ConstantIndexOp::create(b, mask));
  return arith::AddFOp::create(b, value, emitFromLane(b, value, partner));
}

static_assert(kSawbRowSumPartials == kWarpSize,
              "emitSumRowSums keeps one partial of the row sums per lane");

std::pair<Value, Value> mlir::hot::emitSumRowSums(ImplicitLocOpBuilder &b,
                                                  Value lane, Value rowSums,
                                                  int64_t count) {
  // Lanes p >= h of the tree add the same two partials the other way round,
  // which gives the same sum; every lane ends with the tensor's.
  Value zero = arith::ConstantOp::create(b, b.getF64FloatAttr(0));
  Value first = arith::ConstantIndexOp::create(b, 0);
  Value second = arith::ConstantIndexOp::create(b, 1);
  SmallVector<Value> sums = emitLaneStridedFold(
      b, lane, count, ValueRange{zero, zero},
      [&](Value row) -> SmallVector<Value> {
        return {memref::LoadOp::create(b, rowSums, ValueRange{first, row}),
                memref::LoadOp::create(b, rowSums, ValueRange{second, row})};
      },
      [&](ValueRange acc, ValueRange loaded) -> SmallVector<Value> {
        return {arith::AddFOp::create(b, acc[0], loaded[0]),
                arith::AddFOp::create(b, acc[1], loaded[1])};
      });
  Value s1 = sums[0], s2 = sums[1];
  for (int64_t h = kWarpSize / 2; h >= 1; h /= 2) {
    s1 = emitAddFromLaneXor(b, s1, lane, h);
    s2 = emitAddFromLaneXor(b, s2, lane, h);
  }
  return {s1, s2};
}

Value mlir::hot::emitSawbScale(ImplicitLocOpBuilder &b, Value max, Value sum,
                               Value sumOfSquares, int64_t size, int64_t qmax) {
  auto f64 = [&](double v) -> Value {
    return arith::ConstantOp::create(b, b.getF64FloatAttr(v));
  };
  auto f32 = [&](double v) -> Value {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(float(v)));
  };
  // c = f32(12.1 * sqrt(s2 / n) - 12.2 * (s1 / n)); a = c > 0 ? c : m.
  Value n = f64(double(size));
  Value rms =
      math::SqrtOp::create(b, arith::DivFOp::create(b, sumOfSquares, n));
  Value mean = arith::DivFOp::create(b, sum, n);
  Value clip64 =
      arith::SubFOp::create(b, arith::MulFOp::create(b, f64(12.1), rms),
                            arith::MulFOp::create(b, f64(12.2), mean));
  Value clip = arith::TruncFOp::create(b, b.getF32Type(), clip64);
  Value positive =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, clip, f32(0));
  Value a = arith::SelectOp::create(b, positive, clip, max);
  return arith::DivFOp::create(b, a, f32(double(qmax)));
}

Value mlir::hot::emitReciprocal(ImplicitLocOpBuilder &b, Value scale) {
  Value one = arith::ConstantOp::create(b, b.getF32FloatAttr(1));
  return arith::DivFOp::create(b, one, scale);
}

Value mlir::hot::emitQuantizeValue(ImplicitLocOpBuilder &b, Value y,
                                   Value inverse, int64_t qmax, Value key,
                                   Value index) {
  auto f32 = [&](double v) -> Value {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(float(v)));
  };
  Type i32 = b.getI32Type();
  auto toI32 = [&](StringRef intrinsic, Value x) -> Value {
    return LLVM::CallIntrinsicOp::create(b, i32, b.getStringAttr(intrinsic), x)
        .getResult(0);
  };
  Value v = arith::MulFOp::create(b, y, inverse);
  // The rounded value as an i32, saturated, NaN as 0 (PTX ISA, cvt:
  // float-to-integer conversions saturate and convert NaN to 0).
  Value rounded;
  if (key) {
    // floor(v + u): v + u as fma(units * 256, 2^-32, v), whose product is
    // exact (it is u), so the fma rounds the sum once, as the add does; then
    // cvt.rmi.s32.f32.
    Value sum = math::FmaOp::create(
        b, buildStochasticUnitsTimes256(b, b.getLoc(), key, index),
        f32(kStochasticUnitOf256), v);
    rounded = toI32(kFloorToI32Intrinsic, sum);
  } else {
    // Half away from zero, as math.round on the CPU path: the truncation of
    // v + copysign(0.49999997, v), the add rounding to nearest, is that for
    // every finite float (0.49999997 is the float below 1/2: a tie such as
    // 0.5 + 1/2 rounds up where the sum is exact, 0.49999997 + 1/2 does not
    // reach 1, and an odd integer above 2^23 stays; test_reference.py), then
    // cvt.rzi.s32.f32: four SASS instructions fewer per value than
    // llvm.round's expansion, a float clamp, a NaN select and a conversion.
    Value halfBelow = arith::ConstantOp::create(
        b, b.getF32FloatAttr(std::nextafter(0.5f, 0.0f)));
    Value biased =
        arith::AddFOp::create(b, v, math::CopySignOp::create(b, halfBelow, v));
    rounded = toI32(kTruncToI32Intrinsic, biased);
  }
  // The clamp to [-qmax, qmax] on the integer.
  auto i32Const = [&](int64_t c) -> Value {
    return arith::ConstantOp::create(b, b.getI32IntegerAttr(int32_t(c)));
  };
  Value clamped = arith::MinSIOp::create(
      b, arith::MaxSIOp::create(b, rounded, i32Const(-qmax)), i32Const(qmax));
  return arith::TruncIOp::create(b, b.getI8Type(), clamped);
}

void mlir::hot::emitIfThen(ImplicitLocOpBuilder &b, Value cond,
                           function_ref<void()> body) {
  if (!cond)
    return body();
  auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(op.thenBlock());
  body();
}

bool mlir::hot::isTransformInputType(Type type) {
  return type.isF32() || type.isBF16() || type.isF16();
}

std::string mlir::hot::getInputTypeSuffix(Type type) {
  if (!type || type.isF32())
    return "";
  return type.isBF16() ? "_bf16" : "_f16";
}

SmallVector<Value> mlir::hot::emitLoadAsF32(ImplicitLocOpBuilder &b,
                                            Value buffer, ValueRange indices,
                                            int64_t width, Value active) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  auto load = vector::LoadOp::create(b, VectorType::get({width}, element),
                                     buffer, indices);
  load.setAlignment(uint64_t(width * element.getIntOrFloatBitWidth() / 8));
  Type f32 = b.getF32Type();
  Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0));
  SmallVector<Value> values;
  for (int64_t e = 0; e < width; ++e) {
    Value x = vector::ExtractOp::create(b, load, ArrayRef<int64_t>{e});
    if (element != f32)
      x = arith::ExtFOp::create(b, f32, x);
    if (active)
      x = arith::SelectOp::create(b, active, x, zero);
    values.push_back(x);
  }
  return values;
}
