//===- Transforms.cpp - Lower hot.hadamard and hot.lowrank ----------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"
#include "hot/Conversion/HotToLinalg.h"
#include "hot/Dialect/Hot/HotOps.h"
#include "hot/Dialect/Hot/Walsh.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/Support/MathExtras.h"
#include <cmath>

using namespace mlir;
using namespace mlir::hot;
using namespace mlir::hot::detail;

/// Returns `map` with result `position` replaced by the constant `value`.
static AffineMap withConstantResult(AffineMap map, unsigned position,
                                    int64_t value) {
  SmallVector<AffineExpr> results(map.getResults());
  results[position] = getAffineConstantExpr(value, map.getContext());
  return AffineMap::get(map.getNumDims(), 0, results, map.getContext());
}

Value mlir::hot::buildHadamardTransform(OpBuilder &builder, Location loc,
                                        Value input, int64_t dim,
                                        int64_t block) {
  if (block == 1)
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  Type elementType = type.getElementType();
  unsigned bits = llvm::Log2_64(block);

  // Expand `dim` into [n / block, 2, ..., 2], most significant bit first, so
  // that bit s of the in-block index is the expanded dimension dim + bits - s.
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t d = 0, e = type.getRank(); d < e; ++d) {
    ReassociationIndices group{int64_t(shape.size())};
    if (d != dim) {
      shape.push_back(type.getDimSize(d));
    } else {
      shape.push_back(type.getDimSize(d) / block);
      for (unsigned i = 0; i < bits; ++i) {
        group.push_back(shape.size());
        shape.push_back(2);
      }
    }
    reassociation.push_back(group);
  }
  auto expandedType = RankedTensorType::get(shape, elementType);
  Value value = tensor::ExpandShapeOp::create(builder, loc, expandedType,
                                              input, reassociation);

  int64_t loops = shape.size();
  AffineMap identity = builder.getMultiDimIdentityMap(loops);
  Value init = tensor::EmptyOp::create(builder, loc, shape, elementType);
  double normalization = getHadamardNormalization(block);
  for (unsigned stage = 0; stage < bits; ++stage) {
    int64_t bitDim = dim + bits - stage;
    bool last = stage + 1 == bits;
    SmallVector<AffineMap> maps{withConstantResult(identity, bitDim, 0),
                                withConstantResult(identity, bitDim, 1),
                                identity};
    auto stageOp = linalg::GenericOp::create(
        builder, loc, expandedType, ValueRange{value, value}, init, maps,
        getParallelIterators(loops),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value sum = arith::AddFOp::create(b, l, args[0], args[1]);
          Value diff = arith::SubFOp::create(b, l, args[0], args[1]);
          Value bit = linalg::IndexOp::create(b, l, bitDim);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value isLow = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                              bit, zero);
          Value result = arith::SelectOp::create(b, l, isLow, sum, diff);
          if (last) {
            Value scale = arith::ConstantOp::create(
                b, l, b.getFloatAttr(elementType, normalization));
            result = arith::MulFOp::create(b, l, result, scale);
          }
          linalg::YieldOp::create(b, l, result);
        });
    value = stageOp.getResult(0);
  }
  return tensor::CollapseShapeOp::create(builder, loc, type, value,
                                         reassociation);
}

namespace {

struct HadamardLowering : OpConversionPattern<HadamardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(HadamardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildHadamardTransform(rewriter, op.getLoc(),
                                                  adaptor.getInput(),
                                                  op.getDim(), op.getBlock()));
    return success();
  }
};

