// The hadamard+quantize, lowrank and block-hadamard kernels of
// convert-hot-to-gpu, at ViT-B shapes (2 samples of 197 tokens, 768
// channels), assemble with ptxas without spills; the shuffles, barriers and
// vector accesses survive to PTX.
//
// REQUIRES: ptxas
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_80})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_80.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm_80.ptx
// RUN: FileCheck %s --check-prefix=PLAIN < %t.sm_80.ptx
// RUN: %python %S/check-exact-fmas.py < %t.sm_80.ptx | FileCheck %s --check-prefix=FMAS
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.sm_80.cubin 2>&1 | FileCheck %s -DCHIP=sm_80
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.sm_90.ptx -o %t.sm_90.cubin 2>&1 | FileCheck %s -DCHIP=sm_90

// No libdevice calls left, no flush to zero, and no contraction into fma:
// the only fmas have exact products (check-exact-fmas.py), the butterfly's
// cross-lane stages, fma(+-1, mine, partner), and stochastic rounding's
// v + (units * 256) * 2^-32. The f32 operations are the CPU path's.
// PLAIN-NOT: call
// PLAIN-NOT: .ftz
// FMAS: sign fmas: {{[1-9][0-9]*}}, units fmas: {{[1-9][0-9]*}}
// The lowranks come first: they compute what quantizes need.
// PTX-LABEL: .entry hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192(
// PTX-NOT: shfl
// PTX: ld.global.v4
// PTX: st.global.v4
// The gy of a layer whose projection only the gw quantize reads: a kernel
// of the two maxima (the channel butterfly's shuffles, the warp maxima, one
// barrier, no stores but the partials), then one that quantizes both.
// PTX-LABEL: .entry hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_stats_inmax16_outmax_p26(
// PTX: ld.global.v4
// PTX: shfl.sync.bfly.b32
// PTX: max.NaN.f32
// PTX: bar.sync
// PTX-LABEL: .entry hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v1_t256_quantize_in16_q7s_out_tensor_q127s_g1x26(
// PTX-NOT: ld.global.v4
// PTX: ld.global.b32
// PTX: shfl.sync.bfly.b32
// PTX: div.rn.f32
// PTX: cvt.rmi.s32.f32
// PTX: st.global.b8
// The gw path with LQS's per-channel scales: per-channel maxima, the
// scales, the quantize.
// PTX-LABEL: .entry hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_stats_outmaxcol_p26(
// PTX-NOT: bar.sync
// PTX: st.global.v4.b32
// PTX-LABEL: .entry hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_scales_q127_g26(
// PTX: ld.global.v4
// PTX: div.rn.f32
// PTX-LABEL: .entry hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_quantize_out_col_q127s_g26(
// PTX-NOT: div.rn.f32
// PTX: rcp.rn.f32
// PTX: st.global.b32
// The same when the projection is also returned: the lowrank kernel stores
// it and the maxima, and the quantizes read its partials.
// PTX-LABEL: .entry hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_inmax16_outmax_p26(
// PTX: ld.global.v4
// PTX: shfl.sync.bfly.b32
// PTX: max.NaN.f32
// PTX: st.global.v4
// PTX: bar.sync
// A 2-D layer's gy quantized for both paths (gw per channel): block 1.
// PTX-LABEL: .entry hot_matrix_394x768_v4_t192_i8_stats_inmax16_outmaxcol_p50(
// PTX: shfl.sync.bfly.b32
// PTX: bar.sync
// PTX-LABEL: .entry hot_matrix_394x768_v4_t192_i8_scales_q127_g50(
// PTX-LABEL: .entry hot_matrix_394x768_v4_t192_i8_quantize_in16_q7s_out_col_q127s_g50(
// PTX: div.rn.f32
// PTX-LABEL: .entry hot_hadamard_quantize_row_394x768_b16_v4_w4_q7_stochastic_regs(
// PTX: ld.global.v4
// PTX: shfl.sync.bfly.b32
// PTX: max.NaN.f32
// PTX: div.rn.f32
// PTX: cvt.rmi.s32.f32
// fc1's rows: 96 values per lane, the most kept in registers (no spills),
// with 128 registers: 4 blocks of 128 threads per SM.
// PTX-LABEL: .entry hot_hadamard_quantize_row_394x3072_b16_v4_w4_q7_stochastic_regs(
// PTX: .minnctapersm 4
// PTX-COUNT-24: ld.global.v4
// PTX-NOT: ld.global
// PTX: div.rn.f32
// Per tensor: the max kernel loads both rows of a step (6 vectors each)
// before it transforms either; the quantize kernel's loads of its row and of
// the partials are all issued before the partials' max.
// PTX-LABEL: .entry hot_hadamard_absmax_394x768_b16_v4_w4_p200_regs_r2(
// PTX: .minnctapersm 1
// PTX-COUNT-12: ld.global.v4
// PTX-NOT: ld.global
// PTX: shfl.sync.bfly.b32
// PTX-LABEL: .entry hot_hadamard_quantize_tensor_394x768_b16_v4_w4_p200_q127_nearest_regs(
// PTX-COUNT-6: ld.global.v4
// PTX-NOT: ld.global
// PTX: shfl.sync.bfly.b32
// SAWB of W (per tensor): f64 sums, one lane's values after another by
// shfl.idx; one warp combines the row sums (each lane's partial, then a
// shuffle tree; 64-bit values as two shuffles) to the scale; the quantize
// kernel reads it.
// PTX-LABEL: .entry hot_hadamard_absmax_768x3072_b1_v4_w8_p768_sawb(
// PTX: shfl.sync.idx.b32
// PTX: add.rn.f64
// PTX: st.global.b64
// PTX-LABEL: .entry hot_hadamard_scale_768x3072_b1_v4_w8_p768_sawb(
// PTX: ld.global.b64
// PTX: shfl.sync.idx.b32
// PTX: add.rn.f64
// PTX: sqrt.rn.f64
// PTX: cvt.rn.f32.f64
// PTX: div.rn.f32
// PTX-LABEL: .entry hot_hadamard_quantize_tensor_768x3072_b1_v4_w4_p768_q7_nearest_sawb_regs(
// PTX-NOT: f64
// PTX-NOT: div.rn.f32
// PTX: rcp.rn.f32

