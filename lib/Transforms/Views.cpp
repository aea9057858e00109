//===- Views.cpp - Tracing values through views
//-----------------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Products.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::hot;

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

/// Follows `value` through single-use views to a func.return; returns the
/// permutation p with returned dim j == dim p[j] of `value`, if it gets
/// there.
std::optional<SmallVector<int64_t>> mlir::hot::getReturnedLayout(Value value) {
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
