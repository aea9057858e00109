// mma.sync m16n8k32 .s8 and m16n8k64 .s4, two warps each with its own
// problem: every lane packs its fragments from a row-major A (16 x K) and an
// N-major B (8 x K) by the PTX ISA's tables ("Matrix Fragments for
// mma.m16n8k32" / "...m16n8k64", integer types), and D is compared with a
// triple loop, with and without .satfinite on sums that overflow int32.
// RUN: %host_cc -O2 -fPIC -shared -DKERNELS -I%S/Inputs %s -o %t.kernels.so
// RUN: %host_cc -O2 -I%S/Inputs %s -o %t -ldl
// RUN: %t %hot_simulator_runtime %t.kernels.so 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=hot_simulator_runtime

// CHECK: s8 random: 0 wrong, 0 overflowing
// CHECK: s8 overflow satfinite: 0 wrong, 128 overflowing
// CHECK: s8 overflow wrap: 0 wrong, 128 overflowing
// CHECK: s4 random: 0 wrong, 0 overflowing
// CHECK: s4 overflow satfinite: 0 wrong, 128 overflowing
// CHECK: s4 overflow wrap: 0 wrong, 128 overflowing

#include <stdint.h>

#define M 16
#define N 8
#define MAX_K 64
#define WARPS 2

/// One problem per warp: A[m][k], Bt[n][k] = B[k][n] (one element a byte,
/// also for .s4), C and D [m][n].
struct Problem {
  int8_t a[M][MAX_K];
  int8_t bt[N][MAX_K];
  int32_t c[M][N];
  int32_t d[M][N];
};

#ifdef KERNELS
#include "kernel.h"

KERNEL(mma) {
  struct Problem *problems = PARAM(struct Problem *, 0);
  int32_t kind = PARAM(int32_t, 1);
  int32_t satfinite = PARAM(int32_t, 2);
  struct Problem *p = &problems[__hotsim_sreg(WARPID)];
  int32_t lane = __hotsim_sreg(LANEID);
  int32_t groupID = lane >> 2, threadID_in_group = lane % 4;
  uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
  int32_t c[4], d[4];
  if (kind == 0) {
    // .s8: four elements a register, the lowest element in the lowest byte.
    for (int i = 0; i < 16; ++i) {
      int row = (i < 4 || (8 <= i && i < 12)) ? groupID : groupID + 8;
      int col = threadID_in_group * 4 + (i & 0x3) + (i >= 8 ? 16 : 0);
      a[i / 4] |= (uint32_t)(uint8_t)p->a[row][col] << (8 * (i % 4));
    }
    for (int i = 0; i < 8; ++i) {
      int row = threadID_in_group * 4 + (i & 0x3) + (i >= 4 ? 16 : 0);
      int col = groupID;
      b[i / 4] |= (uint32_t)(uint8_t)p->bt[col][row] << (8 * (i % 4));
    }
  } else {
    // .s4: eight nibbles a register, the lowest element in the lowest bits.
    for (int i = 0; i < 32; ++i) {
      int row = (i < 8 || (16 <= i && i < 24)) ? groupID : groupID + 8;
      int col = threadID_in_group * 8 + (i & 0x7) + (i >= 16 ? 32 : 0);
      a[i / 8] |= (uint32_t)(p->a[row][col] & 0xf) << (4 * (i % 8));
    }
    for (int i = 0; i < 16; ++i) {
      int row = threadID_in_group * 8 + (i & 0x7) + (i >= 8 ? 32 : 0);
      int col = groupID;
      b[i / 8] |= (uint32_t)(p->bt[col][row] & 0xf) << (4 * (i % 8));
    }
  }
  for (int i = 0; i < 4; ++i)
    c[i] = p->c[i < 2 ? groupID : groupID + 8][threadID_in_group * 2 + (i & 1)];
  __hotsim_mma(kind, satfinite, (const int32_t *)a, (const int32_t *)b, c, d);
  for (int i = 0; i < 4; ++i)
    p->d[i < 2 ? groupID : groupID + 8][threadID_in_group * 2 + (i & 1)] = d[i];
}
#else
#include "host.h"

static uint32_t seed = 12345;
static int randomIn(int low, int high) {
  seed = seed * 1103515245u + 12345u;
  return low + (int)((seed >> 8) % (uint32_t)(high - low + 1));
}

/// Runs one case on both warps and compares D with a triple loop.
static void run(const char *name, int kind, int satfinite, int overflow) {
  int k = kind == 0 ? 32 : 64, low = kind == 0 ? -128 : -8,
      high = kind == 0 ? 127 : 7;
  struct Problem *problems = deviceAlloc(WARPS * sizeof(struct Problem));
  memset(problems, 0, WARPS * sizeof(struct Problem));
  for (int w = 0; w < WARPS; ++w) {
    struct Problem *p = &problems[w];
    for (int m = 0; m < M; ++m)
      for (int kk = 0; kk < k; ++kk)
        p->a[m][kk] = overflow ? high : randomIn(low, high);
    // Overflow: even columns of B add, odd ones subtract as much as they
    // can, on top of C near INT32_MAX / INT32_MIN in rows 0-7 (rows 8-15
    // start from 0 and stay in range).
    for (int n = 0; n < N; ++n)
      for (int kk = 0; kk < k; ++kk)
        p->bt[n][kk] = overflow ? (n % 2 ? low : high) : randomIn(low, high);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n)
        p->c[m][n] = !overflow ? randomIn(-100000, 100000)
                     : m >= 8  ? 0
                     : n % 2   ? INT32_MIN + 100 + m
                               : INT32_MAX - 100 - m;
  }
  int32_t kindParam = kind, satParam = satfinite;
  void *params[] = {&problems, &kindParam, &satParam};
  launch("mma", 1, 1, 1, 32 * WARPS, 1, 1, 0, params);

  int wrong = 0, overflowing = 0;
  for (int w = 0; w < WARPS; ++w)
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        const struct Problem *p = &problems[w];
        int64_t sum = p->c[m][n];
        for (int kk = 0; kk < k; ++kk)
          sum += (int64_t)p->a[m][kk] * p->bt[n][kk];
        int32_t expected = (int32_t)(uint32_t)sum;
        if (sum > INT32_MAX || sum < INT32_MIN) {
          ++overflowing;
          if (satfinite)
            expected = sum > INT32_MAX ? INT32_MAX : INT32_MIN;
        }
        wrong += p->d[m][n] != expected;
      }
  printf("%s: %d wrong, %d overflowing\n", name, wrong, overflowing);
  rt.memFree(problems, NULL);
}

int main(int argc, char **argv) {
  hostInit(argc, argv);
  run("s8 random", 0, 1, 0);
  run("s8 overflow satfinite", 0, 1, 1);
  run("s8 overflow wrap", 0, 0, 1);
  run("s4 random", 1, 0, 0);
  run("s4 overflow satfinite", 1, 1, 1);
  run("s4 overflow wrap", 1, 0, 1);
  return 0;
}
#endif
