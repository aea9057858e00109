//===- FrozenLayers.cpp - Layers whose weight receives no gradient
//----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Products.h"
#include "Provenance.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::hot;

/// The arguments of `function` that some layer's gy is computed from and no
/// layer's x is, and that are no weight (of a layer, or as `isWeight` says):
/// in a backward graph, the incoming gradients (d(loss)), not the saved
/// activations and weights.
static SmallVector<Value>
getIncomingGradients(Operation *function, ArrayRef<LinearLayer> layers,
                     function_ref<bool(Value)> isWeight) {
  // The arguments a set of roots is computed from, by a walk up the operands
  // (of the ops nested in an op too) that visits each op once.
  auto reachedArguments = [&](ArrayRef<Value> roots) {
    llvm::SetVector<Value> arguments;
    DenseSet<Operation *> visited;
    SmallVector<Value> worklist(roots);
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (arg.getOwner()->getParentOp() == function)
          arguments.insert(arg);
        continue;
      }
      Operation *def = value.getDefiningOp();
      if (!visited.insert(def).second)
        continue;
      def->walk([&](Operation *op) {
        for (Value operand : op->getOperands())
          if (!def->isAncestor(operand.getParentRegion()->getParentOp()))
            worklist.push_back(operand);
      });
    }
    return arguments;
  };
  SmallVector<Value> gys, xs;
  DenseSet<Value> weights;
  for (const LinearLayer &layer : layers) {
    gys.push_back(layer.gy);
    if (layer.x)
      xs.push_back(layer.x);
    if (layer.weight)
      weights.insert(layer.weight);
  }
  llvm::SetVector<Value> fromX = reachedArguments(xs);
  SmallVector<Value> incoming;
  for (Value arg : reachedArguments(gys))
    if (!fromX.contains(arg) && !weights.contains(arg) && !isWeight(arg))
      incoming.push_back(arg);
  return incoming;
}

/// A parameter that receives no
/// gradient has no gw, yet the layers below it may still need their gy through
/// it, gx = gy·W (LoRA's base weights; a frozen layer above trained ones). Such
/// a gx is the product of a parameter W with a gradient, an activation that is
///   a. computed from y = x·Wᵀ, the forward of the same W (which contracts
///      W's other dim): a joint graph's loss is computed from y, and gy
///      from the loss; or
///   b. the gy of a layer found above, or computed from one; or, in a
///      backward graph without its forward, computed from the gradients
///      the graph receives (d(loss): the arguments the layers' gy are
///      computed from and their x are not).
void mlir::hot::findFrozenLayers(Operation *function,
                                 ArrayRef<Product> products,
                                 DenseSet<Operation *> &claimed,
                                 SmallVectorImpl<LinearLayer> &layers) {
  // The unclaimed products with a parameter weight, by its root.
  DenseMap<Value, SmallVector<ProductUse, 2>> byWeight;
  SmallVector<Value> sources;
  for (const Product &p : products)
    for (int a = 0; a < 2; ++a)
      if (!claimed.contains(p.op) && isActivationProduct(p, a) &&
          isParameter(p.operands[1 - a].trace.root, function)) {
        byWeight[p.operands[1 - a].trace.root].push_back({&p, a});
        sources.push_back(p.op->getResult(0));
      }
  // Without an unclaimed product of a parameter there is no frozen layer.
  if (byWeight.empty())
    return;
  SmallVector<Value> gradients;
  for (const LinearLayer &layer : layers)
    gradients.push_back(layer.gy);
  bool backwardOnly =
      !layers.empty() &&
      llvm::none_of(layers, [](const LinearLayer &l) { return l.forward; });
  if (backwardOnly)
    llvm::append_range(gradients,
                       getIncomingGradients(function, layers, [&](Value arg) {
                         return byWeight.contains(arg);
                       }));
  llvm::append_range(sources, gradients);
  Provenance fromSources(function, sources);
  // The forward of the frozen layer whose gx is operand `gyIndex` of `p`
  // against W, on as many tokens: the one gy is computed from (rule a), else
  // the first; nullptr if none.
  auto findFrozenForward = [&](ProductUse gx, bool computedFrom) -> ProductUse {
    const Operand &gy = gx.getActivation(), &weight = gx.getWeight();
    for (ProductUse f : byWeight.lookup(weight.trace.root))
      if (f.product != gx.product && !claimed.contains(f.op()) &&
          f.getWeight().side != weight.side &&
          ShapedType::getNumElements(f.getActivation().tokenShape()) ==
              ShapedType::getNumElements(gy.tokenShape()) &&
          (!computedFrom ||
           fromSources.isComputedFrom(gy.trace.root, f.op()->getResult(0))))
        return f;
    return {};
  };
  // Rule a holds along a chain of a weight's products too: a tied weight
  // used as an embedding (onehot·E) and as the output head (h·Eᵀ, h computed
  // from the embedding) has the form of a forward and its gx. The gx ends
  // the chain (the gradient is computed from the whole forward): a product
  // that is the forward of another's gx by rule a is no gx.
  DenseSet<Operation *> forwardsByRuleA;
  for (auto &[weight, uses] : byWeight)
    for (ProductUse use : uses)
      if (ProductUse f = findFrozenForward(use, /*computedFrom=*/true))
        forwardsByRuleA.insert(f.op());
  auto addFrozenLayer = [&](ProductUse gx, ProductUse forward,
                            StringRef reason) {
    const Operand &gy = gx.getActivation(), &weight = gx.getWeight();
    LinearLayer layer;
    layer.reason = reason.str();
    layer.gx = gx.op();
    layer.gy = gy.trace.root;
    layer.weight = weight.trace.root;
    // gx contracts W over O: dim 0 of [O, I], dim 1 of [I, O].
    layer.weightTransposed = weight.side == Side::Last;
    ArrayRef<int64_t> w = weight.rootShape();
    layer.outFeatures = layer.weightTransposed ? w[1] : w[0];
    layer.inFeatures = layer.weightTransposed ? w[0] : w[1];
    layer.tokenShape = llvm::to_vector(gy.tokenShape());
    layer.gyTokenRank = gy.tokenRank;
    claimed.insert(gx.op());
    if (forward) {
      layer.forward = forward.op();
      layer.x = forward.getActivation().trace.root;
      layer.xTokenRank = forward.getActivation().tokenRank;
      claimed.insert(forward.op());
    }
    layers.push_back(std::move(layer));
  };
  StringRef ruleB = backwardOnly
                        ? "gy being computed from the gradients of a backward "
                          "graph without its forward"
                        : "gy being computed from another layer's gy";
  for (const Product &p : products) {
    if (claimed.contains(p.op) || forwardsByRuleA.contains(p.op))
      continue;
    for (int a = 0; a < 2; ++a) {
      ProductUse gx{&p, a};
      if (!isActivationProduct(p, a) ||
          !isParameter(gx.getWeight().trace.root, function))
        continue;
      if (ProductUse forward = findFrozenForward(gx, /*computedFrom=*/true)) {
        addFrozenLayer(gx, forward,
                       "gy being computed from the layer's forward y = x·Wᵀ");
        break;
      }
      if (fromSources.isComputedFromAny(gx.getActivation().trace.root,
                                        gradients)) {
        addFrozenLayer(gx, findFrozenForward(gx, /*computedFrom=*/false),
                       ruleB);
        break;
      }
    }
  }
}
