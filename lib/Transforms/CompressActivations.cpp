//===- CompressActivations.cpp - Activation buffer compression (ABC) ------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Dialect/Hot/HotOps.h"
#include "hot/Transforms/BackwardRewrites.h"
#include "hot/Transforms/LayerTags.h"
#include "hot/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::hot {
#define GEN_PASS_DEF_HOTCOMPRESSACTIVATIONSPASS
#include "hot/Transforms/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;
using namespace mlir::hot;

/// Where the ops computing from `value` may start: after its definition, or
/// at the start of the block that has it as an argument.
static std::pair<Block *, Block::iterator> getPointAfter(Value value) {
  if (Operation *def = value.getDefiningOp())
    return {def->getBlock(), std::next(def->getIterator())};
  Block *block = cast<BlockArgument>(value).getOwner();
  return {block, block->begin()};
}

static std::string getLayerName(Operation *op) {
  auto tag = op->getAttrOfType<LayerAttr>(kLayerAttrName);
  return tag ? tag.getName().str() : std::string("?");
}

/// How many of `forward`'s results are outputs: the tangents (the last
/// arguments of `backward`) have their types, the saved tensors (the first
/// arguments) the types of the remaining results.
static std::optional<int64_t> inferForwardOutputs(func::FuncOp forward,
                                                  func::FuncOp backward,
                                                  unsigned numBackwardArgs) {
  ArrayRef<Type> results = forward.getFunctionType().getResults();
  ArrayRef<Type> args =
      backward.getFunctionType().getInputs().take_front(numBackwardArgs);
  std::optional<int64_t> found;
  for (int64_t k = 0; k <= int64_t(results.size()); ++k) {
    int64_t saved = results.size() - k;
    if (saved + k != int64_t(args.size()))
      continue;
    if (results.drop_front(k) != args.take_front(saved) ||
        results.take_front(k) != args.drop_front(saved))
      continue;
    if (found)
      return std::nullopt; // Ambiguous.
    found = k;
  }
  return found;
}

