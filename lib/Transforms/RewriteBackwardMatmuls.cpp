//===- RewriteBackwardMatmuls.cpp - The HOT rewrite of backward products --===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Dialect/Hot/HotOps.h"
#include "hot/Dialect/Hot/Walsh.h"
#include "hot/Transforms/BackwardMatmuls.h"
#include "hot/Transforms/BackwardRewrites.h"
#include "hot/Transforms/LayerTags.h"
#include "hot/Transforms/Passes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::hot {
#define GEN_PASS_DEF_HOTREWRITEBACKWARDMATMULSPASS
#include "hot/Transforms/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;
using namespace mlir::hot;

/// The configuration of one product: the pass's defaults with the overrides
/// of its #hot.layer tag.
static PathConfig withOverrides(PathConfig config, Operation *product) {
  auto tag = product->getAttrOfType<LayerAttr>(kLayerAttrName);
  if (!tag)
    return config;
  if (tag.getBits())
    config.bits = *tag.getBits();
  if (tag.getBlock())
    config.block = *tag.getBlock();
  if (tag.getRank())
    config.rank = *tag.getRank();
  else if (tag.getBlock())
    config.rank = std::max<int64_t>(1, config.block / 2);
  if (tag.getGranularity())
    config.granularity = *tag.getGranularity();
  return config;
}

/// Checks a configuration; `fine` is the granularity finer than per_tensor
/// that the path allows.
static LogicalResult verifyConfig(const PathConfig &config, Granularity fine,
                                  bool usesRank,
                                  llvm::function_ref<InFlightDiagnostic()> emit) {
  if (config.bits != 0 && (config.bits < 2 || config.bits > 8))
    return emit() << "bits must be 0 (no quantization) or in [2, 8], got "
                  << config.bits;
  if (!isPowerOfTwo(config.block))
    return emit() << "block must be a power of two, got " << config.block;
  if (usesRank && (config.rank < 1 || config.rank > config.block))
    return emit() << "rank must be in [1, " << config.block << "], got "
                  << config.rank;
  if (usesRank && config.selection == Selection::Triangle) {
    std::optional<int64_t> side = getTriangleSide(config.block);
    if (!side || config.rank != getTriangleRank(*side))
      return emit() << "triangle selection needs a block that is the square "
                       "of a power of two and the rank s(s+1)/2";
  }
  if (config.granularity != Granularity::PerTensor &&
      config.granularity != fine)
    return emit() << "granularity must be per_tensor or "
                  << stringifyGranularity(fine) << ", got "
                  << stringifyGranularity(config.granularity);
  return success();
}

