// The sm_90a wgmma kernels assemble without spills, and their SASS runs the
// products on Hopper's warpgroup integer tensor cores (IGMMA), never on
// mma.sync (IMMA).
//
// REQUIRES: ptxas, cuobjdump
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90a tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %cuobjdump -sass %t.cubin | FileCheck %s
//
// Larger tiles: 128x256 blocks (128 accumulator registers per thread).
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90a tile-n=256 stages=3})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.256.ptx
// RUN: %ptxas -arch=sm_90a -v %t.256.ptx -o %t.256.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %cuobjdump -sass %t.256.cubin | FileCheck %s --check-prefix=N256

// PTXAS-NOT: serialized
// PTXAS: Compiling entry function 'hot_int_mma_wgmma_s8_{{.*}}' for 'sm_90a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'hot_int_mma_wgmma_s8_{{.*}}' for 'sm_90a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: error
// PTXAS-NOT: serialized

// CHECK-LABEL: Function : hot_int_mma_wgmma_s8_197x32x64
// CHECK: LDGSTS.E.BYPASS{{.*}}.128
// CHECK: FENCE.VIEW.ASYNC.S
// CHECK: WARPGROUP.ARRIVE
// CHECK: IGMMA.64x128x32.S8.S8.SAT
// CHECK: WARPGROUP.DEPBAR.LE gsb0, 0x1
// CHECK-NOT: IMMA
// CHECK-LABEL: Function : hot_int_mma_wgmma_s8_48x40x112
// CHECK: IGMMA.64x128x32.S8.S8.SAT
// CHECK-NOT: IMMA

// N256: IGMMA.64x256x32.S8.S8.SAT
// N256-NOT: IMMA
