//===- Memory.cpp - Allocation, copies and host registration --------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "BlockCache.h"
#include "Support.h"
#include "hot/Runtime/CudaRuntime.h"

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

using namespace hot::cuda;

namespace {
CUdeviceptr devicePointer(void *ptr) {
  return reinterpret_cast<CUdeviceptr>(ptr);
}

/// HOT_CUDA_CACHE_BYTES, or 4 GiB: how much freed memory is kept for reuse
/// (0: none, every free is a cuMemFree).
uint64_t cacheCapacity() {
  const char *value = std::getenv("HOT_CUDA_CACHE_BYTES");
  return value ? std::strtoull(value, nullptr, 10) : uint64_t(4) << 30;
}

/// The blocks mgpuMemAlloc handed out and mgpuMemFree has not taken back
/// (their size and kind), and the freed ones kept for reuse (BlockCache.h).
struct Allocations {
  struct Live {
    uint64_t bytes;
    bool managed;
  };
  std::mutex mutex;
  std::unordered_map<void *, Live> live;
  BlockCache cache{cacheCapacity()};
  /// Events of reused blocks, for the next frees to record (a step frees
  /// the same blocks every call: no create and destroy each time).
  std::vector<std::pair<CUcontext, CUevent>> spareEvents;

  /// A spare event of `context`, or null. Under `mutex`.
  CUevent takeEvent(CUcontext context) {
    for (auto it = spareEvents.rbegin(); it != spareEvents.rend(); ++it)
      if (it->first == context) {
        CUevent event = it->second;
        spareEvents.erase(std::next(it).base());
        return event;
      }
    return nullptr;
  }

  /// Keeps `event` (done) of `context` for takeEvent. Under `mutex`.
  void giveEvent(CUcontext context, CUevent event) {
    if (spareEvents.size() < kMaxSpareEvents)
      spareEvents.emplace_back(context, event);
    else
      HOT_CUDA_CHECK(cuEventDestroy(event));
  }

  static constexpr size_t kMaxSpareEvents = 1024;
};

Allocations &allocations() {
  // Never destroyed: see StreamPool.
  static Allocations *state = new Allocations();
  return *state;
}

bool eventDone(void *event) {
  return cuEventQuery(static_cast<CUevent>(event)) == CUDA_SUCCESS;
}

/// Frees blocks dropped from the cache, with their events.
void freeBlocks(const std::vector<CachedBlock> &blocks) {
  for (const CachedBlock &block : blocks) {
    if (block.event)
      HOT_CUDA_CHECK(cuEventDestroy(static_cast<CUevent>(block.event)));
    HOT_CUDA_CHECK(cuMemFree(devicePointer(block.pointer)));
  }
}

/// Whether `sizeBytes` of managed memory fit in the device's free memory.
/// The driver lets managed allocations oversubscribe the device, but kernels
/// that then touch more than it holds thrash or hang the GPU; the runtime
/// refuses instead, unless HOT_CUDA_ALLOW_OVERSUBSCRIPTION is set.
bool managedFits(uint64_t sizeBytes) {
  static const bool allowed =
      std::getenv("HOT_CUDA_ALLOW_OVERSUBSCRIPTION") != nullptr;
  size_t freeBytes = 0, totalBytes = 0;
  if (allowed || !HOT_CUDA_CHECK(cuMemGetInfo(&freeBytes, &totalBytes)))
    return true;
  return sizeBytes <= freeBytes;
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
  CUcontext context = guard.context();
  Allocations &state = allocations();
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    CachedBlock block;
    if (state.cache.take(context, isHostShared, sizeBytes, eventDone, block)) {
      if (block.event)
        state.giveEvent(context, static_cast<CUevent>(block.event));
      state.live[block.pointer] = {sizeBytes, isHostShared};
      return block.pointer;
    }
  }
  CUdeviceptr ptr = 0;
  bool fits = true;
  auto allocate = [&]() -> CUresult {
    if (!isHostShared)
      return cuMemAlloc(&ptr, sizeBytes);
    if (!(fits = managedFits(sizeBytes)))
      return CUDA_ERROR_OUT_OF_MEMORY;
    return cuMemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL);
  };
  CUresult result = allocate();
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    // The cached blocks go back to the driver (once their work is done), and
    // the allocation is tried again.
    std::vector<CachedBlock> released;
    {
      std::lock_guard<std::mutex> lock(state.mutex);
      released = state.cache.release(context);
    }
    HOT_CUDA_CHECK(cuCtxSynchronize());
    freeBlocks(released);
    result = allocate();
  }
  if (!fits) {
    char message[192];
    std::snprintf(message, sizeof(message),
                  "%llu bytes of managed memory exceed the device's free "
                  "memory; set HOT_CUDA_ALLOW_OVERSUBSCRIPTION=1 to allocate "
                  "them anyway",
                  static_cast<unsigned long long>(sizeBytes));
    fatal(__func__, message);
  }
  if (HOT_CUDA_CHECK(result)) {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.live[reinterpret_cast<void *>(ptr)] = {sizeBytes, isHostShared};
    return reinterpret_cast<void *>(ptr);
  }
  // Generated code uses the memref unconditionally: stop here, with a
  // message, rather than crash later on a null pointer.
  fatal(__func__, "no memory, cannot continue");
}

extern "C" void mgpuMemFree(void *ptr, void *stream) {
  if (!ptr)
    return;
  ContextGuard guard(__func__);
  Allocations &state = allocations();
  CachedBlock block{guard.context(), false, 0, ptr, nullptr};
  bool ours = false;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    auto it = state.live.find(ptr);
    if (it != state.live.end()) {
      block.managed = it->second.managed;
      block.bytes = it->second.bytes;
      state.live.erase(it);
      ours = true;
    }
  }
  if (!ours) {
    HOT_CUDA_CHECK(cuMemFree(devicePointer(ptr)));
    return;
  }
  // Reusable once the work queued on `stream` before this free has run;
  // without a stream, after everything queued (what cuMemFree waits for).
  if (stream) {
    CUevent event = nullptr;
    {
      std::lock_guard<std::mutex> lock(state.mutex);
      event = state.takeEvent(static_cast<CUcontext>(block.context));
    }
    if ((event ||
         HOT_CUDA_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING))) &&
        HOT_CUDA_CHECK(cuEventRecord(event, static_cast<CUstream>(stream))))
      block.event = event;
    else if (!HOT_CUDA_CHECK(cuCtxSynchronize()))
      return; // Not reusable safely: leaked rather than reused too early.
  } else if (!HOT_CUDA_CHECK(cuCtxSynchronize())) {
    return;
  }
  std::vector<CachedBlock> evicted;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    evicted = state.cache.give(block);
  }
  freeBlocks(evicted);
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
