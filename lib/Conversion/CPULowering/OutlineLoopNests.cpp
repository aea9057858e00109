//===- OutlineLoopNests.cpp - A function per top-level loop nest ----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::hot {
#define GEN_PASS_DEF_OUTLINELOOPNESTSPASS
#include "hot/Conversion/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;

namespace {

/// The outermost loops of `func`: those inside no other loop.
SmallVector<Operation *> getOutermostLoops(func::FuncOp func) {
  SmallVector<Operation *> loops;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!isa<scf::ForOp, scf::ParallelOp, scf::WhileOp>(op))
      return WalkResult::advance();
    loops.push_back(op);
    return WalkResult::skip();
  });
  return loops;
}

/// Moves `loop` into a new private function named `name` (see the pass's
/// description), calls it in its place and returns it.
FailureOr<func::FuncOp> outlineLoop(RewriterBase &rewriter, Operation *loop,
                                    StringRef name) {
  Location loc = loop->getLoc();
  // outlineSingleBlockRegion outlines a region: wrap the loop in one whose
  // yield returns its results.
  rewriter.setInsertionPoint(loop);
  auto wrapper =
      scf::ExecuteRegionOp::create(rewriter, loc, loop->getResultTypes());
  Block *body = rewriter.createBlock(&wrapper.getRegion());
  rewriter.replaceAllUsesWith(loop->getResults(), wrapper.getResults());
  rewriter.moveOpBefore(loop, body, body->end());
  rewriter.setInsertionPointToEnd(body);
  scf::YieldOp::create(rewriter, loc, loop->getResults());
  // The constants the loop uses are cloned in, so that the function has them
  // as constants (LLVM sees its loops' bounds), not as arguments.
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(wrapper.getRegion(), captured);
  rewriter.setInsertionPointToStart(body);
  for (Value value : captured) {
    Operation *def = value.getDefiningOp();
    if (!def || !def->hasTrait<OpTrait::ConstantLike>())
      continue;
    Value copy = rewriter.clone(*def)->getResult(0);
    rewriter.replaceUsesWithIf(value, copy, [&](OpOperand &use) {
      return wrapper->isProperAncestor(use.getOwner());
    });
  }

  func::CallOp call;
  FailureOr<func::FuncOp> outlined =
      outlineSingleBlockRegion(rewriter, loc, wrapper.getRegion(), name, &call);
  if (failed(outlined))
    return failure();
  outlined->setPrivate();
  MLIRContext *ctx = rewriter.getContext();
  (*outlined)->setAttr(
      "passthrough", rewriter.getArrayAttr(rewriter.getStringAttr("noinline")));
  (*outlined)->setAttr("llvm.linkage",
                       LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  // The wrapper now holds the call and its yield: the call takes its place.
  rewriter.moveOpBefore(call, wrapper);
  rewriter.replaceOp(wrapper, call.getResults());
  return outlined;
}

struct OutlineLoopNestsPass
    : public hot::impl::OutlineLoopNestsPassBase<OutlineLoopNestsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    IRRewriter rewriter(&getContext());
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      unsigned next = 0;
      for (Operation *loop : getOutermostLoops(func)) {
        std::string name;
        do {
          name = (func.getName() + "_loop" + Twine(next++)).str();
        } while (symbols.lookup(name));
        FailureOr<func::FuncOp> outlined = outlineLoop(rewriter, loop, name);
        if (failed(outlined)) {
          loop->emitError("could not outline this loop nest");
          return signalPassFailure();
        }
        symbols.insert(*outlined);
      }
    }
  }
};

} // namespace
