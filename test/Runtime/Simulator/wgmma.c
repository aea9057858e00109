// wgmma.mma_async m64nNk32 .s32.s8.s8 with A and B in shared memory, one or
// two warpgroups (each its own 64 rows of A, all sharing B). The threads
// write A and B K-major into swizzled tiles as the PTX ISA's "Shared Memory
// Matrix Layout" describes them (rows in atoms of 8 of the swizzle width, the
// 16-byte chunk index XORed with the row within 8 on the shared address),
// build the matrix descriptors from shared addresses ("Matrix Descriptor
// Format"), step K by 32 bytes within the tiles (4 steps in a 128-byte row, 2
// in a 64-byte one, 1 in a 32-byte one) and store D by the accumulator
// layout of "Matrix Fragments for wgmma.mma_async.m64nNk32"; the host
// compares with a triple loop over K = 128.
// RUN: %host_cc -O2 -fPIC -shared -DKERNELS -I%S/Inputs %s -o %t.kernels.so
// RUN: %host_cc -O2 -I%S/Inputs %s -o %t -ldl
// RUN: %t %hot_simulator_runtime %t.kernels.so 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=hot_simulator_runtime

// CHECK: sw128 n128, 1 warpgroup: 0 wrong, 0 overflowing
// CHECK: sw128 n128, 2 warpgroups, a group per wgmma: 0 wrong, 0 overflowing
// CHECK: sw128 n8, scale-d 0 first: 0 wrong, 0 overflowing
// CHECK: sw64 n128, 2 warpgroups: 0 wrong, 0 overflowing
// CHECK: sw64 n24, a group per wgmma: 0 wrong, 0 overflowing
// CHECK: sw32 n128, 2 warpgroups, scale-d 0 first: 0 wrong, 0 overflowing
// CHECK: sw128 overflow satfinite: 0 wrong, 1024 overflowing
// CHECK: sw128 overflow wrap: 0 wrong, 1024 overflowing

#include <stdint.h>

#define K 128
#define MAX_N 128
#define MAX_GROUPS 2
/// Shared memory: A from OFFSET_A (64 x K bytes a warpgroup), then B.
#define OFFSET_A 1024
#define OFFSET_B (OFFSET_A + MAX_GROUPS * 64 * K)
#define SHARED_BYTES (OFFSET_B + MAX_N * K)

/// a[g][m] is row m of A for warpgroup g; bt[j][k] = B[k][j].
struct Problem {
  int32_t n, swizzle, satfinite, scaleFirst, groupEach;
  int8_t a[MAX_GROUPS][64][K];
  int8_t bt[MAX_N][K];
  int32_t c[MAX_GROUPS][64][MAX_N];
  int32_t d[MAX_GROUPS][64][MAX_N];
};

#ifdef KERNELS
#include "kernel.h"

/// The swizzle of a `width`-byte K-major layout on a shared address (or on
/// its offset in the window: the same low bits): bits 4-6 (128), 4-5 (64)
/// or 4 (32) XOR bits 7-9, 7-8 or 7.
static uint32_t swizzle(uint32_t address, int width) {
  uint32_t rowInAtom = (address >> 7) % (width / 16);
  return address ^ rowInAtom << 4;
}

/// Tiles are `width` bytes of K wide. A of warpgroup g: tile t holds its 64
/// rows, 8-row atoms one after the other (stride dimension byte offset
/// 8 * width). B: atoms of the tiles interleaved, [N / 8][tile][8][width]
/// (stride dimension byte offset 8 * K).
static uint32_t tileA(int g, int t, int width) {
  return OFFSET_A + (g * (K / width) + t) * 64 * width;
}
static uint32_t tileB(int t, int width) { return OFFSET_B + t * 8 * width; }

static uint32_t offsetA(int g, int m, int k, int width) {
  return swizzle(tileA(g, k / width, width) + m / 8 * (8 * width) +
                     m % 8 * width + k % width,
                 width);
}
static uint32_t offsetB(int j, int k, int width) {
  return swizzle(tileB(k / width, width) + j / 8 * (8 * K) + j % 8 * width +
                     k % width,
                 width);
}

/// A matrix descriptor: start address and stride dimension byte offset
/// (>> 4, from the shared address: the low 18 bits of the pointer), the
/// unused leading dimension byte offset as 1, swizzle mode 1/2/3 for
/// 128/64/32 bytes.
static uint64_t descriptor(const char *start, uint32_t stride, int width) {
  uint64_t address = (uintptr_t)start & 0x3FFFF;
  uint64_t mode = width == 128 ? 1 : width == 64 ? 2 : 3;
  return address >> 4 | (uint64_t)1 << 16 | (uint64_t)(stride >> 4) << 32 |
         mode << 62;
}

