//===- LqsApply.cpp - Per-layer granularities from LQS decisions ----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Dialect/Hot/HotAttrs.h"
#include "hot/Transforms/LayerTags.h"
#include "hot/Transforms/Passes.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlir::hot {
#define GEN_PASS_DEF_HOTLQSAPPLYPASS
#include "hot/Transforms/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;
using namespace mlir::hot;

namespace mlir::hot {
namespace {

struct HotLqsApplyPass : impl::HotLqsApplyPassBase<HotLqsApplyPass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    auto fail = [&](const Twine &message) {
      emitError(root->getLoc()) << "hot-lqs-apply: " << message;
      signalPassFailure();
    };
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(decisions);
    if (!file)
      return fail("cannot read decisions file '" + decisions +
                  "': " + file.getError().message());
    llvm::Expected<llvm::json::Value> json =
        llvm::json::parse((*file)->getBuffer());
    if (!json)
      return fail("'" + decisions +
                  "' is not JSON: " + llvm::toString(json.takeError()));
    const llvm::json::Object *layers =
        json->getAsObject() ? json->getAsObject()->getObject("layers")
                            : nullptr;
    if (!layers)
      return fail("'" + decisions + "' has no \"layers\" object");

    WalkResult result = root->walk([&](Operation *op) {
      auto tag = op->getAttrOfType<LayerAttr>(kLayerAttrName);
      if (!tag || tag.getRole() == Role::Forward)
        return WalkResult::advance();
      bool gx = tag.getRole() == Role::Gx;
      const llvm::json::Object *layer = layers->getObject(tag.getName());
      std::optional<StringRef> choice =
          layer ? layer->getString(gx ? "gx" : "gw") : std::nullopt;
      if (!choice) {
        emitRemark(op->getLoc())
            << tag.getName().getValue() << ": no LQS decision for "
            << (gx ? "gx" : "gw") << "; granularity left as it is";
        return WalkResult::advance();
      }
      std::optional<Granularity> granularity = symbolizeGranularity(*choice);
      Granularity fine = gx ? Granularity::PerRow : Granularity::PerCol;
      if (!granularity || (*granularity != Granularity::PerTensor &&
                           *granularity != fine)) {
        op->emitError() << "hot-lqs-apply: " << tag.getName().getValue()
                        << "." << (gx ? "gx" : "gw") << " must be per_tensor or "
                        << stringifyGranularity(fine) << ", got '" << *choice
                        << "'";
        return WalkResult::interrupt();
      }
      op->setAttr(kLayerAttrName,
                  LayerAttr::get(op->getContext(), tag.getName(),
                                 tag.getRole(), tag.getBits(), tag.getBlock(),
                                 tag.getRank(), *granularity));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::hot
