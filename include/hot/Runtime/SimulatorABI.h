//===- SimulatorABI.h - What simulated kernels call -------------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// The contract between `convert-nvvm-to-simulator` (which turns NVVM kernels
// into host code) and libhot_simulator_runtime.so (which runs them, one fiber
// per GPU thread). Both sides include this header, so the names and the
// numbering of the runtime calls are defined once.
//
// A kernel module compiled for the simulator is a host shared object that
// exports, for every kernel `K`,
//   void __hotsim_launch_K(void **params);   // params as in cuLaunchKernel
// and `uint64_t __hotsim_static_shared_bytes` (its static shared memory: the
// offset in each block's shared window where dynamic shared memory starts).
// Everything GPU-specific in the kernels is a call to one of the functions
// below, or to a libdevice `__nv_*` math function of HOT_SIMULATOR_NV_MATH.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_RUNTIME_SIMULATORABI_H
#define HOT_RUNTIME_SIMULATORABI_H

namespace hot::simulator {

/// Name prefix of the exported launch function of each kernel.
inline constexpr const char *kLaunchPrefix = "__hotsim_launch_";
/// Name prefix of the exported parameter sizes of each kernel: a `uint64_t`
/// array, its count first, then each parameter's size in bytes, so that the
/// runtime can copy a launch's arguments and run it later, in stream order.
inline constexpr const char *kParamSizesPrefix = "__hotsim_param_sizes_";
/// Name prefix of the exported static shared memory size of each kernel
/// (`uint64_t`): the size of the shared variables the kernel references.
inline constexpr const char *kStaticSharedPrefix =
    "__hotsim_static_shared_bytes_";
/// Name of the static shared memory size of a kernel module, for the kernels
/// without a size of their own (hand-written modules).
inline constexpr const char *kStaticSharedSymbol =
    "__hotsim_static_shared_bytes";
/// Alignment of each block's shared memory window: 256 KiB, the span of a
/// shared-state-space address, so that the low 18 bits of a pointer into the
/// window are its offset there, as a shared address would be (what wgmma
/// matrix descriptors encode, and what its swizzles XOR).
inline constexpr unsigned kSharedAlignment = 1u << 18;

/// `int32_t __hotsim_sreg(int32_t id)`: a special register of the calling
/// thread.
enum SpecialRegister : int {
  TidX = 0,
  TidY = 1,
  TidZ = 2,
  NtidX = 3,
  NtidY = 4,
  NtidZ = 5,
  CtaidX = 6,
  CtaidY = 7,
  CtaidZ = 8,
  NctaidX = 9,
  NctaidY = 10,
  NctaidZ = 11,
  LaneId = 12,
  WarpId = 13,
};

/// `int32_t __hotsim_shfl(kind, mask, value, b, c, int32_t *valid)`: the
/// modes of shfl.sync, numbered as the NVVM dialect's ShflKind.
enum ShuffleKind : int { Bfly = 0, Up = 1, Down = 2, Idx = 3 };

/// `int32_t __hotsim_barrier_red(kind, predicate)`: a block barrier that
/// also reduces the threads' predicates, numbered as the NVVM dialect's
/// BarrierReduction: the count of true ones, or whether all or any is true.
enum BarrierReductionKind : int { Popc = 0, And = 1, Or = 2 };

/// `void __hotsim_mma(kind, satfinite, a, b, c, d)`: the integer MMA shapes
/// the simulator executes (row.col, s32 accumulators).
enum MmaKind : int {
  /// m16n8k32 s8 x s8: a 4 registers, b 2, c and d 4.
  S8M16N8K32 = 0,
  /// m16n8k64 s4 x s4 (8 nibbles per register): a 4, b 2, c and d 4.
  S4M16N8K64 = 1,
};

} // namespace hot::simulator

/// The runtime calls: X(name, description).
#define HOT_SIMULATOR_CALLS(X)                                                 \
  X(__hotsim_sreg, "a special register (tid, ntid, ctaid, nctaid, lane)")      \
  X(__hotsim_shared, "the block's shared memory window")                       \
  X(__hotsim_barrier, "bar.sync 0")                                            \
  X(__hotsim_barrier_red, "bar.red.{popc,and,or} 0 on a predicate")            \
  X(__hotsim_shfl, "shfl.sync")                                                \
  X(__hotsim_cp_async, "cp.async (queued until a wait)")                       \
  X(__hotsim_cp_async_commit, "cp.async.commit_group")                         \
  X(__hotsim_cp_async_wait, "cp.async.wait_group")                             \
  X(__hotsim_ldmatrix, "ldmatrix .m8n8 .b16")                                  \
  X(__hotsim_mma, "mma.sync on integers")                                      \
  X(__hotsim_wgmma, "wgmma.mma_async m64nNk32 .s32.s8.s8 (warpgroup)")         \
  X(__hotsim_wgmma_commit, "wgmma.commit_group")                               \
  X(__hotsim_wgmma_wait, "wgmma.wait_group")

