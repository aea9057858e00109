//===- kernel.h - Kernel side of the simulator runtime tests --------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// What the compiler's host-object step emits for a kernel, written by hand:
// calls of the runtime's __hotsim_* ABI and an exported
// __hotsim_launch_<name>(void **params), params[i] pointing to argument i.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_TEST_RUNTIME_SIMULATOR_KERNEL_H
#define HOT_TEST_RUNTIME_SIMULATOR_KERNEL_H

#include <stdint.h>

int32_t __hotsim_sreg(int32_t id);
void *__hotsim_shared(void);
void __hotsim_barrier(void);
int32_t __hotsim_shfl(int32_t kind, int32_t mask, int32_t value, int32_t b,
                      int32_t c, int32_t *valid);
void __hotsim_cp_async(void *dst, const void *src, int32_t size,
                       int32_t srcSize);
void __hotsim_cp_async_commit(void);
void __hotsim_cp_async_wait(int32_t n);
void __hotsim_ldmatrix(const void *addr, int32_t num, int32_t trans,
                       int32_t *out);
void __hotsim_mma(int32_t kind, int32_t satfinite, const int32_t *a,
                  const int32_t *b, const int32_t *c, int32_t *d);
void __hotsim_wgmma(int32_t n, int32_t satfinite, int32_t scaleD,
                    uint64_t descA, uint64_t descB, const int32_t *accIn,
                    int32_t *accOut);
void __hotsim_wgmma_commit(void);
void __hotsim_wgmma_wait(int32_t n);

enum {
  TID_X,
  TID_Y,
  TID_Z,
  NTID_X,
  NTID_Y,
  NTID_Z,
  CTAID_X,
  CTAID_Y,
  CTAID_Z,
  NCTAID_X,
  NCTAID_Y,
  NCTAID_Z,
  LANEID,
  WARPID
};
enum { SHFL_BFLY, SHFL_UP, SHFL_DOWN, SHFL_IDX };

#define KERNEL(name) void __hotsim_launch_##name(void **params)
#define PARAM(type, i) (*(type *)params[i])

/// The linear thread id x + y * ntid.x + z * ntid.x * ntid.y.
static inline int32_t linearTid(void) {
  return __hotsim_sreg(TID_X) +
         __hotsim_sreg(NTID_X) * (__hotsim_sreg(TID_Y) +
                                  __hotsim_sreg(NTID_Y) * __hotsim_sreg(TID_Z));
}

#endif // HOT_TEST_RUNTIME_SIMULATOR_KERNEL_H
