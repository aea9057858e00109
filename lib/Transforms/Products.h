//===- Products.h - Contractions seen as candidate layer products -*- C++
//-*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// The internals of BackwardMatmulAnalysis: every two-operand contraction of
// a function seen at the roots of its operands (which root dims it
// contracts), and the search for the frozen layers among them.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_LIB_TRANSFORMS_PRODUCTS_H
#define HOT_LIB_TRANSFORMS_PRODUCTS_H

#include "hot/Transforms/BackwardMatmuls.h"
#include "llvm/ADT/DenseSet.h"
#include <optional>

namespace mlir::hot {

/// Along which root dims an operand of a product is contracted.
enum class Side { Leading, Last, Other };

/// One operand of a two-operand contraction, seen at its root.
struct Operand {
  ViewTrace trace;
  Side side = Side::Other;
  /// The product's loops that carry the operand's free root dims.
  SmallVector<unsigned> freeLoops;
  /// How many leading root dims are tokens (the rest are features).
  int64_t tokenRank = 0;

  int64_t rootRank() const {
    return cast<RankedTensorType>(trace.root.getType()).getRank();
  }
  ArrayRef<int64_t> rootShape() const {
    return cast<RankedTensorType>(trace.root.getType()).getShape();
  }
  ArrayRef<int64_t> tokenShape() const {
    return rootShape().take_front(tokenRank);
  }
  int64_t featureSize() const {
    int64_t size = 1;
    for (int64_t s : rootShape().drop_front(tokenRank))
      size *= s;
    return size;
  }
};

/// A contraction without batch dims: the candidate products of layers.
struct Product {
  linalg::LinalgOp op;
  Operand operands[2];
};

/// A product seen from one of its operands, the activation; the other is
/// the weight. Empty when no product was found.
struct ProductUse {
  const Product *product = nullptr;
  int activation = 0;

  explicit operator bool() const { return product; }
  linalg::LinalgOp op() const { return product->op; }
  const Operand &getActivation() const { return product->operands[activation]; }
  const Operand &getWeight() const { return product->operands[1 - activation]; }
};

/// Returns the product view of `op`, or the reason it is none.
FailureOr<Product> getProduct(linalg::LinalgOp op, std::string &reason);

/// Returns true if operand `activation` of `p` is an activation contracted
/// over its last (feature) dims against a rank-2 weight: a forward or gx.
bool isActivationProduct(const Product &p, int activation);

/// Returns true if `value` is an argument of `function`, possibly viewed
/// (transposed, reshaped) and cast to another float type elementwise (mixed
/// precision casts its parameters).
bool isParameter(Value value, Operation *function);

/// Follows `value` through single-use views to a func.return; returns the
/// permutation p with returned dim j == dim p[j] of `value`, if it gets
/// there.
std::optional<SmallVector<int64_t>> getReturnedLayout(Value value);

/// Adds the frozen layers among the `products` of `function` that no layer
/// claimed to `layers`, and claims their products (FrozenLayers.cpp).
void findFrozenLayers(Operation *function, ArrayRef<Product> products,
                      llvm::DenseSet<Operation *> &claimed,
                      SmallVectorImpl<LinearLayer> &layers);

} // namespace mlir::hot

#endif // HOT_LIB_TRANSFORMS_PRODUCTS_H
