//===- DeviceBuffers.cpp - Kernel-only buffers in device memory -----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// The hot-gpu-device-buffers pass: a managed allocation of host code whose
// buffer only kernels, frees and metadata queries use becomes a plain device
// allocation (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::hot {
#define GEN_PASS_DEF_GPUDEVICEBUFFERSPASS
#include "hot/Conversion/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;

namespace {

/// The first use of `buffer` (or of a view of it) that may touch its data on
/// the host; null when kernels, frees, device copies and metadata queries
/// are its only uses.
Operation *findHostUse(Value buffer) {
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->getParentOfType<gpu::LaunchOp>() ||
          isa<gpu::LaunchFuncOp, gpu::DeallocOp, gpu::MemcpyOp, gpu::MemsetOp,
              memref::DimOp>(user))
        continue;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        llvm::append_range(worklist, user->getResults());
        continue;
      }
      if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        worklist.push_back(metadata.getBaseBuffer());
        continue;
      }
      return user;
    }
  }
  return nullptr;
}

/// `%m = gpu.alloc host_shared` becomes `%t0 = gpu.wait async`,
/// `%m, %t1 = gpu.alloc async [%t0]`, `gpu.wait [%t1]`.
void moveToDeviceMemory(gpu::AllocOp alloc) {
  OpBuilder builder(alloc);
  Location loc = alloc.getLoc();
  Type tokenType = builder.getType<gpu::AsyncTokenType>();
  Value start = gpu::WaitOp::create(builder, loc, tokenType, ValueRange())
                    .getAsyncToken();
  auto device = gpu::AllocOp::create(
      builder, loc, alloc.getMemref().getType(), tokenType, ValueRange{start},
      alloc.getDynamicSizes(), alloc.getSymbolOperands(), /*hostShared=*/false);
  gpu::WaitOp::create(builder, loc, Type(), ValueRange{device.getAsyncToken()});
  alloc.getMemref().replaceAllUsesWith(device.getMemref());
  alloc.erase();
}

struct GpuDeviceBuffersPass
    : hot::impl::GpuDeviceBuffersPassBase<GpuDeviceBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<gpu::AllocOp> allocs;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      // Host code only.
      if (isa<gpu::LaunchOp, gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      auto alloc = dyn_cast<gpu::AllocOp>(op);
      if (alloc && alloc.getHostShared() && !alloc.getAsyncToken())
        allocs.push_back(alloc);
      return WalkResult::advance();
    });
    for (gpu::AllocOp alloc : allocs) {
      if (Operation *hostUse = findHostUse(alloc.getMemref())) {
        if (emitRemarks)
          alloc.emitRemark()
                  .append("stays in managed memory: '", hostUse->getName(),
                          "' may touch it on the host")
                  .attachNote(hostUse->getLoc())
              << "used here";
        continue;
      }
      moveToDeviceMemory(alloc);
    }
  }
};

} // namespace
