//===- BackwardMatmuls.cpp - Linear layers of a training graph ------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Transforms/BackwardMatmuls.h"
#include "Products.h"
#include "Provenance.h"
#include "hot/Transforms/LayerTags.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::hot;

int64_t LinearLayer::getNumTokens() const {
  return ShapedType::getNumElements(tokenShape);
}

/// Returns true if `value`, or a view of it, is an operand of a
/// contraction.
static bool isContractedAgain(Value value) {
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (isa<linalg::TransposeOp, tensor::CollapseShapeOp,
              tensor::ExpandShapeOp, tensor::CastOp>(user)) {
        if (use.getOperandNumber() == 0)
          worklist.push_back(user->getResult(0));
        continue;
      }
      auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
      if (linalgOp && linalg::isaContractionOpInterface(linalgOp) &&
          linalgOp.isDpsInput(&use))
        return true;
    }
  }
  return false;
}

/// Why the product over tokens `p` cannot be a weight gradient; empty if it
/// can.
static StringRef whyNotWeightGradient(const Product &p) {
  const Operand &lhs = p.operands[0], &rhs = p.operands[1];
  if (lhs.trace.root == rhs.trace.root)
    return "a Gram matrix (a value against itself, as in style losses or "
           "second-order statistics), not a weight gradient";
  if (ShapedType::getNumElements(lhs.tokenShape()) !=
      ShapedType::getNumElements(rhs.tokenShape()))
    return "the two operands of a product over tokens have different token "
           "shapes";
  linalg::LinalgOp op = p.op;
  if (op.getIndexingMapsArray()[2].getNumResults() != 2 ||
      lhs.freeLoops.size() != 1 || rhs.freeLoops.size() != 1)
    return "a product over tokens whose result is not a matrix of features";
  if (isContractedAgain(p.op->getResult(0)))
    return "a product over tokens whose result is an operand of another "
           "product (an activation's gradient, as in attention), not a "
           "weight gradient";
  return "";
}

/// Tells gy from x among the two operands of a weight-gradient product `p`
/// by the graph; returns the index of gy and sets `reason` to how it was
/// told, or nullopt. x and W alone do not decide: the forward x·Wᵀ of
/// torch's [O, I] weights has the form of JAX's gx gy·Kᵀ ([I, O] kernels),
/// and the weight gradient has W's layout in both. What does decide, in
/// this order:
///   1. a joint graph computes gy from x (y = x·Wᵀ feeds the loss whose
///      gradient gy is), never the reverse;
///   2. a loss linear in y makes gy a constant, computed from no argument;
///   3. a backward graph without its forward meets W in gx only, so gy is the
///      operand that meets a weight.
static std::optional<int>
findOutputGradient(const Product &p, const Provenance &provenance,
                   function_ref<bool(Value)> hasWeightProduct,
                   std::string &reason) {
  Value roots[2] = {p.operands[0].trace.root, p.operands[1].trace.root};
  for (int i = 0; i < 2; ++i)
    if (provenance.isComputedFrom(roots[i], roots[1 - i])) {
      reason = "gy being computed from x";
      return i;
    }
  bool constant[2] = {provenance.isConstant(roots[0]),
                      provenance.isConstant(roots[1])};
  if (constant[0] != constant[1]) {
    reason = "gy being computed from no argument (a loss linear in y)";
    return constant[0] ? 0 : 1;
  }
  bool meetsWeight[2] = {hasWeightProduct(roots[0]),
                         hasWeightProduct(roots[1])};
  if (meetsWeight[0] != meetsWeight[1]) {
    reason = "gy alone meeting a weight (a backward graph without its "
             "forward)";
    return meetsWeight[0] ? 0 : 1;
  }
  return std::nullopt;
}

/// The operand of the weight-gradient product `p` that provides dim 0 of
/// the gradient as the function returns it (a parameter's layout), else of
/// the product.
static int getFirstDimOperand(const Product &p) {
  linalg::LinalgOp op = p.op;
  SmallVector<unsigned> resultLoops;
  for (AffineExpr e : op.getIndexingMapsArray()[2].getResults())
    resultLoops.push_back(cast<AffineDimExpr>(e).getPosition());
  unsigned firstLoop = resultLoops[0];
  if (std::optional<SmallVector<int64_t>> layout =
          getReturnedLayout(p.op->getResult(0)))
    firstLoop = resultLoops[(*layout)[0]];
  return p.operands[0].freeLoops[0] == firstLoop ? 0 : 1;
}

