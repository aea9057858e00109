//===- BackwardRewrites.cpp - HOT rewrites of gx and gw -------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Transforms/BackwardRewrites.h"
#include "hot/Dialect/Hot/HotOps.h"
#include "hot/Dialect/Hot/Walsh.h"
#include "hot/Transforms/LayerTags.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::hot;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Returns true if `init` is provably all zeros (a zero fill or constant).
static bool isZeroInit(Value init) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
           matchPattern(fill.getInputs()[0], m_Zero());
  return matchPattern(init, m_AnyZeroFloat()) || matchPattern(init, m_Zero());
}

/// Converts a float tensor to f32 (extf/truncf elementwise on the tensor).
static Value toF32(OpBuilder &b, Location loc, Value value) {
  auto type = tensorType(value);
  Type f32 = b.getF32Type();
  if (type.getElementType() == f32)
    return value;
  auto target = type.clone(f32);
  if (type.getElementTypeBitWidth() < 32)
    return arith::ExtFOp::create(b, loc, target, value);
  return arith::TruncFOp::create(b, loc, target, value);
}

static Value convertElementType(OpBuilder &b, Location loc, Value value,
                                Type elementType) {
  auto type = tensorType(value);
  if (type.getElementType() == elementType)
    return value;
  auto target = type.clone(elementType);
  if (elementType.getIntOrFloatBitWidth() > type.getElementTypeBitWidth())
    return arith::ExtFOp::create(b, loc, target, value);
  return arith::TruncFOp::create(b, loc, target, value);
}

/// Collapses `value` ([tokens..., features...], `tokenRank` token dims) into
/// groups of dims: the tokens but the last `keptTokens` into one dim, the
/// kept token dims, and the features into one.
static Value collapseTokens(OpBuilder &b, Location loc, Value value,
                            int64_t tokenRank, int64_t keptTokens = 0) {
  auto type = tensorType(value);
  int64_t rank = type.getRank();
  SmallVector<ReassociationIndices> groups;
  int64_t merged = tokenRank - keptTokens;
  if (merged > 0)
    groups.push_back(llvm::to_vector(llvm::seq<int64_t>(0, merged)));
  for (int64_t d = merged; d < tokenRank; ++d)
    groups.push_back({d});
  groups.push_back(llvm::to_vector(llvm::seq<int64_t>(tokenRank, rank)));
  if (int64_t(groups.size()) == rank)
    return value;
  return tensor::CollapseShapeOp::create(b, loc, value, groups);
}

/// Reshapes a root with `rootTokenRank` token dims into
/// [tokenShape..., F] (features flattened): roots that flatten the token
/// shape are expanded to the layer's.
static Value toTokenLayout(OpBuilder &b, Location loc, Value root,
                           int64_t rootTokenRank,
                           ArrayRef<int64_t> tokenShape) {
  Value value = collapseTokens(b, loc, root, rootTokenRank);
  auto type = tensorType(value);
  if (tokenShape.size() == 1)
    return value;
  SmallVector<int64_t> shape(tokenShape);
  shape.push_back(type.getDimSize(1));
  ReassociationIndices tokens =
      llvm::to_vector(llvm::seq<int64_t>(0, tokenShape.size()));
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value,
      SmallVector<ReassociationIndices>{tokens,
                                        {int64_t(tokenShape.size())}});
}

static Value transpose2D(OpBuilder &b, Location loc, Value value) {
  auto type = tensorType(value);
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{type.getDimSize(1), type.getDimSize(0)},
      type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init,
                                     ArrayRef<int64_t>{1, 0})
      ->getResult(0);
}

/// An f32 product of two rank-2 tensors, lhs optionally transposed.
static Value buildFloatMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                              bool transposeLhs) {
  MLIRContext *ctx = b.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  auto map = [&](ArrayRef<AffineExpr> r) {
    return AffineMapAttr::get(AffineMap::get(3, 0, r, ctx));
  };
  int64_t rows = tensorType(lhs).getDimSize(transposeLhs ? 1 : 0);
  int64_t cols = tensorType(rhs).getDimSize(1);
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{rows, cols},
                                        b.getF32Type());
  Value zero =
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  SmallVector<Attribute> maps{transposeLhs ? map({k, m}) : map({m, k}),
                              map({k, n}), map({m, n})};
  return linalg::MatmulOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{lhs, rhs},
             ValueRange{init},
             b.getNamedAttr("indexing_maps", b.getArrayAttr(maps)))
      ->getResult(0);
}

