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
#include "mlir/Interfaces/FunctionInterfaces.h"
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

/// The stand-alone async form of an `OpTy` (gpu.alloc or gpu.dealloc) when
/// `op` starts one: `%t = gpu.wait async`, right after it `OpTy async [%t]`,
/// then a blocking `gpu.wait` on its token. The frees of
/// hot-allocate-managed-memory and the device allocations of
/// hot-gpu-device-buffers take this form. Returns the `OpTy`.
template <typename OpTy> OpTy getStandalone(Operation *op) {
  auto start = dyn_cast<gpu::WaitOp>(op);
  if (!start || !start.getAsyncToken() || !start.getAsyncDependencies().empty())
    return {};
  auto middle = dyn_cast_or_null<OpTy>(op->getNextNode());
  if (!middle || middle.getAsyncDependencies().size() != 1 ||
      middle.getAsyncDependencies()[0] != start.getAsyncToken() ||
      !start.getAsyncToken().hasOneUse() || !middle.getAsyncToken() ||
      !middle.getAsyncToken().hasOneUse())
    return {};
  auto end = dyn_cast_or_null<gpu::WaitOp>(middle->getNextNode());
  if (!end || end.getAsyncToken() || end.getAsyncDependencies().size() != 1 ||
      end.getAsyncDependencies()[0] != middle.getAsyncToken())
    return {};
  return middle;
}

/// Chains the launches of `block`, the device allocations before and among
/// them, and the frees that follow them (see Passes.td).
void chainLaunches(Block &block) {
  Operation *first = nullptr;
  for (Operation &op : block)
    if (isSyncLaunch(&op) || getStandalone<gpu::AllocOp>(&op) ||
        getStandalone<gpu::MemcpyOp>(&op)) {
      first = &op;
      break;
    }
  if (!first)
    return;
  for (Operation &op : llvm::make_early_inc_range(
           llvm::make_range(std::next(first->getIterator()), block.end())))
    if (isHoistableAlloc(&op))
      op.moveBefore(first);

  OpBuilder builder(block.getParentOp()->getContext());
  Value token;
  int64_t launches = 0;
  // The frees taken into a chain, and their blocking waits, erased after
  // the walk.
  llvm::SmallPtrSet<Operation *, 8> chained;
  SmallVector<Operation *> erased;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (chained.contains(&op))
      continue;
    // Allocated, copied or freed in the chain's order, without a stream and
    // a host synchronization of its own; an allocation or a copy may start
    // the chain.
    auto join = [&](auto middle) {
      Operation *end = middle->getNextNode();
      chained.insert(middle);
      chained.insert(end);
      erased.push_back(end);
      if (token) {
        middle.getAsyncDependenciesMutable().assign(token);
        erased.push_back(&op);
      }
      token = middle.getAsyncToken();
    };
    if (gpu::AllocOp alloc = getStandalone<gpu::AllocOp>(&op)) {
      join(alloc);
      continue;
    }
    if (gpu::MemcpyOp copy = getStandalone<gpu::MemcpyOp>(&op)) {
      join(copy);
      continue;
    }
    // Frees join a chain, after its kernels; they never start one.
    if (gpu::DeallocOp dealloc =
            token ? getStandalone<gpu::DeallocOp>(&op) : nullptr) {
      join(dealloc);
      continue;
    }
    if (isSyncLaunch(&op)) {
      if (!token) {
        builder.setInsertionPoint(&op);
        token = gpu::WaitOp::create(builder, op.getLoc(),
                                    builder.getType<gpu::AsyncTokenType>(),
                                    ValueRange())
                    .getAsyncToken();
      }
      token = makeAsync(builder, &op, token);
      ++launches;
      continue;
    }
    if (!token ||
        (isMemoryEffectFree(&op) && !op.hasTrait<OpTrait::IsTerminator>()))
      continue;
    builder.setInsertionPoint(&op);
    gpu::WaitOp::create(builder, op.getLoc(), Type(), ValueRange{token});
    token = Value();
    // Where the host waits other than at a function's end: a remark says
    // why, so that a step's extra synchronizations can be found.
    bool functionEnd = op.hasTrait<OpTrait::IsTerminator>() &&
                       isa<FunctionOpInterface>(op.getParentOp());
    if (!functionEnd && launches > 0) {
      InFlightDiagnostic remark = op.emitRemark();
      remark << "the host waits here for the " << launches << " kernel launch"
             << (launches == 1 ? "" : "es") << " before it: ";
      if (op.hasTrait<OpTrait::IsTerminator>())
        remark << "they end the body of '" << op.getParentOp()->getName()
               << "', which waits for them each time it runs";
      else if (isa<gpu::AsyncOpInterface>(op))
        remark << "'" << op.getName()
               << "' is a GPU op with its own stream order, left alone";
      else
        remark << "'" << op.getName() << "' may touch memory on the host";
    }
    launches = 0;
  }
  for (Operation *op : erased)
    op->erase();
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
