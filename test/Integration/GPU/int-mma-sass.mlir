// The tensor-core kernels' SASS: IMMA.16832.S8.S8 on every chip, and
// IMMA.16864.S4.S4 for the 4-bit product on chips with INT4 tensor cores
// (Hopper gets s8 for it).
//
// REQUIRES: ptxas, cuobjdump
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_80 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm_80.ptx -o %t.sm_80.cubin
// RUN: %cuobjdump -sass %t.sm_80.cubin | FileCheck %s --check-prefixes=CHECK,INT4
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_86 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_86.ptx
// RUN: %ptxas -arch=sm_86 %t.sm_86.ptx -o %t.sm_86.cubin
// RUN: %cuobjdump -sass %t.sm_86.cubin | FileCheck %s --check-prefixes=CHECK,INT4
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_89 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_89.ptx
// RUN: %ptxas -arch=sm_89 %t.sm_89.ptx -o %t.sm_89.cubin
// RUN: %cuobjdump -sass %t.sm_89.cubin | FileCheck %s --check-prefixes=CHECK,INT4
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_90.ptx
// RUN: %ptxas -arch=sm_90 %t.sm_90.ptx -o %t.sm_90.cubin
// RUN: %cuobjdump -sass %t.sm_90.cubin | FileCheck %s --check-prefixes=CHECK,NOINT4

// cuobjdump lists the kernels last-defined first: gx, then gw (s8).
// INT4-LABEL: Function : hot_int_mma_s4_197x32x32
// NOINT4-LABEL: Function : hot_int_mma_s8_197x32x64
// CHECK: LDGSTS.E.BYPASS{{.*}}.128
// CHECK: LDSM.16.M88.4
// INT4: IMMA.16864.S4.S4
// INT4-NOT: IMMA.16832
// NOINT4: IMMA.16832.S8.S8
// NOINT4-NOT: IMMA.16864
// CHECK-LABEL: Function : hot_int_mma_s8_48x40x112
// CHECK: LDGSTS.E.BYPASS{{.*}}.128
// CHECK: LDSM.16.M88.4
// CHECK: LDSM.16.M88.2
// CHECK: IMMA.16832.S8.S8
// CHECK-NOT: IMMA.16864
