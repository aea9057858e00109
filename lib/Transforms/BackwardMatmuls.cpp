//===- BackwardMatmuls.cpp - Linear layers of a training graph ------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Transforms/BackwardMatmuls.h"
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

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

/// Returns true if the body of `generic` yields its only input unchanged,
/// widened (extf) or multiplied by the constant one.
static bool isValuePreservingBody(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1)
    return false;
  Value input = body.getArgument(0);
  Value yielded = yield.getOperand(0);
  if (yielded == input)
    return true;
  Operation *def = yielded.getDefiningOp();
  if (!def || def->getBlock() != &body)
    return false;
  if (auto ext = dyn_cast<arith::ExtFOp>(def))
    return ext.getIn() == input;
  if (auto mul = dyn_cast<arith::MulFOp>(def)) {
    Value other = mul.getLhs() == input   ? mul.getRhs()
                  : mul.getRhs() == input ? mul.getLhs()
                                          : Value();
    return other && matchPattern(other, m_OneFloat());
  }
  return false;
}

/// For an elementwise generic that only permutes, widens or multiplies by
/// one, the input dim that feeds each result dim; nullopt otherwise.
static std::optional<SmallVector<int64_t>>
getPreservingPermutation(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0 || !isValuePreservingBody(generic))
    return std::nullopt;
  AffineMap inputMap = generic.getIndexingMapsArray()[0];
  AffineMap outputMap = generic.getIndexingMapsArray()[1];
  if (!inputMap.isPermutation() || !outputMap.isIdentity())
    return std::nullopt;
  // Result dim j is loop j; input dim i is loop inputMap(i).
  SmallVector<int64_t> sourceOfResult(inputMap.getNumResults());
  for (auto [i, expr] : llvm::enumerate(inputMap.getResults()))
    sourceOfResult[cast<AffineDimExpr>(expr).getPosition()] = i;
  return sourceOfResult;
}

/// One step up the chain: the trace of `value` in terms of the source of
/// its defining view, or nullopt if `value` is not a view's result.
static std::optional<std::pair<Value, SmallVector<SmallVector<int64_t, 2>>>>
stepThroughView(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Operation *def = value.getDefiningOp();
  if (!type || !def)
    return std::nullopt;
  using Dims = SmallVector<SmallVector<int64_t, 2>>;
  auto permuted = [&](Value source, ArrayRef<int64_t> sourceOf) {
    Dims dims;
    for (int64_t s : sourceOf)
      dims.push_back({s});
    return std::make_pair(source, dims);
  };
  auto same = [&](Value source) {
    return permuted(source,
                    llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())));
  };
  if (auto transpose = dyn_cast<linalg::TransposeOp>(def))
    return permuted(transpose.getInput(), transpose.getPermutation());
  if (auto cast = dyn_cast<tensor::CastOp>(def))
    return same(cast.getSource());
  if (auto ext = dyn_cast<arith::ExtFOp>(def))
    return same(ext.getIn());
  if (auto generic = dyn_cast<linalg::GenericOp>(def)) {
    if (std::optional<SmallVector<int64_t>> sourceOf =
            getPreservingPermutation(generic))
      return permuted(generic.getDpsInputs()[0], *sourceOf);
    return std::nullopt;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    Dims dims;
    for (const ReassociationIndices &group : collapse.getReassociationIndices())
      dims.push_back(SmallVector<int64_t, 2>(group.begin(), group.end()));
    return std::make_pair(collapse.getSrc(), dims);
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    Dims dims(type.getRank());
    for (auto [s, group] : llvm::enumerate(expand.getReassociationIndices()))
      for (int64_t d : group)
        dims[d] = {int64_t(s)};
    return std::make_pair(expand.getSrc(), dims);
  }
  return std::nullopt;
}

