//===- AnnotateBackwardMatmuls.cpp - Tag the products of linear layers ----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Dialect/Hot/HotAttrs.h"
#include "hot/Transforms/BackwardMatmuls.h"
#include "hot/Transforms/LayerTags.h"
#include "hot/Transforms/Liveness.h"
#include "hot/Transforms/Passes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::hot {
#define GEN_PASS_DEF_HOTANNOTATEBACKWARDMATMULSPASS
#include "hot/Transforms/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;
using namespace mlir::hot;

static std::string describeTokens(const LinearLayer &layer) {
  std::string shape = llvm::join(
      llvm::map_range(layer.tokenShape,
                      [](int64_t s) { return std::to_string(s); }),
      "x");
  return std::to_string(layer.getNumTokens()) + " tokens [" + shape + "]";
}

namespace mlir::hot {
namespace {

struct HotAnnotateBackwardMatmulsPass
    : impl::HotAnnotateBackwardMatmulsPassBase<
          HotAnnotateBackwardMatmulsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](FunctionOpInterface function) {
      if (function.isExternal())
        return;
      annotate(function);
    });
  }

  void annotate(FunctionOpInterface function) {
    // The peak before any rewrite, for hot-report's before/after.
    if (!function->hasAttr(kOriginalPeakAttrName))
      function->setAttr(kOriginalPeakAttrName,
                        IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                         computePeakLiveTensorBytes(function)));
    BackwardMatmulAnalysis analysis(function);
    for (const LinearLayer &layer : analysis.getLayers()) {
      std::string dims = " (O = " + std::to_string(layer.outFeatures) +
                         ", I = " + std::to_string(layer.inFeatures) + ")";
      // A saved Wᵀ (torch's split graphs) or a JAX kernel.
      StringRef layout = layer.weightTransposed ? ", W laid out [I, O]" : "";
      if (layer.gw) {
        tagLayerProduct(layer.gw, layer.name, Role::Gw);
        if (emitRemarks)
          emitRemark(layer.gw->getLoc())
              << layer.name << ": gw = gyᵀ·x over " << describeTokens(layer)
              << dims << "; gy and x told apart by " << layer.reason;
      }
      if (layer.gx) {
        tagLayerProduct(layer.gx, layer.name, Role::Gx);
        if (emitRemarks)
          emitRemark(layer.gx->getLoc())
              << layer.name << ": gx = gy·W over O" << dims << layout
              << (layer.isFrozen()
                      ? "; W is frozen (no gw), gy told by " + layer.reason
                      : "");
      }
      if (layer.forward) {
        tagLayerProduct(layer.forward, layer.name, Role::Forward);
        if (emitRemarks)
          emitRemark(layer.forward->getLoc())
              << layer.name << ": forward y = x·Wᵀ" << dims << layout;
      }
    }
    // Remarks carry locations, not the ops: printing an op numbers every
    // value of its function, which would make remarks quadratic.
    if (emitRemarks)
      for (const SkippedProduct &skipped : analysis.getSkipped())
        emitRemark(skipped.op->getLoc()) << "not rewritten: " << skipped.reason;
  }
};

} // namespace
} // namespace mlir::hot
