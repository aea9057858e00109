// Errors: each is reported on stderr and abandons its launch (the blocks
// after the failing one do not run), and the next launch runs normally.
// With HOT_SIMULATOR_ABORT_ON_ERROR the first error aborts.
// RUN: %host_cc -O2 -fPIC -shared -DKERNELS -I%S/Inputs %s -o %t.kernels.so
// RUN: %host_cc -O2 -I%S/Inputs %s -o %t -ldl
// RUN: %t %hot_simulator_runtime %t.kernels.so 2>&1 | FileCheck %s
// RUN: env HOT_SIMULATOR_ABORT_ON_ERROR=1 not --crash \
// RUN:   %t %hot_simulator_runtime %t.kernels.so 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ABORT

// CHECK: hot_simulator_runtime: mgpuLaunchKernel: kernel 'deadlock',
// CHECK-SAME: block (1,0,0): deadlock: threads 0-15 wait at the block
// CHECK-SAME: barrier, threads 16-31 wait at shfl.sync.bfly with mask
// CHECK-SAME: 0xffffffff, threads 32-63 wait at the block barrier{{$}}
// CHECK-NEXT: blocks started: 2
// CHECK-NEXT: good launch: ok
// ABORT: kernel 'deadlock', block (1,0,0): deadlock
// ABORT-NOT: good launch

// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'exited_lane',
// CHECK-SAME: block (0,0,0): shfl.sync.bfly with mask 0xffffffff of thread 0
// CHECK-SAME: needs lane 31 (thread 31), which has exited{{$}}
// CHECK-NEXT: good launch: ok

// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'mismatch',
// CHECK-SAME: block (0,0,0): warp 0 disagrees: thread 0 waits at
// CHECK-SAME: shfl.sync.bfly with mask 0xffffffff, thread 16 at
// CHECK-SAME: shfl.sync.idx with mask 0xffffffff{{$}}
// CHECK-NEXT: good launch: ok

// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'partial_mma',
// CHECK-SAME: block (0,0,0): mma.sync.m16n8k32.s8 of thread 0 needs lane 16,
// CHECK-SAME: but warp 0 has 16 threads{{$}}
// CHECK-NEXT: good launch: ok

// CHECK-NEXT: hot_simulator_runtime: __hotsim_cp_async: kernel 'misaligned',
// CHECK-SAME: block (0,0,0), thread 0: cp.async of 16 bytes from
// CHECK-SAME: 0x{{[0-9a-f]+}} to 0x{{[0-9a-f]+}}4: both addresses must be
// CHECK-SAME: 16-byte aligned{{$}}
// CHECK-NEXT: good launch: ok

// CHECK-NEXT: poison: 0xffffffff 0xffffffff, as f32: -nan -nan
// CHECK-NEXT: good launch: ok

// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'good': block
// CHECK-SAME: dimension x = 2048 is not in [1, 1024]{{$}}
// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'good': a block
// CHECK-SAME: of 2048 threads exceeds 1024{{$}}
// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'good': grid
// CHECK-SAME: dimension y = 0 is not in [1, 65535]{{$}}
// CHECK-NEXT: hot_simulator_runtime: mgpuLaunchKernel: kernel 'good': 0 bytes
// CHECK-SAME: of static plus 232449 of dynamic shared memory exceed 232448
// CHECK-SAME: bytes per block{{$}}
// CHECK-NEXT: good launch: ok
// CHECK-NEXT: hot_simulator_runtime: mgpuModuleGetFunction: kernel 'missing'
// CHECK-SAME: not found: the module has no __hotsim_launch_missing{{$}}
// CHECK-NEXT: hot_simulator_runtime: mgpuModuleLoad: /proc/self/fd/{{[0-9]+}}:
// CHECK-NEXT: hot_simulator_runtime: mgpuModuleLoadJIT: the simulator needs a
// CHECK-SAME: binary object
// CHECK-NEXT: done

#include <stdint.h>

#ifdef KERNELS
#include "kernel.h"

