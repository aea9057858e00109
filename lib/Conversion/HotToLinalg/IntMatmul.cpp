//===- IntMatmul.cpp - Lower hot.int_matmul and hot.rescale ---------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"
#include "hot/Dialect/Hot/HotOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::hot;
using namespace mlir::hot::detail;

namespace {

/// linalg.matmul on the i8 operands (sign-extended by its default cast) into
/// a zero-filled i32 accumulator; transposes live in its indexing maps.
struct IntMatmulLowering : OpConversionPattern<IntMatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(IntMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto resultType = cast<RankedTensorType>(op.getType());
    AffineExpr m, n, k;
    bindDims(ctx, m, n, k);
    auto map = [&](ArrayRef<AffineExpr> results) {
      return AffineMap::get(3, 0, results, ctx);
    };
    SmallVector<Attribute> maps{
        AffineMapAttr::get(op.getTransposeLhs() ? map({k, m}) : map({m, k})),
        AffineMapAttr::get(op.getTransposeRhs() ? map({n, k}) : map({k, n})),
        AffineMapAttr::get(map({m, n}))};
    Value empty = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                          resultType.getElementType());
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getI32IntegerAttr(0));
    Value init = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    auto matmul = linalg::MatmulOp::create(
        rewriter, loc, TypeRange{resultType},
        ValueRange{adaptor.getLhs(), adaptor.getRhs()}, ValueRange{init},
        rewriter.getNamedAttr("indexing_maps", rewriter.getArrayAttr(maps)));
    rewriter.replaceOp(op, matmul.getResult(0));
    return success();
  }
};

/// (f32(acc) * row_scale) * col_scale, converted to the result type.
struct RescaleLowering : OpConversionPattern<RescaleOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RescaleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = rewriter.getContext();
    auto rankOf = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getRank();
    };
    Value rowScale = adaptor.getRowScale(), colScale = adaptor.getColScale();
    rewriter.replaceOp(
        op, buildScaledIntToFloat(
                rewriter, op.getLoc(), adaptor.getAcc(), {rowScale, colScale},
                {getScaleMap(ctx, rankOf(rowScale), true),
                 getScaleMap(ctx, rankOf(colScale), false)},
                cast<RankedTensorType>(op.getType())));
    return success();
  }
};

} // namespace

void mlir::hot::detail::populateIntMatmulLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<IntMatmulLowering, RescaleLowering>(patterns.getContext());
}
