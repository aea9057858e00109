//===- HotToLinalg.cpp - The convert-hot-to-linalg pass -------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"
#include "hot/Conversion/Passes.h"
#include "hot/Dialect/Hot/HotDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::hot {
#define GEN_PASS_DEF_CONVERTHOTTOLINALGPASS
#include "hot/Conversion/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;
using namespace mlir::hot;

AffineMap mlir::hot::detail::getScaleMap(MLIRContext *ctx, int64_t scaleRank,
                                         bool rowwise) {
  if (scaleRank == 0)
    return AffineMap::get(2, 0, {}, ctx);
  return AffineMap::get(2, 0, getAffineDimExpr(rowwise ? 0 : 1, ctx), ctx);
}

/// Converts a float `value` to `type` (extf/truncf), or returns it as is.
static Value convertFloat(OpBuilder &builder, Location loc, Value value,
                          Type type) {
  if (value.getType() == type)
    return value;
  if (type.getIntOrFloatBitWidth() > value.getType().getIntOrFloatBitWidth())
    return arith::ExtFOp::create(builder, loc, type, value);
  return arith::TruncFOp::create(builder, loc, type, value);
}

Value mlir::hot::detail::buildScaledIntToFloat(OpBuilder &builder,
                                               Location loc, Value ints,
                                               ValueRange scales,
                                               ArrayRef<AffineMap> scaleMaps,
                                               RankedTensorType resultType) {
  Type elementType = resultType.getElementType();
  Value init = tensor::EmptyOp::create(builder, loc, resultType.getShape(),
                                       elementType);
  AffineMap identity = builder.getMultiDimIdentityMap(2);
  SmallVector<Value> inputs{ints};
  llvm::append_range(inputs, scales);
  SmallVector<AffineMap> maps{identity};
  llvm::append_range(maps, scaleMaps);
  maps.push_back(identity);
  auto generic = linalg::GenericOp::create(
      builder, loc, resultType, inputs, init, maps, getParallelIterators(2),
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value value = arith::SIToFPOp::create(b, l, b.getF32Type(), args[0]);
        for (Value scale : args.slice(1, scales.size()))
          value = arith::MulFOp::create(b, l, value, scale);
        linalg::YieldOp::create(b, l, convertFloat(b, l, value, elementType));
      });
  return generic.getResult(0);
}

SmallVector<utils::IteratorType>
mlir::hot::detail::getParallelIterators(int64_t rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

void mlir::hot::populateHotToLinalgPatterns(RewritePatternSet &patterns) {
  detail::populateTransformLoweringPatterns(patterns);
  detail::populateQuantizeLoweringPatterns(patterns);
  detail::populateIntMatmulLoweringPatterns(patterns);
}

namespace mlir::hot {
namespace {

struct ConvertHotToLinalgPass
    : impl::ConvertHotToLinalgPassBase<ConvertHotToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<HotDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    populateHotToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::hot