SmallVector<ViewTrace> mlir::hot::traceViewChain(Value value) {
  ViewTrace trace{value, {}};
  if (auto type = dyn_cast<RankedTensorType>(value.getType()))
    for (int64_t d = 0; d < type.getRank(); ++d)
      trace.rootDims.push_back({d});
  SmallVector<ViewTrace> chain{trace};
  while (auto step = stepThroughView(chain.back().root)) {
    auto [source, sourceDimsOf] = *step;
    ViewTrace next{source, {}};
    for (ArrayRef<int64_t> dims : chain.back().rootDims) {
      SmallVector<int64_t, 2> rootDims;
      for (int64_t d : dims)
        for (int64_t s : sourceDimsOf[d])
          if (!llvm::is_contained(rootDims, s))
            rootDims.push_back(s);
      next.rootDims.push_back(rootDims);
    }
    chain.push_back(next);
  }
  return chain;
}

ViewTrace mlir::hot::traceThroughViews(Value value) {
  return traceViewChain(value).back();
}

//===----------------------------------------------------------------------===//
// Products
//===----------------------------------------------------------------------===//

namespace {

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

} // namespace

/// Classifies `operand` against one trace of it: which root dims the
/// contraction consumes.
static Operand classifyTrace(linalg::LinalgOp op, OpOperand &operand,
                             const DenseSet<unsigned> &contracted,
                             ViewTrace trace) {
  Operand result{std::move(trace), Side::Other, {}, 0};
  auto rootType = dyn_cast<RankedTensorType>(result.trace.root.getType());
  if (!rootType || rootType.getRank() < 2 || result.trace.rootDims.empty())
    return result;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<int64_t> contractedRoot, freeRoot;
  for (auto [d, expr] : llvm::enumerate(map.getResults())) {
    unsigned loop = cast<AffineDimExpr>(expr).getPosition();
    ArrayRef<int64_t> rootDims = result.trace.rootDims[d];
    if (contracted.contains(loop)) {
      llvm::append_range(contractedRoot, rootDims);
    } else {
      llvm::append_range(freeRoot, rootDims);
      result.freeLoops.push_back(loop);
    }
  }
  llvm::sort(contractedRoot);
  llvm::sort(freeRoot);
  int64_t rank = rootType.getRank();
  auto range = [](int64_t begin, int64_t end) {
    return llvm::to_vector(llvm::seq<int64_t>(begin, end));
  };
  int64_t numContracted = contractedRoot.size();
  if (numContracted == 0 || numContracted == rank)
    return result;
  // Tokens lead, features trail: contracted tokens, or contracted features.
  if (contractedRoot == range(0, numContracted) &&
      freeRoot == range(numContracted, rank)) {
    result.side = Side::Leading;
    result.tokenRank = numContracted;
  } else if (freeRoot == range(0, rank - numContracted) &&
             contractedRoot == range(rank - numContracted, rank)) {
    result.side = Side::Last;
    result.tokenRank = rank - numContracted;
  }
  return result;
}

/// Classifies one operand at the deepest view of it where tokens lead and
/// features trail (a head split permuted into the features stops the trace
/// above it).
static Operand classifyOperand(linalg::LinalgOp op, OpOperand &operand,
                               const DenseSet<unsigned> &contracted) {
  SmallVector<ViewTrace> chain = traceViewChain(operand.get());
  for (ViewTrace &trace : llvm::reverse(chain)) {
    Operand result = classifyTrace(op, operand, contracted, trace);
    if (result.side != Side::Other)
      return result;
  }
  return classifyTrace(op, operand, contracted, chain.front());
}

/// Returns the product view of `op`, or the reason it is none.
static FailureOr<Product> getProduct(linalg::LinalgOp op, std::string &reason) {
  if (op->hasAttr(kRewrittenAttrName)) {
    reason = "already rewritten (the floating-point product of a path that "
             "is not quantized)";
    return failure();
  }
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics()) {
    reason = "not a two-operand contraction on tensors";
    return failure();
  }
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isProjectedPermutation(); })) {
    reason = "indexing maps are not projected permutations";
    return failure();
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims)) {
    reason = "contraction dims cannot be inferred";
    return failure();
  }
  if (!dims->batch.empty()) {
    reason = "a batched product (both operands carry the batch dims, as in "
             "attention); not a linear layer";
    return failure();
  }
  for (OpOperand *operand : op.getDpsInputOperands())
    if (!cast<RankedTensorType>(operand->get().getType()).hasStaticShape()) {
      reason = "dynamic shapes are not supported";
      return failure();
    }
  if (!cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape()) {
    reason = "dynamic shapes are not supported";
    return failure();
  }
  auto isFloat = [](Value v) {
    return isa<FloatType>(getElementTypeOrSelf(v.getType()));
  };
  if (!llvm::all_of(op->getOperands(), isFloat) || !isFloat(op->getResult(0))) {
    reason = "not a floating-point product (HOT rewrites the gradients of "
             "floating-point layers)";
    return failure();
  }
  DenseSet<unsigned> contracted(dims->k.begin(), dims->k.end());
  Product product{op, {}};
  for (int i = 0; i < 2; ++i)
    product.operands[i] =
        classifyOperand(op, *op.getDpsInputOperands()[i], contracted);
  return product;
}

