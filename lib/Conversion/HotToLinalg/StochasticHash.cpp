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

/// h ^ (h >> shift).
static Value xorShift(OpBuilder &builder, Location loc, Value h,
                      uint32_t shift) {
  Value shifted =
      arith::ShRUIOp::create(builder, loc, h, constantI32(builder, loc, shift));
  return arith::XOrIOp::create(builder, loc, h, shifted);
}

static Value multiply(OpBuilder &builder, Location loc, Value h,
                      uint32_t factor) {
  return arith::MulIOp::create(builder, loc, h,
                               constantI32(builder, loc, factor));
}

/// h ^= h >> 16; h *= 0x21f0aaad; h ^= h >> 15; h *= 0x735a2d97; h ^= h >> 15.
static Value mix32(OpBuilder &builder, Location loc, Value h) {
  h = multiply(builder, loc, xorShift(builder, loc, h, 16), 0x21f0aaadu);
  h = multiply(builder, loc, xorShift(builder, loc, h, 15), 0x735a2d97u);
  return xorShift(builder, loc, h, 15);
}

/// hash(seed, idx) = mix32(mix32(idx ^ key) + key).
static Value hash(OpBuilder &builder, Location loc, Value key,
                  Value linearIndex) {
  Value h = mix32(builder, loc,
                  arith::XOrIOp::create(builder, loc, linearIndex, key));
  return mix32(builder, loc, arith::AddIOp::create(builder, loc, h, key));
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
  Value top24 =
      arith::ShRUIOp::create(builder, loc, hash(builder, loc, key, linearIndex),
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

Value mlir::hot::buildStochasticUnitsTimes256(OpBuilder &builder, Location loc,
                                              Value key, Value linearIndex) {
  // hash & ~0xff is (hash >> 8) * 256: 24 significant bits, exact in f32.
  // The and joins the last xor-shift's xor in one LOP3, where the shift by 8
  // took an instruction of its own.
  Value top24 =
      arith::AndIOp::create(builder, loc, hash(builder, loc, key, linearIndex),
                            constantI32(builder, loc, 0xffffff00u));
  return arith::UIToFPOp::create(builder, loc, builder.getF32Type(), top24);
}