/// Counts blocks; in block 1, lanes 0-15 reach a barrier while lanes 16-31
/// wait for them at a shuffle.
KERNEL(deadlock) {
  int32_t *started = PARAM(int32_t *, 0);
  int32_t t = linearTid();
  if (t == 0)
    ++*started;
  if (__hotsim_sreg(CTAID_X) == 1 && t >= 16 && t < 32)
    __hotsim_shfl(SHFL_BFLY, -1, t, 1, 0x1f, 0);
  __hotsim_barrier();
}

KERNEL(exited_lane) {
  if (linearTid() == 31)
    return;
  __hotsim_shfl(SHFL_BFLY, -1, 0, 1, 0x1f, 0);
}

KERNEL(mismatch) {
  __hotsim_shfl(linearTid() < 16 ? SHFL_BFLY : SHFL_IDX, -1, 0, 1, 0x1f, 0);
}

KERNEL(partial_mma) {
  int32_t a[4] = {0}, b[2] = {0}, c[4] = {0}, d[4];
  __hotsim_mma(0, 0, a, b, c, d);
}

KERNEL(misaligned) {
  const char *src = PARAM(const char *, 0);
  char *shared = __hotsim_shared();
  __hotsim_cp_async(shared + 4, src, 16, 16);
}

KERNEL(poison) {
  int32_t *out = PARAM(int32_t *, 0);
  int32_t *shared = __hotsim_shared();
  out[linearTid()] = shared[linearTid()];
}

KERNEL(good) {
  int32_t *out = PARAM(int32_t *, 0);
  out[linearTid()] = linearTid() * 2 + 1;
}
#else
#include "host.h"

static int32_t *goodOut;

static void checkGoodLaunch(void) {
  memset(goodOut, 0, 64 * sizeof(int32_t));
  void *params[] = {&goodOut};
  launch("good", 1, 1, 1, 64, 1, 1, 0, params);
  int ok = 1;
  for (int t = 0; t < 64; ++t)
    ok &= goodOut[t] == t * 2 + 1;
  printf("good launch: %s\n", ok ? "ok" : "FAILED");
}

int main(int argc, char **argv) {
  hostInit(argc, argv);
  goodOut = deviceAlloc(64 * sizeof(int32_t));

  int32_t *started = deviceAlloc(sizeof(int32_t));
  *started = 0;
  void *deadlockParams[] = {&started};
  launch("deadlock", 3, 1, 1, 64, 1, 1, 0, deadlockParams);
  printf("blocks started: %d\n", *started);
  checkGoodLaunch();

  launch("exited_lane", 1, 1, 1, 32, 1, 1, 0, NULL);
  checkGoodLaunch();
  launch("mismatch", 1, 1, 1, 32, 1, 1, 0, NULL);
  checkGoodLaunch();
  launch("partial_mma", 1, 1, 1, 16, 1, 1, 0, NULL);
  checkGoodLaunch();

  char *src = deviceAlloc(16);
  void *misalignedParams[] = {&src};
  launch("misaligned", 1, 1, 1, 1, 1, 1, 64, misalignedParams);
  checkGoodLaunch();

  int32_t *words = deviceAlloc(2 * sizeof(int32_t));
  void *poisonParams[] = {&words};
  launch("poison", 1, 1, 1, 2, 1, 1, 8, poisonParams);
  float floats[2];
  memcpy(floats, words, sizeof(floats));
  printf("poison: 0x%08x 0x%08x, as f32: %f %f\n", (uint32_t)words[0],
         (uint32_t)words[1], floats[0], floats[1]);
  checkGoodLaunch();

  void *goodParams[] = {&goodOut};
  launch("good", 1, 1, 1, 2048, 1, 1, 0, goodParams);
  launch("good", 1, 1, 1, 32, 32, 2, 0, goodParams);
  launch("good", 1, 0, 1, 32, 1, 1, 0, goodParams);
  launch("good", 1, 1, 1, 32, 1, 1, 227 * 1024 + 1, goodParams);
  checkGoodLaunch();

  launch("missing", 1, 1, 1, 1, 1, 1, 0, NULL);
  if (rt.moduleLoad("not an ELF object", 17))
    printf("loaded garbage\n");
  if (rt.moduleLoadJIT("// PTX", 2))
    printf("loaded PTX\n");
  rt.moduleUnload(rt.module);
  printf("done\n");
  return 0;
}
#endif
