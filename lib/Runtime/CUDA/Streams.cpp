//===- Streams.cpp - Streams and events -----------------------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Support.h"
#include "hot/Runtime/CudaRuntime.h"

#include <mutex>
#include <utility>
#include <vector>

using namespace hot::cuda;

namespace {

/// Streams that mgpuStreamDestroy gave back, per context, for mgpuStreamCreate
/// to hand out again: host code lowered by gpu-to-llvm creates and destroys a
/// stream around every synchronous launch, and creating a stream costs more
/// than a small kernel. A reused stream may still run work queued before it
/// was given back; new work is ordered after it, never concurrent with it.
class StreamPool {
public:
  CUstream take(CUcontext context) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = free.begin(); it != free.end(); ++it)
      if (it->first == context) {
        CUstream stream = it->second;
        free.erase(it);
        return stream;
      }
    return nullptr;
  }

  /// False when the pool is full (the caller destroys the stream).
  bool give(CUcontext context, CUstream stream) {
    std::lock_guard<std::mutex> lock(mutex);
    if (free.size() >= kCapacity)
      return false;
    free.emplace_back(context, stream);
    return true;
  }

private:
  static constexpr size_t kCapacity = 32;
  std::mutex mutex;
  std::vector<std::pair<CUcontext, CUstream>> free;
};

StreamPool &streamPool() {
  // Never destroyed: at exit the driver may be torn down before static
  // destructors run, and the streams die with their contexts anyway.
  static StreamPool *pool = new StreamPool();
  return *pool;
}

} // namespace

extern "C" void *mgpuStreamCreate() {
  ContextGuard guard(__func__);
  CUstream stream = nullptr;
  CUcontext context = guard.context();
  if (!context)
    return nullptr;
  if ((stream = streamPool().take(context)))
    return stream;
  // Non-blocking: no implicit ordering with the legacy default stream, which
  // the async token chains of the gpu dialect do not expect.
  HOT_CUDA_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

extern "C" void mgpuStreamDestroy(void *stream) {
  ContextGuard guard(__func__);
  auto cuStream = static_cast<CUstream>(stream);
  CUcontext context = nullptr;
  if (cuStream && HOT_CUDA_CHECK(cuStreamGetCtx(cuStream, &context)) &&
      streamPool().give(context, cuStream))
    return;
  HOT_CUDA_CHECK(cuStreamDestroy(cuStream));
}

extern "C" void mgpuStreamSynchronize(void *stream) {
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuStreamSynchronize(static_cast<CUstream>(stream)));
}

extern "C" void mgpuStreamWaitEvent(void *stream, void *event) {
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuStreamWaitEvent(static_cast<CUstream>(stream),
                                   static_cast<CUevent>(event), /*Flags=*/0));
}

extern "C" void *mgpuEventCreate() {
  ContextGuard guard(__func__);
  CUevent event = nullptr;
  if (guard.ok())
    HOT_CUDA_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

extern "C" void mgpuEventDestroy(void *event) {
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuEventDestroy(static_cast<CUevent>(event)));
}

extern "C" void mgpuEventSynchronize(void *event) {
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuEventSynchronize(static_cast<CUevent>(event)));
}

extern "C" void mgpuEventRecord(void *event, void *stream) {
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuEventRecord(static_cast<CUevent>(event),
                               static_cast<CUstream>(stream)));
}