namespace mlir::hot {
namespace {

struct HotRewriteBackwardMatmulsPass
    : impl::HotRewriteBackwardMatmulsPassBase<HotRewriteBackwardMatmulsPass> {
  using Base::Base;

  PathConfig gxConfig, gwConfig;
  /// The compressed saved activations of the function being rewritten.
  SavedActivationCache savedActivations;
  /// The products of the function rewritten so far, with their replacements:
  /// replaced once all are built (see PathDecision::replacement).
  SmallVector<std::pair<Operation *, Value>> replacements;

  LogicalResult initialize(MLIRContext *ctx) override {
    gxConfig.bits = gxBits;
    gxConfig.block = gxBlock;
    gxConfig.granularity = gxGranularity;
    gxConfig.rounding = rounding;
    gxConfig.weightScale = weightScale;
    gwConfig.bits = gwBits;
    gwConfig.block = hlaBlock;
    gwConfig.rank = hlaRank > 0 ? int64_t(hlaRank)
                                : std::max<int64_t>(1, hlaBlock / 2);
    gwConfig.selection = hlaSelection;
    gwConfig.hlaAcrossBatch = hlaBatch;
    gwConfig.granularity = gwGranularity;
    gwConfig.rounding = rounding;
    if (gwConfig.selection == Selection::Triangle && hlaRank == 0)
      if (std::optional<int64_t> side = getTriangleSide(hlaBlock))
        gwConfig.rank = getTriangleRank(*side);
    auto emit = [&]() {
      return emitError(UnknownLoc::get(ctx))
             << "hot-rewrite-backward-matmuls: ";
    };
    if (failed(verifyConfig(gxConfig, Granularity::PerRow, false, emit)) ||
        failed(verifyConfig(gwConfig, Granularity::PerCol, true, emit)))
      return failure();
    return success();
  }

  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](FunctionOpInterface function) {
      if (function.isExternal())
        return WalkResult::advance();
      return failed(rewrite(function)) ? WalkResult::interrupt()
                                       : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// The i64 argument carrying the per-step seed; created if needed.
  FailureOr<Value> getSeed(FunctionOpInterface function) {
    Block &entry = function.getFunctionBody().front();
    Type i64 = IntegerType::get(function.getContext(), 64);
    Value tagged;
    for (BlockArgument arg : entry.getArguments()) {
      if (!function.getArgAttr(arg.getArgNumber(), kSeedAttrName))
        continue;
      if (arg.getType() != i64)
        return function.emitError()
               << "argument #" << arg.getArgNumber() << " is tagged "
               << kSeedAttrName << " but is " << arg.getType()
               << ", not an i64";
      if (tagged)
        return function.emitError()
               << "arguments #" << cast<BlockArgument>(tagged).getArgNumber()
               << " and #" << arg.getArgNumber() << " are both tagged "
               << kSeedAttrName << ": one seed per step";
      tagged = arg;
    }
    if (tagged)
      return tagged;
    if (seedArg >= 0) {
      if (seedArg >= int64_t(entry.getNumArguments()) ||
          entry.getArgument(seedArg).getType() != i64)
        return function.emitError()
               << "seed-arg=" << static_cast<int64_t>(seedArg)
               << " does not name an i64 argument";
      function.setArgAttr(seedArg, kSeedAttrName,
                          UnitAttr::get(function.getContext()));
      return Value(entry.getArgument(seedArg));
    }
    // A new argument would not be passed by the function's callers.
    if (Operation *table = SymbolTable::getNearestSymbolTable(
            function->getParentOp() ? function->getParentOp() : function))
      if (!SymbolTable::symbolKnownUseEmpty(function, table))
        return function.emitError()
               << "@" << SymbolTable::getSymbolName(function).getValue()
               << " has callers, which a new seed argument would break: tag "
                  "an i64 argument with "
               << kSeedAttrName << " or name one with seed-arg";
    unsigned index = entry.getNumArguments();
    auto attrs = DictionaryAttr::get(
        function.getContext(),
        {NamedAttribute(StringAttr::get(function.getContext(), kSeedAttrName),
                        UnitAttr::get(function.getContext()))});
    if (failed(function.insertArgument(index, i64, attrs, function.getLoc())))
      return function.emitError() << "cannot add the seed argument";
    return Value(entry.getArgument(index));
  }

  LogicalResult rewrite(FunctionOpInterface function) {
    savedActivations.clear();
    replacements.clear();
    BackwardMatmulAnalysis analysis(function);
    if (analysis.getLayers().empty())
      return success();
    FailureOr<Value> seed = getSeed(function);
    if (failed(seed))
      return failure();
    IRRewriter rewriter(function.getContext());
    int64_t stream = 0;
    // Each quantization gets its own seed: seed + (k << 32).
    auto nextSeed = [&](Operation *product) -> Value {
      ++stream;
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(product);
      Value offset = arith::ConstantOp::create(
          rewriter, product->getLoc(), rewriter.getI64IntegerAttr(stream << 32));
      return arith::AddIOp::create(rewriter, product->getLoc(), *seed, offset);
    };

    SmallVector<Attribute> records;
    if (auto existing =
            function->getAttrOfType<ArrayAttr>(kLayerDecisionsAttrName))
      llvm::append_range(records, existing);
    for (const LinearLayer &layer : analysis.getLayers()) {
      // Tag (or re-tag) the products so that the rewritten ops carry names.
      if (layer.gw)
        tagLayerProduct(layer.gw, layer.name, Role::Gw);
      if (layer.gx)
        tagLayerProduct(layer.gx, layer.name, Role::Gx);
      if (layer.forward)
        tagLayerProduct(layer.forward, layer.name, Role::Forward);

      NamedAttrList record;
      Builder b(function.getContext());
      record.append("name", b.getStringAttr(layer.name));
      record.append("tokens", b.getDenseI64ArrayAttr(layer.tokenShape));
      record.append("out_features", b.getI64IntegerAttr(layer.outFeatures));
      record.append("in_features", b.getI64IntegerAttr(layer.inFeatures));
      if (layer.x)
        record.append(
            "x_element_bits",
            b.getI64IntegerAttr(cast<RankedTensorType>(layer.x.getType())
                                    .getElementTypeBitWidth()));
      // gx before gw: the order their seeds are drawn in.
      for (auto [product, role, key] :
           {std::make_tuple(layer.gx, Role::Gx, "gx"),
            std::make_tuple(layer.gw, Role::Gw, "gw")}) {
        if (!product)
          continue;
        FailureOr<DictionaryAttr> path =
            rewritePath(layer, product, role, rewriter, nextSeed);
        if (failed(path))
          return failure();
        record.append(key, *path);
      }
      // A layer an earlier run left alone is recorded again: in its place.
      DictionaryAttr dict = record.getDictionary(function.getContext());
      auto same = llvm::find_if(records, [&](Attribute existing) {
        auto d = dyn_cast<DictionaryAttr>(existing);
        return d && d.get("name") == dict.get("name");
      });
      if (same != records.end())
        *same = dict;
      else
        records.push_back(dict);
    }
    function->setAttr(kLayerDecisionsAttrName,
                      ArrayAttr::get(function.getContext(), records));
    for (auto [product, replacement] : replacements)
      rewriter.replaceOp(product, replacement);
    // The views that fed the replaced products are dead now; drop them so
    // that the saved activations they read have no stale uses.
    // Only the ops of the body's blocks, users before producers: erasing an
    // op erases (and frees) the ops nested in it, which must not be visited.
    for (Block &block : function.getFunctionBody())
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
        if (isOpTriviallyDead(&op))
          rewriter.eraseOp(&op);
    return success();
  }

  /// Rewrites one product; returns the record of what was decided.
  FailureOr<DictionaryAttr>
  rewritePath(const LinearLayer &layer, Operation *product, Role role,
              IRRewriter &rewriter,
              llvm::function_ref<Value(Operation *)> nextSeed) {
    bool gx = role == Role::Gx;
    PathConfig config = withOverrides(gx ? gxConfig : gwConfig, product);
    auto emit = [&]() {
      return product->emitError() << layer.name << ": invalid #hot.layer "
                                  << "override: ";
    };
    if (failed(verifyConfig(config, gx ? Granularity::PerRow
                                       : Granularity::PerCol,
                            !gx, emit)))
      return failure();
    // A frozen gx kept in floating point draws no seed: the other products
    // keep theirs.
    std::string reason;
    bool skip = gx && layer.isFrozen() && !frozenGx;
    if (skip)
      reason = "a frozen layer's gx (frozen-gx=false)";
    Value seed =
        !skip && config.bits != 0 && config.rounding == Rounding::Stochastic
            ? nextSeed(product)
            : Value();
    Location loc = product->getLoc();
    MLIRContext *ctx = product->getContext();
    FailureOr<PathDecision> decision = failure();
    if (!skip)
      decision =
          gx ? rewriteActivationGradient(rewriter, layer, config, seed, reason)
             : rewriteWeightGradient(rewriter, layer, config, seed, reason,
                                     &savedActivations);
    Builder b(ctx);
    NamedAttrList record;
    record.append("rewritten", b.getBoolAttr(succeeded(decision)));
    if (failed(decision)) {
      record.append("reason", b.getStringAttr(reason));
      if (seed) {
        Operation *add = seed.getDefiningOp();
        Operation *offset = add->getOperand(1).getDefiningOp();
        rewriter.eraseOp(add);
        rewriter.eraseOp(offset);
      }
      if (emitRemarks)
        emitRemark(product->getLoc())
            << layer.name << ": " << (gx ? "gx" : "gw")
            << " left unchanged: " << reason;
      return record.getDictionary(ctx);
    }
    replacements.push_back({product, decision->replacement});
    record.append("bits", b.getI64IntegerAttr(decision->bits));
    record.append("block", b.getI64IntegerAttr(decision->block));
    record.append("rank", b.getI64IntegerAttr(decision->rank));
    record.append("hla", b.getBoolAttr(decision->hla));
    record.append("granularity", b.getStringAttr(stringifyGranularity(
                                     decision->granularity)));
    if (!decision->sharesSavedActivationWith.empty())
      record.append("x_shared_with",
                    b.getStringAttr(decision->sharesSavedActivationWith));
    if (emitRemarks) {
      InFlightDiagnostic remark = emitRemark(loc);
      remark << layer.name << ": " << (gx ? "gx" : "gw") << " rewritten: ";
      if (gx)
        remark << "Hadamard block " << decision->block;
      else if (decision->hla)
        remark << "HLA block " << decision->block << " rank "
               << decision->rank;
      else
        remark << "no HLA (no token dim inside samples)";
      if (decision->bits)
        remark << ", INT" << decision->bits << " grids, "
               << stringifyGranularity(decision->granularity)
               << " gy scales";
      else
        remark << ", f32 product (quantization disabled)";
    }
    return record.getDictionary(ctx);
  }
};

} // namespace
} // namespace mlir::hot
