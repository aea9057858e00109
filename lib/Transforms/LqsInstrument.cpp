//===- LqsInstrument.cpp - Return the errors layer-wise selection compares -===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Dialect/Hot/HotOps.h"
#include "hot/Transforms/LayerTags.h"
#include "hot/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::hot {
#define GEN_PASS_DEF_HOTLQSINSTRUMENTPASS
#include "hot/Transforms/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;
using namespace mlir::hot;

/// ‖v − dequantize(quantize(v))‖_F as a tensor<f32>, with `granularity`,
/// `bits`, maxabs scales and nearest rounding (the sum in f64).
static Value buildQuantizationError(OpBuilder &b, Location loc, Value v,
                                    int64_t bits, Granularity granularity) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> scaleShape;
  if (granularity == Granularity::PerRow)
    scaleShape.push_back(type.getDimSize(0));
  else if (granularity == Granularity::PerCol)
    scaleShape.push_back(type.getDimSize(1));
  MLIRContext *ctx = b.getContext();
  auto quantize = QuantizeOp::create(
      b, loc, type.clone(b.getI8Type()),
      RankedTensorType::get(scaleShape, b.getF32Type()), v, Value(),
      b.getI64IntegerAttr(bits), GranularityAttr::get(ctx, granularity),
      ScaleModeAttr::get(ctx, ScaleMode::MaxAbs),
      RoundingAttr::get(ctx, Rounding::Nearest));
  Value dequantized =
      DequantizeOp::create(b, loc, type, quantize.getQ(), quantize.getScale(),
                           GranularityAttr::get(ctx, granularity));
  Type f64 = b.getF64Type();
  Value zero = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0));
  Value init = linalg::FillOp::create(
                   b, loc, zero,
                   tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, f64)
                       .getResult())
                   .getResult(0);
  AffineMap identity = b.getMultiDimIdentityMap(2);
  auto reduction = utils::IteratorType::reduction;
  auto sum = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{v, dequantized}, init,
      SmallVector<AffineMap>{identity, identity, AffineMap::get(2, 0, {}, ctx)},
      SmallVector<utils::IteratorType>{reduction, reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value sub = arith::SubFOp::create(nb, l, args[0], args[1]);
        Value diff = arith::ExtFOp::create(nb, l, f64, sub);
        Value square = arith::MulFOp::create(nb, l, diff, diff);
        linalg::YieldOp::create(
            nb, l, Value(arith::AddFOp::create(nb, l, args[2], square)));
      });
  Value out = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{},
                                      b.getF32Type());
  auto norm = linalg::GenericOp::create(
      b, loc, out.getType(), sum.getResult(0), out,
      SmallVector<AffineMap>{AffineMap::get(0, 0, {}, ctx),
                             AffineMap::get(0, 0, {}, ctx)},
      SmallVector<utils::IteratorType>{},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value root = math::SqrtOp::create(nb, l, args[0]);
        linalg::YieldOp::create(
            nb, l,
            Value(arith::TruncFOp::create(nb, l, nb.getF32Type(), root)));
      });
  return norm.getResult(0);
}

namespace mlir::hot {
namespace {

struct HotLqsInstrumentPass
    : impl::HotLqsInstrumentPassBase<HotLqsInstrumentPass> {
  void runOnOperation() override {
    getOperation()->walk([&](func::FuncOp function) {
      if (!function.isExternal())
        instrument(function);
    });
  }

  void instrument(func::FuncOp function) {
    // The quantizations of transformed output gradients: tagged gx or gw,
    // not the compression of a saved activation, not already instrumented.
    SmallVector<std::pair<QuantizeOp, LayerAttr>> targets;
    function.walk([&](QuantizeOp quantize) {
      auto tag = quantize->getAttrOfType<LayerAttr>(kLayerAttrName);
      if (tag && tag.getRole() != Role::Forward &&
          !quantize->hasAttr(kSavedActivationAttrName) &&
          quantize.getRounding() == Rounding::Stochastic)
        targets.push_back({quantize, tag});
    });
    if (targets.empty() || function->hasAttr(kLqsResultsAttrName))
      return;
    OpBuilder builder(&getContext());
    SmallVector<Value> errors;
    SmallVector<Attribute> names;
    for (auto [quantize, tag] : targets) {
      builder.setInsertionPoint(quantize);
      bool gx = tag.getRole() == Role::Gx;
      Value v = quantize.getInput();
      int64_t bits = quantize.getBits();
      errors.push_back(buildQuantizationError(builder, quantize.getLoc(), v,
                                              bits, Granularity::PerTensor));
      errors.push_back(buildQuantizationError(
          builder, quantize.getLoc(), v, bits,
          gx ? Granularity::PerRow : Granularity::PerCol));
      names.push_back(builder.getStringAttr(tag.getName().str() +
                                            (gx ? ".gx" : ".gw")));
    }
    auto returnOp =
        cast<func::ReturnOp>(function.getBody().front().getTerminator());
    returnOp->insertOperands(returnOp.getNumOperands(), errors);
    function.setType(FunctionType::get(&getContext(),
                                       function.getArgumentTypes(),
                                       returnOp.getOperandTypes()));
    function->setAttr(kLqsResultsAttrName, builder.getArrayAttr(names));
  }
};

} // namespace
} // namespace mlir::hot