namespace {
/// Finds the trained layers of a function: one per weight-gradient product
/// (both operands contracted over their leading token dims), with the gx
/// and forward products that share its operands.
class TrainedLayerFinder {
public:
  TrainedLayerFinder(Operation *function, ArrayRef<Product> products,
                     DenseSet<Operation *> &claimed,
                     SmallVectorImpl<LinearLayer> &layers,
                     SmallVectorImpl<SkippedProduct> &skipped);

  /// Adds the layers, claims their products, and records the products over
  /// tokens that are no weight gradient as skipped.
  void run();

private:
  /// An unclaimed product of the activation `activationRoot`, with the
  /// weight `weightRoot` if given.
  ProductUse findPartner(Value activationRoot, Value weightRoot) const;
  /// gy's product with a weight that x also meets (in the forward), else its
  /// first product: layers summed into one output share gy (parallel
  /// attention and MLP blocks), and their gx differ in W.
  ProductUse findGx(const LinearLayer &layer) const;
  /// x's product with the layer's weight; without one (no gx), x's first
  /// product with a parameter of the layer's shape: x may also feed other
  /// layers (q, k and v; a frozen layer beside a trained one).
  ProductUse findForward(const LinearLayer &layer) const;
  /// Whether an activation meets a parameter in a product no layer claimed.
  bool hasWeightProduct(Value activationRoot) const;
  /// Builds the layer of the weight-gradient product `p` whose operand
  /// `gyIndex` is gy, with its gx and forward.
  void addLayer(const Product &p, int gyIndex, std::string reason);
  /// Sets the layer's gx and weight from `gx`, unless the weight is computed
  /// or of another shape (then the product is skipped).
  void setGx(LinearLayer &layer, ProductUse gx);

  Operation *function;
  ArrayRef<Product> products;
  DenseSet<Operation *> &claimed;
  SmallVectorImpl<LinearLayer> &layers;
  SmallVectorImpl<SkippedProduct> &skipped;
  /// Products by the root of their activation operand, so that finding a
  /// layer's gx and forward costs its own products, not the function's.
  DenseMap<Value, SmallVector<ProductUse, 2>> byActivation;
  /// What the operands of products over tokens are computed from, for
  /// telling gy from x.
  Provenance provenance;
};
} // namespace

/// The roots of the operands of products over tokens.
static SmallVector<Value> getTokenOperandRoots(ArrayRef<Product> products) {
  SmallVector<Value> roots;
  for (const Product &p : products)
    if (p.operands[0].side == Side::Leading &&
        p.operands[1].side == Side::Leading)
      for (const Operand &operand : p.operands)
        roots.push_back(operand.trace.root);
  return roots;
}

TrainedLayerFinder::TrainedLayerFinder(Operation *function,
                                       ArrayRef<Product> products,
                                       DenseSet<Operation *> &claimed,
                                       SmallVectorImpl<LinearLayer> &layers,
                                       SmallVectorImpl<SkippedProduct> &skipped)
    : function(function), products(products), claimed(claimed), layers(layers),
      skipped(skipped), provenance(function, getTokenOperandRoots(products)) {
  for (const Product &p : products)
    for (int a = 0; a < 2; ++a)
      if (isActivationProduct(p, a))
        byActivation[p.operands[a].trace.root].push_back({&p, a});
}

ProductUse TrainedLayerFinder::findPartner(Value activationRoot,
                                           Value weightRoot) const {
  auto it = byActivation.find(activationRoot);
  if (it == byActivation.end())
    return {};
  for (ProductUse use : it->second)
    if (!claimed.contains(use.op()) &&
        (!weightRoot || use.getWeight().trace.root == weightRoot))
      return use;
  return {};
}

