//===- common.h - Checks and timing of the GPU bench ------------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_BENCH_GPU_COMMON_H
#define HOT_BENCH_GPU_COMMON_H

#include "table.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>

/// Exits with the call and the error name: a benchmark that goes on after a
/// failed call prints numbers that mean nothing.
#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__,  \
                   #call, cudaGetErrorName(err_), cudaGetErrorString(err_));   \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

/// A GEMM C[M,N] = A[M,K] · B[N,K]ᵀ: both operands K-contiguous (row-major A
/// and B), C row-major. This is cuBLAS's "TN" case and the layout integer
/// tensor-core kernels need.
struct Shape {
  const char *name; ///< e.g. "fc1 gx"
  int64_t m, n, k;
  double flops() const { return 2.0 * m * n * k; }
};

/// Times `launch` (enqueueing one run on the default stream) with CUDA
/// events: `warmup` runs, then the median of `reps` individually timed runs,
/// in milliseconds.
double medianMs(const std::function<void()> &launch, int warmup = 5,
                int reps = 25);

/// Fills `count` floats with uniform values in [-1, 1) (a fresh seed per call).
void fillUniform(std::vector<float> &values, size_t count);

/// Fills `count` int8 values uniform in [-127, 127].
void fillInt8(std::vector<int8_t> &values, size_t count);

/// Rounds to the nearest bfloat16 (ties to even) and back: the values that a
/// BF16 GEMM really multiplies.
float roundToBf16(float value);

/// The bits of a bfloat16.
uint16_t bf16Bits(float value);

/// How a device result is read for the check: 4-byte f32 or i32 elements, or
/// 2-byte bfloat16 ones.
enum class OutType { F32, I32, BF16 };

/// The outcome of checking a device result against a float64 reference.
struct CheckResult {
  double relError; ///< ‖out − ref‖ / ‖ref‖ over the sampled entries
  long long unwritten; ///< entries (all of C) still holding the poison bits
};

/// Fills C (M×N, 4-byte elements) with the poison pattern: NaN for f32, an
/// unlikely integer for i32 (the same bits).
void poisonOutput(void *deviceC, const Shape &s);

/// Fills `bytes` bytes of device or managed memory with the poison pattern,
/// whatever its element type: its 4-byte words are a NaN as f32 and each of
/// their halves a NaN as bfloat16 (a trailing half word too).
void poisonBytes(void *device, size_t bytes);

/// Counts poisoned entries of the whole C on the device, then compares
/// `samples` random entries of C with `ref(i, j)`, the float64 reference of
/// entry (i, j).
CheckResult checkOutput(const void *deviceC, OutType type, const Shape &s,
                        const std::function<double(int64_t, int64_t)> &ref,
                        int samples = 512);

#endif // HOT_BENCH_GPU_COMMON_H
