//===- LqsApply.cpp - Per-layer granularities from LQS decisions ----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Dialect/Hot/HotAttrs.h"
#include "hot/Transforms/LayerTags.h"
#include "hot/Transforms/Passes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlir::hot {
#define GEN_PASS_DEF_HOTLQSAPPLYPASS
#include "hot/Transforms/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;
using namespace mlir::hot;

namespace {
/// The deepest nesting of arrays and objects in `text` (strings skipped):
/// llvm::json::parse recurses once per level, so a hostile file could
/// exhaust the stack.
int64_t getNestingDepth(StringRef text) {
  int64_t depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

/// Checks the decisions' shape: {"layers": {<name>: {"gx"|"gw": <string>}}}
/// (other top-level keys, like "threshold", are calibrate's notes). Returns
/// the first problem, or an empty string.
std::string checkDecisions(const llvm::json::Object &layers) {
  for (const auto &[name, value] : layers) {
    const llvm::json::Object *paths = value.getAsObject();
    if (!paths)
      return "layers." + name.str() + " is not an object";
    for (const auto &[path, choice] : *paths) {
      if (path != "gx" && path != "gw")
        return "layers." + name.str() + " has '" + path.str() +
               "'; a layer's decisions are \"gx\" and \"gw\"";
      if (!choice.getAsString())
        return "layers." + name.str() + "." + path.str() +
               " is not a string (per_tensor, per_row or per_col)";
    }
  }
  return "";
}
} // namespace

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
    constexpr int64_t kMaxDepth = 64;
    if (getNestingDepth((*file)->getBuffer()) > kMaxDepth)
      return fail("'" + decisions + "' nests deeper than " + Twine(kMaxDepth) +
                  " levels");
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
    if (std::string problem = checkDecisions(*layers); !problem.empty())
      return fail("'" + decisions + "': " + problem);
    llvm::StringSet<> applied;

    WalkResult result = root->walk([&](Operation *op) {
      auto tag = op->getAttrOfType<LayerAttr>(kLayerAttrName);
      if (!tag || tag.getRole() == Role::Forward)
        return WalkResult::advance();
      bool gx = tag.getRole() == Role::Gx;
      const llvm::json::Object *layer = layers->getObject(tag.getName());
      std::optional<StringRef> choice =
          layer ? layer->getString(gx ? "gx" : "gw") : std::nullopt;
      if (layer)
        applied.insert(tag.getName().getValue());
      if (!choice) {
        if (emitRemarks)
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
      return signalPassFailure();
    // A decision for a layer the module does not have: a file made for
    // another graph, or a misspelt name.
    SmallVector<StringRef> unknown;
    for (const auto &entry : *layers)
      if (!applied.contains(entry.first))
        unknown.push_back(entry.first);
    if (unknown.empty())
      return;
    llvm::sort(unknown);
    InFlightDiagnostic warning = emitWarning(root->getLoc());
    warning << "hot-lqs-apply: '" << decisions << "' decides for "
            << unknown.size() << " layer(s) this module does not have: ";
    llvm::interleaveComma(
        ArrayRef(unknown).take_front(5), warning,
        [&](StringRef name) { warning << "'" << name << "'"; });
    if (unknown.size() > 5)
      warning << ", ...";
  }
};

} // namespace
} // namespace mlir::hot
