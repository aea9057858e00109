// mgpuMemAlloc and mgpuMemFree over the fake driver: freed blocks are reused
// only once the work queued before their free has run; a driver allocation
// that fails for want of memory is retried after the kept blocks go back;
// managed memory past the device's free memory is refused with a message.
// REQUIRES: hot-cuda-runtime
// RUN: rm -rf %t.driver && mkdir %t.driver
// RUN: %build_fake_cuda_driver %t.driver/libcuda.so.1
// RUN: %host_cc -O1 -I%S/Inputs %s -o %t -ldl
// RUN: env LD_LIBRARY_PATH=%t.driver FAKE_CUDA_MEMORY_BYTES=1048576 \
// RUN:   %t %hot_cuda_runtime reuse 2>&1 | FileCheck %s --check-prefix=REUSE
// RUN: env LD_LIBRARY_PATH=%t.driver FAKE_CUDA_MEMORY_BYTES=1048576 \
// RUN:   FAKE_CUDA_TRACE=1 %t %hot_cuda_runtime retry 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RETRY
// RUN: env LD_LIBRARY_PATH=%t.driver FAKE_CUDA_MEMORY_BYTES=1048576 \
// RUN:   not --crash %t %hot_cuda_runtime managed 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MANAGED
// RUN: env LD_LIBRARY_PATH=%t.driver FAKE_CUDA_MEMORY_BYTES=1048576 \
// RUN:   HOT_CUDA_ALLOW_OVERSUBSCRIPTION=1 %t %hot_cuda_runtime managed 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ALLOWED
// RUN: env LD_LIBRARY_PATH=%t.driver FAKE_CUDA_MEMORY_BYTES=1048576 \
// RUN:   HOT_CUDA_CACHE_BYTES=0 %t %hot_cuda_runtime nocache 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOCACHE
// RUN: env LD_LIBRARY_PATH=%t.driver FAKE_CUDA_NO_DEVICE=1 \
// RUN:   not --crash %t %hot_cuda_runtime nodevice 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NODEVICE

#include "host.h"

static const char *same(void *a, void *b) { return a == b ? "same" : "other"; }

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  loadRuntime(argv[1]);
  const char *scenario = argv[2];

  if (!strcmp(scenario, "reuse")) {
    void *stream = rt.streamCreate();
    char *a = rt.memAlloc(4096, stream, false);
    rt.memset32(a, 7, 1024, stream);
    rt.memFree(a, stream);
    // REUSE: while the memset is queued: other block
    char *b = rt.memAlloc(4096, stream, false);
    say("while the memset is queued: %s block", same(a, b));
    rt.streamSynchronize(stream);
    // REUSE-NEXT: after the stream ran: same block, first word 7
    char *c = rt.memAlloc(4096, stream, false);
    say("after the stream ran: %s block, first word %u", same(a, c),
        *(unsigned *)c);
    // Another size or kind is never handed out for it.
    rt.memFree(c, stream);
    rt.streamSynchronize(stream);
    // REUSE-NEXT: 4095 bytes: other block; managed: other block
    char *d = rt.memAlloc(4095, stream, false);
    char *e = rt.memAlloc(4096, stream, true);
    say("4095 bytes: %s block; managed: %s block", same(a, d), same(a, e));
    // A free without a stream waits for all queued work.
    rt.memFree(b, NULL);
    // REUSE-NEXT: zero bytes: null; driver errors: 0
    say("zero bytes: %s; driver errors: %d",
        rt.memAlloc(0, stream, false) ? "not null" : "null", rt.errors());
    return 0;
  }

  if (!strcmp(scenario, "retry")) {
    // 1 MiB of device memory: 600 KB kept after its free leaves too little
    // for 700 KB, until the runtime gives the kept block back.
    void *stream = rt.streamCreate();
    char *a = rt.memAlloc(600000, stream, false);
    rt.memFree(a, stream);
    rt.streamSynchronize(stream);
    // RETRY: cuMemAlloc(700000): 600000 of 1048576 bytes in use
    // RETRY: cuMemAlloc: error 2: device memory exhausted
    // RETRY: cuCtxSynchronize
    // RETRY: cuMemFree(mem0)
    // RETRY: cuMemAlloc(700000) = mem
    char *b = rt.memAlloc(700000, stream, false);
    // RETRY: after the retry: a block; live allocations 1
    say("after the retry: %s; live allocations %d", b ? "a block" : "null",
        rt.liveAllocations());
    // RETRY-NOT: hot_cuda_runtime
    return 0;
  }

  if (!strcmp(scenario, "managed")) {
    // Managed memory past the device's free memory: the driver would grant
    // it; the runtime refuses, after giving back what it kept.
    void *stream = rt.streamCreate();
    rt.memFree(rt.memAlloc(800000, stream, true), stream);
    rt.streamSynchronize(stream);
    void *big = rt.memAlloc(2 << 20, stream, true);
    // MANAGED: hot_cuda_runtime: mgpuMemAlloc: 2097152 bytes of managed
    // MANAGED-SAME: memory exceed the device's free memory; set
    // MANAGED-SAME: HOT_CUDA_ALLOW_OVERSUBSCRIPTION=1 to allocate them anyway
    // MANAGED-NOT: allocated
    // Allowed, the kept block stays kept: the device holds 2.
    // ALLOWED: allocated: yes; oversubscribed: 1; live allocations 2
    say("allocated: %s; oversubscribed: %d; live allocations %d",
        big ? "yes" : "no", rt.oversubscribed(), rt.liveAllocations());
    return 0;
  }

  if (!strcmp(scenario, "nocache")) {
    // HOT_CUDA_CACHE_BYTES=0: every free reaches the driver.
    void *stream = rt.streamCreate();
    for (int i = 0; i < 3; ++i)
      rt.memFree(rt.memAlloc(1000, stream, i % 2), stream);
    rt.streamSynchronize(stream);
    // NOCACHE: live allocations 0, 0 bytes in use
    say("live allocations %d, %zu bytes in use", rt.liveAllocations(),
        rt.bytesInUse());
    return 0;
  }

  if (!strcmp(scenario, "nodevice")) {
    // NODEVICE: probe: 0 devices
    say("probe: %d devices", rt.probe(NULL, NULL));
    // NODEVICE: mgpuStreamCreate: cuInit(0) failed: CUDA_ERROR_NO_DEVICE
    // NODEVICE: stream: null
    say("stream: %s", rt.streamCreate() ? "not null" : "null");
    // NODEVICE: mgpuMemAlloc: skipped: the CUDA driver failed to initialize
    // NODEVICE: mgpuMemAlloc: no CUDA context, cannot continue
    rt.memAlloc(16, NULL, false);
    // NODEVICE-NOT: returned
    say("returned");
    return 0;
  }
  return 2;
}
