//===- ParallelDimsOutermost.cpp - Reductions inside the parallel loops ---===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::hot {
#define GEN_PASS_DEF_PARALLELDIMSOUTERMOSTPASS
#include "hot/Conversion/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;

namespace {

/// The loop order of `op` with its parallel dims first, each group in its
/// own order; empty when that is already the order.
SmallVector<unsigned> getParallelFirstOrder(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (bool parallel : {true, false})
    for (auto [dim, iterator] : llvm::enumerate(iterators))
      if (linalg::isParallelIterator(iterator) == parallel)
        order.push_back(dim);
  for (auto [position, dim] : llvm::enumerate(order))
    if (position != dim)
      return order;
  return {};
}

struct ParallelDimsOutermostPass
    : hot::impl::ParallelDimsOutermostPassBase<ParallelDimsOutermostPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<unsigned> order = getParallelFirstOrder(op);
      if (order.empty())
        continue;
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized)) {
          op->emitRemark("reduction loops left outside the parallel ones "
                         "(each step a kernel of its own): this named op "
                         "cannot be generalized");
          continue;
        }
        generic = *generalized;
      }
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order)))
        generic->emitRemark("reduction loops left outside the parallel ones "
                            "(each step a kernel of its own): the loops "
                            "cannot be interchanged");
    }
  }
};

} // namespace
