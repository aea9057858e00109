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

/// The columns [offset, offset + size) of a rank-2 tensor.
static Value sliceColumns(OpBuilder &builder, Location loc, Value value,
                          int64_t offset, int64_t size) {
  int64_t rows = cast<RankedTensorType>(value.getType()).getDimSize(0);
  return tensor::ExtractSliceOp::create(
      builder, loc, value,
      ArrayRef<OpFoldResult>{builder.getIndexAttr(0),
                             builder.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{builder.getIndexAttr(rows),
                             builder.getIndexAttr(size)},
      ArrayRef<OpFoldResult>{builder.getIndexAttr(1), builder.getIndexAttr(1)});
}

/// f64 sums along dim 1 of the [G, L] `inputs`, in docs/numerics.md's order:
/// element j into partial j mod `partials` (each partial from +0, elements
/// in order), then P[p] = P[p] + P[p + h] for h = partials / 2, ..., 1.
/// `values` maps the inputs' elements at one position to the f64 values
/// summed, one per result. Returns one tensor<G x f64> per value.
static SmallVector<Value> buildTreeSums(
    OpBuilder &builder, Location loc, ValueRange inputs, int64_t partials,
    unsigned numSums,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
        values) {
  auto type = cast<RankedTensorType>(inputs[0].getType());
  int64_t groups = type.getDimSize(0), length = type.getDimSize(1);
  int64_t full = length / partials, rest = length % partials;
  MLIRContext *ctx = builder.getContext();
  auto parallel = utils::IteratorType::parallel;
  // Each sum's own accumulator buffer: one fill shared by several outs
  // would alias them after bufferization.
  SmallVector<Value> acc;
  for (unsigned k = 0; k < numSums; ++k)
    acc.push_back(fillTensor(builder, loc, {groups, partials},
                             builder.getF64FloatAttr(0)));
  unsigned numInputs = inputs.size();
  auto addValues = [&](OpBuilder &b, Location l, ValueRange args) {
    SmallVector<Value> added = values(b, l, args.take_front(numInputs));
    for (unsigned k = 0; k < added.size(); ++k)
      added[k] = arith::AddFOp::create(b, l, args[numInputs + k], added[k]);
    linalg::YieldOp::create(b, l, added);
  };
  if (full > 0) {
    // Columns [0, full * partials) as [G][full][partials]: partial p adds
    // the elements of column p of each group's grid, in order.
    SmallVector<Value> grids;
    for (Value input : inputs) {
      Type element = cast<RankedTensorType>(input.getType()).getElementType();
      grids.push_back(tensor::ExpandShapeOp::create(
          builder, loc,
          RankedTensorType::get({groups, full, partials}, element),
          sliceColumns(builder, loc, input, 0, full * partials),
          SmallVector<ReassociationIndices>{{0}, {1, 2}}));
    }
    AffineMap toPartial = AffineMap::get(
        3, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(2, ctx)}, ctx);
    SmallVector<AffineMap> maps(numInputs, builder.getMultiDimIdentityMap(3));
    maps.append(numSums, toPartial);
    acc = llvm::to_vector_of<Value>(
        linalg::GenericOp::create(
            builder, loc, ValueRange(acc).getTypes(), grids, acc, maps,
            {parallel, utils::IteratorType::reduction, parallel}, addValues)
            .getResults());
  }
  SmallVector<AffineMap> identities(numInputs + numSums,
                                    builder.getMultiDimIdentityMap(2));
  if (rest > 0) {
    // The last elements, one more step of partials [0, rest).
    SmallVector<Value> tails, heads;
    for (Value input : inputs)
      tails.push_back(sliceColumns(builder, loc, input, full * partials, rest));
    for (Value a : acc)
      heads.push_back(sliceColumns(builder, loc, a, 0, rest));
    auto last = linalg::GenericOp::create(
        builder, loc, ValueRange(heads).getTypes(), tails, heads, identities,
        {parallel, parallel}, addValues);
    for (unsigned k = 0; k < numSums; ++k)
      acc[k] = tensor::InsertSliceOp::create(
          builder, loc, last.getResult(k), acc[k],
          ArrayRef<OpFoldResult>{builder.getIndexAttr(0),
                                 builder.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{builder.getIndexAttr(groups),
                                 builder.getIndexAttr(rest)},
          ArrayRef<OpFoldResult>{builder.getIndexAttr(1),
                                 builder.getIndexAttr(1)});
  }
  SmallVector<Value> sums;
  AffineMap identity = builder.getMultiDimIdentityMap(2);
  for (Value a : acc) {
    for (int64_t h = partials / 2; h >= 1; h /= 2) {
      Value init = tensor::EmptyOp::create(builder, loc, {groups, h},
                                           builder.getF64Type());
      a = linalg::GenericOp::create(
              builder, loc, init.getType(),
              ValueRange{sliceColumns(builder, loc, a, 0, h),
                         sliceColumns(builder, loc, a, h, h)},
              init, SmallVector<AffineMap>(3, identity), {parallel, parallel},
              [](OpBuilder &b, Location l, ValueRange args) {
                linalg::YieldOp::create(
                    b, l, Value(arith::AddFOp::create(b, l, args[0], args[1])));
              })
              .getResult(0);
    }
    sums.push_back(tensor::CollapseShapeOp::create(
        builder, loc, RankedTensorType::get({groups}, builder.getF64Type()), a,
        SmallVector<ReassociationIndices>{{0, 1}}));
  }
  return sums;
}

/// The sawb sums s1 = sum f64(|x|) and s2 = sum f64(x)^2 of each row of the
/// [M, N] `x` (docs/numerics.md's order); two tensor<M x f64>.
static SmallVector<Value> buildRowSawbSums(OpBuilder &builder, Location loc,
                                           Value x) {
  return buildTreeSums(
      builder, loc, x, kSawbRowPartials, 2,
      [](OpBuilder &b, Location l, ValueRange element) -> SmallVector<Value> {
        Type f64 = b.getF64Type();
        Value abs = math::AbsFOp::create(b, l, element[0]);
        Value x64 = arith::ExtFOp::create(b, l, f64, element[0]);
        return {arith::ExtFOp::create(b, l, f64, abs),
                arith::MulFOp::create(b, l, x64, x64)};
      });
}

/// A per-tensor group's sawb sums from its rows' (`rowSums`, two
/// tensor<M x f64>): rank-0 results.
static SmallVector<Value> buildTensorSawbSums(OpBuilder &builder, Location loc,
                                              ValueRange rowSums) {
  SmallVector<Value> asGroups;
  for (Value r : rowSums) {
    int64_t rows = cast<RankedTensorType>(r.getType()).getDimSize(0);
    asGroups.push_back(tensor::ExpandShapeOp::create(
        builder, loc, RankedTensorType::get({1, rows}, builder.getF64Type()), r,
        SmallVector<ReassociationIndices>{{0, 1}}));
  }
  SmallVector<Value> sums = buildTreeSums(
      builder, loc, asGroups, kSawbRowSumPartials, 2,
      [](OpBuilder &, Location, ValueRange element) -> SmallVector<Value> {
        return {element[0], element[1]};
      });
  for (Value &sum : sums)
    sum = tensor::CollapseShapeOp::create(
        builder, loc, RankedTensorType::get({}, builder.getF64Type()), sum,
        SmallVector<ReassociationIndices>{});
  return sums;
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

    // 1. One pass over x: max |x| (NaN-propagating), and for a per-col sawb
    //    group the f64 sums of |x| and x^2 in row order. A row's sawb sums
    //    (per row, and each row of a per-tensor group, whose row sums are
    //    then combined) take docs/numerics.md's partials and trees.
    bool rowSums = sawb && granularity != Granularity::PerCol;
    SmallVector<Value> inits{
        fillTensor(rewriter, loc, scaleShape, rewriter.getF32FloatAttr(0))};
    if (sawb && !rowSums)
      for (int i = 0; i < 2; ++i)
        inits.push_back(
            fillTensor(rewriter, loc, scaleShape, rewriter.getF64FloatAttr(0)));
    SmallVector<AffineMap> reduceMaps{identity};
    reduceMaps.append(inits.size(), groupMap);
    auto stats = linalg::GenericOp::create(
        rewriter, loc, ValueRange(inits).getTypes(), input, inits, reduceMaps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value abs = math::AbsFOp::create(b, l, args[0]);
          SmallVector<Value> results{
              arith::MaximumFOp::create(b, l, args[1], abs)};
          if (args.size() > 2) {
            Value abs64 = arith::ExtFOp::create(b, l, f64, abs);
            Value x64 = arith::ExtFOp::create(b, l, f64, args[0]);
            Value square = arith::MulFOp::create(b, l, x64, x64);
            results.push_back(arith::AddFOp::create(b, l, args[2], abs64));
            results.push_back(arith::AddFOp::create(b, l, args[3], square));
          }
          linalg::YieldOp::create(b, l, results);
        });
    SmallVector<Value> groupStats(stats.getResults());
    if (rowSums) {
      SmallVector<Value> sums = buildRowSawbSums(rewriter, loc, input);
      if (granularity == Granularity::PerTensor)
        sums = buildTensorSawbSums(rewriter, loc, sums);
      groupStats.append(sums);
    }

    // 2. The scale of each group, and its reciprocal.
    double qmax = double(op.getQMax());
    double groupSize = double(type.getNumElements()) /
                       double(std::max<int64_t>(scaleType.getNumElements(), 1));
    int64_t scaleRank = scaleType.getRank();
    AffineMap scaleIdentity = rewriter.getMultiDimIdentityMap(scaleRank);
    SmallVector<AffineMap> scaleMaps(groupStats.size() + 2, scaleIdentity);
    Value scaleInit = tensor::EmptyOp::create(rewriter, loc, scaleShape, f32);
    Value inverseInit = tensor::EmptyOp::create(rewriter, loc, scaleShape, f32);
    auto scales = linalg::GenericOp::create(
        rewriter, loc, TypeRange{scaleType, scaleType}, groupStats,
        ValueRange{scaleInit, inverseInit}, scaleMaps,
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
          Value scale = arith::DivFOp::create(b, l, amax, qmaxValue);
          Value one = arith::ConstantOp::create(b, l, b.getF32FloatAttr(1));
          linalg::YieldOp::create(
              b, l, ValueRange{scale, arith::DivFOp::create(b, l, one, scale)});
        });
    Value scale = scales.getResult(0), inverse = scales.getResult(1);

    // 3. Multiply by the reciprocal, round, clamp and store each element.
    Value key;
    if (op.getRounding() == Rounding::Stochastic)
      key = buildStochasticKey(rewriter, loc, adaptor.getSeed());
    int64_t cols = type.getDimSize(1);
    Value qInit = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          rewriter.getI8Type());
    auto quantized = linalg::GenericOp::create(
        rewriter, loc, qInit.getType(), ValueRange{input, inverse}, qInit,
        SmallVector<AffineMap>{identity, groupMap, identity},
        getParallelIterators(2),
        [&](OpBuilder &b, Location l, ValueRange args) {
          auto f32Const = [&](double v) -> Value {
            return arith::ConstantOp::create(b, l, b.getF32FloatAttr(v));
          };
          Value v = arith::MulFOp::create(b, l, args[0], args[1]);
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
