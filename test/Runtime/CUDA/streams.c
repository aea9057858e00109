// Streams, events, copies and host registration over the fake driver, whose
// streams run their work only when something waits for it: a copy is not
// seen before its stream is synchronized, an event is ready only after the
// work queued before it, and a stream that waits on an event sees the work
// the event follows. Destroyed streams are pooled and handed out again.
// REQUIRES: hot-cuda-runtime
// RUN: rm -rf %t.driver && mkdir %t.driver
// RUN: %build_fake_cuda_driver %t.driver/libcuda.so.1
// RUN: %host_cc -O1 -I%S/Inputs %s -o %t -ldl
// RUN: env LD_LIBRARY_PATH=%t.driver FAKE_CUDA_SUMMARY=1 \
// RUN:   %t %hot_cuda_runtime 2>&1 | FileCheck %s

#include "host.h"

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  loadRuntime(argv[1]);

  void *first = rt.streamCreate();
  rt.streamDestroy(first);
  // CHECK: pooled stream handed out again: yes
  void *stream = rt.streamCreate();
  say("pooled stream handed out again: %s", stream == first ? "yes" : "no");

  int host[4] = {1, 2, 3, 4};
  int *device = rt.memAlloc(sizeof(host), stream, true);
  rt.memcpy(device, host, sizeof(host), stream);
  // CHECK-NEXT: before the wait: a5a5a5a5
  say("before the wait: %08x", (unsigned)device[2]);
  rt.streamSynchronize(stream);
  // CHECK-NEXT: after the wait: 3
  say("after the wait: %d", device[2]);

  // An event behind a memset: the other stream waits on it, then copies.
  void *other = rt.streamCreate();
  void *event = rt.eventCreate();
  rt.memset32(device, 9, 4, stream);
  rt.eventRecord(event, stream);
  rt.streamWaitEvent(other, event);
  int back[4] = {0};
  rt.memcpy(back, device, sizeof(back), other);
  rt.streamSynchronize(other);
  // CHECK-NEXT: copied after the event: 9 9
  say("copied after the event: %d %d", back[0], back[3]);
  rt.memset16(device, 0x1234, 2, stream);
  rt.eventRecord(event, stream);
  rt.eventSynchronize(event);
  // CHECK-NEXT: after the event: 12341234
  say("after the event: %08x", (unsigned)device[0]);
  rt.eventDestroy(event);

  // Host registration of a strided 2-D memref (rows 2..3 of 4 x 8 ints, the
  // first 5 columns): from its first element to its last.
  static int matrix[4][8];
  MemRef2D view = {matrix, matrix, 16, {2, 5}, {8, 1}};
  rt.hostRegisterMemRef(2, &view, sizeof(int));
  // Registered memory is addressable by the device: a memset into it.
  rt.memset32(&matrix[2][4], 5, 9, stream);
  rt.streamSynchronize(stream);
  // CHECK-NEXT: registered row 3 ends with 5
  say("registered row 3 ends with %d", matrix[3][4]);
  // Past its end is not.
  // CHECK-NEXT: mgpuMemset32: cuMemsetD32Async({{.*}}) failed:
  // CUDA_ERROR_INVALID_VALUE
  rt.memset32(&matrix[3][4], 5, 2, stream);
  // CHECK-NEXT: mgpuMemHostRegister: cuMemHostRegister({{.*}}) failed:
  // CHECK-SAME: CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
  rt.hostRegisterMemRef(2, &view, sizeof(int));
  rt.hostUnregisterMemRef(2, &view, sizeof(int));
  // CHECK-NEXT: mgpuMemHostUnregister: cuMemHostUnregister(ptr) failed:
  // CHECK-SAME: CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
  rt.hostUnregisterMemRef(2, &view, sizeof(int));
  // An empty memref registers nothing.
  MemRef2D empty = {matrix, matrix, 0, {0, 8}, {8, 1}};
  rt.hostRegisterMemRef(2, &empty, sizeof(int));
  rt.hostUnregisterMemRef(2, &empty, sizeof(int));

  rt.memFree(device, stream);
  rt.streamDestroy(other);
  rt.streamDestroy(stream);
  // CHECK-NEXT: driver errors: 3
  say("driver errors: %d", rt.errors());
  // The freed block is kept by the runtime; the streams are pooled.
  // CHECK-NEXT: fake_cuda: summary: 0 launches, 3 errors, 0 device and 1
  // CHECK-SAME: managed allocations, 1 live (16 bytes), peak 16 bytes,
  // CHECK-SAME: 0 oversubscribed, 2 live streams
  return 0;
}