ProductUse TrainedLayerFinder::findGx(const LinearLayer &layer) const {
  auto it = byActivation.find(layer.gy);
  if (it != byActivation.end())
    for (ProductUse use : it->second)
      if (!claimed.contains(use.op()) &&
          findPartner(layer.x, use.getWeight().trace.root))
        return use;
  return findPartner(layer.gy, Value());
}

ProductUse TrainedLayerFinder::findForward(const LinearLayer &layer) const {
  if (layer.weight)
    return findPartner(layer.x, layer.weight);
  auto it = byActivation.find(layer.x);
  if (it == byActivation.end())
    return {};
  for (ProductUse use : it->second) {
    const Operand &weight = use.getWeight();
    if (claimed.contains(use.op()) || !isParameter(weight.trace.root, function))
      continue;
    // The forward contracts W over I: dim 1 of [O, I], dim 0 of [I, O].
    ArrayRef<int64_t> w = weight.rootShape();
    bool oi = weight.side == Side::Last;
    if ((oi ? w[0] : w[1]) == layer.outFeatures &&
        (oi ? w[1] : w[0]) == layer.inFeatures)
      return use;
  }
  return {};
}

bool TrainedLayerFinder::hasWeightProduct(Value activationRoot) const {
  auto it = byActivation.find(activationRoot);
  return it != byActivation.end() &&
         llvm::any_of(it->second, [&](ProductUse use) {
           return !claimed.contains(use.op()) &&
                  isParameter(use.getWeight().trace.root, function);
         });
}

void TrainedLayerFinder::setGx(LinearLayer &layer, ProductUse gx) {
  const Operand &weight = gx.getWeight();
  claimed.insert(gx.op());
  if (!isParameter(weight.trace.root, function)) {
    skipped.push_back({gx.op(), "its weight operand is computed in the graph, "
                                "not a parameter (function argument)"});
    return;
  }
  bool transposed = weight.side == Side::Last;
  ArrayRef<int64_t> w = weight.rootShape();
  if ((transposed ? w[1] : w[0]) != layer.outFeatures ||
      (transposed ? w[0] : w[1]) != layer.inFeatures) {
    skipped.push_back(
        {gx.op(), "its weight shape does not match the weight gradient"});
    return;
  }
  layer.gx = gx.op();
  layer.weight = weight.trace.root;
  layer.weightTransposed = transposed;
}

void TrainedLayerFinder::addLayer(const Product &p, int gyIndex,
                                  std::string reason) {
  LinearLayer layer;
  layer.reason = std::move(reason);
  const Operand &gy = p.operands[gyIndex], &x = p.operands[1 - gyIndex];
  layer.gw = p.op;
  layer.gy = gy.trace.root;
  layer.x = x.trace.root;
  // The more structured of the two token shapes ([B, T] over [B·T]).
  layer.tokenShape = llvm::to_vector(
      gy.tokenRank >= x.tokenRank ? gy.tokenShape() : x.tokenShape());
  layer.gyTokenRank = gy.tokenRank;
  layer.xTokenRank = x.tokenRank;
  layer.outFeatures = gy.featureSize();
  layer.inFeatures = x.featureSize();
  claimed.insert(p.op);

  if (ProductUse gx = findGx(layer))
    setGx(layer, gx);
  if (ProductUse forward = findForward(layer)) {
    layer.forward = forward.op();
    claimed.insert(forward.op());
    if (!layer.weight) {
      const Operand &weight = forward.getWeight();
      layer.weight = weight.trace.root;
      // The forward contracts W over I: its last dim unless transposed.
      layer.weightTransposed = weight.side == Side::Leading;
    }
  }
  layers.push_back(std::move(layer));
}

