// The libdevice (__nv_*) functions kernels call, against known values:
// roundf rounds half away from zero, rintf half to even, fmaxf/fminf return
// the other operand of a NaN.
// RUN: %host_cc -O2 -fPIC -shared -DKERNELS -I%S/Inputs %s -o %t.kernels.so
// RUN: %host_cc -O2 -I%S/Inputs %s -o %t -ldl
// RUN: %t %hot_simulator_runtime %t.kernels.so 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=hot_simulator_runtime

// CHECK: fabsf(-2.5) = 2.5
// CHECK-NEXT: floorf(-2.5) = -3
// CHECK-NEXT: ceilf(-2.5) = -2
// CHECK-NEXT: roundf(2.5) = 3
// CHECK-NEXT: roundf(-2.5) = -3
// CHECK-NEXT: rintf(2.5) = 2
// CHECK-NEXT: rintf(3.5) = 4
// CHECK-NEXT: rintf(-2.5) = -2
// CHECK-NEXT: truncf(-2.7) = -2
// CHECK-NEXT: sqrtf(2) = 1.41421354
// CHECK-NEXT: rsqrtf(4) = 0.5
// CHECK-NEXT: expf(1) = 2.71828175
// CHECK-NEXT: exp2f(10) = 1024
// CHECK-NEXT: logf(1) = 0
// CHECK-NEXT: log2f(8) = 3
// CHECK-NEXT: tanhf(0.5) = 0.462117165
// CHECK-NEXT: erff(0.5) = 0.520499885
// CHECK-NEXT: powf(2, 10) = 1024
// CHECK-NEXT: fmaxf(nan, 1) = 1
// CHECK-NEXT: fminf(1, nan) = 1
// CHECK-NEXT: fmodf(7.5, 2) = 1.5
// CHECK-NEXT: round(-0.5) = -1
// CHECK-NEXT: rint(0.5) = 0
// CHECK-NEXT: floor(-0.5) = -1
// CHECK-NEXT: exp(1) = 2.7182818284590451
// CHECK-NEXT: sqrt(2) = 1.4142135623730951
// CHECK-NEXT: fabs(-3) = 3
// CHECK-NEXT: isnanf(nan) = 1
// CHECK-NEXT: powif(2, -2) = 0.25

#include <math.h>
#include <stdint.h>

#define NUM_RESULTS 29

#ifdef KERNELS
#include "kernel.h"

float __nv_fabsf(float), __nv_floorf(float), __nv_ceilf(float),
    __nv_roundf(float), __nv_rintf(float), __nv_truncf(float),
    __nv_sqrtf(float), __nv_rsqrtf(float), __nv_expf(float), __nv_exp2f(float),
    __nv_logf(float), __nv_log2f(float), __nv_tanhf(float), __nv_erff(float),
    __nv_powf(float, float), __nv_fmaxf(float, float), __nv_fminf(float, float),
    __nv_fmodf(float, float), __nv_powif(float, int32_t);
double __nv_round(double), __nv_rint(double), __nv_floor(double),
    __nv_exp(double), __nv_sqrt(double), __nv_fabs(double);
int32_t __nv_isnanf(float);

KERNEL(math) {
  double *out = PARAM(double *, 0);
  float nan = NAN;
  double results[NUM_RESULTS] = {
      __nv_fabsf(-2.5f),  __nv_floorf(-2.5f),  __nv_ceilf(-2.5f),
      __nv_roundf(2.5f),  __nv_roundf(-2.5f),  __nv_rintf(2.5f),
      __nv_rintf(3.5f),   __nv_rintf(-2.5f),   __nv_truncf(-2.7f),
      __nv_sqrtf(2.0f),   __nv_rsqrtf(4.0f),   __nv_expf(1.0f),
      __nv_exp2f(10.0f),  __nv_logf(1.0f),     __nv_log2f(8.0f),
      __nv_tanhf(0.5f),   __nv_erff(0.5f),     __nv_powf(2.0f, 10.0f),
      __nv_fmaxf(nan, 1), __nv_fminf(1, nan),  __nv_fmodf(7.5f, 2.0f),
      __nv_round(-0.5),   __nv_rint(0.5),      __nv_floor(-0.5),
      __nv_exp(1.0),      __nv_sqrt(2.0),      __nv_fabs(-3.0),
      __nv_isnanf(nan),   __nv_powif(2.0f, -2)};
  for (int i = 0; i < NUM_RESULTS; ++i)
    out[i] = results[i];
}
#else
#include "host.h"

int main(int argc, char **argv) {
  hostInit(argc, argv);
  static const char *const names[NUM_RESULTS] = {
      "fabsf(-2.5)",   "floorf(-2.5)", "ceilf(-2.5)",   "roundf(2.5)",
      "roundf(-2.5)",  "rintf(2.5)",   "rintf(3.5)",    "rintf(-2.5)",
      "truncf(-2.7)",  "sqrtf(2)",     "rsqrtf(4)",     "expf(1)",
      "exp2f(10)",     "logf(1)",      "log2f(8)",      "tanhf(0.5)",
      "erff(0.5)",     "powf(2, 10)",  "fmaxf(nan, 1)", "fminf(1, nan)",
      "fmodf(7.5, 2)", "round(-0.5)",  "rint(0.5)",     "floor(-0.5)",
      "exp(1)",        "sqrt(2)",      "fabs(-3)",      "isnanf(nan)",
      "powif(2, -2)"};
  double *out = deviceAlloc(NUM_RESULTS * sizeof(double));
  void *params[] = {&out};
  launch("math", 1, 1, 1, 1, 1, 1, 0, params);
  // f32 results with 9 significant digits, f64 ones with 17.
  for (int i = 0; i < NUM_RESULTS; ++i)
    printf("%s = %.*g\n", names[i], i >= 21 && i <= 26 ? 17 : 9, out[i]);
  return 0;
}
#endif