// The quantizes whose maxima the lowrank kernel computed: no absmax kernel.
// PTX-LABEL: .entry hot_hadamard_quantize_tensor_394x768_b16_v4_w4_p26_q7_stochastic_regs(
// PTX-LABEL: .entry hot_hadamard_quantize_tensor_202x768_b1_v4_w4_p26_q127_stochastic_regs(
// PTX-LABEL: .entry hot_block_hadamard_1x768x64_b16_v4_t32(
// PTX-NOT: shfl
// PTX: ld.global.v4
// PTX: st.global.v4

// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// CHECK-NEXT: Function properties
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-NOT: Compiling entry function
// CHECK-NOT: error

func.func @gy_per_row(%gy: tensor<394x768xf32>, %seed: i64)
    -> (tensor<394x768xi8>, tensor<394xf32>) {
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x768xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_row scale maxabs
      rounding stochastic seed %seed
      : tensor<394x768xf32> -> tensor<394x768xi8>, tensor<394xf32>
  return %q, %s : tensor<394x768xi8>, tensor<394xf32>
}

func.func @gy_per_row_fc1(%gy: tensor<394x3072xf32>, %seed: i64)
    -> (tensor<394x3072xi8>, tensor<394xf32>) {
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x3072xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_row scale maxabs
      rounding stochastic seed %seed
      : tensor<394x3072xf32> -> tensor<394x3072xi8>, tensor<394xf32>
  return %q, %s : tensor<394x3072xi8>, tensor<394xf32>
}

func.func @gy_per_tensor(%gy: tensor<394x768xf32>)
    -> (tensor<394x768xi8>, tensor<f32>) {
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x768xf32>
  %q, %s = hot.quantize %h bits 8 granularity per_tensor scale maxabs
      rounding nearest : tensor<394x768xf32> -> tensor<394x768xi8>, tensor<f32>
  return %q, %s : tensor<394x768xi8>, tensor<f32>
}