/// The operand of `product` that is a view of `root`, and its trace.
static std::optional<std::pair<OpOperand *, ViewTrace>>
findOperand(linalg::LinalgOp product, Value root) {
  for (OpOperand *operand : product.getDpsInputOperands())
    for (ViewTrace &trace : traceViewChain(operand->get()))
      if (trace.root == root)
        return std::make_pair(operand, trace);
  return std::nullopt;
}

/// How a canonical [rows, cols] f32 result becomes the product's result.
struct ResultLayout {
  bool transpose = false;
  /// Reassociation of an expand_shape, empty when the rank is 2.
  SmallVector<ReassociationIndices> expansion;
  RankedTensorType type;
};

/// Plans how `product`'s result is laid out, where rows are the free root
/// dims of the operand `rowOperand` (in order) and cols the single free dim
/// of the other operand.
static FailureOr<ResultLayout> planResultLayout(linalg::LinalgOp product,
                                                OpOperand *rowOperand,
                                                const ViewTrace &rowTrace,
                                                std::string &reason) {
  AffineMap rowMap = product.getMatchingIndexingMap(rowOperand);
  AffineMap resultMap =
      product.getMatchingIndexingMap(product.getDpsInitOperand(0));
  // Root dims carried by each loop of the row operand.
  DenseMap<unsigned, ArrayRef<int64_t>> rootDimsOfLoop;
  for (auto [d, expr] : llvm::enumerate(rowMap.getResults()))
    rootDimsOfLoop[cast<AffineDimExpr>(expr).getPosition()] =
        rowTrace.rootDims[d];
  ResultLayout layout;
  layout.type = cast<RankedTensorType>(product->getResult(0).getType());
  int64_t rank = layout.type.getRank();
  SmallVector<bool> isRow;
  SmallVector<int64_t> rowRootDims;
  for (AffineExpr expr : resultMap.getResults()) {
    auto it = rootDimsOfLoop.find(cast<AffineDimExpr>(expr).getPosition());
    isRow.push_back(it != rootDimsOfLoop.end());
    if (isRow.back())
      llvm::append_range(rowRootDims, it->second);
  }
  bool colsLast = !isRow.back(), colsFirst = !isRow.front();
  if (rank < 2 || llvm::count(isRow, false) != 1 ||
      !(colsLast || colsFirst) || !llvm::is_sorted(rowRootDims)) {
    reason = "its result layout mixes rows and columns in a way the rewrite "
             "does not reproduce";
    return failure();
  }
  layout.transpose = colsFirst;
  if (rank > 2) {
    ReassociationIndices rows;
    for (int64_t d = 0; d < rank; ++d)
      if (isRow[d])
        rows.push_back(d);
    layout.expansion = colsFirst
                           ? SmallVector<ReassociationIndices>{{0}, rows}
                           : SmallVector<ReassociationIndices>{rows, {rank - 1}};
  }
  return layout;
}

