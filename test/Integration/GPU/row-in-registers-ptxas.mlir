// The per-row hadamard + quantize kernels that keep their rows in registers
// (rows of 3072 and 2304: 96 and 72 values per lane; f32, and bf16 extended
// as it is loaded) assemble without spills on every chip, with the blocks
// per SM their nvvm.minctasm asks for: 4 of 128 threads for fc1's f32 rows
// (128 registers), 3 for its bf16 rows (whose extension takes more). A row
// of 3200 (100 values per lane) is transformed twice instead.
//
// REQUIRES: ptxas
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_80})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_80.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.sm_80.cubin 2>&1 \
// RUN:   | FileCheck %s -DCHIP=sm_80 --implicit-check-not='{{[1-9][0-9]*}} bytes spill'
// RUN: %ptxas -arch=sm_86 -v %t.sm_80.ptx -o %t.sm_86.cubin 2>&1 \
// RUN:   | FileCheck %s -DCHIP=sm_86 --implicit-check-not='{{[1-9][0-9]*}} bytes spill'
// RUN: %ptxas -arch=sm_89 -v %t.sm_80.ptx -o %t.sm_89.cubin 2>&1 \
// RUN:   | FileCheck %s -DCHIP=sm_89 --implicit-check-not='{{[1-9][0-9]*}} bytes spill'
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.sm_90.ptx -o %t.sm_90.cubin 2>&1 \
// RUN:   | FileCheck %s -DCHIP=sm_90 --implicit-check-not='{{[1-9][0-9]*}} bytes spill'

// PTX-LABEL: .entry hot_hadamard_quantize_row_394x3072_b16_v4_w4_q7_stochastic_regs(
// PTX: .minnctapersm 4
// PTX-COUNT-24: ld.global.v4.b32
// PTX-NOT: ld.global
// PTX: rcp.rn.f32
// PTX-LABEL: .entry hot_hadamard_quantize_row_394x3072_b16_v4_w4_q7_stochastic_regs_bf16(
// PTX: .minnctapersm 3
// PTX-COUNT-24: ld.global.v4.b16
// PTX-NOT: ld.global
// PTX-LABEL: .entry hot_hadamard_quantize_row_394x2304_b16_v4_w4_q7_stochastic_regs(
// PTX: .minnctapersm 4
// PTX-LABEL: .entry hot_hadamard_quantize_row_394x3200_b16_v4_w8_q7_stochastic(
// PTX-NOT: .minnctapersm

// CHECK-COUNT-4: Compiling entry function 'hot_hadamard_quantize_row_{{.*}}' for '[[CHIP]]'
// CHECK-NOT: Compiling entry function
// CHECK-NOT: error

func.func @fc1_rows(%gy: tensor<394x3072xf32>, %seed: i64)
    -> (tensor<394x3072xi8>, tensor<394xf32>) {
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x3072xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_row scale maxabs
      rounding stochastic seed %seed
      : tensor<394x3072xf32> -> tensor<394x3072xi8>, tensor<394xf32>
  return %q, %s : tensor<394x3072xi8>, tensor<394xf32>
}

func.func @fc1_rows_bf16(%gyn: tensor<394x3072xbf16>, %seed: i64)
    -> (tensor<394x3072xi8>, tensor<394xf32>) {
  %gy = arith.extf %gyn : tensor<394x3072xbf16> to tensor<394x3072xf32>
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x3072xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_row scale maxabs
      rounding stochastic seed %seed
      : tensor<394x3072xf32> -> tensor<394x3072xi8>, tensor<394xf32>
  return %q, %s : tensor<394x3072xi8>, tensor<394xf32>
}

func.func @qkv_rows(%gy: tensor<394x2304xf32>, %seed: i64)
    -> (tensor<394x2304xi8>, tensor<394xf32>) {
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x2304xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_row scale maxabs
      rounding stochastic seed %seed
      : tensor<394x2304xf32> -> tensor<394x2304xi8>, tensor<394xf32>
  return %q, %s : tensor<394x2304xi8>, tensor<394xf32>
}

func.func @long_rows(%gy: tensor<394x3200xf32>, %seed: i64)
    -> (tensor<394x3200xi8>, tensor<394xf32>) {
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x3200xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_row scale maxabs
      rounding stochastic seed %seed
      : tensor<394x3200xf32> -> tensor<394x3200xi8>, tensor<394xf32>
  return %q, %s : tensor<394x3200xi8>, tensor<394xf32>
}
