//===- Memory.cpp - Allocation, copies and host registration --------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// "Device" memory is host memory: kernels run on the host. Copies and sets
// happen at the call, since launches are synchronous too.
//
//===----------------------------------------------------------------------===//

#include "Streams.h"
#include "Support.h"
#include "hot/Runtime/SimulatorRuntime.h"

#include <cstdlib>
#include <cstring>

using namespace hot::simulator;

namespace {
/// cuMemAlloc's alignment, which generated code may rely on (vector loads).
constexpr uint64_t kAllocationAlignment = 256;
} // namespace

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                              bool /*isHostShared*/) {
  // As on the GPU: a null pointer is what an empty memref needs.
  if (sizeBytes == 0)
    return nullptr;
  uint64_t rounded = (sizeBytes + kAllocationAlignment - 1) /
                     kAllocationAlignment * kAllocationAlignment;
  if (void *ptr = std::aligned_alloc(kAllocationAlignment, rounded))
    return ptr;
  // Generated code uses the memref unconditionally: stop here, with a
  // message, rather than crash later on a null pointer.
  fatal(__func__, format("cannot allocate %llu bytes",
                         static_cast<unsigned long long>(sizeBytes)));
}

// Frees, copies and sets come after what their stream has queued.
extern "C" void mgpuMemFree(void *ptr, void *stream) {
  flushStream(stream);
  std::free(ptr);
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           void *stream) {
  flushStream(stream);
  if (sizeBytes != 0)
    std::memmove(dst, src, sizeBytes);
}

extern "C" void mgpuMemset32(void *dst, unsigned int value, size_t count,
                             void *stream) {
  flushStream(stream);
  auto *words = static_cast<char *>(dst);
  for (size_t i = 0; i < count; ++i)
    std::memcpy(words + i * sizeof(value), &value, sizeof(value));
}

extern "C" void mgpuMemset16(void *dst, unsigned short value, size_t count,
                             void *stream) {
  flushStream(stream);
  auto *words = static_cast<char *>(dst);
  for (size_t i = 0; i < count; ++i)
    std::memcpy(words + i * sizeof(value), &value, sizeof(value));
}

// Host memory needs no registration: kernels reach all of it.
extern "C" void mgpuMemHostRegister(void * /*ptr*/, uint64_t /*sizeBytes*/) {}

extern "C" void mgpuMemHostUnregister(void * /*ptr*/) {}

extern "C" void mgpuMemHostRegisterMemRef(int64_t /*rank*/,
                                          void * /*descriptor*/,
                                          int64_t /*elementSizeBytes*/) {}

extern "C" void mgpuMemHostUnregisterMemRef(int64_t /*rank*/,
                                            void * /*descriptor*/,
                                            int64_t /*elementSizeBytes*/) {}

extern "C" void mgpuSetDefaultDevice(int32_t device) {
  if (device != 0)
    reportError(
        __func__,
        format("device %d does not exist: the simulator is device 0", device));
}
