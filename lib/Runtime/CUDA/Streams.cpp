//===- Streams.cpp - Streams and events -----------------------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Support.h"
#include "hot/Runtime/CudaRuntime.h"

using namespace hot::cuda;

extern "C" void *mgpuStreamCreate() {
  ContextGuard guard(__func__);
  CUstream stream = nullptr;
  // Non-blocking: no implicit ordering with the legacy default stream, which
  // the async token chains of the gpu dialect do not expect.
  if (guard.ok())
    HOT_CUDA_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

extern "C" void mgpuStreamDestroy(void *stream) {
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuStreamDestroy(static_cast<CUstream>(stream)));
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