/// Follows `value` through single-use views to a func.return; returns the
/// permutation p with returned dim j == dim p[j] of `value`, if it gets
/// there.
static std::optional<SmallVector<int64_t>> getReturnedLayout(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> layout =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  for (int steps = 0; steps < 8 && value.hasOneUse(); ++steps) {
    Operation *user = *value.getUsers().begin();
    if (isa<func::ReturnOp>(user))
      return layout;
    if (auto transpose = dyn_cast<linalg::TransposeOp>(user)) {
      SmallVector<int64_t> next;
      for (int64_t s : transpose.getPermutation())
        next.push_back(layout[s]);
      layout = next;
      value = transpose->getResult(0);
      continue;
    }
    if (auto generic = dyn_cast<linalg::GenericOp>(user)) {
      std::optional<SmallVector<int64_t>> sourceOf =
          getPreservingPermutation(generic);
      if (!sourceOf)
        return std::nullopt;
      SmallVector<int64_t> next;
      for (int64_t s : *sourceOf)
        next.push_back(layout[s]);
      layout = next;
      value = generic->getResult(0);
      continue;
    }
    if (isa<tensor::CastOp>(user)) {
      value = user->getResult(0);
      continue;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

/// Returns true if `value` is an argument of `function`, possibly viewed
/// (transposed, reshaped) and cast to another float type elementwise (mixed
/// precision casts its parameters).
static bool isParameter(Value value, Operation *function) {
  value = traceThroughViews(value).root;
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner()->getParentOp() == function;
  if (auto cast = value.getDefiningOp<CastOpInterface>())
    return cast->getNumOperands() == 1 &&
           isParameter(cast->getOperand(0), function);
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *def = yield.getNumOperands() == 1
                       ? yield.getOperand(0).getDefiningOp()
                       : nullptr;
  return def && isa<arith::TruncFOp, arith::ExtFOp>(def) &&
         def->getOperand(0) == body.getArgument(0) &&
         isParameter(generic.getDpsInputs()[0], function);
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

/// Returns true if operand `activation` of `p` is an activation contracted
/// over its last (feature) dims against a rank-2 weight: a forward or gx.
static bool isActivationProduct(const Product &p, int activation) {
  return p.operands[activation].side == Side::Last &&
         p.operands[1 - activation].rootRank() == 2 &&
         p.operands[1 - activation].side != Side::Other;
}

/// Adds the frozen layers among the products of `function` no layer claimed
/// to `layers`, and claims their products. A parameter that receives no
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
static void findFrozenLayers(Operation *function, ArrayRef<Product> products,
                             DenseSet<Operation *> &claimed,
                             SmallVectorImpl<LinearLayer> &layers) {
  // The unclaimed products with a parameter weight, by its root.
  DenseMap<Value, SmallVector<std::pair<const Product *, int>, 2>> byWeight;
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
  auto findFrozenForward =
      [&](const Product &p, int gyIndex,
          bool computedFrom) -> std::pair<const Product *, int> {
    const Operand &gy = p.operands[gyIndex], &weight = p.operands[1 - gyIndex];
    for (auto [f, a] : byWeight.lookup(weight.trace.root))
      if (f != &p && !claimed.contains(f->op) &&
          f->operands[1 - a].side != weight.side &&
          ShapedType::getNumElements(f->operands[a].tokenShape()) ==
              ShapedType::getNumElements(gy.tokenShape()) &&
          (!computedFrom ||
           fromSources.isComputedFrom(gy.trace.root, f->op->getResult(0))))
        return {f, a};
    return {nullptr, 0};
  };
  // Rule a holds along a chain of a weight's products too: a tied weight
  // used as an embedding (onehot·E) and as the output head (h·Eᵀ, h computed
  // from the embedding) has the form of a forward and its gx. The gx ends
  // the chain (the gradient is computed from the whole forward): a product
  // that is the forward of another's gx by rule a is no gx.
  DenseSet<Operation *> forwardsByRuleA;
  for (auto &[weight, uses] : byWeight)
    for (auto [q, a] : uses)
      if (auto [f, fa] = findFrozenForward(*q, a, /*computedFrom=*/true); f)
        forwardsByRuleA.insert(f->op);
  auto addFrozenLayer = [&](const Product &p, int gyIndex,
                            std::pair<const Product *, int> forward,
                            StringRef reason) {
    const Operand &gy = p.operands[gyIndex], &weight = p.operands[1 - gyIndex];
    LinearLayer layer;
    layer.reason = reason.str();
    layer.gx = p.op;
    layer.gy = gy.trace.root;
    layer.weight = weight.trace.root;
    // gx contracts W over O: dim 0 of [O, I], dim 1 of [I, O].
    layer.weightTransposed = weight.side == Side::Last;
    ArrayRef<int64_t> w = weight.rootShape();
    layer.outFeatures = layer.weightTransposed ? w[1] : w[0];
    layer.inFeatures = layer.weightTransposed ? w[0] : w[1];
    layer.tokenShape = llvm::to_vector(gy.tokenShape());
    layer.gyTokenRank = gy.tokenRank;
    claimed.insert(p.op);
    if (auto [f, a] = forward; f) {
      layer.forward = f->op;
      layer.x = f->operands[a].trace.root;
      layer.xTokenRank = f->operands[a].tokenRank;
      claimed.insert(f->op);
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
      if (!isActivationProduct(p, a) ||
          !isParameter(p.operands[1 - a].trace.root, function))
        continue;
      if (auto forward = findFrozenForward(p, a, /*computedFrom=*/true);
          forward.first) {
        addFrozenLayer(p, a, forward,
                       "gy being computed from the layer's forward y = x·Wᵀ");
        break;
      }
      if (fromSources.isComputedFromAny(p.operands[a].trace.root, gradients)) {
        addFrozenLayer(p, a, findFrozenForward(p, a, /*computedFrom=*/false),
                       ruleB);
        break;
      }
    }
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

  // Weight gradients contract both operands over their leading (token)
  // dims; gx and forward products contract an activation over its last dim
  // against a rank-2 weight.
  DenseSet<Operation *> claimed;
  // Products by the root of their activation operand, so that finding a
  // layer's gx and forward costs its own products, not the function's.
  DenseMap<Value, SmallVector<std::pair<const Product *, int>, 2>> byActivation;
  for (const Product &p : products)
    for (int a = 0; a < 2; ++a)
      if (isActivationProduct(p, a))
        byActivation[p.operands[a].trace.root].push_back({&p, a});
  auto findPartner = [&](Value activationRoot,
                         Value weightRoot) -> std::pair<const Product *, int> {
    auto it = byActivation.find(activationRoot);
    if (it == byActivation.end())
      return {nullptr, 0};
    for (auto [p, a] : it->second)
      if (!claimed.contains(p->op) &&
          (!weightRoot || p->operands[1 - a].trace.root == weightRoot))
        return {p, a};
    return {nullptr, 0};
  };
  // gy's product with a weight that x also meets (in the forward), else its
  // first product: layers summed into one output share gy (parallel
  // attention and MLP blocks), and their gx differ in W.
  auto findGx = [&](const LinearLayer &layer) {
    auto it = byActivation.find(layer.gy);
    if (it != byActivation.end())
      for (auto [p, a] : it->second)
        if (!claimed.contains(p->op) &&
            findPartner(layer.x, p->operands[1 - a].trace.root).first)
          return std::make_pair(p, a);
    return findPartner(layer.gy, Value());
  };

  // x's product with the layer's weight; without one (no gx), x's first
  // product with a parameter of the layer's shape: x may also feed other
  // layers (q, k and v; a frozen layer beside a trained one).
  auto findForward = [&](const LinearLayer &layer) {
    if (layer.weight)
      return findPartner(layer.x, layer.weight);
    auto it = byActivation.find(layer.x);
    if (it != byActivation.end())
      for (auto [p, a] : it->second) {
        const Operand &weight = p->operands[1 - a];
        if (claimed.contains(p->op) ||
            !isParameter(weight.trace.root, function))
          continue;
        // The forward contracts W over I: dim 1 of [O, I], dim 0 of [I, O].
        ArrayRef<int64_t> w = weight.rootShape();
        bool oi = weight.side == Side::Last;
        if ((oi ? w[0] : w[1]) == layer.outFeatures &&
            (oi ? w[1] : w[0]) == layer.inFeatures)
          return std::make_pair(p, a);
      }
    return std::pair<const Product *, int>(nullptr, 0);
  };

  // The roots of the operands of products over tokens, for telling gy from
  // x by what is computed from what.
  SmallVector<Value> tokenOperandRoots;
  for (const Product &p : products)
    if (p.operands[0].side == Side::Leading &&
        p.operands[1].side == Side::Leading)
      for (const Operand &operand : p.operands)
        tokenOperandRoots.push_back(operand.trace.root);
  Provenance provenance(function, tokenOperandRoots);

  // Whether an activation meets a parameter in a product no layer claimed.
  auto hasWeightProduct = [&](Value activationRoot) {
    auto it = byActivation.find(activationRoot);
    return it != byActivation.end() &&
           llvm::any_of(it->second, [&](std::pair<const Product *, int> pa) {
             auto [p, a] = pa;
             return !claimed.contains(p->op) &&
                    isParameter(p->operands[1 - a].trace.root, function);
           });
  };

  // Builds the layer of the weight-gradient product `p` whose operand
  // `gyIndex` is gy, with its gx and forward.
  auto addLayer = [&](const Product &p, int gyIndex, std::string reason) {
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

    auto [gxProduct, gxActivation] = findGx(layer);
    if (gxProduct) {
      const Operand &weight = gxProduct->operands[1 - gxActivation];
      claimed.insert(gxProduct->op);
      if (!isParameter(weight.trace.root, function)) {
        skipped.push_back({gxProduct->op,
                           "its weight operand is computed in the graph, "
                           "not a parameter (function argument)"});
      } else {
        layer.gx = gxProduct->op;
        layer.weight = weight.trace.root;
        layer.weightTransposed = weight.side == Side::Last;
        ArrayRef<int64_t> w = weight.rootShape();
        int64_t o = layer.weightTransposed ? w[1] : w[0];
        int64_t i = layer.weightTransposed ? w[0] : w[1];
        if (o != layer.outFeatures || i != layer.inFeatures) {
          skipped.push_back({gxProduct->op, "its weight shape does not "
                                            "match the weight gradient"});
          layer.gx = nullptr;
          layer.weight = nullptr;
        }
      }
    }
    auto [forwardProduct, forwardActivation] = findForward(layer);
    if (forwardProduct) {
      layer.forward = forwardProduct->op;
      claimed.insert(forwardProduct->op);
      if (!layer.weight) {
        const Operand &weight = forwardProduct->operands[1 - forwardActivation];
        layer.weight = weight.trace.root;
        // The forward contracts W over I: its last dim unless transposed.
        layer.weightTransposed = weight.side == Side::Leading;
      }
    }
    layers.push_back(std::move(layer));
  };

  // Layers whose gy the graph tells from x first; the others then follow
  // the layout of the function's weight gradients told so (gy's dim first,
  // as torch lays out its weights, or x's, as JAX does), else torch's.
  SmallVector<const Product *> undecided;
  int gyFirstVotes = 0;
  for (Product &p : products) {
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
            findOutputGradient(p, provenance, hasWeightProduct, reason)) {
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