/// Checks that `product` can be replaced (an integer product over
/// `contraction` elements stays exact in i32, it starts from zero, its
/// output-gradient operand is found again), and plans its result layout.
/// `contraction` is the product's K after the rewrite, `gyElements` the size
/// of the gy it quantizes.
static FailureOr<ResultLayout>
planReplacement(linalg::LinalgOp product, const LinearLayer &layer,
                const PathConfig &config, int64_t contraction,
                int64_t gyElements, std::string &reason) {
  if (layer.getNumTokens() == 0 || layer.outFeatures == 0 ||
      layer.inFeatures == 0) {
    reason = "the product is empty";
    return failure();
  }
  if (config.bits != 0 && contraction >= IntMatmulOp::kMaxContractionSize) {
    reason = "its contraction over " + std::to_string(contraction) +
             " elements is too large for an exact i32 accumulation";
    return failure();
  }
  if (config.bits != 0 && config.rounding == Rounding::Stochastic &&
      gyElements >= QuantizeOp::kMaxStochasticElements) {
    reason = "stochastic rounding of its " + std::to_string(gyElements) +
             "-element output gradient needs more than 32-bit element "
             "indices";
    return failure();
  }
  if (!isZeroInit(product.getDpsInitOperand(0)->get())) {
    reason = "it accumulates into an output that is not zero";
    return failure();
  }
  auto gyOperand = findOperand(product, layer.gy);
  if (!gyOperand) {
    reason = "its output-gradient operand cannot be found again";
    return failure();
  }
  return planResultLayout(product, gyOperand->first, gyOperand->second,
                          reason);
}

static Value applyResultLayout(OpBuilder &b, Location loc, Value canonical,
                               const ResultLayout &layout) {
  Value value = canonical;
  if (layout.transpose)
    value = transpose2D(b, loc, value);
  if (!layout.expansion.empty())
    value = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(layout.type.getShape(), b.getF32Type()), value, layout.expansion);
  return convertElementType(b, loc, value, layout.type.getElementType());
}


/// A quantization of `value` followed by its tags.
static QuantizeOp quantize(OpBuilder &b, Location loc, Value value,
                           int64_t bits, Granularity granularity,
                           ScaleMode scaleMode, Rounding rounding, Value seed) {
  auto type = tensorType(value);
  SmallVector<int64_t> scaleShape;
  if (granularity == Granularity::PerRow)
    scaleShape.push_back(type.getDimSize(0));
  else if (granularity == Granularity::PerCol)
    scaleShape.push_back(type.getDimSize(1));
  auto qType = type.clone(b.getI8Type());
  auto scaleType = RankedTensorType::get(scaleShape, b.getF32Type());
  MLIRContext *ctx = b.getContext();
  return QuantizeOp::create(
      b, loc, qType, scaleType, value,
      rounding == Rounding::Stochastic ? seed : Value(),
      b.getI64IntegerAttr(bits), GranularityAttr::get(ctx, granularity),
      ScaleModeAttr::get(ctx, scaleMode), RoundingAttr::get(ctx, rounding));
}

/// The integer product and its rescale, or an f32 product when bits == 0.
/// `rhsQuantized`, when given, is the already quantized rhs.
static Value buildProduct(OpBuilder &b, Location loc, const LinearLayer &layer,
                          Role role, Value lhs, Value rhs, bool transposeLhs,
                          const PathConfig &config, ScaleMode rhsScale,
                          Granularity lhsGranularity, Value seed,
                          bool rhsIsSavedActivation,
                          QuantizeOp rhsQuantized = nullptr) {
  if (config.bits == 0) {
    Value product = buildFloatMatmul(b, loc, lhs, rhs, transposeLhs);
    tagLayerProduct(product.getDefiningOp(), layer.name, role);
    product.getDefiningOp()->setAttr(kRewrittenAttrName, b.getUnitAttr());
    return product;
  }
  QuantizeOp ql = quantize(b, loc, lhs, config.bits, lhsGranularity,
                           ScaleMode::MaxAbs, config.rounding, seed);
  QuantizeOp qr = rhsQuantized;
  if (!qr) {
    qr = quantize(b, loc, rhs, config.bits, Granularity::PerTensor, rhsScale,
                  Rounding::Nearest, Value());
    if (rhsIsSavedActivation)
      qr->setAttr(kSavedActivationAttrName, b.getUnitAttr());
    tagLayerProduct(qr, layer.name, role);
  }
  int64_t rows = tensorType(lhs).getDimSize(transposeLhs ? 1 : 0);
  int64_t cols = tensorType(qr.getQ()).getDimSize(1);
  auto accType = RankedTensorType::get({rows, cols}, b.getI32Type());
  auto matmul = IntMatmulOp::create(b, loc, accType, ql.getQ(), qr.getQ(),
                                    transposeLhs, /*transpose_rhs=*/false);
  auto rescale = RescaleOp::create(
      b, loc, RankedTensorType::get({rows, cols}, b.getF32Type()),
      matmul.getResult(), ql.getScale(), qr.getScale());
  for (Operation *op : {ql.getOperation(), matmul.getOperation(),
                        rescale.getOperation()})
    tagLayerProduct(op, layer.name, role);
  return rescale.getResult();
}