KERNEL(wgmma) {
  struct Problem *p = PARAM(struct Problem *, 0);
  char *shared = __hotsim_shared();
  int32_t tid = linearTid(), threads = __hotsim_sreg(NTID_X);
  int n = p->n, width = p->swizzle, groups = threads / 128;
  for (int i = tid; i < groups * 64 * K; i += threads)
    shared[offsetA(i / (64 * K), i / K % 64, i % K, width)] =
        p->a[i / (64 * K)][i / K % 64][i % K];
  for (int i = tid; i < n * K; i += threads)
    shared[offsetB(i / K, i % K, width)] = p->bt[i / K][i % K];
  __hotsim_barrier();

  int g = tid / 128, warp = tid % 128 / 32, lane = tid % 32;
  int groupID = lane >> 2, threadID_in_group = lane % 4;
  int32_t acc[MAX_N / 2];
  for (int i = 0; i < n / 2; ++i) {
    int row = 16 * warp + groupID + 8 * (i % 4 / 2);
    int col = 8 * (i / 4) + 2 * threadID_in_group + i % 2;
    // Garbage where the first wgmma has scale-d 0.
    acc[i] = p->scaleFirst ? p->c[g][row][col] : 0x5eed;
  }
  for (int k = 0; k < K; k += 32) {
    int t = k / width;
    uint64_t descA =
        descriptor(shared + tileA(g, t, width) + k % width, 8 * width, width);
    uint64_t descB =
        descriptor(shared + tileB(t, width) + k % width, 8 * K, width);
    __hotsim_wgmma(n, p->satfinite, k > 0 || p->scaleFirst, descA, descB, acc,
                   acc);
    if (p->groupEach)
      __hotsim_wgmma_commit();
  }
  if (p->groupEach)
    __hotsim_wgmma_wait(1);
  __hotsim_wgmma_commit();
  __hotsim_wgmma_wait(0);
  for (int i = 0; i < n / 2; ++i) {
    int row = 16 * warp + groupID + 8 * (i % 4 / 2);
    int col = 8 * (i / 4) + 2 * threadID_in_group + i % 2;
    p->d[g][row][col] = acc[i];
  }
}
#else
#include "host.h"

static uint32_t seed = 12345;
static int randomIn(int low, int high) {
  seed = seed * 1103515245u + 12345u;
  return low + (int)((seed >> 8) % (uint32_t)(high - low + 1));
}

/// Runs one case and compares D with a triple loop. Overflow: A all 127, B
/// 127 in even columns and -128 in odd ones, C near INT32_MAX / INT32_MIN
/// in rows 0-7 (so that every K step moves them the same way).
static void run(const char *name, int groups, int n, int swizzle, int satfinite,
                int scaleFirst, int groupEach, int overflow) {
  struct Problem *p = deviceAlloc(sizeof(struct Problem));
  memset(p, 0, sizeof(struct Problem));
  p->n = n;
  p->swizzle = swizzle;
  p->satfinite = satfinite;
  p->scaleFirst = scaleFirst;
  p->groupEach = groupEach;
  for (int g = 0; g < groups; ++g)
    for (int m = 0; m < 64; ++m)
      for (int k = 0; k < K; ++k)
        p->a[g][m][k] = overflow ? 127 : randomIn(-128, 127);
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < K; ++k)
      p->bt[j][k] = overflow ? (j % 2 ? -128 : 127) : randomIn(-128, 127);
  for (int g = 0; g < groups; ++g)
    for (int m = 0; m < 64; ++m)
      for (int j = 0; j < n; ++j)
        p->c[g][m][j] = !overflow ? randomIn(-100000, 100000)
                        : m >= 8  ? 0
                        : j % 2   ? INT32_MIN + 100 + m
                                  : INT32_MAX - 100 - m;
  void *params[] = {&p};
  launch("wgmma", 1, 1, 1, 128 * groups, 1, 1, SHARED_BYTES, params);

  int wrong = 0, overflowing = 0;
  for (int g = 0; g < groups; ++g)
    for (int m = 0; m < 64; ++m)
      for (int j = 0; j < n; ++j) {
        int64_t sum = scaleFirst ? p->c[g][m][j] : 0;
        for (int k = 0; k < K; ++k)
          sum += (int64_t)p->a[g][m][k] * p->bt[j][k];
        int32_t expected = (int32_t)(uint32_t)sum;
        if (sum > INT32_MAX || sum < INT32_MIN) {
          ++overflowing;
          if (satfinite)
            expected = sum > INT32_MAX ? INT32_MAX : INT32_MIN;
        }
        wrong += p->d[g][m][j] != expected;
      }
  printf("%s: %d wrong, %d overflowing\n", name, wrong, overflowing);
  rt.memFree(p, NULL);
}

int main(int argc, char **argv) {
  hostInit(argc, argv);
  run("sw128 n128, 1 warpgroup", 1, 128, 128, 0, 1, 0, 0);
  run("sw128 n128, 2 warpgroups, a group per wgmma", 2, 128, 128, 0, 1, 1, 0);
  run("sw128 n8, scale-d 0 first", 2, 8, 128, 1, 0, 0, 0);
  run("sw64 n128, 2 warpgroups", 2, 128, 64, 0, 1, 0, 0);
  run("sw64 n24, a group per wgmma", 1, 24, 64, 0, 1, 1, 0);
  run("sw32 n128, 2 warpgroups, scale-d 0 first", 2, 128, 32, 0, 0, 0, 0);
  run("sw128 overflow satfinite", 1, 128, 128, 1, 1, 0, 1);
  run("sw128 overflow wrap", 1, 128, 128, 0, 1, 0, 1);
  return 0;
}
#endif
