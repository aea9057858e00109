//===- hq_reference.h - Host reference of hot.quantize(hot.hadamard(x)) --===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// The bit-exact contract of docs/numerics.md (also python/hot/reference.py)
// for the hq modules of bench/gpu/export.py: the Hadamard butterfly along
// rows, maxabs scales, stochastic rounding with the counter-based hash. Plain
// C++ (no CUDA, no FMA possible: only adds, a multiply by an exact power of
// two and divisions), so that a device result can be compared exactly.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_BENCH_GPU_HQ_REFERENCE_H
#define HOT_BENCH_GPU_HQ_REFERENCE_H

#include <cmath>
#include <cstdint>
#include <vector>

namespace hq {

inline uint32_t mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x21f0aaadu;
  h ^= h >> 15;
  h *= 0x735a2d97u;
  h ^= h >> 15;
  return h;
}

/// key(seed) = mix32(lo32(seed) xor mix32(hi32(seed) xor 0x9e3779b9)).
inline uint32_t stochasticKey(int64_t seed) {
  uint64_t bits = static_cast<uint64_t>(seed);
  return mix32(uint32_t(bits) ^ mix32(uint32_t(bits >> 32) ^ 0x9e3779b9u));
}

/// uniform(seed, idx) in [0, 1 - 2^-24], the linear index truncated to 32 bits.
inline float uniform(uint32_t key, uint64_t idx) {
  uint32_t h = mix32(mix32(uint32_t(idx) ^ key) + key);
  return std::ldexp(float(h >> 8), -24);
}

/// c_b = 1/sqrt(b) rounded once to f32, b = 2^k.
inline float hadamardScale(int64_t block) {
  int k = 0;
  while ((int64_t(1) << k) < block)
    ++k;
  if (k % 2 == 0)
    return std::ldexp(1.0f, -k / 2);
  return std::ldexp(float(std::sqrt(0.5)), -(k - 1) / 2);
}

/// y = hadamard(x) of one row of `cols` floats, blocks of `block` (the
/// butterfly lowest bit first, then the scale).
inline void hadamardRow(const float *x, int64_t cols, int64_t block, float *y) {
  float c = hadamardScale(block);
  for (int64_t j = 0; j < cols; ++j)
    y[j] = x[j];
  for (int64_t base = 0; base < cols; base += block)
    for (int64_t h = 1; h < block; h *= 2)
      for (int64_t t = 0; t < block; ++t)
        if (!(t & h)) {
          float a = y[base + t], b = y[base + t + h];
          y[base + t] = a + b;
          y[base + t + h] = a - b;
        }
  for (int64_t j = 0; j < cols; ++j)
    y[j] *= c;
}

/// max |v| of `count` floats, NaN if one is NaN.
inline float maxAbs(const float *v, int64_t count) {
  float m = 0;
  for (int64_t j = 0; j < count; ++j) {
    if (std::isnan(v[j]))
      return v[j];
    m = std::fabs(v[j]) > m ? std::fabs(v[j]) : m;
  }
  return m;
}

/// q of one element with stochastic rounding: floor(y * inverse + u), with
/// inverse = 1 / scale of its group; NaN -> 0, clamped to [-qmax, qmax]. The
/// multiply and the add round separately (ISO C++ and no -mfma: no FMA).
inline int8_t quantizeStochastic(float y, float inverse, float u, int qmax) {
  float v = y * inverse;
  float r = std::floor(v + u);
  if (std::isnan(r))
    return 0;
  r = r < -qmax ? float(-qmax) : (r > qmax ? float(qmax) : r);
  return int8_t(r);
}

/// The reference of hot.quantize(hot.hadamard(x[rows, cols] along 1, block),
/// bits, per_row or per_tensor, maxabs, stochastic, seed): q and the scales
/// (`rows` of them per row, one per tensor).
inline void reference(const std::vector<float> &x, int64_t rows, int64_t cols,
                      int64_t block, int bits, bool perRow, int64_t seed,
                      std::vector<int8_t> &q, std::vector<float> &scales) {
  const int qmax = (1 << (bits - 1)) - 1;
  std::vector<float> y(size_t(rows) * cols);
  for (int64_t i = 0; i < rows; ++i)
    hadamardRow(&x[size_t(i) * cols], cols, block, &y[size_t(i) * cols]);
  scales.assign(perRow ? rows : 1, 0.0f);
  if (perRow) {
    for (int64_t i = 0; i < rows; ++i)
      scales[i] = maxAbs(&y[size_t(i) * cols], cols) / float(qmax);
  } else {
    scales[0] = maxAbs(y.data(), int64_t(y.size())) / float(qmax);
  }
  const uint32_t key = stochasticKey(seed);
  q.resize(y.size());
  for (int64_t i = 0; i < rows; ++i) {
    float inverse = 1.0f / scales[perRow ? i : 0];
    for (int64_t j = 0; j < cols; ++j) {
      size_t idx = size_t(i) * cols + j;
      q[idx] = quantizeStochastic(y[idx], inverse, uniform(key, idx), qmax);
    }
  }
}

} // namespace hq

#endif // HOT_BENCH_GPU_HQ_REFERENCE_H