namespace mlir::hot {
namespace {

struct HotCompressActivationsPass
    : impl::HotCompressActivationsPassBase<HotCompressActivationsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (!forwardName.empty() || !backwardName.empty()) {
      if (failed(compressSplit()))
        return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](QuantizeOp quantize) {
      if (!quantize->hasAttr(kSavedActivationAttrName) ||
          quantize->hasAttr(kCompressedAttrName))
        return;
      Value root;
      SmallVector<Operation *> chain = getCompressionChain(quantize, root);
      if (!root.getDefiningOp()) {
        // An argument: the caller owns x (a batch of inputs, or a tensor a
        // split forward function saved), so compressing it here saves
        // nothing.
        if (emitRemarks)
          emitRemark(quantize.getLoc())
              << "saved activation not compressed: it is a function argument "
                 "(for a split graph, name the forward and backward "
                 "functions)";
        return;
      }
      auto [block, point] = getPointAfter(root);
      if (chain.front()->getBlock() != block)
        return;
      for (Operation *op : chain) {
        rewriter.moveOpBefore(op, block, point);
        point = std::next(op->getIterator());
      }
      quantize->setAttr(kCompressedAttrName, rewriter.getUnitAttr());
    });
  }

  /// Moves the compression of saved tensors from `backward` into `forward`.
  LogicalResult compressSplit() {
    Operation *scope = getOperation();
    auto lookup = [&](StringRef name) -> func::FuncOp {
      return dyn_cast_if_present<func::FuncOp>(
          SymbolTable::lookupNearestSymbolFrom(scope,
                                               StringAttr::get(&getContext(),
                                                               name)));
    };
    func::FuncOp forward = lookup(forwardName);
    func::FuncOp backward = lookup(backwardName);
    if (!forward || !backward || forward.isExternal() ||
        backward.isExternal())
      return emitError(scope->getLoc())
             << "hot-compress-activations: forward='" << forwardName
             << "' and backward='" << backwardName
             << "' must name two functions with bodies";
    // The seed argument (appended by the rewrite) is not a saved tensor.
    unsigned numArgs = backward.getNumArguments();
    while (numArgs > 0 && backward.getArgAttr(numArgs - 1, kSeedAttrName))
      --numArgs;
    std::optional<int64_t> outputs =
        forwardOutputs >= 0 ? std::optional<int64_t>(forwardOutputs)
                            : inferForwardOutputs(forward, backward, numArgs);
    if (!outputs || *outputs > int64_t(forward.getNumResults()))
      return emitError(forward.getLoc())
             << "hot-compress-activations: cannot tell which results of @"
             << forwardName << " are the tensors @" << backwardName
             << " takes; set forward-outputs";
    unsigned numSaved = forward.getNumResults() - *outputs;
    // Saved tensor k is forward result outputs + k and backward argument k:
    // their types must agree (a wrong forward-outputs would pair others).
    for (unsigned k = 0; k < numSaved && k < numArgs; ++k) {
      Type result = forward.getResultTypes()[*outputs + k];
      Type argument = backward.getArgumentTypes()[k];
      if (result != argument)
        return emitError(forward.getLoc())
               << "hot-compress-activations: with forward-outputs=" << *outputs
               << ", result " << *outputs + k << " of @" << forwardName
               << ", of type " << result << ", would be argument " << k
               << " of @" << backwardName << ", of type " << argument
               << ": forward-outputs must count the results that are not "
                  "saved tensors";
    }

    auto returnOp = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
    IRRewriter rewriter(&getContext());
    SmallVector<bool> eraseArgs(backward.getNumArguments(), false);
    SmallVector<unsigned> eraseResults;
    unsigned inserted = 0;
    SmallVector<QuantizeOp> quantizes;
    backward.walk([&](QuantizeOp q) {
      if (q->hasAttr(kSavedActivationAttrName) &&
          !q->hasAttr(kCompressedAttrName))
        quantizes.push_back(q);
    });
    for (QuantizeOp quantize : quantizes) {
      Value root;
      SmallVector<Operation *> chain = getCompressionChain(quantize, root);
      auto arg = dyn_cast<BlockArgument>(root);
      if (!arg || arg.getOwner()->getParentOp() != backward ||
          arg.getArgNumber() >= numSaved)
        continue;
      // Compute the codes in the forward, right after x is produced.
      Value saved = returnOp.getOperand(*outputs + arg.getArgNumber());
      auto [block, point] = getPointAfter(saved);
      rewriter.setInsertionPoint(block, point);
      IRMapping mapping;
      mapping.map(root, saved);
      Operation *clone = nullptr;
      for (Operation *op : chain)
        clone = rewriter.clone(*op, mapping);
      clone->setAttr(kCompressedAttrName, rewriter.getUnitAttr());
      // Return them after the saved tensors; take them after the saved
      // arguments.
      returnOp->insertOperands(returnOp.getNumOperands(),
                               clone->getResults());
      std::string layer = getLayerName(quantize);
      unsigned index = numSaved + inserted;
      for (Value code : clone->getResults()) {
        auto attrs = DictionaryAttr::get(
            &getContext(),
            {rewriter.getNamedAttr(kCompressedArgAttrName,
                                   rewriter.getStringAttr(layer))});
        if (failed(backward.insertArgument(index, code.getType(), attrs,
                                           quantize.getLoc())))
          return failure();
        eraseArgs.insert(eraseArgs.begin() + index, false);
        ++index;
      }
      Block &entry = backward.getBody().front();
      rewriter.replaceOp(quantize, {entry.getArgument(index - 2),
                                    entry.getArgument(index - 1)});
      for (Operation *op : llvm::reverse(ArrayRef(chain).drop_back()))
        if (op->use_empty())
          rewriter.eraseOp(op);
      inserted += 2;
      if (emitRemarks)
        emitRemark(backward.getLoc())
            << layer << ": saved activation compressed in @" << forwardName
            << " (it returns the INT8 codes and their scale"
            << (arg.use_empty() ? " instead of x)" : "; x is still needed)");
      if (arg.use_empty()) {
        eraseArgs[arg.getArgNumber()] = true;
        eraseResults.push_back(*outputs + arg.getArgNumber());
      }
    }
    // The forward's type follows its new return; then drop x where unused.
    forward.setType(FunctionType::get(&getContext(),
                                      forward.getArgumentTypes(),
                                      returnOp.getOperandTypes()));
    llvm::BitVector eraseResultBits(forward.getNumResults());
    for (unsigned r : eraseResults)
      eraseResultBits.set(r);
    // A value returned at two positions is still returned once erased at one.
    for (int r = eraseResultBits.size() - 1; r >= 0; --r)
      if (eraseResultBits.test(r))
        returnOp->eraseOperand(r);
    llvm::BitVector eraseArgBits(eraseArgs.size());
    for (auto [i, erase] : llvm::enumerate(eraseArgs))
      if (erase)
        eraseArgBits.set(i);
    if (failed(forward.eraseResults(eraseResultBits)) ||
        failed(backward.eraseArguments(eraseArgBits)))
      return failure();
    return success();
  }
};

} // namespace
} // namespace mlir::hot
