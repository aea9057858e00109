//===- Quantize.cpp - Lower hot.quantize and hot.dequantize ---------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"
#include "hot/Conversion/HotToLinalg.h"
#include "hot/Dialect/Hot/HotOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::hot;
using namespace mlir::hot::detail;

/// The scale map of a granularity over a rank-2 iteration space.
static AffineMap getGroupMap(MLIRContext *ctx, Granularity granularity) {
  return getScaleMap(ctx, granularity == Granularity::PerTensor ? 0 : 1,
                     granularity == Granularity::PerRow);
}

static Value fillTensor(OpBuilder &builder, Location loc,
                        ArrayRef<int64_t> shape, TypedAttr value) {
  Value empty = tensor::EmptyOp::create(builder, loc, shape, value.getType());
  Value constant = arith::ConstantOp::create(builder, loc, value);
  return linalg::FillOp::create(builder, loc, constant, empty).getResult(0);
}

namespace {

struct QuantizeLowering : OpConversionPattern<QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(QuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    auto scaleType = cast<RankedTensorType>(op.getScale().getType());
    ArrayRef<int64_t> scaleShape = scaleType.getShape();
    Granularity granularity = op.getGranularity();
    bool sawb = op.getScaleMode() == ScaleMode::Sawb;
    Type f32 = rewriter.getF32Type(), f64 = rewriter.getF64Type();

    AffineMap identity = rewriter.getMultiDimIdentityMap(2);
    AffineMap groupMap = getGroupMap(ctx, granularity);
    auto reduction = utils::IteratorType::reduction;
    auto parallel = utils::IteratorType::parallel;
    SmallVector<utils::IteratorType> iterators{
        granularity == Granularity::PerRow ? parallel : reduction,
        granularity == Granularity::PerCol ? parallel : reduction};

    // 1. One pass over x: max |x| (NaN-propagating), and for sawb the f64
    //    sums of |x| and x^2 in loop (row-major) order. A per-tensor sawb
    //    group is summed per row first, then over the row sums in row order
    //    (docs/numerics.md): the statistics of each row, then of the rows.
    bool rowsFirst = sawb && granularity == Granularity::PerTensor;
    SmallVector<int64_t> statsShape(scaleShape);
    AffineMap statsMap = groupMap;
    if (rowsFirst) {
      statsShape = {type.getDimSize(0)};
      statsMap = getGroupMap(ctx, Granularity::PerRow);
      iterators[0] = parallel;
    }
    auto statInits = [&](ArrayRef<int64_t> shape) {
      SmallVector<Value> inits{
          fillTensor(rewriter, loc, shape, rewriter.getF32FloatAttr(0))};
      if (sawb)
        for (int i = 0; i < 2; ++i)
          inits.push_back(
              fillTensor(rewriter, loc, shape, rewriter.getF64FloatAttr(0)));
      return inits;
    };
    SmallVector<Value> inits = statInits(statsShape);
    SmallVector<AffineMap> reduceMaps{identity};
    reduceMaps.append(inits.size(), statsMap);
    auto stats = linalg::GenericOp::create(
        rewriter, loc, ValueRange(inits).getTypes(), input, inits, reduceMaps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value abs = math::AbsFOp::create(b, l, args[0]);
          SmallVector<Value> results{
              arith::MaximumFOp::create(b, l, args[1], abs)};
          if (sawb) {
            Value abs64 = arith::ExtFOp::create(b, l, f64, abs);
            Value x64 = arith::ExtFOp::create(b, l, f64, args[0]);
            Value square = arith::MulFOp::create(b, l, x64, x64);
            results.push_back(arith::AddFOp::create(b, l, args[2], abs64));
            results.push_back(arith::AddFOp::create(b, l, args[3], square));
          }
          linalg::YieldOp::create(b, l, results);
        });
    ValueRange groupStats = stats.getResults();
    if (rowsFirst) {
      // The row statistics, in row order, into the tensor's.
      SmallVector<Value> tensorInits = statInits(scaleShape);
      AffineMap rowIdentity = rewriter.getMultiDimIdentityMap(1);
      AffineMap toScalar = AffineMap::get(1, 0, ctx);
      SmallVector<AffineMap> maps(3, rowIdentity);
      maps.append(3, toScalar);
      auto overRows = linalg::GenericOp::create(
          rewriter, loc, ValueRange(tensorInits).getTypes(),
          stats.getResults(), tensorInits, maps, {reduction},
          [&](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(
                b, l,
                ValueRange{arith::MaximumFOp::create(b, l, args[3], args[0]),
                           arith::AddFOp::create(b, l, args[4], args[1]),
                           arith::AddFOp::create(b, l, args[5], args[2])});
          });
      groupStats = overRows.getResults();
    }

