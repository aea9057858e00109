//===- BackwardRewrites.h - HOT rewrites of gx and gw -----------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_TRANSFORMS_BACKWARDREWRITES_H
#define HOT_TRANSFORMS_BACKWARDREWRITES_H

#include "hot/Dialect/Hot/HotAttrs.h"
#include "hot/Dialect/Hot/HotOps.h"
#include "hot/Transforms/BackwardMatmuls.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include <tuple>

namespace mlir::hot {

/// How one backward product of a layer is computed.
struct PathConfig {
  /// Grid bits (2..8), or 0 to keep the product in f32.
  int64_t bits = 0;
  /// gx: the largest Hadamard block along O; gw: the HLA block.
  int64_t block = 16;
  /// gw: Walsh components kept per HLA block.
  int64_t rank = 8;
  Selection selection = Selection::Prefix;
  /// gw: apply HLA along a batch of independent samples (2-D activations).
  bool hlaAcrossBatch = false;
  /// Scales of gy: per_tensor, or per_row (gx) / per_col (gw).
  Granularity granularity = Granularity::PerTensor;
  Rounding rounding = Rounding::Stochastic;
  /// gx: scale mode of W.
  ScaleMode weightScale = ScaleMode::Sawb;
};

/// What a rewrite did.
struct PathDecision {
  int64_t bits = 0;
  /// The Hadamard (gx) or HLA (gw) block actually used; 1 = none.
  int64_t block = 1;
  int64_t rank = 0;
  bool hla = false;
  Granularity granularity = Granularity::PerTensor;
  /// gw: the layer whose compressed x this one reuses (same x, same
  /// projection and grid), or empty.
  std::string sharesSavedActivationWith;
  /// The value that replaces the product. The caller replaces it once every
  /// product of the function is built: a layer's gy may be another layer's
  /// gx, and must stay the value the layer was found with until then.
  Value replacement;
};

/// The compressed saved activations a function has so far, by x and by
/// (HLA block, rank, selection, bits), with the layer that made them:
/// layers reading the same x (q, k and v) share one INT8 copy.
using SavedActivationCache =
    llvm::DenseMap<std::tuple<Value, int64_t, int64_t, int64_t, int64_t>,
                   std::pair<QuantizeOp, std::string>>;

/// The ops that compress one saved activation (those tagged
/// hot.saved_activation), in program order, ending with `quantize`; `root`
/// is set to their only input from outside the chain, x.
SmallVector<Operation *> getCompressionChain(QuantizeOp quantize, Value &root);

/// Builds the replacement of `layer.gx` (gx = gy·W): Hadamard transforms
/// along O, grids of `config.bits`, an exact integer product and a rescale.
/// `seed` (i64) seeds stochastic rounding. On failure nothing is changed and
/// `reason` says why.
FailureOr<PathDecision> rewriteActivationGradient(RewriterBase &rewriter,
                                                  const LinearLayer &layer,
                                                  const PathConfig &config,
                                                  Value seed,
                                                  std::string &reason);

/// Builds the replacement of `layer.gw` (gw = gyᵀ·x): HLA along each
/// sample's tokens, grids of `config.bits`, an exact integer product and a
/// rescale. The ops that compress x carry `hot.saved_activation`; with a
/// `cache`, a compressed x built for an earlier layer is reused (and moved
/// up if this product comes first).
FailureOr<PathDecision> rewriteWeightGradient(
    RewriterBase &rewriter, const LinearLayer &layer, const PathConfig &config,
    Value seed, std::string &reason, SavedActivationCache *cache = nullptr);

} // namespace mlir::hot

#endif // HOT_TRANSFORMS_BACKWARDREWRITES_H
