//===- Math.cpp - libdevice (__nv_*) math functions -----------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// The libdevice functions that MLIR's math-to-nvvm and arith lowerings call,
// over <cmath>: __nv_<name>f for f32, __nv_<name> for f64 (the "fast" f32
// variants are the precise ones here). Results may differ from libdevice in
// the last ulp.
//
//===----------------------------------------------------------------------===//

#include "hot/Runtime/SimulatorRuntime.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#define HOT_NV_UNARY(name, expr)                                               \
  extern "C" HOT_SIMULATOR_EXPORT float __nv_##name##f(float x) {              \
    return expr;                                                               \
  }                                                                            \
  extern "C" HOT_SIMULATOR_EXPORT double __nv_##name(double x) { return expr; }

#define HOT_NV_BINARY(name, expr)                                              \
  extern "C" HOT_SIMULATOR_EXPORT float __nv_##name##f(float x, float y) {     \
    return expr;                                                               \
  }                                                                            \
  extern "C" HOT_SIMULATOR_EXPORT double __nv_##name(double x, double y) {     \
    return expr;                                                               \
  }

#define HOT_NV_FAST(name)                                                      \
  extern "C" HOT_SIMULATOR_EXPORT float __nv_fast_##name##f(float x) {         \
    return std::name(x);                                                       \
  }

HOT_NV_UNARY(fabs, std::fabs(x))
HOT_NV_UNARY(floor, std::floor(x))
HOT_NV_UNARY(ceil, std::ceil(x))
HOT_NV_UNARY(round, std::round(x))    // Half away from zero.
HOT_NV_UNARY(rint, std::nearbyint(x)) // Half to even (default rounding mode).
HOT_NV_UNARY(trunc, std::trunc(x))
HOT_NV_UNARY(sqrt, std::sqrt(x))
HOT_NV_UNARY(rsqrt, 1 / std::sqrt(x))
HOT_NV_UNARY(cbrt, std::cbrt(x))
HOT_NV_UNARY(exp, std::exp(x))
HOT_NV_UNARY(exp2, std::exp2(x))
HOT_NV_UNARY(exp10, std::pow(decltype(x)(10), x))
HOT_NV_UNARY(expm1, std::expm1(x))
HOT_NV_UNARY(log, std::log(x))
HOT_NV_UNARY(log2, std::log2(x))
HOT_NV_UNARY(log10, std::log10(x))
HOT_NV_UNARY(log1p, std::log1p(x))
HOT_NV_UNARY(sin, std::sin(x))
HOT_NV_UNARY(cos, std::cos(x))
HOT_NV_UNARY(tan, std::tan(x))
HOT_NV_UNARY(asin, std::asin(x))
HOT_NV_UNARY(acos, std::acos(x))
HOT_NV_UNARY(atan, std::atan(x))
HOT_NV_UNARY(sinh, std::sinh(x))
HOT_NV_UNARY(cosh, std::cosh(x))
HOT_NV_UNARY(tanh, std::tanh(x))
HOT_NV_UNARY(asinh, std::asinh(x))
HOT_NV_UNARY(acosh, std::acosh(x))
HOT_NV_UNARY(atanh, std::atanh(x))
HOT_NV_UNARY(erf, std::erf(x))
HOT_NV_UNARY(erfc, std::erfc(x))

HOT_NV_BINARY(pow, std::pow(x, y))
HOT_NV_BINARY(fmax, std::fmax(x, y)) // The other operand for one NaN.
HOT_NV_BINARY(fmin, std::fmin(x, y))
HOT_NV_BINARY(fmod, std::fmod(x, y))
HOT_NV_BINARY(atan2, std::atan2(x, y))
HOT_NV_BINARY(copysign, std::copysign(x, y))
HOT_NV_BINARY(hypot, std::hypot(x, y))

HOT_NV_FAST(exp)
HOT_NV_FAST(log)
HOT_NV_FAST(log2)
HOT_NV_FAST(log10)
HOT_NV_FAST(sin)
HOT_NV_FAST(cos)
HOT_NV_FAST(tan)

extern "C" HOT_SIMULATOR_EXPORT float __nv_fast_powf(float x, float y) {
  return std::pow(x, y);
}

extern "C" HOT_SIMULATOR_EXPORT float __nv_fmaf(float x, float y, float z) {
  return std::fma(x, y, z);
}

extern "C" HOT_SIMULATOR_EXPORT double __nv_fma(double x, double y, double z) {
  return std::fma(x, y, z);
}

extern "C" HOT_SIMULATOR_EXPORT float __nv_powif(float x, int32_t n) {
  return std::pow(x, static_cast<float>(n));
}

extern "C" HOT_SIMULATOR_EXPORT double __nv_powi(double x, int32_t n) {
  return std::pow(x, static_cast<double>(n));
}

extern "C" HOT_SIMULATOR_EXPORT void __nv_sincosf(float x, float *s, float *c) {
  *s = std::sin(x);
  *c = std::cos(x);
}

extern "C" HOT_SIMULATOR_EXPORT void __nv_sincos(double x, double *s,
                                                 double *c) {
  *s = std::sin(x);
  *c = std::cos(x);
}

// Classification: libdevice's names, an i32 result.
extern "C" HOT_SIMULATOR_EXPORT int32_t __nv_isnanf(float x) {
  return std::isnan(x);
}
extern "C" HOT_SIMULATOR_EXPORT int32_t __nv_isnand(double x) {
  return std::isnan(x);
}
extern "C" HOT_SIMULATOR_EXPORT int32_t __nv_isinff(float x) {
  return std::isinf(x);
}
extern "C" HOT_SIMULATOR_EXPORT int32_t __nv_isinfd(double x) {
  return std::isinf(x);
}
extern "C" HOT_SIMULATOR_EXPORT int32_t __nv_finitef(float x) {
  return std::isfinite(x);
}
extern "C" HOT_SIMULATOR_EXPORT int32_t __nv_isfinited(double x) {
  return std::isfinite(x);
}

extern "C" HOT_SIMULATOR_EXPORT int32_t __nv_abs(int32_t x) {
  // Wraps for INT32_MIN, as the hardware does.
  return static_cast<int32_t>(x < 0 ? 0u - static_cast<uint32_t>(x)
                                    : static_cast<uint32_t>(x));
}

// f32 -> bf16, which a kernel's arith.truncf becomes on a host CPU without
// bf16 conversions: a compiler builtin that older runtime libraries (Debian
// 12's libgcc) lack. Round to nearest even, as the GPU's cvt.rn.bf16.f32; a
// NaN stays a quiet NaN with its sign.
extern "C" HOT_SIMULATOR_EXPORT __bf16 __truncsfbf2(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  uint16_t half =
      std::isnan(x) ? uint16_t((bits >> 16) | 0x40)
                    : uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
  __bf16 result;
  std::memcpy(&result, &half, sizeof(result));
  return result;
}

// Every function of the ABI's list is defined above: a missing one does not
// compile.
#define HOT_NV_LISTED(name) reinterpret_cast<void (*)()>(&name),
[[maybe_unused]] static void (*const kListed[])() = {
    HOT_SIMULATOR_NV_MATH(HOT_NV_LISTED)};
