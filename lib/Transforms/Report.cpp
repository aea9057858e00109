//===- Report.cpp - Per-layer report of the HOT rewrite -------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// BOPs follow shared/docs/hot-method.md section 6: a b1 x b2-bit
// multiply-add counts b1·b2; products kept in floating point and every
// element operation of the transforms, (de)quantization and rescale count as
// 32 x 32-bit operations (a butterfly stage of a block transform is one per
// element; a quantization or a rescale two per element).
//
//===----------------------------------------------------------------------===//

#include "hot/Dialect/Hot/HotOps.h"
#include "hot/Transforms/LayerTags.h"
#include "hot/Transforms/Liveness.h"
#include "hot/Transforms/Passes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::hot {
#define GEN_PASS_DEF_HOTREPORTPASS
#include "hot/Transforms/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;
using namespace mlir::hot;

namespace {

constexpr int64_t kFloatBops = 32 * 32;

/// One layer's figures.
struct LayerFigures {
  std::string name;
  SmallVector<int64_t> tokens;
  int64_t n = 0, o = 0, i = 0;
  /// "absent" for a layer without the product (no gx: its input needs no
  /// gradient; no gw: its weight is frozen).
  std::string gx = "absent", gw = "absent";
  int64_t savedBefore = 0, savedAfter = 0;
  int64_t bopsBefore = 0, bopsAfter = 0;
  /// The layer whose saved x this one reads too, if any.
  std::string sharedWith;
};

int64_t getInt(DictionaryAttr dict, StringRef key) {
  auto attr = dict.getAs<IntegerAttr>(key);
  return attr ? attr.getInt() : 0;
}

bool getBool(DictionaryAttr dict, StringRef key) {
  auto attr = dict.getAs<BoolAttr>(key);
  return attr && attr.getValue();
}

/// Why `path` (a record's "gx" or "gw") cannot be reported, or "".
std::string checkPath(DictionaryAttr path, StringRef key) {
  if (!path.getAs<BoolAttr>("rewritten"))
    return "'" + key.str() + "' has no boolean 'rewritten'";
  if (!getBool(path, "rewritten"))
    return path.getAs<StringAttr>("reason")
               ? ""
               : "'" + key.str() + "' is not rewritten and gives no 'reason'";
  int64_t bits = getInt(path, "bits"), block = getInt(path, "block");
  if (bits < 0 || bits > 32)
    return "'" + key.str() + "' has bits " + std::to_string(bits);
  bool hla = key == "gw" && getBool(path, "hla");
  if ((key == "gx" || hla) && (block < 1 || !llvm::isPowerOf2_64(block)))
    return "'" + key.str() + "' has block " + std::to_string(block) +
           ", not a power of two";
  if (hla && (getInt(path, "rank") < 1 || getInt(path, "rank") > block))
    return "'" + key.str() + "' has rank " +
           std::to_string(getInt(path, "rank")) + ", not in [1, block]";
  return "";
}

/// Why `record` (an element of hot.layers) cannot be reported, or "": the
/// records are only read here, and the IR may have been written by hand.
std::string checkRecord(Attribute record) {
  auto dict = dyn_cast<DictionaryAttr>(record);
  if (!dict)
    return "not a dictionary";
  if (!dict.getAs<StringAttr>("name"))
    return "no string 'name'";
  auto tokens = dict.getAs<DenseI64ArrayAttr>("tokens");
  if (!tokens || tokens.empty() ||
      llvm::any_of(tokens.asArrayRef(), [](int64_t t) { return t < 1; }))
    return "'tokens' is not a non-empty array of positive sizes";
  for (StringRef key : {"out_features", "in_features"})
    if (getInt(dict, key) < 1)
      return "'" + key.str() + "' is not a positive integer";
  if (!dict.get("gx") && !dict.get("gw"))
    return "neither 'gx' nor 'gw'";
  for (StringRef key : {"gx", "gw"}) {
    Attribute path = dict.get(key);
    if (!path)
      continue;
    auto pathDict = dyn_cast_or_null<DictionaryAttr>(path);
    if (!pathDict)
      return "'" + key.str() + "' is not a dictionary";
    if (std::string why = checkPath(pathDict, key); !why.empty())
      return why;
  }
  return "";
}

/// Bytes of the compressed saved activation of `layer`, if ABC moved it.
std::optional<int64_t> getCompressedBytes(FunctionOpInterface function,
                                          StringRef layer) {
  std::optional<int64_t> bytes;
  // Split graphs: the codes arrive as arguments from the forward function.
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
    if (auto name =
            function.getArgAttrOfType<StringAttr>(i, kCompressedArgAttrName))
      if (name.getValue() == layer)
        bytes = bytes.value_or(0) +
                getTensorBytes(function.getArgumentTypes()[i]);
  function.walk([&](QuantizeOp quantize) {
    auto tag = quantize->getAttrOfType<LayerAttr>(kLayerAttrName);
    if (tag && tag.getName() == layer &&
        quantize->hasAttr(kCompressedAttrName))
      bytes = getTensorBytes(quantize.getQ().getType()) +
              getTensorBytes(quantize.getScale().getType());
  });
  return bytes;
}

std::string describe(DictionaryAttr path, bool gw) {
  if (!getBool(path, "rewritten"))
    return "fp (" + path.getAs<StringAttr>("reason").str() + ")";
  std::string text;
  int64_t bits = getInt(path, "bits");
  int64_t block = getInt(path, "block");
  if (!gw)
    text = block > 1 ? llvm::formatv("H{0}", block).str() : "no H";
  else
    text = getBool(path, "hla")
               ? llvm::formatv("HLA{0}/{1}", block, getInt(path, "rank")).str()
               : "no HLA";
  text += bits ? llvm::formatv(" INT{0}", bits).str() : " fp32";
  if (auto granularity = path.getAs<StringAttr>("granularity"))
    if (bits && granularity.getValue() != "per_tensor")
      text += " " + granularity.getValue().str();
  return text;
}

LayerFigures computeFigures(FunctionOpInterface function,
                            DictionaryAttr record) {
  LayerFigures f;
  f.name = record.getAs<StringAttr>("name").str();
  f.tokens = llvm::to_vector(
      record.getAs<DenseI64ArrayAttr>("tokens").asArrayRef());
  f.n = 1;
  for (int64_t t : f.tokens)
    f.n *= t;
  f.o = getInt(record, "out_features");
  f.i = getInt(record, "in_features");
  int64_t n = f.n, o = f.o, i = f.i;
  int64_t macs = n * o * i;

  if (auto gx = record.getAs<DictionaryAttr>("gx")) {
    f.gx = describe(gx, false);
    f.bopsBefore += macs * kFloatBops;
    if (!getBool(gx, "rewritten")) {
      f.bopsAfter += macs * kFloatBops;
    } else {
      int64_t bits = getInt(gx, "bits");
      int64_t block = getInt(gx, "block");
      f.bopsAfter += macs * (bits ? bits * bits : kFloatBops);
      f.bopsAfter += (n * o + o * i) * llvm::Log2_64(block) * kFloatBops;
      if (bits)
        f.bopsAfter += ((n * o + o * i) * 2 + n * i * 2) * kFloatBops;
    }
  }

  // A frozen layer has no gw, and saves no x for one.
  auto gw = record.getAs<DictionaryAttr>("gw");
  if (!gw)
    return f;
  f.gw = describe(gw, true);
  f.bopsBefore += macs * kFloatBops;
  int64_t xBytes = n * i * std::max<int64_t>(1, getInt(record, "x_element_bits") / 8);
  f.savedBefore = xBytes;
  f.savedAfter = xBytes;
  if (!getBool(gw, "rewritten")) {
    f.bopsAfter += macs * kFloatBops;
  } else {
    int64_t bits = getInt(gw, "bits");
    int64_t rows = n;
    if (getBool(gw, "hla")) {
      int64_t block = getInt(gw, "block"), rank = getInt(gw, "rank");
      int64_t t = f.tokens.size() >= 2 && f.tokens.back() > 1 ? f.tokens.back()
                                                              : f.tokens[0];
      rows = n / t * LowRankOp::getProjectedSize(t, block, rank);
      f.bopsAfter += (n * o + n * i) * llvm::Log2_64(block) * kFloatBops;
    }
    f.bopsAfter += rows * o * i * (bits ? bits * bits : kFloatBops);
    if (bits)
      f.bopsAfter += ((rows * o + rows * i) * 2 + o * i * 2) * kFloatBops;
    if (std::optional<int64_t> compressed = getCompressedBytes(function, f.name))
      f.savedAfter = *compressed;
    // x is another layer's x (q, k, v): saved, and counted, once.
    if (auto shared = gw.getAs<StringAttr>("x_shared_with")) {
      f.sharedWith = shared.str();
      f.savedBefore = f.savedAfter = 0;
    }
  }
  return f;
}

std::string formatBytes(int64_t bytes) {
  if (bytes >= (int64_t(1) << 20))
    return llvm::formatv("{0:F2} MiB", double(bytes) / double(1 << 20)).str();
  if (bytes >= 1024)
    return llvm::formatv("{0:F1} KiB", double(bytes) / 1024.0).str();
  return std::to_string(bytes) + " B";
}

std::string ratio(int64_t after, int64_t before) {
  if (before == 0)
    return "-";
  return llvm::formatv("{0:F1}%", 100.0 * double(before - after) /
                                      double(before))
      .str();
}

} // namespace

