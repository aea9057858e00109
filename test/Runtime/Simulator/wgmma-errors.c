// wgmma.mma_async errors, each reported on stderr and abandoning its launch:
// shared memory overwritten while a wgmma may still read it (before the
// wgmma.wait_group that retires it in every thread of the warpgroup, or at
// the exit without one), operands that differ between the threads, an
// exited thread or a short warpgroup, a deadlock, descriptors the simulator
// does not simulate or that point outside shared memory, an invalid N. A
// correctly synchronised double-buffered pipeline runs without error.
// RUN: %host_cc -O2 -fPIC -shared -DKERNELS -I%S/Inputs %s -o %t.kernels.so
// RUN: %host_cc -O2 -I%S/Inputs %s -o %t -ldl
// RUN: %t %hot_simulator_runtime %t.kernels.so 2>&1 | FileCheck %s

// CHECK: hot_simulator_runtime: __hotsim_wgmma_wait: kernel 'overwrite',
// CHECK-SAME: block (0,0,0), thread 127: shared memory read by
// CHECK-SAME: wgmma.mma_async was overwritten before wgmma.wait_group retired
// CHECK-SAME: it (m64n8k32, A at shared offset 1024, B at 17408){{$}}
// CHECK-NEXT: overwrite: 127 threads finished

// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'overwrite',
// CHECK-SAME: block (0,0,0), thread 127: shared memory read by
// CHECK-SAME: wgmma.mma_async was overwritten before wgmma.wait_group retired
// CHECK-SAME: it (m64n8k32, A at shared offset 1024, B at 17408; pending when
// CHECK-SAME: the thread exited){{$}}
// CHECK-NEXT: overwrite without a wait: 0 threads finished

// CHECK-NEXT: pipeline: 128 threads finished

// A thread may not refill a stage before all threads retired its wgmma.
// CHECK-NEXT: hot_simulator_runtime: __hotsim_wgmma_wait: kernel 'pipeline',
// CHECK-SAME: block (0,0,0), thread 127: shared memory read by
// CHECK-SAME: wgmma.mma_async was overwritten before wgmma.wait_group retired
// CHECK-SAME: it (m64n8k32, A at shared offset 1024, B at 17408){{$}}
// CHECK-NEXT: pipeline without a barrier: 0 threads finished

// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'mismatch',
// CHECK-SAME: block (0,0,0): warpgroup 0 disagrees on wgmma.mma_async:
// CHECK-SAME: thread 0 has m64n8k32, scale-d 1, descriptors
// CHECK-SAME: 0x4000004000010040 and 0x4000004000010440; thread 64 has
// CHECK-SAME: m64n8k32, scale-d 1, descriptors 0x4000004000010040 and
// CHECK-SAME: 0x4000004000010442{{$}}

// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'exited',
// CHECK-SAME: block (0,0,0): wgmma.mma_async m64n8k32 of thread 0 needs
// CHECK-SAME: thread 127, which has exited{{$}}

// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'exited',
// CHECK-SAME: block (0,0,0): wgmma.mma_async m64n8k32 of thread 128 needs
// CHECK-SAME: thread 192, but warpgroup 1 has 64 threads{{$}}

// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'deadlock',
// CHECK-SAME: block (0,0,0): deadlock: threads 0-63 wait at wgmma.mma_async
// CHECK-SAME: m64n8k32, threads 64-127 wait at the block barrier{{$}}

// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'descriptor',
// CHECK-SAME: block (0,0,0): wgmma.mma_async m64n8k32 of thread 0: matrix A:
// CHECK-SAME: descriptor 0x0000004000010040: swizzle mode 0 (no swizzle) is
// CHECK-SAME: not simulated{{$}}
// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'descriptor',
// CHECK-SAME: block (0,0,0): wgmma.mma_async m64n8k32 of thread 0: matrix A:
// CHECK-SAME: descriptor 0x4002004000010040: base offset 1 is not
// CHECK-SAME: simulated{{$}}
// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'descriptor',
// CHECK-SAME: block (0,0,0): wgmma.mma_async m64n8k32 of thread 0: matrix A:
// CHECK-SAME: descriptor 0x8000004000010043: a K slice at byte 48 of a
// CHECK-SAME: 64-byte swizzled row is not simulated{{$}}
// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'descriptor',
// CHECK-SAME: block (0,0,0): wgmma.mma_async m64n8k32 of thread 0: matrix B:
// CHECK-SAME: descriptor 0x4000004000010500: row 0 is at bytes 20480-20495,
// CHECK-SAME: beyond the 19456 bytes of shared memory{{$}}

// CHECK-NEXT: hot_simulator_runtime: __hotsim_wgmma: kernel 'descriptor',
// CHECK-SAME: block (0,0,0), thread 0: wgmma.mma_async m64n40k32 .s8: not a
// CHECK-SAME: valid N{{$}}
// CHECK-NEXT: done

#include <stdint.h>

/// Two stages of 128B-swizzled tiles: A (64 x 128 bytes) at 1024 and 9216,
/// B (8 x 128 bytes) at 17408 and 18432.
#define OFFSET_A(stage) (1024 + 8192 * (stage))
#define OFFSET_B(stage) (17408 + 1024 * (stage))
#define SHARED_BYTES OFFSET_B(2)

#ifdef KERNELS
#include "kernel.h"

static char *shared;

static uint64_t descriptor(uint32_t offset) {
  // 128-byte swizzle, stride dimension byte offset 1024.
  return offset >> 4 | (uint64_t)1 << 16 | (uint64_t)(1024 >> 4) << 32 |
         (uint64_t)1 << 62;
}

