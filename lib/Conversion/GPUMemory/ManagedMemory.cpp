//===- ManagedMemory.cpp - Host buffers in CUDA managed memory ------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// The hot-allocate-managed-memory pass: memref.alloc/dealloc of host functions
// become gpu.alloc host_shared / gpu.dealloc, and constant globals are read
// through a managed copy, so that the kernels a lowered training step
// launches can use every buffer the host code hands them.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::hot {
#define GEN_PASS_DEF_ALLOCATEMANAGEDMEMORYPASS
#include "hot/Conversion/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;

namespace {

/// Whether `op` runs on the device (inside a kernel body).
bool isInKernel(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() ||
         op->getParentOfType<gpu::GPUModuleOp>();
}

/// Whether gpu-to-llvm can allocate `type` with gpu.alloc: identity layout in
/// the default memory space.
bool isManageable(MemRefType type) {
  return type.getLayout().isIdentity() && !type.getMemorySpace();
}

/// Whether a view of `value` reaches a `func.return`: the caller then owns
/// the buffer.
bool escapesThroughReturn(Value value) {
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (Operation *user : current.getUsers()) {
      if (isa<func::ReturnOp>(user))
        return true;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == current)
          llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
}

/// Emits `wait; dealloc async; wait` of `memref` before `op`.
void createManagedDealloc(RewriterBase &rewriter, Operation *op, Value memref) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op->getLoc();
  Type tokenType = rewriter.getType<gpu::AsyncTokenType>();
  Value start = gpu::WaitOp::create(rewriter, loc, tokenType, ValueRange())
                    .getAsyncToken();
  Value freed = gpu::DeallocOp::create(rewriter, loc, tokenType,
                                       ValueRange{start}, memref)
                    .getAsyncToken();
  gpu::WaitOp::create(rewriter, loc, Type(), ValueRange{freed});
}

/// memref.alloc -> gpu.alloc host_shared (synchronous: upstream refuses an
/// async host_shared allocation).
struct AllocToManaged : OpRewritePattern<memref::AllocOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::AllocOp op,
                                PatternRewriter &rewriter) const override {
    if (isInKernel(op))
      return rewriter.notifyMatchFailure(op, "allocation inside a kernel");
    if (!isManageable(op.getType()))
      return rewriter.notifyMatchFailure(
          op, "not an identity layout in the default memory space");
    auto alloc = gpu::AllocOp::create(
        rewriter, op.getLoc(), op.getType(), /*asyncToken=*/Type(),
        /*asyncDependencies=*/ValueRange(), op.getDynamicSizes(),
        op.getSymbolOperands(), rewriter.getUnitAttr());
    rewriter.replaceOp(op, alloc.getMemref());
    return success();
  }
};

/// memref.dealloc -> wait, async gpu.dealloc, wait: gpu-to-llvm lowers
/// gpu.dealloc only with exactly one async dependency.
struct DeallocToManaged : OpRewritePattern<memref::DeallocOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::DeallocOp op,
                                PatternRewriter &rewriter) const override {
    if (isInKernel(op))
      return rewriter.notifyMatchFailure(op, "deallocation inside a kernel");
    auto type = dyn_cast<MemRefType>(op.getMemref().getType());
    if (!type || !isManageable(type))
      return rewriter.notifyMatchFailure(
          op, "not an identity layout in the default memory space");
    createManagedDealloc(rewriter, op, op.getMemref());
    rewriter.eraseOp(op);
    return success();
  }
};

/// memref.copy -> linalg.copy, which the pipeline maps to a kernel like any
/// other linalg op: a host copy would migrate managed pages to the host, and
/// a strided one would need the runner utils' memrefCopy.
struct CopyToLinalg : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    if (isInKernel(op))
      return rewriter.notifyMatchFailure(op, "copy inside a kernel");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                op.getTarget());
    return success();
  }
};

/// Host uses of constant `memref.global`s read a managed copy made at function
/// entry by a `gpu.memcpy` (a kernel cannot read the host global; once only
/// kernels read the copy, hot-gpu-device-buffers makes it device memory), freed
/// before each return,
/// unless it is returned. One copy per global and function; mutable globals
/// are left alone (a copy would lose the writes) with a remark.
void copyConstantGlobals(func::FuncOp func, RewriterBase &rewriter) {
  llvm::MapVector<StringAttr, SmallVector<memref::GetGlobalOp>> byGlobal;
  func.walk([&](memref::GetGlobalOp op) {
    if (isInKernel(op) || !isManageable(op.getType()))
      return;
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        op, op.getNameAttr());
    if (!global)
      return;
    if (!global.getConstant()) {
      op->emitRemark("mutable global '")
          << op.getName()
          << "' left in host memory: a kernel reading it would fault";
      return;
    }
    byGlobal[op.getNameAttr().getAttr()].push_back(op);
  });
  if (byGlobal.empty())
    return;

  Block &entry = func.getBody().front();
  for (auto &[name, uses] : byGlobal) {
    MemRefType type = uses.front().getType();
    Location loc = uses.front().getLoc();
    rewriter.setInsertionPointToStart(&entry);
    Value host = memref::GetGlobalOp::create(rewriter, loc, type, name);
    Value managed = gpu::AllocOp::create(
                        rewriter, loc, type, /*asyncToken=*/Type(),
                        /*asyncDependencies=*/ValueRange(),
                        /*dynamicSizes=*/ValueRange(),
                        /*symbolOperands=*/ValueRange(), rewriter.getUnitAttr())
                        .getMemref();
    // A driver copy (cuMemcpyAsync) in stand-alone async form, which
    // hot-gpu-async-launches joins to the step's stream: the source is host
    // memory, which no kernel can read, and a host memcpy would also pin the
    // copy to managed memory.
    Type tokenType = rewriter.getType<gpu::AsyncTokenType>();
    Value start = gpu::WaitOp::create(rewriter, loc, tokenType, ValueRange())
                      .getAsyncToken();
    Value copied = gpu::MemcpyOp::create(rewriter, loc, tokenType,
                                         ValueRange{start}, managed, host)
                       .getAsyncToken();
    gpu::WaitOp::create(rewriter, loc, Type(), ValueRange{copied});
    bool escapes = false;
    for (memref::GetGlobalOp use : uses) {
      escapes |= escapesThroughReturn(use.getResult());
      rewriter.replaceOp(use, managed);
    }
    if (escapes)
      continue;
    func.walk([&](func::ReturnOp ret) {
      if (ret->getParentOp() == func)
        createManagedDealloc(rewriter, ret, managed);
    });
  }
}

struct AllocateManagedMemoryPass
    : hot::impl::AllocateManagedMemoryPassBase<AllocateManagedMemoryPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<AllocToManaged, CopyToLinalg, DeallocToManaged>(&getContext());
    // A walk, not the greedy driver: no folding or dead-code elimination of
    // the rest of the function.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    // After the patterns: the copies made here must stay host copies.
    IRRewriter rewriter(&getContext());
    copyConstantGlobals(getOperation(), rewriter);
  }
};

} // namespace
