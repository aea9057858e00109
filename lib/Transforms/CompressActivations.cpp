//===- CompressActivations.cpp - Activation buffer compression (ABC) ------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Dialect/Hot/HotOps.h"
#include "hot/Transforms/LayerTags.h"
#include "hot/Transforms/Passes.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::hot {
#define GEN_PASS_DEF_HOTCOMPRESSACTIVATIONSPASS
#include "hot/Transforms/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;
using namespace mlir::hot;

/// The ops that compress one saved activation, in program order, ending
/// with `quantize`; their only input from outside the chain is the root.
static SmallVector<Operation *> getCompressionChain(QuantizeOp quantize,
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

namespace mlir::hot {
namespace {

struct HotCompressActivationsPass
    : impl::HotCompressActivationsPassBase<HotCompressActivationsPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](QuantizeOp quantize) {
      if (!quantize->hasAttr(kSavedActivationAttrName) ||
          quantize->hasAttr(kCompressedAttrName))
        return;
      Value root;
      SmallVector<Operation *> chain = getCompressionChain(quantize, root);
      // Right after the activation is produced: its defining op, or the
      // start of the block that has it as an argument.
      Operation *def = root.getDefiningOp();
      if (!def) {
        // An argument: the caller owns x (a batch of inputs, or a tensor a
        // split forward function saved), so compressing it here saves
        // nothing.
        if (emitRemarks)
          quantize->emitRemark()
              << "saved activation not compressed: it is a function argument "
               "(in a split graph the forward function would have to return "
               "the codes instead)";
        return;
      }
      Block *block = def->getBlock();
      Block::iterator point = std::next(def->getIterator());
      if (chain.front()->getBlock() != block)
        return;
      for (Operation *op : chain) {
        rewriter.moveOpBefore(op, block, point);
        point = std::next(op->getIterator());
      }
      quantize->setAttr(kCompressedAttrName, rewriter.getUnitAttr());
    });
  }
};

} // namespace
} // namespace mlir::hot
