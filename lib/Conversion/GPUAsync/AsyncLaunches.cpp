//===- AsyncLaunches.cpp - A host function's kernels on one stream --------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// The hot-gpu-async-launches pass: the synchronous launches of each block
// become chains of async launches on one stream, each chain ended by one
// blocking gpu.wait (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::hot {
#define GEN_PASS_DEF_GPUASYNCLAUNCHESPASS
#include "hot/Conversion/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;

namespace {

/// A synchronous kernel launch on the host: what this pass chains.
bool isSyncLaunch(Operation *op) {
  if (!isa<gpu::LaunchOp, gpu::LaunchFuncOp>(op))
    return false;
  auto async = cast<gpu::AsyncOpInterface>(op);
  return !async.getAsyncToken() && async.getAsyncDependencies().empty();
}

/// A host-shared allocation with nothing to wait for: movable anywhere
/// earlier in its block.
bool isHoistableAlloc(Operation *op) {
  auto alloc = dyn_cast<gpu::AllocOp>(op);
  return alloc && alloc.getHostShared() && op->getNumOperands() == 0 &&
         !alloc.getAsyncToken();
}

/// Replaces the synchronous `op` by its async form depending on `token`;
/// returns the new op's token.
Value makeAsync(OpBuilder &builder, Operation *op, Value token) {
  cast<gpu::AsyncOpInterface>(op).addAsyncDependency(token);
  // The launch ops' only (optional) result is the token.
  Type tokenType = builder.getType<gpu::AsyncTokenType>();
  Operation *async = Operation::create(
      op->getLoc(), op->getName(), TypeRange{tokenType}, op->getOperands(),
      op->getDiscardableAttrDictionary(), op->getPropertiesStorage(),
      op->getSuccessors(), op->getNumRegions());
  IRMapping mapping;
  for (auto [from, to] : llvm::zip(op->getRegions(), async->getRegions()))
    from.cloneInto(&to, mapping);
  builder.setInsertionPoint(op);
  builder.insert(async);
  op->erase();
  return async->getResult(0);
}

/// Chains the launches of `block` (see Passes.td).
void chainLaunches(Block &block) {
  Operation *firstLaunch = nullptr;
  for (Operation &op : block)
    if (isSyncLaunch(&op)) {
      firstLaunch = &op;
      break;
    }
  if (!firstLaunch)
    return;
  for (Operation &op : llvm::make_early_inc_range(llvm::make_range(
           std::next(firstLaunch->getIterator()), block.end())))
    if (isHoistableAlloc(&op))
      op.moveBefore(firstLaunch);

  OpBuilder builder(block.getParentOp()->getContext());
  Value token;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (isSyncLaunch(&op)) {
      if (!token) {
        builder.setInsertionPoint(&op);
        token = gpu::WaitOp::create(builder, op.getLoc(),
                                    builder.getType<gpu::AsyncTokenType>(),
                                    ValueRange())
                    .getAsyncToken();
      }
      token = makeAsync(builder, &op, token);
      continue;
    }
    if (!token ||
        (isMemoryEffectFree(&op) && !op.hasTrait<OpTrait::IsTerminator>()))
      continue;
    builder.setInsertionPoint(&op);
    gpu::WaitOp::create(builder, op.getLoc(), Type(), ValueRange{token});
    token = Value();
  }
}

struct GpuAsyncLaunchesPass
    : hot::impl::GpuAsyncLaunchesPassBase<GpuAsyncLaunchesPass> {
  void runOnOperation() override {
    // Host code only: kernel bodies launch nothing.
    SmallVector<Block *> blocks;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp, gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          blocks.push_back(&block);
      return WalkResult::advance();
    });
    for (Block *block : blocks)
      chainLaunches(*block);
  }
};

} // namespace
