//===- SimulatorRuntime.h - SIMT simulator of NVPTX kernels -----*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// libhot_simulator_runtime.so runs GPU kernels that were compiled for the host
// CPU, so that lowered modules run (and are tested) on machines without a GPU.
//
// Host side: the same mgpu* entry points as libhot_cuda_runtime.so, declared
// in CudaRuntime.h (all but hotCudaRuntimeProbe). A "module" is the bytes of
// an x86-64 ELF shared object that exports, per kernel `k`,
// `void __hotsim_launch_k(void **params)` and once
// `uint64_t __hotsim_static_shared_bytes`. Launches are synchronous: every
// block runs, one after the other, each thread as a fiber; streams and events
// are placeholders.
//
// Device side: the functions below, which the kernel code calls instead of
// NVVM ops, and the libdevice (__nv_*) math functions (Math.cpp); their names
// and numbering are SimulatorABI.h's, shared with convert-nvvm-to-simulator.
//
// Errors print "hot_simulator_runtime: <entry>: <message>" on stderr; a
// kernel error (deadlock, malformed collective) abandons its launch, and
// later launches run normally. With HOT_SIMULATOR_ABORT_ON_ERROR set in the
// environment the process aborts at the first error.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_RUNTIME_SIMULATORRUNTIME_H
#define HOT_RUNTIME_SIMULATORRUNTIME_H

#include "hot/Runtime/CudaRuntime.h"
#include "hot/Runtime/SimulatorABI.h"

#include <cstdint>

#define HOT_SIMULATOR_EXPORT __attribute__((visibility("default")))

extern "C" {

/// The special register `id` (a SpecialRegister) of the calling thread.
HOT_SIMULATOR_EXPORT int32_t __hotsim_sreg(int32_t id);

/// The current block's shared memory (kSharedAlignment-aligned): the static
/// part, then the dynamic part at the static size rounded up to 16.
HOT_SIMULATOR_EXPORT void *__hotsim_shared(void);

/// bar.sync 0: waits until every thread of the block that has not exited
/// waits here.
HOT_SIMULATOR_EXPORT void __hotsim_barrier(void);

/// bar.red.{popc,and,or} 0 (`kind`, a BarrierReductionKind): the barrier,
/// then the block's reduction of the waiting threads' `predicate`s (the
/// count of non-zero ones, or 1 if all / any are non-zero, else 0).
HOT_SIMULATOR_EXPORT int32_t __hotsim_barrier_red(int32_t kind,
                                                  int32_t predicate);

/// shfl.sync.{bfly,up,down,idx}.b32 (`kind`, a ShuffleKind): the `value` of
/// the source lane; `*valid` (when not null) tells whether the source lane
/// was in range.
HOT_SIMULATOR_EXPORT int32_t __hotsim_shfl(int32_t kind, int32_t mask,
                                           int32_t value, int32_t b, int32_t c,
                                           int32_t *valid);

/// cp.async.{ca,cg}.shared.global: queues a copy of `srcSize` bytes and a
/// zero fill up to `size` (4, 8 or 16) in the thread's open group.
HOT_SIMULATOR_EXPORT void __hotsim_cp_async(void *dst, const void *src,
                                            int32_t size, int32_t srcSize);

/// cp.async.commit_group: closes the open group.
HOT_SIMULATOR_EXPORT void __hotsim_cp_async_commit(void);

/// cp.async.wait_group n: performs every committed group of the thread but
/// the `n` most recent ones.
HOT_SIMULATOR_EXPORT void __hotsim_cp_async_wait(int32_t n);

/// ldmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16 (warp collective):
/// `addr` is the row this lane supplies; writes `num` registers to `out`.
HOT_SIMULATOR_EXPORT void __hotsim_ldmatrix(const void *addr, int32_t num,
                                            int32_t trans, int32_t *out);

/// mma.sync.aligned.row.col{.satfinite}.s32 (warp collective) of `kind`, an
/// MmaKind; a: 4 registers, b: 2, c and d: 4.
HOT_SIMULATOR_EXPORT void __hotsim_mma(int32_t kind, int32_t satfinite,
                                       const int32_t *a, const int32_t *b,
                                       const int32_t *c, int32_t *d);

/// wgmma.mma_async.sync.aligned.m64n{n}k32.s32.s8.s8{.satfinite}, A and B
/// from shared memory through the matrix descriptors `descA` and `descB`
/// (both K-major, swizzled), as a collective of the 128 threads of the
/// calling thread's warpgroup: each passes its n/2 accumulator registers in
/// `accIn` (read when `scaleD` is 1) and receives them in `accOut` (which may
/// alias `accIn`). The bytes read stay checked until wgmma.wait_group.
HOT_SIMULATOR_EXPORT void __hotsim_wgmma(int32_t n, int32_t satfinite,
                                         int32_t scaleD, uint64_t descA,
                                         uint64_t descB, const int32_t *accIn,
                                         int32_t *accOut);

/// wgmma.commit_group: closes the thread's open wgmma-group.
HOT_SIMULATOR_EXPORT void __hotsim_wgmma_commit(void);

/// wgmma.wait_group n: retires every committed wgmma-group of the thread but
/// the `n` most recent ones; an error if shared memory that a retired
/// wgmma.mma_async read has changed since.
HOT_SIMULATOR_EXPORT void __hotsim_wgmma_wait(int32_t n);

} // extern "C"

#endif // HOT_RUNTIME_SIMULATORRUNTIME_H