/// HLA: transform the full blocks, gather the kept Walsh rows, append the
/// tail unchanged.
struct LowRankLowering : OpConversionPattern<LowRankOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LowRankOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elementType = type.getElementType();
    int64_t dim = op.getDim(), block = op.getBlock(), rank = op.getRank();
    int64_t rankOfTensor = type.getRank();
    int64_t size = type.getDimSize(dim);
    int64_t numBlocks = size / block, tail = size % block;
    if (numBlocks == 0) {
      // Everything is tail: the projection is the identity.
      rewriter.replaceOp(op, input);
      return success();
    }
    if (type.getNumElements() == 0) {
      // Another dim is empty: so is the result, and no slice of the input
      // may be taken (an offset 0 into an empty dim is out of bounds).
      rewriter.replaceOpWithNewOp<tensor::EmptyOp>(op, resultType.getShape(),
                                                   elementType);
      return success();
    }

    SmallVector<OpFoldResult> offsets(rankOfTensor, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(rankOfTensor, rewriter.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input);
    Value blocks = input;
    if (tail != 0) {
      sizes[dim] = rewriter.getIndexAttr(numBlocks * block);
      blocks = tensor::ExtractSliceOp::create(rewriter, loc, input, offsets,
                                              sizes, strides);
    }
    Value transformed =
        buildHadamardTransform(rewriter, loc, blocks, dim, block);

    // View the blocked dim as [numBlocks, block] and gather [numBlocks, rank].
    SmallVector<int64_t> blockedShape(type.getShape());
    blockedShape[dim] = numBlocks;
    blockedShape.insert(blockedShape.begin() + dim + 1, block);
    SmallVector<ReassociationIndices> reassociation;
    for (int64_t d = 0; d < rankOfTensor; ++d) {
      int64_t first = d <= dim ? d : d + 1;
      reassociation.push_back(d == dim ? ReassociationIndices{d, d + 1}
                                       : ReassociationIndices{first});
    }
    Value blocked = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(blockedShape, elementType),
        transformed, reassociation);

    SmallVector<int64_t> keptShape(blockedShape);
    keptShape[dim + 1] = rank;
    SmallVector<int64_t> keptRows =
        getKeptWalshRows(block, rank, op.getSelection());
    Value table = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(
            RankedTensorType::get({rank}, rewriter.getIndexType()),
            llvm::to_vector(llvm::map_range(keptRows, [&](int64_t row) {
              return Attribute(rewriter.getIndexAttr(row));
            }))));
    int64_t loops = keptShape.size();
    MLIRContext *ctx = rewriter.getContext();
    AffineMap tableMap =
        AffineMap::get(loops, 0, getAffineDimExpr(dim + 1, ctx), ctx);
    Value init = tensor::EmptyOp::create(rewriter, loc, keptShape, elementType);
    auto gather = linalg::GenericOp::create(
        rewriter, loc, init.getType(), table, init,
        SmallVector<AffineMap>{tableMap,
                               rewriter.getMultiDimIdentityMap(loops)},
        getParallelIterators(loops),
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> indices;
          for (int64_t d = 0; d < loops; ++d)
            indices.push_back(d == dim + 1
                                  ? args[0]
                                  : Value(linalg::IndexOp::create(b, l, d)));
          linalg::YieldOp::create(
              b, l, Value(tensor::ExtractOp::create(b, l, blocked, indices)));
        });

    SmallVector<int64_t> projectedShape(type.getShape());
    projectedShape[dim] = numBlocks * rank;
    Value projected = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get(projectedShape, elementType),
        gather.getResult(0), reassociation);
    if (tail == 0) {
      rewriter.replaceOp(op, projected);
      return success();
    }

    // Append the tail after the projected blocks.
    Value result = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                           elementType);
    result = tensor::InsertSliceOp::create(rewriter, loc, projected, result,
                                           offsets,
                                           tensor::getMixedSizes(rewriter, loc,
                                                                 projected),
                                           strides);
    SmallVector<OpFoldResult> tailOffsets(offsets);
    tailOffsets[dim] = rewriter.getIndexAttr(numBlocks * block);
    SmallVector<OpFoldResult> tailSizes = tensor::getMixedSizes(rewriter, loc,
                                                                input);
    tailSizes[dim] = rewriter.getIndexAttr(tail);
    Value tailSlice = tensor::ExtractSliceOp::create(
        rewriter, loc, input, tailOffsets, tailSizes, strides);
    SmallVector<OpFoldResult> destOffsets(offsets);
    destOffsets[dim] = rewriter.getIndexAttr(numBlocks * rank);
    result = tensor::InsertSliceOp::create(rewriter, loc, tailSlice, result,
                                           destOffsets, tailSizes, strides);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::hot::detail::populateTransformLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<HadamardLowering, LowRankLowering>(patterns.getContext());
}