/// Fills (this thread's share of) the tiles of stage `stage`.
static void fill(int stage, int value) {
  int32_t tid = linearTid();
  for (int i = tid; i < 8192; i += 128)
    shared[OFFSET_A(stage) + i] = (char)(value + i);
  for (int i = tid; i < 1024; i += 128)
    shared[OFFSET_B(stage) + i] = (char)(value - i);
}

static void wgmma(int stage, int32_t *acc) {
  __hotsim_wgmma(8, 0, 1, descriptor(OFFSET_A(stage)),
                 descriptor(OFFSET_B(stage)), acc, acc);
}

/// Mode 0: one thread overwrites A between the wgmma and the wait; 1: and
/// exits without waiting.
KERNEL(overwrite) {
  int32_t *finished = PARAM(int32_t *, 0);
  int32_t mode = PARAM(int32_t, 1);
  int32_t acc[4] = {0, 0, 0, 0};
  shared = __hotsim_shared();
  fill(0, 0);
  __hotsim_barrier();
  wgmma(0, acc);
  __hotsim_wgmma_commit();
  if (linearTid() == 5)
    shared[OFFSET_A(0) + 16] ^= 1; // Row 0, K bytes 16-31: read.
  if (mode == 1)
    return;
  __hotsim_wgmma_wait(0);
  ++*finished;
}

/// Two stages: the wgmma of stage 1 overlaps the retirement of stage 0's,
/// which is then refilled; without the barrier after wait_group 1, threads
/// refill it while others have not retired it yet.
KERNEL(pipeline) {
  int32_t *finished = PARAM(int32_t *, 0);
  int32_t barrier = PARAM(int32_t, 1);
  int32_t acc[4] = {0, 0, 0, 0};
  shared = __hotsim_shared();
  fill(0, 0);
  __hotsim_barrier();
  wgmma(0, acc);
  __hotsim_wgmma_commit();
  fill(1, 1);
  __hotsim_barrier();
  wgmma(1, acc);
  __hotsim_wgmma_commit();
  __hotsim_wgmma_wait(1);
  if (barrier)
    __hotsim_barrier();
  fill(0, 2);
  __hotsim_barrier();
  wgmma(0, acc);
  __hotsim_wgmma_commit();
  __hotsim_wgmma_wait(0);
  ++*finished;
}

/// Thread 64's B starts 32 bytes further.
KERNEL(mismatch) {
  int32_t acc[4] = {0, 0, 0, 0};
  __hotsim_wgmma(8, 0, 1, descriptor(OFFSET_A(0)),
                 descriptor(OFFSET_B(0) + (linearTid() == 64 ? 32 : 0)), acc,
                 acc);
}

/// Thread 127 exits first in mode 1.
KERNEL(exited) {
  int32_t acc[4] = {0, 0, 0, 0};
  if (linearTid() == 127 && PARAM(int32_t, 0) == 1)
    return;
  wgmma(0, acc);
}

/// Threads 64-127 wait at a barrier instead.
KERNEL(deadlock) {
  int32_t acc[4] = {0, 0, 0, 0};
  if (linearTid() >= 64)
    __hotsim_barrier();
  wgmma(0, acc);
}

/// Descriptor of A (or B) given as parameter 0 (1), N as parameter 2.
KERNEL(descriptor) {
  int32_t acc[20];
  __hotsim_wgmma(PARAM(int32_t, 2), 0, 1, PARAM(uint64_t, 0),
                 PARAM(uint64_t, 1), acc, acc);
}
#else
#include "host.h"

static int32_t *finished;

static void runCounting(const char *name, const char *kernel, int32_t mode) {
  *finished = 0;
  void *params[] = {&finished, &mode};
  launch(kernel, 1, 1, 1, 128, 1, 1, SHARED_BYTES, params);
  printf("%s: %d threads finished\n", name, *finished);
}

static void runDescriptor(uint64_t descA, uint64_t descB, int32_t n) {
  void *params[] = {&descA, &descB, &n};
  launch("descriptor", 1, 1, 1, 128, 1, 1, SHARED_BYTES, params);
}

int main(int argc, char **argv) {
  hostInit(argc, argv);
  finished = deviceAlloc(sizeof(int32_t));
  runCounting("overwrite", "overwrite", 0);
  runCounting("overwrite without a wait", "overwrite", 1);
  runCounting("pipeline", "pipeline", 1);
  runCounting("pipeline without a barrier", "pipeline", 0);

  launch("mismatch", 1, 1, 1, 128, 1, 1, SHARED_BYTES, NULL);
  int32_t mode = 1;
  void *exitedParams[] = {&mode};
  launch("exited", 1, 1, 1, 128, 1, 1, SHARED_BYTES, exitedParams);
  mode = 0;
  launch("exited", 1, 1, 1, 192, 1, 1, SHARED_BYTES, exitedParams);
  launch("deadlock", 1, 1, 1, 128, 1, 1, SHARED_BYTES, NULL);

  // 128B swizzle at offset 1024 (start 0x40), stride 1024 (0x40 << 32).
  uint64_t good = 0x4000004000010040ull;
  runDescriptor(good & ~(3ull << 62), good, 8);       // No swizzle.
  runDescriptor(good | 1ull << 49, good, 8);          // Base offset 1.
  runDescriptor(good ^ 3ull << 62 | 3, good, 8);      // 64B, K at +48.
  runDescriptor(good, good - 0x40 + (20480 >> 4), 8); // Outside.
  runDescriptor(good, good, 40);                      // Not an .s8 N.
  printf("done\n");
  return 0;
}
#endif
