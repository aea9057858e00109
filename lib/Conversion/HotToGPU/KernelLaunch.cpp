//===- KernelLaunch.cpp - The host side of a kernel launch ----------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "KernelLaunch.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::hot;

/// Alignment of the buffers the kernels write (their vector accesses need
/// 16 bytes).
static constexpr int64_t kBufferAlignment = 64;

Value mlir::hot::getKernelInput(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

Value mlir::hot::allocateKernelOutput(OpBuilder &b, Location loc,
                                      MemRefType type) {
  return memref::AllocOp::create(b, loc, type,
                                 b.getI64IntegerAttr(kBufferAlignment));
}

Value mlir::hot::getKernelResult(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get(type.getShape(), type.getElementType()),
      buffer, /*restrict=*/true, /*writable=*/true);
}

gpu::LaunchFuncOp mlir::hot::launchKernel(OpBuilder &b, Location loc,
                                          gpu::GPUFuncOp kernel,
                                          KernelGrid grid, int64_t threads,
                                          ValueRange args,
                                          int64_t dynamicSharedBytes) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  gpu::KernelDim3 gridSize{index(grid.x), index(grid.y), index(grid.z)};
  gpu::KernelDim3 blockSize{index(threads), index(1), index(1)};
  Value dynamicShared;
  if (dynamicSharedBytes)
    dynamicShared =
        arith::ConstantIntOp::create(b, loc, dynamicSharedBytes, 32);
  return gpu::LaunchFuncOp::create(b, loc, kernel, gridSize, blockSize,
                                   dynamicShared, args);
}
