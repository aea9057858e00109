//===- BackwardMatmuls.h - Linear layers of a training graph ----*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// Finds the three products of every linear layer y = x·Wᵀ in a training
// graph (forward + backward, joint or split into two functions):
//
//   forward  y  = x·Wᵀ   contracts x and W over the in-features I
//   gx       gx = gy·W   contracts gy and W over the out-features O
//   gw       gw = gyᵀ·x  contracts gy and x over the tokens N
//
// Products are found through the contraction interface, and every operand
// is traced back through value-preserving views (transposes, reshapes, casts,
// float extensions) to its root, so that the same gy, x and W are recognised
// whatever form the frontend emitted.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_TRANSFORMS_BACKWARDMATMULS_H
#define HOT_TRANSFORMS_BACKWARDMATMULS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include <string>

namespace mlir::hot {

/// A value seen through the view-like ops that produced it.
struct ViewTrace {
  /// The value before any view: an op result that is not a view, or a block
  /// argument.
  Value root;
  /// For each dimension of the traced value, the root dimensions it covers.
  SmallVector<SmallVector<int64_t, 2>> rootDims;
};

/// Traces `value` back through linalg.transpose, tensor.collapse_shape,
/// tensor.expand_shape, tensor.cast, arith.extf and elementwise
/// linalg.generics that permute, widen or multiply by one.
ViewTrace traceThroughViews(Value value);

/// Every trace of `value` along the same chain of views, from `value` itself
/// (identity) to the deepest root.
SmallVector<ViewTrace> traceViewChain(Value value);

/// The products of one linear layer y = x·Wᵀ, x: [tokens..., I], W: [O, I].
struct LinearLayer {
  /// The name a product of the layer is tagged with (#hot.layer), else
  /// "layer<k>", numbered in program order of the layer's first product
  /// past the names already taken (tags, the function's hot.layers).
  std::string name;
  /// The products; any one of them may be null, but not both gx and gw: a
  /// layer whose input needs no gradient has no gx, a frozen layer (its
  /// weight receives no gradient) has no gw, a split backward function has
  /// no forward.
  linalg::LinalgOp forward, gx, gw;
  /// Roots of the activation, the output gradient and the weight; x is null
  /// in a frozen layer without its forward.
  Value x, gy, weight;
  /// True if the weight root is Wᵀ: [I, O] (a saved transpose), not [O, I].
  bool weightTransposed = false;
  /// Sizes of the leading (token) dims shared by the x and gy roots: [B, T]
  /// for activations with a sequence dim, [N] for a batch of vectors. The
  /// remaining (trailing) root dims are the features, O for gy, I for x.
  SmallVector<int64_t> tokenShape;
  /// How many leading dims of the x and gy roots are tokens; a root may
  /// flatten the token shape (a saved [B·T, I] x against a [B, T, O] gy).
  int64_t xTokenRank = 0, gyTokenRank = 0;
  int64_t outFeatures = 0, inFeatures = 0;
  /// How gy was found (for remarks): told apart from x in gw, or, in a
  /// frozen layer, told to be a gradient in gx.
  std::string reason;

  int64_t getNumTokens() const;
  /// True if the weight receives no gradient: the layer has no gw.
  bool isFrozen() const { return !gw; }
};

/// A contraction that is not (or not entirely) understood as a layer product.
struct SkippedProduct {
  linalg::LinalgOp op;
  std::string reason;
};

/// The linear layers of one function.
class BackwardMatmulAnalysis {
public:
  explicit BackwardMatmulAnalysis(Operation *function);

  ArrayRef<LinearLayer> getLayers() const { return layers; }
  ArrayRef<SkippedProduct> getSkipped() const { return skipped; }

private:
  /// Names the layers (see LinearLayer::name).
  void nameLayers(Operation *function);

  SmallVector<LinearLayer> layers;
  SmallVector<SkippedProduct> skipped;
};

} // namespace mlir::hot

#endif // HOT_TRANSFORMS_BACKWARDMATMULS_H
