//===- CudaRuntime.h - mgpu* entry points over the CUDA driver --*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// The C ABI that host code lowered by MLIR 22's gpu-to-llvm (and the LLVM IR
// translation of gpu.binary / gpu.launch_func, and nvgpu-to-nvvm for TMA
// descriptors) calls. libhot_cuda_runtime.so implements it over the CUDA
// driver API; mlir-runner loads it with --shared-libs.
//
// Handles are the driver's own (CUmodule, CUfunction, CUstream, CUevent) passed
// as opaque pointers; sizes and launch dimensions are the index type (64-bit).
// Every failing driver call prints the call, the CUDA error name and its
// description on stderr; with HOT_CUDA_ABORT_ON_ERROR set in the environment
// the process aborts at the first one.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_RUNTIME_CUDARUNTIME_H
#define HOT_RUNTIME_CUDARUNTIME_H

#include <cstddef>
#include <cstdint>

#define HOT_CUDA_EXPORT __attribute__((visibility("default")))

extern "C" {

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

/// Loads a cubin or fatbin image of `size` bytes into the default device's
/// primary context; returns the CUmodule, null on failure.
HOT_CUDA_EXPORT void *mgpuModuleLoad(void *data, size_t size);

/// Loads a null-terminated PTX image, compiled by the driver's JIT at
/// optimization level `optLevel` (0-4); the JIT log is printed on failure.
HOT_CUDA_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel);

/// Unloads a module returned by mgpuModuleLoad or mgpuModuleLoadJIT.
HOT_CUDA_EXPORT void mgpuModuleUnload(void *module);

/// Returns the kernel `name` of `module` (a CUfunction), null on failure.
HOT_CUDA_EXPORT void *mgpuModuleGetFunction(void *module, const char *name);

/// Launches `function` on `stream`. `params` points to `paramsCount` pointers
/// to the argument values. A dynamic shared memory size above 48 KiB first
/// raises the function's limit, as the driver requires.
HOT_CUDA_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                      intptr_t gridY, intptr_t gridZ,
                                      intptr_t blockX, intptr_t blockY,
                                      intptr_t blockZ, int32_t smem,
                                      void *stream, void **params, void **extra,
                                      size_t paramsCount);

/// Launches `function` with thread-block clusters of the given shape (sm_90
/// and newer); the grid is in blocks and a multiple of the cluster.
HOT_CUDA_EXPORT void
mgpuLaunchClusterKernel(void *function, intptr_t clusterX, intptr_t clusterY,
                        intptr_t clusterZ, intptr_t gridX, intptr_t gridY,
                        intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                        intptr_t blockZ, int32_t smem, void *stream,
                        void **params, void **extra);

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

/// Creates a non-blocking stream on the default device.
HOT_CUDA_EXPORT void *mgpuStreamCreate();

/// Destroys `stream` once its work is done.
HOT_CUDA_EXPORT void mgpuStreamDestroy(void *stream);

/// Blocks the host until all work queued on `stream` has finished.
HOT_CUDA_EXPORT void mgpuStreamSynchronize(void *stream);

/// Makes later work on `stream` wait for `event`.
HOT_CUDA_EXPORT void mgpuStreamWaitEvent(void *stream, void *event);

/// Creates an event without timing (the cheap kind used for ordering).
HOT_CUDA_EXPORT void *mgpuEventCreate();

/// Destroys `event`.
HOT_CUDA_EXPORT void mgpuEventDestroy(void *event);

/// Blocks the host until `event` has completed.
HOT_CUDA_EXPORT void mgpuEventSynchronize(void *event);

/// Records `event` on `stream`.
HOT_CUDA_EXPORT void mgpuEventRecord(void *event, void *stream);

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Allocates `sizeBytes` of device memory, or of managed memory reachable from
/// host and device when `isHostShared`; null for zero bytes. A block of the
/// same size and kind that mgpuMemFree kept is handed out again, once the work
/// queued before its free has run. When the memory cannot be had, even after
/// the kept blocks are released, it aborts with a message: generated code
/// would use the null pointer. Managed memory is refused past the device's
/// free memory (oversubscription can hang the GPU) unless
/// HOT_CUDA_ALLOW_OVERSUBSCRIPTION is set.
HOT_CUDA_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                                   bool isHostShared);

/// Frees memory from mgpuMemAlloc (null is ignored), in the order of
/// `stream`: the block is kept for reuse (up to HOT_CUDA_CACHE_BYTES in all,
/// 4 GiB by default; 0 keeps none), so that a step called again allocates
/// nothing and its kernels touch pages already on the device. Other memory is
/// given to cuMemFree.
HOT_CUDA_EXPORT void mgpuMemFree(void *ptr, void *stream);

/// Copies `sizeBytes` between any two addresses (unified addressing) on
/// `stream`.
HOT_CUDA_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                                void *stream);

/// Sets `count` 32-bit words at `dst` to `value` on `stream`.
HOT_CUDA_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                                  void *stream);

/// Sets `count` 16-bit words at `dst` to `value` on `stream`.
HOT_CUDA_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                                  void *stream);

/// Page-locks `sizeBytes` of host memory at `ptr` for the device.
HOT_CUDA_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes);

/// Undoes mgpuMemHostRegister.
HOT_CUDA_EXPORT void mgpuMemHostUnregister(void *ptr);

/// Page-locks the data of a dense ranked memref; `descriptor` points to the
/// LLVM memref descriptor {allocated, aligned, offset, sizes[rank],
/// strides[rank]}.
HOT_CUDA_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                               int64_t elementSizeBytes);

/// Undoes mgpuMemHostRegisterMemRef.
HOT_CUDA_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                                 int64_t elementSizeBytes);

/// Selects the device (ordinal) that later calls of this thread use.
HOT_CUDA_EXPORT void mgpuSetDefaultDevice(int32_t device);

//===----------------------------------------------------------------------===//
// Hopper tensor memory access (TMA)
//===----------------------------------------------------------------------===//

/// Encodes a tiled TMA descriptor for the ranked memref `descriptor` (rank
/// `tensorRank`, element type as CUtensorMapDataType) with the box shape
/// `boxDims` (outermost first, as in MLIR); returns a device copy of it.
HOT_CUDA_EXPORT void *mgpuTensorMapEncodeTiledMemref(
    int64_t tensorRank, void *descriptor, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t l2Promotion, int64_t oobFill, int64_t *boxDims);

//===----------------------------------------------------------------------===//
// Probe (not called by generated code)
//===----------------------------------------------------------------------===//

/// Returns the number of usable CUDA devices (0 when the driver has none or
/// fails to initialize) and the compute capability of device 0. Prints
/// nothing: test configurations call it to decide what can run.
HOT_CUDA_EXPORT int hotCudaRuntimeProbe(int *major, int *minor);

} // extern "C"

#endif // HOT_RUNTIME_CUDARUNTIME_H
