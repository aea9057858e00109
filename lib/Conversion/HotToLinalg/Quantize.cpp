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

/// One elementwise linalg.generic of `combine` over same-shaped rank-1
/// tensors `lhs` and `rhs`.
static Value combineElementwise(
    OpBuilder &builder, Location loc, Value lhs, Value rhs,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  auto type = cast<RankedTensorType>(lhs.getType());
  Value init = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                       type.getElementType());
  AffineMap identity = builder.getMultiDimIdentityMap(1);
  return linalg::GenericOp::create(
             builder, loc, type, ValueRange{lhs, rhs}, init,
             SmallVector<AffineMap>(3, identity), getParallelIterators(1),
             [&](OpBuilder &b, Location l, ValueRange args) {
               linalg::YieldOp::create(b, l, combine(b, l, args[0], args[1]));
             })
      .getResult(0);
}

/// A per-tensor group's statistics from its rows' (`rowStats`: max|x| in
/// f32, the sawb sums in f64, each a tensor<M>), as docs/numerics.md
/// combines them: row i into partial i mod 32 (each partial from `inits`,
/// rows in order), then P[p] = P[p] op P[p + h] for h = 16, 8, 4, 2, 1.
/// The maximum's order does not matter; the sums' does. Rank-0 results.
static SmallVector<Value> combineRows(OpBuilder &builder, Location loc,
                                      ValueRange rowStats, int64_t rows,
                                      ArrayRef<TypedAttr> inits) {
  constexpr int64_t kPartials = 32;
  auto combine = [](size_t k) {
    return [k](OpBuilder &b, Location l, Value acc, Value v) -> Value {
      if (k == 0)
        return arith::MaximumFOp::create(b, l, acc, v);
      return arith::AddFOp::create(b, l, acc, v);
    };
  };
  int64_t full = rows / kPartials, rest = rows % kPartials;
  auto slice = [&](Value v, int64_t offset, int64_t size) -> Value {
    return tensor::ExtractSliceOp::create(
        builder, loc, v, ArrayRef<OpFoldResult>{builder.getIndexAttr(offset)},
        ArrayRef<OpFoldResult>{builder.getIndexAttr(size)},
        ArrayRef<OpFoldResult>{builder.getIndexAttr(1)});
  };
  SmallVector<Value> partials;
  for (auto [k, stat] : llvm::enumerate(rowStats)) {
    Value partial = fillTensor(builder, loc, {kPartials}, inits[k]);
    Type element = inits[k].getType();
    if (full > 0) {
      // Rows [0, 32 * full) as [full][32]: partial p adds column p's rows
      // in order.
      Value head = slice(stat, 0, full * kPartials);
      Value grid = tensor::ExpandShapeOp::create(
          builder, loc, RankedTensorType::get({full, kPartials}, element), head,
          SmallVector<ReassociationIndices>{{0, 1}});
      MLIRContext *ctx = builder.getContext();
      AffineMap toColumn = AffineMap::get(2, 0, getAffineDimExpr(1, ctx));
      partial =
          linalg::GenericOp::create(
              builder, loc, partial.getType(), grid, partial,
              SmallVector<AffineMap>{builder.getMultiDimIdentityMap(2),
                                     toColumn},
              {utils::IteratorType::reduction, utils::IteratorType::parallel},
              [&](OpBuilder &b, Location l, ValueRange args) {
                linalg::YieldOp::create(b, l,
                                        combine(k)(b, l, args[1], args[0]));
              })
              .getResult(0);
    }
    if (rest > 0) {
      // The last rows, one more step of partials [0, rest).
      Value last =
          combineElementwise(builder, loc, slice(partial, 0, rest),
                             slice(stat, full * kPartials, rest), combine(k));
      partial = tensor::InsertSliceOp::create(
          builder, loc, last, partial,
          ArrayRef<OpFoldResult>{builder.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{builder.getIndexAttr(rest)},
          ArrayRef<OpFoldResult>{builder.getIndexAttr(1)});
    }
    for (int64_t h = kPartials / 2; h >= 1; h /= 2)
      partial = combineElementwise(builder, loc, slice(partial, 0, h),
                                   slice(partial, h, h), combine(k));
    partials.push_back(tensor::CollapseShapeOp::create(
        builder, loc, RankedTensorType::get({}, element), partial,
        SmallVector<ReassociationIndices>{}));
  }
  return partials;
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
    //    group is summed per row first, then the row sums are combined in
    //    32 interleaved partials and a tree (docs/numerics.md, combineRows).
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
    SmallVector<Value> groupStats(stats.getResults());
    if (rowsFirst)
      groupStats =
          combineRows(rewriter, loc, stats.getResults(), type.getDimSize(0),
                      {rewriter.getF32FloatAttr(0), rewriter.getF64FloatAttr(0),
                       rewriter.getF64FloatAttr(0)});

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
