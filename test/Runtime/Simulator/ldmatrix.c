// ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 against the PTX
// ISA's fragment layout ("Warp-level matrix load instruction: ldmatrix"):
// lane i receives in register j elements (i/4, 2(i%4)) and (i/4, 2(i%4)+1)
// of matrix j, low half first. Rows lie 32 bytes apart (not contiguous);
// lanes whose address is unused pass an unaligned pointer.
// RUN: %host_cc -O2 -fPIC -shared -DKERNELS -I%S/Inputs %s -o %t.kernels.so
// RUN: %host_cc -O2 -I%S/Inputs %s -o %t -ldl
// RUN: %t %hot_simulator_runtime %t.kernels.so 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=hot_simulator_runtime

// CHECK: ldmatrix.x1: 0 wrong
// CHECK: ldmatrix.x1.trans: 0 wrong
// CHECK: ldmatrix.x2: 0 wrong
// CHECK: ldmatrix.x2.trans: 0 wrong
// CHECK: ldmatrix.x4: 0 wrong
// CHECK: ldmatrix.x4.trans: 0 wrong
// Lane 5: row 1, columns 2 and 3 (transposed: rows 2 and 3 of column 1).
// CHECK: lane 5 of x4: 0x10131012 0x20132012 0x30133012 0x40134012
// CHECK: lane 5 of x4.trans: 0x10311021 0x20312021 0x30313021 0x40314021

#include <stdint.h>

#define MATRIX_BYTES 256
#define ROW_BYTES 32
#define UNTOUCHED 0x7eadbeef

/// Element (row, col) of matrix j: distinct in all of them.
static uint16_t element(int j, int row, int col) {
  return (uint16_t)(0x1000 * (j + 1) + 0x10 * row + col);
}

#ifdef KERNELS
#include "kernel.h"

KERNEL(ldmatrix) {
  int32_t *out = PARAM(int32_t *, 0); // [config][lane][4]
  char *shared = __hotsim_shared();
  int32_t lane = __hotsim_sreg(LANEID);
  // Each lane writes 8 of the 4 x 64 elements.
  for (int e = lane * 8; e < lane * 8 + 8; ++e) {
    int j = e / 64, row = e / 8 % 8, col = e % 8;
    *(uint16_t *)(shared + j * MATRIX_BYTES + row * ROW_BYTES + 2 * col) =
        element(j, row, col);
  }
  __hotsim_barrier();
  static const int nums[] = {1, 2, 4};
  for (int config = 0; config < 6; ++config) {
    int num = nums[config / 2], trans = config % 2;
    const void *row =
        lane < 8 * num ? shared + lane / 8 * MATRIX_BYTES + lane % 8 * ROW_BYTES
                       : (const void *)(uintptr_t)1;
    int32_t regs[4] = {UNTOUCHED, UNTOUCHED, UNTOUCHED, UNTOUCHED};
    __hotsim_ldmatrix(row, num, trans, regs);
    for (int j = 0; j < 4; ++j)
      out[(config * 32 + lane) * 4 + j] = regs[j];
  }
}
#else
#include "host.h"

int main(int argc, char **argv) {
  hostInit(argc, argv);
  int32_t *out = deviceAlloc(6 * 32 * 4 * sizeof(int32_t));
  void *params[] = {&out};
  launch("ldmatrix", 1, 1, 1, 32, 1, 1, 4 * MATRIX_BYTES, params);
  for (int config = 0; config < 6; ++config) {
    int num = config < 2 ? 1 : config < 4 ? 2 : 4, trans = config % 2;
    int wrong = 0;
    for (int i = 0; i < 32; ++i)
      for (int j = 0; j < 4; ++j) {
        uint32_t expected = UNTOUCHED;
        if (j < num) {
          int r = i / 4, c = 2 * (i % 4);
          uint32_t low = trans ? element(j, c, r) : element(j, r, c);
          uint32_t high = trans ? element(j, c + 1, r) : element(j, r, c + 1);
          expected = low | high << 16;
        }
        wrong += (uint32_t)out[(config * 32 + i) * 4 + j] != expected;
      }
    printf("ldmatrix.x%d%s: %d wrong\n", num, trans ? ".trans" : "", wrong);
  }
  for (int config = 4; config < 6; ++config) {
    printf("lane 5 of x4%s:", config == 5 ? ".trans" : "");
    for (int j = 0; j < 4; ++j)
      printf(" 0x%08x", (uint32_t)out[(config * 32 + 5) * 4 + j]);
    printf("\n");
  }
  return 0;
}
#endif
