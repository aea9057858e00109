// The tensor-core kernels assemble with ptxas for every chip without spills,
// within the 48 KiB of static shared memory.
//
// REQUIRES: ptxas
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_80 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.sm_80.cubin > %t.sm_80.log 2>&1
// RUN: FileCheck %s -DCHIP=sm_80 < %t.sm_80.log
// RUN: FileCheck %s --check-prefix=TRANSPOSE < %t.sm_80.log
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_86 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_86.ptx
// RUN: %ptxas -arch=sm_86 -v %t.sm_86.ptx -o %t.sm_86.cubin 2>&1 | FileCheck %s -DCHIP=sm_86
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_89 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_89.ptx
// RUN: %ptxas -arch=sm_89 -v %t.sm_89.ptx -o %t.sm_89.cubin 2>&1 | FileCheck %s -DCHIP=sm_89
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.sm_90.ptx -o %t.sm_90.cubin 2>&1 | FileCheck %s -DCHIP=sm_90
//
// The host binary with the kernels' cubin (format=bin runs ptxas itself).
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_80 tile-m=128 tile-n=128 format=bin})' 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=BIN

// CHECK: Compiling entry function 'hot_int_mma_s{{[48]}}_{{.*}}' for '[[CHIP]]'
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Used {{[0-9]+}} registers, used 1 barriers, 49152 bytes smem
// CHECK: Compiling entry function 'hot_int_mma_s{{[48]}}_{{.*}}' for '[[CHIP]]'
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Used {{[0-9]+}} registers, used 1 barriers, 49152 bytes smem
// CHECK-NOT: error

// The operand transposes (64 x 64 tiles in shared memory; 128 K values for
// the packed s4 operand).
// TRANSPOSE: Compiling entry function 'hot_transpose_s4_64x32_to_32x32' for 'sm_80'
// TRANSPOSE-NEXT: Function properties
// TRANSPOSE-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// TRANSPOSE-NEXT: Used {{[0-9]+}} registers, used 1 barriers, 8704 bytes smem
// TRANSPOSE: Compiling entry function 'hot_transpose_s8_101x40_to_40x112' for 'sm_80'
// TRANSPOSE-NEXT: Function properties
// TRANSPOSE-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// TRANSPOSE-NEXT: Used {{[0-9]+}} registers, used 1 barriers, 4352 bytes smem
// TRANSPOSE: Compiling entry function 'hot_transpose_s8_101x48_to_48x112' for 'sm_80'
// TRANSPOSE-NEXT: Function properties
// TRANSPOSE-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// TRANSPOSE-NEXT: Used {{[0-9]+}} registers, used 1 barriers, 4352 bytes smem

// BIN: gpu.binary @hot_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">, properties = {{.*}}, bin = "
