// f32 -> bf16 and f16 conversions in kernels (what arith.truncf becomes on
// the host): round to nearest even, ties to the even neighbour, overflow to
// Inf, NaN kept. The bf16 one is the runtime's __truncsfbf2.
// RUN: %host_cc -O2 -fPIC -shared -DKERNELS -I%S/Inputs %s -o %t.kernels.so
// RUN: %host_cc -O2 -I%S/Inputs %s -o %t -ldl
// RUN: %t %hot_simulator_runtime %t.kernels.so 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=hot_simulator_runtime

// CHECK: 1.00390625: bf16 1, f16 1.00390625
// CHECK-NEXT: 1.01171875: bf16 1.015625, f16 1.01171875
// CHECK-NEXT: 1.00292969: bf16 1, f16 1.00292969
// CHECK-NEXT: 1.00048828: bf16 1, f16 1{{$}}
// CHECK-NEXT: 1.00146484: bf16 1, f16 1.00195312
// CHECK-NEXT: -3.00000024: bf16 -3, f16 -3
// CHECK-NEXT: 3.40282347e+38: bf16 inf, f16 inf
// CHECK-NEXT: 65520: bf16 65536, f16 inf
// CHECK-NEXT: nan: bf16 nan, f16 nan
// CHECK-NEXT: -inf: bf16 -inf, f16 -inf

#include <math.h>
#include <stdint.h>

#define NUM_VALUES 10

#ifdef KERNELS
#include "kernel.h"

KERNEL(convert) {
  const float *in = PARAM(const float *, 0);
  float *out = PARAM(float *, 1);
  for (int i = 0; i < NUM_VALUES; ++i) {
    volatile float x = in[i];
    out[2 * i] = (float)(__bf16)x;
    out[2 * i + 1] = (float)(_Float16)x;
  }
}
#else
#include "host.h"

int main(int argc, char **argv) {
  hostInit(argc, argv);
  // Halfway cases between neighbours of either type, a value just above
  // -3, overflows (65520 is halfway between f16's largest, 65504, and the
  // next power of two), NaN and -Inf.
  static const float values[NUM_VALUES] = {
      1.00390625f,    1.01171875f,     1.0029296875f, 1.00048828125f,
      1.00146484375f, -3.0000002f,     3.40282347e38f, 65520.0f,
      NAN,            -INFINITY};
  float *in = deviceAlloc(sizeof(values));
  float *out = deviceAlloc(2 * sizeof(values));
  for (int i = 0; i < NUM_VALUES; ++i)
    in[i] = values[i];
  void *params[] = {&in, &out};
  launch("convert", 1, 1, 1, 1, 1, 1, 0, params);
  for (int i = 0; i < NUM_VALUES; ++i)
    printf("%.9g: bf16 %.9g, f16 %.9g\n", values[i], out[2 * i],
           out[2 * i + 1]);
  return 0;
}
#endif
