//===- TileParallelLoops.cpp - Give scf.parallel loops thread tiles -------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

namespace mlir::hot {
#define GEN_PASS_DEF_TILEPARALLELLOOPSPASS
#include "hot/Conversion/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;

/// Tile sizes giving `threads` iterations to one tile, innermost dim first:
/// each dim takes the smallest power of two covering its (static) trip count,
/// at most what is left; a dim of unknown trip count takes all that is left.
static SmallVector<int64_t> getTileSizes(scf::ParallelOp loop,
                                         int64_t threads) {
  SmallVector<int64_t> sizes(loop.getNumLoops(), 1);
  int64_t left = threads;
  for (int64_t d = loop.getNumLoops() - 1; d >= 0 && left > 1; --d) {
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[d]);
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[d]);
    std::optional<int64_t> step = getConstantIntValue(loop.getStep()[d]);
    int64_t size = left;
    if (lb && ub && step && *step > 0)
      size = std::min<int64_t>(
          left, llvm::PowerOf2Ceil(std::max<int64_t>(
                    1, llvm::divideCeil(*ub - *lb, *step))));
    sizes[d] = size;
    left /= size;
  }
  return sizes;
}

namespace {

struct TileParallelLoopsPass
    : hot::impl::TileParallelLoopsPassBase<TileParallelLoopsPass> {
  using Base::Base;

  /// Outermost loops with no parallel loop inside: what
  /// convert-linalg-to-parallel-loops makes of one linalg op. Loops with
  /// reductions (results) are left as they are.
  SmallVector<scf::ParallelOp> getTileableLoops() {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      bool nested = loop->getParentOfType<scf::ParallelOp>() != nullptr;
      bool hasInner = false;
      loop.getBody()->walk([&](scf::ParallelOp) { hasInner = true; });
      if (!nested && !hasInner && loop.getNumResults() == 0)
        loops.push_back(loop);
    });
    return loops;
  }

  void runOnOperation() override {
    // A tile becomes a thread block: at most 1024 threads.
    if (threads <= 0 || threads > 1024 || !llvm::isPowerOf2_64(threads)) {
      getOperation().emitError()
          << "hot-tile-parallel-loops: threads must be a power of two in "
             "[1, 1024] (the threads of a block), got "
          << static_cast<int64_t>(threads);
      return signalPassFailure();
    }
    // 1. gpu-map-parallel-loops maps three dims at most (the others become
    //    sequential loops): loops of more dims keep their innermost dim and
    //    get the others collapsed into one.
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : getTileableLoops()) {
      unsigned rank = loop.getNumLoops();
      if (rank <= 2)
        continue;
      std::vector<unsigned> outer(rank - 1);
      std::iota(outer.begin(), outer.end(), 0);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {outer, {rank - 1}});
    }
    // The collapsed bounds are products of constants: fold them, so that
    // the trip counts are known below.
    (void)applyPatternsGreedily(getOperation(), FrozenRewritePatternSet());
    // 2. Tiles of `threads` iterations.
    for (scf::ParallelOp loop : getTileableLoops()) {
      SmallVector<int64_t> sizes = getTileSizes(loop, threads);
      if (llvm::all_of(sizes, [](int64_t s) { return s == 1; }))
        continue;
      scf::tileParallelLoop(loop, sizes, /*noMinMaxBounds=*/true);
    }
  }
};

} // namespace
