//===- LayerTags.cpp - Attributes that passes leave on training graphs ----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Transforms/LayerTags.h"

using namespace mlir;
using namespace mlir::hot;

LayerAttr mlir::hot::tagLayerProduct(Operation *op, StringRef name,
                                     Role role) {
  MLIRContext *ctx = op->getContext();
  auto existing = op->getAttrOfType<LayerAttr>(kLayerAttrName);
  LayerAttr tag =
      existing ? LayerAttr::get(ctx, StringAttr::get(ctx, name), role,
                                existing.getBits(), existing.getBlock(),
                                existing.getRank(), existing.getGranularity())
               : LayerAttr::get(ctx, StringAttr::get(ctx, name), role,
                                std::nullopt, std::nullopt, std::nullopt,
                                std::nullopt);
  op->setAttr(kLayerAttrName, tag);
  return tag;
}
