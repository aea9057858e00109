//===- KernelLaunch.h - The host side of a kernel launch --------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// What every lowering of convert-hot-to-gpu builds around the kernels it
// emits: tensors read by a kernel as read-only buffers, fresh buffers for it
// to write, the gpu.launch_func, and the written buffers back as tensors for
// the ops that read the results.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_LIB_CONVERSION_HOTTOGPU_KERNELLAUNCH_H
#define HOT_LIB_CONVERSION_HOTTOGPU_KERNELLAUNCH_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::hot {

/// `tensor` (ranked) as the read-only buffer a kernel reads.
Value getKernelInput(OpBuilder &b, Location loc, Value tensor);

/// A fresh buffer of `type`, aligned to 64 bytes, for a kernel to write.
Value allocateKernelOutput(OpBuilder &b, Location loc, MemRefType type);

/// The tensor that a kernel wrote into `buffer` (restrict, writable: no other
/// tensor aliases it).
Value getKernelResult(OpBuilder &b, Location loc, Value buffer);

/// Thread blocks of a launch along x, y and z.
struct KernelGrid {
  int64_t x = 1, y = 1, z = 1;
};

/// Launches `kernel` on `grid` blocks of `threads` threads (along x) with
/// `args`, and `dynamicSharedBytes` of dynamic shared memory (0: none).
gpu::LaunchFuncOp launchKernel(OpBuilder &b, Location loc,
                               gpu::GPUFuncOp kernel, KernelGrid grid,
                               int64_t threads, ValueRange args,
                               int64_t dynamicSharedBytes = 0);

} // namespace mlir::hot

#endif // HOT_LIB_CONVERSION_HOTTOGPU_KERNELLAUNCH_H