    // 2. The scale of each group.
    double qmax = double(op.getQMax());
    double groupSize = double(type.getNumElements()) /
                       double(std::max<int64_t>(scaleType.getNumElements(), 1));
    int64_t scaleRank = scaleType.getRank();
    AffineMap scaleIdentity = rewriter.getMultiDimIdentityMap(scaleRank);
    SmallVector<AffineMap> scaleMaps(groupStats.size() + 1, scaleIdentity);
    Value scaleInit = tensor::EmptyOp::create(rewriter, loc, scaleShape, f32);
    auto scales = linalg::GenericOp::create(
        rewriter, loc, scaleType, groupStats, scaleInit, scaleMaps,
        getParallelIterators(scaleRank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value amax = args[0];
          if (sawb) {
            // c = 12.1 * sqrt(s2 / n) - 12.2 * (s1 / n), in f64.
            auto f64Const = [&](double v) -> Value {
              return arith::ConstantOp::create(b, l, b.getF64FloatAttr(v));
            };
            Value n = f64Const(groupSize);
            Value rms = math::SqrtOp::create(
                b, l, arith::DivFOp::create(b, l, args[2], n));
            Value mean = arith::DivFOp::create(b, l, args[1], n);
            Value clip64 = arith::SubFOp::create(
                b, l, arith::MulFOp::create(b, l, f64Const(12.1), rms),
                arith::MulFOp::create(b, l, f64Const(12.2), mean));
            Value clip = arith::TruncFOp::create(b, l, f32, clip64);
            Value zero =
                arith::ConstantOp::create(b, l, b.getF32FloatAttr(0));
            Value positive = arith::CmpFOp::create(
                b, l, arith::CmpFPredicate::OGT, clip, zero);
            amax = arith::SelectOp::create(b, l, positive, clip, amax);
          }
          Value qmaxValue =
              arith::ConstantOp::create(b, l, b.getF32FloatAttr(qmax));
          linalg::YieldOp::create(
              b, l, Value(arith::DivFOp::create(b, l, amax, qmaxValue)));
        });
    Value scale = scales.getResult(0);

    // 3. Divide, round, clamp and store each element.
    Value key;
    if (op.getRounding() == Rounding::Stochastic)
      key = buildStochasticKey(rewriter, loc, adaptor.getSeed());
    int64_t cols = type.getDimSize(1);
    Value qInit = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          rewriter.getI8Type());
    auto quantized = linalg::GenericOp::create(
        rewriter, loc, qInit.getType(), ValueRange{input, scale}, qInit,
        SmallVector<AffineMap>{identity, groupMap, identity},
        getParallelIterators(2),
        [&](OpBuilder &b, Location l, ValueRange args) {
          auto f32Const = [&](double v) -> Value {
            return arith::ConstantOp::create(b, l, b.getF32FloatAttr(v));
          };
          Value v = arith::DivFOp::create(b, l, args[0], args[1]);
          Value rounded;
          if (!key) {
            rounded = math::RoundOp::create(b, l, v);
          } else {
            Value row = linalg::IndexOp::create(b, l, 0);
            Value col = linalg::IndexOp::create(b, l, 1);
            Value linear = arith::AddIOp::create(
                b, l,
                arith::MulIOp::create(b, l, row,
                                      arith::ConstantIndexOp::create(b, l,
                                                                     cols)),
                col);
            Value index32 = arith::IndexCastUIOp::create(
                b, l, b.getI32Type(), linear);
            Value u = buildStochasticUniform(b, l, key, index32);
            rounded = math::FloorOp::create(
                b, l, arith::AddFOp::create(b, l, v, u));
          }
          Value clamped = arith::MinimumFOp::create(
              b, l, arith::MaximumFOp::create(b, l, rounded, f32Const(-qmax)),
              f32Const(qmax));
          Value isNaN = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO,
                                              rounded, rounded);
          Value safe =
              arith::SelectOp::create(b, l, isNaN, f32Const(0), clamped);
          linalg::YieldOp::create(
              b, l,
              Value(arith::FPToSIOp::create(b, l, b.getI8Type(), safe)));
        });
    rewriter.replaceOp(op, {quantized.getResult(0), scale});
    return success();
  }
};

struct DequantizeLowering : OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DequantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, buildScaledIntToFloat(
                rewriter, op.getLoc(), adaptor.getQ(), adaptor.getScale(),
                getGroupMap(rewriter.getContext(), op.getGranularity()),
                cast<RankedTensorType>(op.getType())));
    return success();
  }
};

} // namespace

void mlir::hot::detail::populateQuantizeLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<QuantizeLowering, DequantizeLowering>(patterns.getContext());
}
