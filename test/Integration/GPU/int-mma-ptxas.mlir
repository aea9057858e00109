// The tensor-core kernels assemble with ptxas for every chip without spills,
// within the 48 KiB of static shared memory.
//
// REQUIRES: ptxas
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_80})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.sm_80.cubin 2>&1 | FileCheck %s -DCHIP=sm_80
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_86})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_86.ptx
// RUN: %ptxas -arch=sm_86 -v %t.sm_86.ptx -o %t.sm_86.cubin 2>&1 | FileCheck %s -DCHIP=sm_86
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_89})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_89.ptx
// RUN: %ptxas -arch=sm_89 -v %t.sm_89.ptx -o %t.sm_89.cubin 2>&1 | FileCheck %s -DCHIP=sm_89
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.sm_90.ptx -o %t.sm_90.cubin 2>&1 | FileCheck %s -DCHIP=sm_90
//
// The host binary with the kernels' cubin (format=bin runs ptxas itself).
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_80 format=bin})' 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=BIN

// CHECK: Compiling entry function 'hot_int_mma_s{{[48]}}_{{.*}}' for '[[CHIP]]'
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Used {{[0-9]+}} registers, used 1 barriers, 49152 bytes smem
// CHECK: Compiling entry function 'hot_int_mma_s{{[48]}}_{{.*}}' for '[[CHIP]]'
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Used {{[0-9]+}} registers, used 1 barriers, 49152 bytes smem
// CHECK-NOT: error

// BIN: gpu.binary @hot_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">, properties = {{.*}}, bin = "