void TrainedLayerFinder::run() {
  // Layers whose gy the graph tells from x first; the others then follow
  // the layout of the function's weight gradients told so (gy's dim first,
  // as torch lays out its weights, or x's, as JAX does), else torch's.
  SmallVector<const Product *> undecided;
  int gyFirstVotes = 0;
  auto hasWeight = [&](Value root) { return hasWeightProduct(root); };
  for (const Product &p : products) {
    const Operand &lhs = p.operands[0], &rhs = p.operands[1];
    if (lhs.side != Side::Leading || rhs.side != Side::Leading)
      continue;
    if (StringRef reason = whyNotWeightGradient(p); !reason.empty()) {
      skipped.push_back({p.op, reason.str()});
      claimed.insert(p.op);
      continue;
    }
    std::string reason;
    if (std::optional<int> gyIndex =
            findOutputGradient(p, provenance, hasWeight, reason)) {
      gyFirstVotes += getFirstDimOperand(p) == *gyIndex ? 1 : -1;
      addLayer(p, *gyIndex, reason);
    } else {
      undecided.push_back(&p);
    }
  }
  for (const Product *p : undecided) {
    int first = getFirstDimOperand(*p);
    if (gyFirstVotes > 0)
      addLayer(*p, first,
               "the layout of the function's other weight gradients (gy's "
               "dim first)");
    else if (gyFirstVotes < 0)
      addLayer(*p, 1 - first,
               "the layout of the function's other weight gradients (x's "
               "dim first)");
    else
      addLayer(*p, first,
               "torch's convention (gw laid out [O, I]; nothing in the graph "
               "tells them apart)");
  }
}

BackwardMatmulAnalysis::BackwardMatmulAnalysis(Operation *function) {
  // Program order, for naming and for stable results.
  DenseMap<Operation *, unsigned> position;
  SmallVector<Product, 0> products;
  function->walk([&](linalg::LinalgOp op) {
    position[op] = position.size();
    if (!linalg::isaContractionOpInterface(op))
      return;
    std::string reason;
    FailureOr<Product> product = getProduct(op, reason);
    if (failed(product)) {
      skipped.push_back({op, reason});
      return;
    }
    products.push_back(*product);
  });

  // Trained layers first (anchored on their gw), then the frozen ones among
  // the products left.
  DenseSet<Operation *> claimed;
  TrainedLayerFinder(function, products, claimed, layers, skipped).run();
  findFrozenLayers(function, products, claimed, layers);

  for (const Product &p : products)
    if (!claimed.contains(p.op))
      skipped.push_back(
          {p.op, "not part of a linear layer: no weight-gradient product "
                 "(a contraction over tokens) shares its operands, and no "
                 "operand is a gradient against a parameter"});

  auto firstPosition = [&](const LinearLayer &layer) {
    unsigned first = std::numeric_limits<unsigned>::max();
    for (linalg::LinalgOp op : {layer.gw, layer.forward, layer.gx})
      if (op)
        first = std::min(first, position[op]);
    return first;
  };
  llvm::sort(layers, [&](const LinearLayer &a, const LinearLayer &b) {
    return firstPosition(a) < firstPosition(b);
  });
  nameLayers(function);
}

void BackwardMatmulAnalysis::nameLayers(Operation *function) {
  // A layer keeps the name a product of it is tagged with (by an earlier
  // pass, or by hand), so that a second run of the pipeline names the
  // layers it left alone as the first did; the others are layer0, layer1,
  // ... in program order, past the names taken by tags and by the
  // function's records of earlier rewrites.
  llvm::StringSet<> taken;
  if (auto records =
          function->getAttrOfType<ArrayAttr>(kLayerDecisionsAttrName))
    for (Attribute record : records)
      if (auto dict = dyn_cast<DictionaryAttr>(record))
        if (auto name = dict.getAs<StringAttr>("name"))
          taken.insert(name.getValue());
  SmallVector<StringRef> tagged(layers.size());
  for (auto [i, layer] : llvm::enumerate(layers))
    for (linalg::LinalgOp op : {layer.gw, layer.gx, layer.forward}) {
      auto tag = op ? op->getAttrOfType<LayerAttr>(kLayerAttrName) : nullptr;
      if (tag && !tag.getName().getValue().empty()) {
        tagged[i] = tag.getName().getValue();
        break;
      }
    }
  llvm::StringSet<> used;
  for (auto [i, layer] : llvm::enumerate(layers))
    if (!tagged[i].empty() && used.insert(tagged[i]).second)
      layer.name = tagged[i].str();
  unsigned next = 0;
  for (LinearLayer &layer : layers) {
    while (layer.name.empty()) {
      std::string name = llvm::formatv("layer{0}", next++).str();
      if (!taken.contains(name) && used.insert(name).second)
        layer.name = name;
    }
  }
}