SmallVector<Operation *> mlir::hot::getCompressionChain(QuantizeOp quantize,
                                                        Value &root) {
  SmallVector<Operation *> chain{quantize};
  Value value = quantize.getInput();
  while (Operation *def = value.getDefiningOp()) {
    if (!def->hasAttr(kSavedActivationAttrName) || def->getNumOperands() != 1)
      break;
    chain.push_back(def);
    value = def->getOperand(0);
  }
  root = value;
  std::reverse(chain.begin(), chain.end());
  return chain;
}

/// Largest power of two dividing `n` (n > 0).
static int64_t largestPowerOfTwoDividing(int64_t n) { return n & -n; }

//===----------------------------------------------------------------------===//
// gx = gy·W
//===----------------------------------------------------------------------===//

FailureOr<PathDecision> mlir::hot::rewriteActivationGradient(
    RewriterBase &rewriter, const LinearLayer &layer, const PathConfig &config,
    Value seed, std::string &reason) {
  linalg::LinalgOp product = layer.gx;
  if (!product || !layer.weight) {
    reason = "no activation-gradient product";
    return failure();
  }
  int64_t o = layer.outFeatures;
  FailureOr<ResultLayout> layout = planReplacement(
      product, layer, config, o, layer.getNumTokens() * o, reason);
  if (failed(layout))
    return failure();

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(product);
  Location loc = product->getLoc();
  Value gy = collapseTokens(rewriter, loc, toF32(rewriter, loc, layer.gy),
                            layer.gyTokenRank);
  Value w = toF32(rewriter, loc, layer.weight);
  if (layer.weightTransposed)
    w = transpose2D(rewriter, loc, w);

  PathDecision decision;
  decision.bits = config.bits;
  decision.granularity = config.granularity;
  decision.block = std::min(config.block, largestPowerOfTwoDividing(o));
  if (decision.block > 1) {
    auto gyh = HadamardOp::create(rewriter, loc, gy.getType(), gy, 1,
                                  decision.block);
    auto wh = HadamardOp::create(rewriter, loc, w.getType(), w, 0,
                                 decision.block);
    tagLayerProduct(gyh, layer.name, Role::Gx);
    tagLayerProduct(wh, layer.name, Role::Gx);
    gy = gyh.getResult();
    w = wh.getResult();
  }
  Value canonical =
      buildProduct(rewriter, loc, layer, Role::Gx, gy, w, /*transposeLhs=*/false,
                   config, config.weightScale, config.granularity, seed,
                   /*rhsIsSavedActivation=*/false);
  decision.replacement = applyResultLayout(rewriter, loc, canonical, *layout);
  return decision;
}

//===----------------------------------------------------------------------===//
// gw = gyᵀ·x
//===----------------------------------------------------------------------===//