namespace mlir::hot {
namespace {

struct HotReportPass : impl::HotReportPassBase<HotReportPass> {
  using Base::Base;

  void runOnOperation() override {
    std::string errorMessage;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(output, &errorMessage);
    if (!file) {
      emitError(getOperation().getLoc()) << "hot-report: " << errorMessage;
      return signalPassFailure();
    }
    llvm::raw_fd_ostream &os = file->os();
    llvm::json::Array functions;
    bool failed = false;
    getOperation().walk([&](FunctionOpInterface function) {
      auto records = function->getAttrOfType<ArrayAttr>(kLayerDecisionsAttrName);
      if (!records)
        return WalkResult::advance();
      SmallVector<LayerFigures> layers;
      for (auto [index, record] : llvm::enumerate(records)) {
        if (std::string why = checkRecord(record); !why.empty()) {
          function.emitError()
              << "hot-report: record " << index << " of '"
              << kLayerDecisionsAttrName << "' is malformed: " << why;
          failed = true;
          return WalkResult::interrupt();
        }
        layers.push_back(
            computeFigures(function, cast<DictionaryAttr>(record)));
      }
      int64_t peakAfter = computePeakLiveTensorBytes(function);
      auto peakAttr =
          function->getAttrOfType<IntegerAttr>(kOriginalPeakAttrName);
      int64_t peakBefore = peakAttr ? peakAttr.getInt() : peakAfter;
      if (format == ReportFormat::Table)
        printTable(os, function.getName(), layers, peakBefore, peakAfter);
      else
        functions.push_back(toJSON(function.getName(), layers, peakBefore,
                                   peakAfter));
      return WalkResult::advance();
    });
    if (failed)
      return signalPassFailure();
    if (format == ReportFormat::Json)
      os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                       {"functions", std::move(functions)}}))
         << "\n";
    // A write error (a full disk) is a diagnostic, not an abort at exit.
    os.flush();
    if (os.has_error()) {
      emitError(getOperation().getLoc())
          << "hot-report: cannot write '" << output
          << "': " << os.error().message();
      os.clear_error();
      return signalPassFailure();
    }
    file->keep();
  }

  static llvm::json::Object toJSON(StringRef name,
                                   ArrayRef<LayerFigures> layers,
                                   int64_t peakBefore, int64_t peakAfter) {
    llvm::json::Array list;
    LayerFigures total;
    for (const LayerFigures &f : layers) {
      list.push_back(llvm::json::Object{
          {"name", f.name},
          {"tokens", llvm::json::Array(f.tokens)},
          {"N", f.n},
          {"O", f.o},
          {"I", f.i},
          {"gx", f.gx},
          {"gw", f.gw},
          {"saved_bytes_before", f.savedBefore},
          {"x_shared_with", f.sharedWith.empty()
                                ? llvm::json::Value(nullptr)
                                : llvm::json::Value(f.sharedWith)},
          {"saved_bytes_after", f.savedAfter},
          {"backward_bops_before", f.bopsBefore},
          {"backward_bops_after", f.bopsAfter}});
      total.savedBefore += f.savedBefore;
      total.savedAfter += f.savedAfter;
      total.bopsBefore += f.bopsBefore;
      total.bopsAfter += f.bopsAfter;
    }
    return llvm::json::Object{
        {"function", name},
        {"layers", std::move(list)},
        {"totals",
         llvm::json::Object{{"saved_bytes_before", total.savedBefore},
                            {"saved_bytes_after", total.savedAfter},
                            {"backward_bops_before", total.bopsBefore},
                            {"backward_bops_after", total.bopsAfter}}},
        {"peak_live_bytes_before", peakBefore},
        {"peak_live_bytes_after", peakAfter}};
  }

  static void printTable(llvm::raw_ostream &os, StringRef name,
                         ArrayRef<LayerFigures> layers, int64_t peakBefore,
                         int64_t peakAfter) {
    os << "hot-report: @" << name << "\n";
    os << llvm::formatv("{0,-10} {1,9} {2,6} {3,6}  {4,-22} {5,-22} "
                        "{6,+12} {7,+12} {8,+10} {9,+10}\n",
                        "layer", "N", "O", "I", "gx", "gw", "saved before",
                        "saved after", "GBOPs bef", "GBOPs aft");
    LayerFigures total;
    for (const LayerFigures &f : layers) {
      std::string before = f.sharedWith.empty()
                               ? formatBytes(f.savedBefore)
                               : "x of " + f.sharedWith;
      std::string after = f.sharedWith.empty() ? formatBytes(f.savedAfter)
                                               : "shared";
      os << llvm::formatv("{0,-10} {1,9} {2,6} {3,6}  {4,-22} {5,-22} "
                          "{6,+12} {7,+12} {8,+10:F2} {9,+10:F2}\n",
                          f.name, f.n, f.o, f.i, f.gx, f.gw, before, after,
                          f.bopsBefore / 1e9, f.bopsAfter / 1e9);
      total.savedBefore += f.savedBefore;
      total.savedAfter += f.savedAfter;
      total.bopsBefore += f.bopsBefore;
      total.bopsAfter += f.bopsAfter;
    }
    os << llvm::formatv("{0,-10} {1,9} {2,6} {3,6}  {4,-22} {5,-22} "
                        "{6,+12} {7,+12} {8,+10:F2} {9,+10:F2}\n",
                        "total", "", "", "", "", "",
                        formatBytes(total.savedBefore),
                        formatBytes(total.savedAfter), total.bopsBefore / 1e9,
                        total.bopsAfter / 1e9);
    os << "saved activations: " << ratio(total.savedAfter, total.savedBefore)
       << " less; backward BOPs: " << ratio(total.bopsAfter, total.bopsBefore)
       << " less; peak live tensors: " << formatBytes(peakBefore) << " -> "
       << formatBytes(peakAfter) << "\n";
  }
};

} // namespace
} // namespace mlir::hot
