//===- common.cu - Checks and timing of the GPU bench ---------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "common.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace {
// A quiet NaN as f32 and, in each 16-bit half, a quiet NaN as bfloat16 (not
// the canonical 0x7fc0 or 0x7fff a conversion makes); an unlikely i32.
constexpr uint16_t kPoisonHalf = 0x7fd1;
constexpr uint32_t kPoisonBits = uint32_t(kPoisonHalf) << 16 | kPoisonHalf;

template <typename Element>
__global__ void countPoison(const Element *c, size_t count, Element poison,
                            unsigned long long *found) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    local += c[i] == poison;
  if (local)
    atomicAdd(found, local);
}

/// One generator for the run; every fill draws fresh values from it.
std::mt19937_64 &generator() {
  static std::mt19937_64 rng(std::random_device{}());
  return rng;
}

/// A cheap per-call stream (xorshift) seeded from the generator: tens of
/// millions of values per operand would take seconds with mt19937.
struct XorShift {
  uint64_t state;
  uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};
} // namespace

double medianMs(const std::function<void()> &launch, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i)
    launch();
  CUDA_CHECK(cudaGetLastError());
  std::vector<cudaEvent_t> events(2 * reps);
  for (cudaEvent_t &e : events)
    CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(cudaEventRecord(events[2 * i]));
    launch();
    CUDA_CHECK(cudaEventRecord(events[2 * i + 1]));
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> ms(reps);
  for (int i = 0; i < reps; ++i)
    CUDA_CHECK(cudaEventElapsedTime(&ms[i], events[2 * i], events[2 * i + 1]));
  for (cudaEvent_t &e : events)
    CUDA_CHECK(cudaEventDestroy(e));
  std::nth_element(ms.begin(), ms.begin() + reps / 2, ms.end());
  return ms[reps / 2];
}

void fillUniform(std::vector<float> &values, size_t count) {
  values.resize(count);
  XorShift rng{generator()() | 1};
  for (float &v : values)
    v = float(int64_t(rng.next() >> 40) - (int64_t(1) << 23)) /
        float(int64_t(1) << 23);
}

void fillInt8(std::vector<int8_t> &values, size_t count) {
  values.resize(count);
  XorShift rng{generator()() | 1};
  for (int8_t &v : values)
    v = int8_t(int(rng.next() % 255) - 127);
}

uint16_t bf16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  bits += 0x7fff + ((bits >> 16) & 1); // Round to nearest, ties to even.
  return uint16_t(bits >> 16);
}

float roundToBf16(float value) {
  uint32_t bits = uint32_t(bf16Bits(value)) << 16;
  float rounded;
  std::memcpy(&rounded, &bits, sizeof(rounded));
  return rounded;
}

void poisonOutput(void *deviceC, const Shape &s) {
  poisonBytes(deviceC, size_t(s.m) * s.n * 4);
}

void poisonBytes(void *device, size_t bytes) {
  // cudaMemset writes bytes; a 4-byte pattern needs the driver's D32 memset.
  auto base = reinterpret_cast<CUdeviceptr>(device);
  CUresult r = cuMemsetD32(base, kPoisonBits, bytes / 4);
  if (r == CUDA_SUCCESS && bytes % 4 >= 2)
    r = cuMemsetD16(base + bytes / 4 * 4, kPoisonHalf, 1);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuMemsetD32/D16 failed (%d)\n", int(r));
    std::exit(1);
  }
}

CheckResult checkOutput(const void *deviceC, OutType type, const Shape &s,
                        const std::function<double(int64_t, int64_t)> &ref,
                        int samples) {
  CheckResult result{0, 0};
  unsigned long long *found = nullptr;
  CUDA_CHECK(cudaMalloc(&found, sizeof(*found)));
  CUDA_CHECK(cudaMemset(found, 0, sizeof(*found)));
  size_t count = size_t(s.m) * s.n;
  const size_t elementBytes = type == OutType::BF16 ? 2 : 4;
  if (elementBytes == 2)
    countPoison<<<1024, 256>>>(static_cast<const uint16_t *>(deviceC), count,
                               kPoisonHalf, found);
  else
    countPoison<<<1024, 256>>>(static_cast<const uint32_t *>(deviceC), count,
                               kPoisonBits, found);
  CUDA_CHECK(cudaGetLastError());
  unsigned long long hostFound = 0;
  CUDA_CHECK(
      cudaMemcpy(&hostFound, found, sizeof(hostFound), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(found));
  result.unwritten = static_cast<long long>(hostFound);

  double diff2 = 0, ref2 = 0;
  XorShift rng{generator()() | 1};
  for (int t = 0; t < samples; ++t) {
    int64_t i = rng.next() % s.m, j = rng.next() % s.n;
    uint32_t bits = 0;
    CUDA_CHECK(cudaMemcpy(&bits,
                          static_cast<const char *>(deviceC) +
                              (i * s.n + j) * elementBytes,
                          elementBytes, cudaMemcpyDeviceToHost));
    double out;
    if (type == OutType::I32) {
      out = double(int32_t(bits));
    } else {
      // A bfloat16 is the high half of the f32 with the same value.
      if (type == OutType::BF16)
        bits <<= 16;
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      out = f;
    }
    double r = ref(i, j);
    diff2 += (out - r) * (out - r);
    ref2 += r * r;
  }
  result.relError = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  if (std::isnan(result.relError))
    result.relError = INFINITY;
  return result;
}
