// Block barriers, special registers and shared memory: a tree reduction over
// 256 threads of a 3-d block in each block of a 3-d grid, with static and
// dynamic shared memory; every block starts from poisoned shared memory; a
// barrier that half of the block never reaches (it returned) still releases.
// RUN: %host_cc -O2 -fPIC -shared -DKERNELS -I%S/Inputs %s -o %t.kernels.so
// RUN: %host_cc -O2 -I%S/Inputs %s -o %t -ldl
// RUN: %t %hot_simulator_runtime %t.kernels.so 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=hot_simulator_runtime

// CHECK: reduce: 12 blocks, 0 wrong sums
// CHECK: special registers: 0 wrong values
// CHECK: first shared word of each block: 0xffffffff 0xffffffff 0xffffffff
// CHECK-SAME: 0xffffffff 0xffffffff 0xffffffff 0xffffffff 0xffffffff
// CHECK-SAME: 0xffffffff 0xffffffff 0xffffffff 0xffffffff{{$}}
// CHECK: barrier with exited threads: 0 wrong values
// CHECK: shared memory base modulo 1024: 0

#include <stdint.h>

#define BX 8
#define BY 4
#define BZ 8
#define GX 3
#define GY 2
#define GZ 2
#define THREADS (BX * BY * BZ)
#define BLOCKS (GX * GY * GZ)
#define NUM_SREGS 14
/// The static shared size: the dynamic part starts at 32.
#define STATIC_BYTES 20

static int32_t input(int i) { return i * 37 % 1001 - 500; }

#ifdef KERNELS
#include "kernel.h"

uint64_t __hotsim_static_shared_bytes = STATIC_BYTES;

KERNEL(reduce) {
  const int32_t *in = PARAM(const int32_t *, 0);
  int32_t *sums = PARAM(int32_t *, 1);
  int32_t *sregs = PARAM(int32_t *, 2);
  int32_t *firstWords = PARAM(int32_t *, 3);
  char *shared = __hotsim_shared();
  int32_t *tag = (int32_t *)shared;            // Static: 5 words.
  int32_t *partial = (int32_t *)(shared + 32); // Dynamic: THREADS words.
  int32_t t = linearTid();
  int32_t threads =
      __hotsim_sreg(NTID_X) * __hotsim_sreg(NTID_Y) * __hotsim_sreg(NTID_Z);
  int32_t block = __hotsim_sreg(CTAID_X) +
                  __hotsim_sreg(NCTAID_X) *
                      (__hotsim_sreg(CTAID_Y) +
                       __hotsim_sreg(NCTAID_Y) * __hotsim_sreg(CTAID_Z));
  for (int i = 0; i < NUM_SREGS; ++i)
    sregs[(block * threads + t) * NUM_SREGS + i] = __hotsim_sreg(i);
  if (t == 0) {
    firstWords[block] = partial[0];
    tag[4] = block;
  }
  __hotsim_barrier();
  partial[t] = in[block * threads + t];
  __hotsim_barrier();
  for (int s = threads / 2; s > 0; s /= 2) {
    if (t < s)
      partial[t] += partial[t + s];
    __hotsim_barrier();
  }
  // The static part is intact: adds 0.
  if (t == 0)
    sums[block] = partial[0] + tag[4] - block;
}

/// Threads 128-255 return at once; the others meet at barriers, which
/// release without them. Also: the window's alignment (SimulatorABI.h).
KERNEL(early_exit) {
  int32_t *out = PARAM(int32_t *, 0);
  int32_t *shared = __hotsim_shared();
  int32_t t = linearTid();
  if (t == 0)
    out[128] = (int32_t)((uintptr_t)shared % 1024);
  if (t >= 128)
    return;
  shared[t] = t * 3;
  __hotsim_barrier();
  int32_t neighbour = shared[(t + 1) % 128];
  __hotsim_barrier();
  out[t] = neighbour;
}
#else
#include "host.h"

int main(int argc, char **argv) {
  hostInit(argc, argv);
  int32_t *in = deviceAlloc(BLOCKS * THREADS * sizeof(int32_t));
  int32_t *sums = deviceAlloc(BLOCKS * sizeof(int32_t));
  int32_t *sregs = deviceAlloc(BLOCKS * THREADS * NUM_SREGS * sizeof(int32_t));
  int32_t *firstWords = deviceAlloc(BLOCKS * sizeof(int32_t));
  for (int i = 0; i < BLOCKS * THREADS; ++i)
    in[i] = input(i);
  void *params[] = {&in, &sums, &sregs, &firstWords};
  launch("reduce", GX, GY, GZ, BX, BY, BZ, THREADS * sizeof(int32_t), params);

  int wrong = 0;
  for (int b = 0; b < BLOCKS; ++b) {
    int32_t sum = 0;
    for (int t = 0; t < THREADS; ++t)
      sum += input(b * THREADS + t);
    wrong += sums[b] != sum;
  }
  printf("reduce: %d blocks, %d wrong sums\n", BLOCKS, wrong);

  wrong = 0;
  for (int b = 0; b < BLOCKS; ++b)
    for (int t = 0; t < THREADS; ++t) {
      int32_t expected[NUM_SREGS] = {
          t % BX, t / BX % BY, t / (BX * BY), BX, BY, BZ,
          b % GX, b / GX % GY, b / (GX * GY), GX, GY, GZ,
          t % 32, t / 32};
      for (int i = 0; i < NUM_SREGS; ++i)
        wrong += sregs[(b * THREADS + t) * NUM_SREGS + i] != expected[i];
    }
  printf("special registers: %d wrong values\n", wrong);

  printf("first shared word of each block:");
  for (int b = 0; b < BLOCKS; ++b)
    printf(" 0x%08x", (uint32_t)firstWords[b]);
  printf("\n");

  int32_t *out = deviceAlloc(129 * sizeof(int32_t));
  void *earlyParams[] = {&out};
  launch("early_exit", 1, 1, 1, THREADS, 1, 1, 128 * sizeof(int32_t),
         earlyParams);
  wrong = 0;
  for (int t = 0; t < 128; ++t)
    wrong += out[t] != (t + 1) % 128 * 3;
  printf("barrier with exited threads: %d wrong values\n", wrong);
  printf("shared memory base modulo 1024: %d\n", out[128]);
  return 0;
}
#endif