func.func @hla(%x: tensor<2x197x768xf32>) -> tensor<2x101x768xf32> {
  %y = hot.lowrank %x along 1 block 16 rank 8 allow_tail
      : tensor<2x197x768xf32> -> tensor<2x101x768xf32>
  return %y : tensor<2x101x768xf32>
}

func.func @w_sawb(%w: tensor<768x3072xf32>) -> (tensor<768x3072xi8>, tensor<f32>) {
  %q, %s = hot.quantize %w bits 4 granularity per_tensor scale sawb
      rounding nearest : tensor<768x3072xf32> -> tensor<768x3072xi8>, tensor<f32>
  return %q, %s : tensor<768x3072xi8>, tensor<f32>
}

func.func @layer_gy(%gy3: tensor<2x197x768xf32>, %seed: i64)
    -> (tensor<394x768xi8>, tensor<f32>, tensor<202x768xi8>, tensor<f32>) {
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]]
      : tensor<2x197x768xf32> into tensor<394x768xf32>
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x768xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<394x768xf32> -> tensor<394x768xi8>, tensor<f32>
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail
      : tensor<2x197x768xf32> -> tensor<2x101x768xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]]
      : tensor<2x101x768xf32> into tensor<202x768xf32>
  %q2, %s2 = hot.quantize %gyl2 bits 8 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<202x768xf32> -> tensor<202x768xi8>, tensor<f32>
  return %q, %s, %q2, %s2
      : tensor<394x768xi8>, tensor<f32>, tensor<202x768xi8>, tensor<f32>
}

func.func @gw_per_col(%gy3: tensor<2x197x768xf32>, %seed: i64)
    -> (tensor<202x768xi8>, tensor<768xf32>) {
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail
      : tensor<2x197x768xf32> -> tensor<2x101x768xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]]
      : tensor<2x101x768xf32> into tensor<202x768xf32>
  %q, %s = hot.quantize %gyl2 bits 8 granularity per_col scale maxabs
      rounding stochastic seed %seed
      : tensor<202x768xf32> -> tensor<202x768xi8>, tensor<768xf32>
  return %q, %s : tensor<202x768xi8>, tensor<768xf32>
}

func.func @layer_gy_projection_kept(%gy3: tensor<2x197x768xf32>,
    %w: tensor<768x64xf32>, %seed: i64)
    -> (tensor<394x768xi8>, tensor<f32>, tensor<202x768xi8>, tensor<f32>,
        tensor<2x101x768xf32>, tensor<768x64xf32>) {
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]]
      : tensor<2x197x768xf32> into tensor<394x768xf32>
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x768xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<394x768xf32> -> tensor<394x768xi8>, tensor<f32>
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail
      : tensor<2x197x768xf32> -> tensor<2x101x768xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]]
      : tensor<2x101x768xf32> into tensor<202x768xf32>
  %q2, %s2 = hot.quantize %gyl2 bits 8 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<202x768xf32> -> tensor<202x768xi8>, tensor<f32>
  %wh = hot.hadamard %w along 0 block 16 : tensor<768x64xf32>
  return %q, %s, %q2, %s2, %gyl, %wh
      : tensor<394x768xi8>, tensor<f32>, tensor<202x768xi8>, tensor<f32>,
        tensor<2x101x768xf32>, tensor<768x64xf32>
}

func.func @gy_2d_pair(%gy: tensor<394x768xf32>, %seed: i64)
    -> (tensor<394x768xi8>, tensor<f32>, tensor<394x768xi8>, tensor<768xf32>) {
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x768xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<394x768xf32> -> tensor<394x768xi8>, tensor<f32>
  %q2, %s2 = hot.quantize %gy bits 8 granularity per_col scale maxabs
      rounding stochastic seed %seed
      : tensor<394x768xf32> -> tensor<394x768xi8>, tensor<768xf32>
  return %q, %s, %q2, %s2
      : tensor<394x768xi8>, tensor<f32>, tensor<394x768xi8>, tensor<768xf32>
}
