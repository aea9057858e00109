// cp.async is asynchronous: the destination keeps the shared-memory poison
// until a cp.async.wait_group covers the copy's group (a barrier does not);
// wait_group 1 leaves the most recent group pending; the part of a copy
// beyond srcSize is zero-filled; copies a thread never waited for are
// performed when it exits.
// RUN: %host_cc -O2 -fPIC -shared -DKERNELS -I%S/Inputs %s -o %t.kernels.so
// RUN: %host_cc -O2 -I%S/Inputs %s -o %t -ldl
// RUN: %t %hot_simulator_runtime %t.kernels.so 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=hot_simulator_runtime

// CHECK: before any wait (after a barrier): 0 bytes differ
// CHECK: after wait_group 1: 0 bytes differ
// CHECK: after wait_group 0: 0 bytes differ
// Thread 5's source bytes are 0x41, 0x42...: A copies 5 of 16 bytes, B 5 of 8,
// C none of 4, D all 16.
// CHECK: thread 5 after wait_group 0: 41 42 43 44 45 00 00 00 00 00 00 00 00
// CHECK-SAME: 00 00 00 | 51 52 53 54 55 00 00 00 | 00 00 00 00 | ff ff ff ff
// CHECK-SAME: | 61 62 63 64{{$}}
// CHECK: copies of exited threads: 0 bytes differ

#include <stdint.h>

#define THREADS 32
/// Per thread, in shared memory: [0,16) copy A (16 bytes, srcSize t % 17),
/// [16,24) B (8, t % 9), [24,28) C (4, t % 5), [28,32) never written,
/// [32,48) D (16, all): A-C in group 0, D in group 1.
#define SLOT 48
#define SOURCE 64

#ifdef KERNELS
#include "kernel.h"

KERNEL(cp_async) {
  const uint8_t *src = PARAM(const uint8_t *, 0);
  uint8_t *snapshots = PARAM(uint8_t *, 1); // [3][THREADS][SLOT]
  uint8_t *shared = __hotsim_shared();
  int32_t t = linearTid();
  uint8_t *slot = shared + t * SLOT;
  const uint8_t *from = src + t * SOURCE;
  __hotsim_cp_async(slot, from, 16, t % 17);
  __hotsim_cp_async(slot + 16, from + 16, 8, t % 9);
  __hotsim_cp_async(slot + 24, from + 24, 4, t % 5);
  __hotsim_cp_async_commit();
  __hotsim_cp_async(slot + 32, from + 32, 16, 16);
  __hotsim_cp_async_commit();
  __hotsim_barrier();
  for (int phase = 0; phase < 3; ++phase) {
    if (phase > 0)
      __hotsim_cp_async_wait(2 - phase);
    for (int i = 0; i < SLOT; ++i)
      snapshots[(phase * THREADS + t) * SLOT + i] = slot[i];
  }
}

/// Threads 32-63 copy into shared memory and return without waiting (48-63
/// without even committing); threads 0-31 read it after a barrier that the
/// exited threads count as reached.
KERNEL(cp_async_exit) {
  const uint8_t *src = PARAM(const uint8_t *, 0);
  uint8_t *out = PARAM(uint8_t *, 1);
  uint8_t *shared = __hotsim_shared();
  int32_t t = linearTid();
  if (t >= 32) {
    __hotsim_cp_async(shared + (t - 32) * 16, src + (t - 32) * 16, 16, 16);
    if (t < 48)
      __hotsim_cp_async_commit();
    return;
  }
  __hotsim_barrier();
  for (int i = 0; i < 16; ++i)
    out[t * 16 + i] = shared[t * 16 + i];
}
#else
#include "host.h"

/// What `slot` byte i of thread t holds once groups [0, groups) completed.
static uint8_t expected(const uint8_t *src, int t, int i, int groups) {
  static const int begin[] = {0, 16, 24, 32}, size[] = {16, 8, 4, 16};
  int srcSize[] = {t % 17, t % 9, t % 5, 16};
  for (int c = 0; c < 4; ++c) {
    if (i < begin[c] || i >= begin[c] + size[c])
      continue;
    int group = c < 3 ? 0 : 1;
    if (group >= groups)
      return 0xff;
    return i - begin[c] < srcSize[c] ? src[t * SOURCE + i] : 0;
  }
  return 0xff;
}

int main(int argc, char **argv) {
  hostInit(argc, argv);
  uint8_t *src = deviceAlloc(THREADS * SOURCE);
  for (int i = 0; i < THREADS * SOURCE; ++i)
    src[i] = (uint8_t)(i + 1);
  uint8_t *snapshots = deviceAlloc(3 * THREADS * SLOT);
  void *params[] = {&src, &snapshots};
  launch("cp_async", 1, 1, 1, THREADS, 1, 1, THREADS * SLOT, params);
  static const char *const phases[] = {"before any wait (after a barrier)",
                                       "after wait_group 1",
                                       "after wait_group 0"};
  for (int phase = 0; phase < 3; ++phase) {
    int differ = 0;
    for (int t = 0; t < THREADS; ++t)
      for (int i = 0; i < SLOT; ++i)
        differ += snapshots[(phase * THREADS + t) * SLOT + i] !=
                  expected(src, t, i, phase);
    printf("%s: %d bytes differ\n", phases[phase], differ);
  }
  printf("thread 5 after wait_group 0:");
  for (int i = 0; i < 36; ++i)
    printf("%s %02x", i == 16 || i == 24 || i == 28 || i == 32 ? " |" : "",
           snapshots[(2 * THREADS + 5) * SLOT + i]);
  printf("\n");

  uint8_t *out = deviceAlloc(32 * 16);
  void *exitParams[] = {&src, &out};
  launch("cp_async_exit", 1, 1, 1, 64, 1, 1, 32 * 16, exitParams);
  int differ = 0;
  for (int i = 0; i < 32 * 16; ++i)
    differ += out[i] != src[i];
  printf("copies of exited threads: %d bytes differ\n", differ);
  return 0;
}
#endif
