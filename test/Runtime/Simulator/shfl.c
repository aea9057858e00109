// shfl.sync in every mode, over full and partial widths (c = ((32 - width)
// << 8) | clamp) and masks, against the CUDA Programming Guide's __shfl*_sync
// semantics written out below.
// RUN: %host_cc -O2 -fPIC -shared -DKERNELS -I%S/Inputs %s -o %t.kernels.so
// RUN: %host_cc -O2 -I%S/Inputs %s -o %t -ldl
// RUN: %t %hot_simulator_runtime %t.kernels.so 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=hot_simulator_runtime

// CHECK: shfl: 33 cases, 0 mismatches
// CHECK: shfl without predicate: ok

#include <stdint.h>

/// One shuffle that every lane of both warps executes. `masks`: 0 all lanes
/// (0xffffffff); 1 each segment of `width` lanes its own mask; 2 only the
/// first segment executes the shuffle.
struct Case {
  int32_t kind, b, width, masks;
};

#define NUM_THREADS 64
#define SKIPPED -7

static int32_t valueOf(int thread, int index) {
  return thread * 131 + 17 + index * 100003;
}

#ifdef KERNELS
#include "kernel.h"

KERNEL(shfl) {
  const struct Case *cases = PARAM(const struct Case *, 0);
  int32_t numCases = PARAM(int32_t, 1);
  int32_t *out = PARAM(int32_t *, 2);
  int32_t t = linearTid(), lane = __hotsim_sreg(LANEID);
  for (int i = 0; i < numCases; ++i) {
    struct Case c = cases[i];
    int32_t *result = out + 2 * (i * NUM_THREADS + t);
    uint32_t segment = c.width == 32 ? 0xffffffffu : (1u << c.width) - 1;
    uint32_t mask =
        c.masks == 0 ? 0xffffffffu : segment << (lane / c.width * c.width);
    if (c.masks == 2 && lane >= c.width) {
      result[0] = result[1] = SKIPPED;
      continue;
    }
    int32_t clamp = c.kind == SHFL_UP ? 0 : 0x1f;
    int32_t packed = ((32 - c.width) << 8) | clamp;
    result[0] = __hotsim_shfl(c.kind, (int32_t)mask, valueOf(t, i), c.b, packed,
                              &result[1]);
  }
  // The predicate is optional.
  out[2 * numCases * NUM_THREADS + t] =
      __hotsim_shfl(SHFL_BFLY, -1, t, 1, 0x1f, 0);
}
#else
#include "host.h"

static const char *const kKinds[] = {"bfly", "up", "down", "idx"};

/// The source lane of `lane` per the CUDA Programming Guide: segments of
/// `width` lanes; lanes may read earlier segments (bfly), never later ones;
/// idx wraps modulo the width. Returns -1 when the lane keeps its own value.
static int expectedSource(struct Case c, int lane) {
  int start = lane / c.width * c.width, end = start + c.width;
  int source;
  switch (c.kind) {
  case 0:
    source = lane ^ c.b;
    return source < end ? source : -1;
  case 1:
    source = lane - c.b;
    return source >= start ? source : -1;
  case 2:
    source = lane + c.b;
    return source < end ? source : -1;
  default:
    return start + c.b % c.width;
  }
}

int main(int argc, char **argv) {
  hostInit(argc, argv);
  static const struct Case cases[] = {
      {0, 1, 32, 0},  {0, 16, 32, 0}, {0, 31, 32, 0}, {0, 4, 16, 0},
      {0, 16, 16, 0}, {0, 2, 8, 0},   {0, 12, 8, 0},  {0, 3, 4, 0},
      {1, 1, 32, 0},  {1, 5, 32, 0},  {1, 3, 16, 0},  {1, 7, 8, 0},
      {1, 1, 4, 0},   {2, 1, 32, 0},  {2, 17, 32, 0}, {2, 2, 16, 0},
      {2, 5, 8, 0},   {2, 3, 4, 0},   {3, 0, 32, 0},  {3, 31, 32, 0},
      {3, 13, 32, 0}, {3, 5, 16, 0},  {3, 21, 16, 0}, {3, 7, 8, 0},
      {3, 2, 4, 0},   {0, 8, 16, 1},  {0, 1, 8, 1},   {1, 2, 16, 1},
      {2, 3, 8, 1},   {3, 9, 16, 1},  {3, 1, 4, 1},   {3, 3, 8, 2},
      {2, 1, 16, 2},
  };
  int32_t numCases = sizeof(cases) / sizeof(cases[0]);
  struct Case *deviceCases = deviceAlloc(sizeof(cases));
  memcpy(deviceCases, cases, sizeof(cases));
  size_t outWords = 2 * numCases * NUM_THREADS + NUM_THREADS;
  int32_t *out = deviceAlloc(outWords * sizeof(int32_t));
  void *params[] = {&deviceCases, &numCases, &out};
  launch("shfl", 1, 1, 1, NUM_THREADS, 1, 1, 0, params);

  int mismatches = 0;
  for (int i = 0; i < numCases; ++i)
    for (int t = 0; t < NUM_THREADS; ++t) {
      struct Case c = cases[i];
      int lane = t % 32, warp = t / 32;
      int32_t value, valid;
      if (c.masks == 2 && lane >= c.width) {
        value = valid = SKIPPED;
      } else {
        int source = expectedSource(c, lane);
        valid = source >= 0;
        value = valueOf(warp * 32 + (source >= 0 ? source : lane), i);
      }
      const int32_t *got = out + 2 * (i * NUM_THREADS + t);
      if (got[0] != value || got[1] != valid) {
        if (++mismatches <= 10)
          printf("case %d (%s b=%d width=%d): thread %d got %d/%d, expected "
                 "%d/%d\n",
                 i, kKinds[c.kind], c.b, c.width, t, got[0], got[1], value,
                 valid);
      }
    }
  printf("shfl: %d cases, %d mismatches\n", numCases, mismatches);

  const int32_t *plain = out + 2 * numCases * NUM_THREADS;
  int ok = 1;
  for (int t = 0; t < NUM_THREADS; ++t)
    ok &= plain[t] == (t ^ 1);
  printf("shfl without predicate: %s\n", ok ? "ok" : "FAILED");
  return 0;
}
#endif
