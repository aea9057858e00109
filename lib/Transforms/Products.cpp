//===- Products.cpp - Contractions seen as candidate layer products
//---------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Products.h"
#include "hot/Transforms/LayerTags.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Interfaces/CastInterfaces.h"

using namespace mlir;
using namespace mlir::hot;

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

FailureOr<Product> mlir::hot::getProduct(linalg::LinalgOp op,
                                         std::string &reason) {
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

bool mlir::hot::isParameter(Value value, Operation *function) {
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

bool mlir::hot::isActivationProduct(const Product &p, int activation) {
  return p.operands[activation].side == Side::Last &&
         p.operands[1 - activation].rootRank() == 2 &&
         p.operands[1 - activation].side != Side::Other;
}
