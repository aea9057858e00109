//===- LayerTags.h - Attributes that passes leave on training graphs -*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_TRANSFORMS_LAYERTAGS_H
#define HOT_TRANSFORMS_LAYERTAGS_H

#include "hot/Dialect/Hot/HotAttrs.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::hot {

/// The discardable attribute that tags the products of a linear layer (and
/// the ops the rewrite creates for them) with a #hot.layer.
inline constexpr llvm::StringLiteral kLayerAttrName = "hot.layer";
/// The function attribute holding the peak live bytes before any rewrite.
inline constexpr llvm::StringLiteral kOriginalPeakAttrName =
    "hot.original_peak_live_bytes";
/// The argument attribute that marks the per-step stochastic-rounding seed.
inline constexpr llvm::StringLiteral kSeedAttrName = "hot.seed";
/// The unit attribute on the ops that compress a saved activation.
inline constexpr llvm::StringLiteral kSavedActivationAttrName =
    "hot.saved_activation";

/// The function attribute listing, per layer, what the rewrite decided: an
/// array of dictionaries (see hot-report).
inline constexpr llvm::StringLiteral kLayerDecisionsAttrName = "hot.layers";

/// Unit attribute on the floating-point product that
/// hot-rewrite-backward-matmuls builds when a path is not quantized
/// (gx-bits=0, gw-bits=0): the analysis leaves it alone, so that a second
/// run does not transform its operands again.
inline constexpr llvm::StringLiteral kRewrittenAttrName = "hot.rewritten";
/// The unit attribute hot-compress-activations puts on a quantization of a
/// saved activation it moved into the forward pass.
inline constexpr llvm::StringLiteral kCompressedAttrName = "hot.compressed";

/// The argument attribute (a layer name) on a backward function's arguments
/// that receive compressed saved activations from a split forward.
inline constexpr llvm::StringLiteral kCompressedArgAttrName =
    "hot.compressed_activation";

/// The function attribute that names, per pair of extra results,
/// "<layer>.<gx|gw>", added by hot-lqs-instrument.
inline constexpr llvm::StringLiteral kLqsResultsAttrName = "hot.lqs_results";

/// Tags `op` as the product `role` of layer `name`, keeping the overrides of
/// an existing tag; returns the tag.
LayerAttr tagLayerProduct(Operation *op, StringRef name, Role role);

} // namespace mlir::hot

#endif // HOT_TRANSFORMS_LAYERTAGS_H
