//===- Memory.cpp - Allocation, copies and host registration --------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Support.h"
#include "hot/Runtime/CudaRuntime.h"

using namespace hot::cuda;

namespace {
CUdeviceptr devicePointer(void *ptr) {
  return reinterpret_cast<CUdeviceptr>(ptr);
}
} // namespace

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                              bool isHostShared) {
  // The driver rejects zero-byte allocations; a null pointer is what an empty
  // memref needs.
  if (sizeBytes == 0)
    return nullptr;
  ContextGuard guard(__func__);
  if (!guard.ok())
    fatal(__func__, "no CUDA context, cannot continue");
  CUdeviceptr ptr = 0;
  bool ok = isHostShared ? HOT_CUDA_CHECK(cuMemAllocManaged(
                               &ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL))
                         : HOT_CUDA_CHECK(cuMemAlloc(&ptr, sizeBytes));
  if (ok)
    return reinterpret_cast<void *>(ptr);
  // Generated code uses the memref unconditionally: stop here, with a
  // message, rather than crash later on a null pointer.
  fatal(__func__, "no memory, cannot continue");
}

extern "C" void mgpuMemFree(void *ptr, void * /*stream*/) {
  if (!ptr)
    return;
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuMemFree(devicePointer(ptr)));
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           void *stream) {
  if (sizeBytes == 0)
    return;
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuMemcpyAsync(devicePointer(dst), devicePointer(src),
                               sizeBytes, static_cast<CUstream>(stream)));
}

extern "C" void mgpuMemset32(void *dst, unsigned int value, size_t count,
                             void *stream) {
  if (count == 0)
    return;
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuMemsetD32Async(devicePointer(dst), value, count,
                                  static_cast<CUstream>(stream)));
}

extern "C" void mgpuMemset16(void *dst, unsigned short value, size_t count,
                             void *stream) {
  if (count == 0)
    return;
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuMemsetD16Async(devicePointer(dst), value, count,
                                  static_cast<CUstream>(stream)));
}

extern "C" void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  if (sizeBytes == 0)
    return;
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuMemHostRegister(ptr, sizeBytes, /*Flags=*/0));
}

extern "C" void mgpuMemHostUnregister(void *ptr) {
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuMemHostUnregister(ptr));
}

extern "C" void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                          int64_t elementSizeBytes) {
  MemRefView memref(descriptor, rank);
  mgpuMemHostRegister(memref.begin(elementSizeBytes),
                      memref.spanBytes(elementSizeBytes));
}

extern "C" void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                            int64_t elementSizeBytes) {
  MemRefView memref(descriptor, rank);
  if (memref.spanBytes(elementSizeBytes) != 0)
    mgpuMemHostUnregister(memref.begin(elementSizeBytes));
}

extern "C" void mgpuSetDefaultDevice(int32_t device) {
  setDefaultDevice(device);
}