/// The libdevice functions the runtime implements (lib/Runtime/Simulator/
/// Math.cpp): X(name). f32 versions end in `f`, f64 ones do not.
#define HOT_SIMULATOR_NV_MATH(X)\
  X(__nv_abs)                                                                  \
  X(__nv_acos)                                                                 \
  X(__nv_acosf)                                                                \
  X(__nv_acosh)                                                                \
  X(__nv_acoshf)                                                               \
  X(__nv_asin)                                                                 \
  X(__nv_asinf)                                                                \
  X(__nv_asinh)                                                                \
  X(__nv_asinhf)                                                               \
  X(__nv_atan)                                                                 \
  X(__nv_atan2)                                                                \
  X(__nv_atan2f)                                                               \
  X(__nv_atanf)                                                                \
  X(__nv_atanh)                                                                \
  X(__nv_atanhf)                                                               \
  X(__nv_cbrt)                                                                 \
  X(__nv_cbrtf)                                                                \
  X(__nv_ceil)                                                                 \
  X(__nv_ceilf)                                                                \
  X(__nv_copysign)                                                             \
  X(__nv_copysignf)                                                            \
  X(__nv_cos)                                                                  \
  X(__nv_cosf)                                                                 \
  X(__nv_cosh)                                                                 \
  X(__nv_coshf)                                                                \
  X(__nv_erf)                                                                  \
  X(__nv_erfc)                                                                 \
  X(__nv_erfcf)                                                                \
  X(__nv_erff)                                                                 \
  X(__nv_exp)                                                                  \
  X(__nv_exp10)                                                                \
  X(__nv_exp10f)                                                               \
  X(__nv_exp2)                                                                 \
  X(__nv_exp2f)                                                                \
  X(__nv_expf)                                                                 \
  X(__nv_expm1)                                                                \
  X(__nv_expm1f)                                                               \
  X(__nv_fabs)                                                                 \
  X(__nv_fabsf)                                                                \
  X(__nv_fast_cosf)                                                            \
  X(__nv_fast_expf)                                                            \
  X(__nv_fast_log10f)                                                          \
  X(__nv_fast_log2f)                                                           \
  X(__nv_fast_logf)                                                            \
  X(__nv_fast_powf)                                                            \
  X(__nv_fast_sinf)                                                            \
  X(__nv_fast_tanf)                                                            \
  X(__nv_finitef)                                                              \
  X(__nv_floor)                                                                \
  X(__nv_floorf)                                                               \
  X(__nv_fma)                                                                  \
  X(__nv_fmaf)                                                                 \
  X(__nv_fmax)                                                                 \
  X(__nv_fmaxf)                                                                \
  X(__nv_fmin)                                                                 \
  X(__nv_fminf)                                                                \
  X(__nv_fmod)                                                                 \
  X(__nv_fmodf)                                                                \
  X(__nv_hypot)                                                                \
  X(__nv_hypotf)                                                               \
  X(__nv_isfinited)                                                            \
  X(__nv_isinfd)                                                               \
  X(__nv_isinff)                                                               \
  X(__nv_isnand)                                                               \
  X(__nv_isnanf)                                                               \
  X(__nv_log)                                                                  \
  X(__nv_log10)                                                                \
  X(__nv_log10f)                                                               \
  X(__nv_log1p)                                                                \
  X(__nv_log1pf)                                                               \
  X(__nv_log2)                                                                 \
  X(__nv_log2f)                                                                \
  X(__nv_logf)                                                                 \
  X(__nv_pow)                                                                  \
  X(__nv_powf)                                                                 \
  X(__nv_powi)                                                                 \
  X(__nv_powif)                                                                \
  X(__nv_rint)                                                                 \
  X(__nv_rintf)                                                                \
  X(__nv_round)                                                                \
  X(__nv_roundf)                                                               \
  X(__nv_rsqrt)                                                                \
  X(__nv_rsqrtf)                                                               \
  X(__nv_sin)                                                                  \
  X(__nv_sincos)                                                               \
  X(__nv_sincosf)                                                              \
  X(__nv_sinf)                                                                 \
  X(__nv_sinh)                                                                 \
  X(__nv_sinhf)                                                                \
  X(__nv_sqrt)                                                                 \
  X(__nv_sqrtf)                                                                \
  X(__nv_tan)                                                                  \
  X(__nv_tanf)                                                                 \
  X(__nv_tanh)                                                                 \
  X(__nv_tanhf)                                                                \
  X(__nv_trunc)                                                                \
  X(__nv_truncf)

#endif // HOT_RUNTIME_SIMULATORABI_H