FailureOr<PathDecision> mlir::hot::rewriteWeightGradient(
    RewriterBase &rewriter, const LinearLayer &layer, const PathConfig &config,
    Value seed, std::string &reason, SavedActivationCache *cache) {
  linalg::LinalgOp product = layer.gw;

  PathDecision decision;
  decision.bits = config.bits;
  decision.granularity = config.granularity;
  // HLA runs along the tokens inside each sample: the last token dim when the
  // activations keep one ([B, T, .]), the batch only when asked.
  int64_t tokenRank = layer.tokenShape.size();
  bool withinSamples = tokenRank >= 2 && layer.tokenShape.back() > 1;
  decision.hla = withinSamples || config.hlaAcrossBatch;
  // After collapsing, the tokens of a sample are dim 1 of [S, T, F].
  int64_t hlaDim = withinSamples ? 1 : 0;
  if (decision.hla) {
    decision.block = config.block;
    decision.rank = config.rank;
  }
  int64_t tokens = withinSamples ? layer.tokenShape.back() : layer.getNumTokens();
  int64_t projected =
      decision.hla && tokens > 0
          ? layer.getNumTokens() / tokens *
                LowRankOp::getProjectedSize(tokens, config.block, config.rank)
          : layer.getNumTokens();
  FailureOr<ResultLayout> layout = planReplacement(
      product, layer, config, projected, projected * layer.outFeatures, reason);
  if (failed(layout))
    return failure();

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(product);
  Location loc = product->getLoc();
  auto project = [&](Value root, int64_t rootTokenRank,
                     bool savedActivation) -> Value {
    Value value = toF32(rewriter, loc, root);
    value = toTokenLayout(rewriter, loc, value, rootTokenRank,
                          layer.tokenShape);
    // [samples, T, features] when HLA runs inside samples, else [N, F].
    value = collapseTokens(rewriter, loc, value, tokenRank,
                           withinSamples ? 1 : 0);
    if (decision.hla) {
      auto type = tensorType(value);
      SmallVector<int64_t> shape(type.getShape());
      shape[hlaDim] = projected / (layer.getNumTokens() / tokens);
      auto lowrank = LowRankOp::create(
          rewriter, loc, type.clone(shape), value, hlaDim, config.block,
          config.rank, config.selection, /*allow_tail=*/true);
      tagLayerProduct(lowrank, layer.name, Role::Gw);
      value = lowrank.getResult();
    }
    value = collapseTokens(rewriter, loc, value, withinSamples ? 2 : 1);
    // The ops that compress the saved activation (each has one operand)
    // carry a tag, so that hot-compress-activations can move them into the
    // forward pass.
    if (savedActivation)
      for (Value v = value; v != root; v = v.getDefiningOp()->getOperand(0))
        v.getDefiningOp()->setAttr(kSavedActivationAttrName,
                                   rewriter.getUnitAttr());
    return value;
  };
  Value gy = project(layer.gy, layer.gyTokenRank, /*savedActivation=*/false);
  // A compressed x that an earlier layer made from the same x is reused: in
  // the same block it moves up if this product comes first; from an
  // enclosing block only if it comes before the op that holds this product
  // (a copy in another branch or region would not dominate it).
  auto key = std::make_tuple(layer.x, decision.hla ? config.block : 0,
                             decision.hla ? config.rank : 0,
                             int64_t(config.selection), config.bits);
  QuantizeOp sharedX;
  if (cache && config.bits != 0) {
    auto it = cache->find(key);
    if (it != cache->end()) {
      QuantizeOp candidate = it->second.first;
      Operation *holder =
          candidate->getBlock()->findAncestorOpInBlock(*product);
      if (holder == product.getOperation() ||
          (holder && candidate->isBeforeInBlock(holder))) {
        sharedX = candidate;
        decision.sharesSavedActivationWith = it->second.second;
        if (holder == product.getOperation() &&
            product->isBeforeInBlock(sharedX)) {
          Value root;
          for (Operation *op : getCompressionChain(sharedX, root))
            rewriter.moveOpBefore(op, product);
        }
      }
    }
  }
  Value x = sharedX ? Value()
                    : project(layer.x, layer.xTokenRank,
                              /*savedActivation=*/true);
  Value canonical =
      buildProduct(rewriter, loc, layer, Role::Gw, gy, x, /*transposeLhs=*/true,
                   config, ScaleMode::MaxAbs, config.granularity, seed,
                   /*rhsIsSavedActivation=*/true, sharedX);
  if (cache && config.bits != 0 && !sharedX)
    (*cache)[key] = {canonical.getDefiningOp<RescaleOp>()
                         .getColScale()
                         .getDefiningOp<QuantizeOp>(),
                     layer.name};
  decision.replacement = applyResultLayout(rewriter, loc, canonical, *layout);
  return decision;
}
