//===- StochasticHash.cpp - The counter-based hash of stochastic rounding -===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// docs/numerics.md defines the hash; it is a few i32 multiplies, shifts and
// xors so that a GPU thread computes it as cheaply as a CPU loop.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/HotToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

static Value constantI32(OpBuilder &builder, Location loc, uint32_t value) {
  return arith::ConstantOp::create(
      builder, loc, builder.getIntegerAttr(builder.getI32Type(),
                                           llvm::APInt(32, value)));
}

/// h ^= h >> 16; h *= 0x21f0aaad; h ^= h >> 15; h *= 0x735a2d97; h ^= h >> 15.
static Value mix32(OpBuilder &builder, Location loc, Value h) {
  auto xorShift = [&](Value v, uint32_t shift) -> Value {
    Value shifted = arith::ShRUIOp::create(builder, loc, v,
                                           constantI32(builder, loc, shift));
    return arith::XOrIOp::create(builder, loc, v, shifted);
  };
  auto multiply = [&](Value v, uint32_t factor) -> Value {
    return arith::MulIOp::create(builder, loc, v,
                                 constantI32(builder, loc, factor));
  };
  h = multiply(xorShift(h, 16), 0x21f0aaadu);
  h = multiply(xorShift(h, 15), 0x735a2d97u);
  return xorShift(h, 15);
}

Value mlir::hot::buildStochasticKey(OpBuilder &builder, Location loc,
                                    Value seed) {
  Type i32 = builder.getI32Type();
  Value low = arith::TruncIOp::create(builder, loc, i32, seed);
  Value shift = arith::ConstantOp::create(
      builder, loc, builder.getIntegerAttr(seed.getType(), 32));
  Value high = arith::TruncIOp::create(
      builder, loc, i32, arith::ShRUIOp::create(builder, loc, seed, shift));
  Value mixedHigh = mix32(
      builder, loc,
      arith::XOrIOp::create(builder, loc, high,
                            constantI32(builder, loc, 0x9e3779b9u)));
  return mix32(builder, loc,
               arith::XOrIOp::create(builder, loc, low, mixedHigh));
}

Value mlir::hot::buildStochasticUnits(OpBuilder &builder, Location loc,
                                      Value key, Value linearIndex) {
  Value h = mix32(builder, loc,
                  arith::XOrIOp::create(builder, loc, linearIndex, key));
  h = mix32(builder, loc, arith::AddIOp::create(builder, loc, h, key));
  Value top24 = arith::ShRUIOp::create(builder, loc, h,
                                       constantI32(builder, loc, 8));
  return arith::UIToFPOp::create(builder, loc, builder.getF32Type(), top24);
}

Value mlir::hot::buildStochasticUniform(OpBuilder &builder, Location loc,
                                        Value key, Value linearIndex) {
  Value units = buildStochasticUnits(builder, loc, key, linearIndex);
  Value unit = arith::ConstantOp::create(
      builder, loc, builder.getF32FloatAttr(kStochasticUnit));
  return arith::MulFOp::create(builder, loc, units, unit);
}
