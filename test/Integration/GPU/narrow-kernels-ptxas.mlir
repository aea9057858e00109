// A bf16 layer's backward (gy, x and W bf16, gx and gw truncated to bf16:
// the form hot-rewrite-backward-matmuls gives a bf16 graph) at ViT-B
// shapes: the products' epilogues convert to bf16 pairs as they store, the
// transform kernels load bf16 (4 per 8-byte access) and extend in
// registers, and every kernel assembles with ptxas without spills (sm_80's
// s4/s8 mma.sync; sm_90a's wgmma).
//
// REQUIRES: ptxas
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_80})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_80.ptx
// RUN: FileCheck %s --check-prefixes=PTX,PTX80 < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.sm_80.cubin 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PTXAS -DCHIP=sm_80 --implicit-check-not='{{[1-9][0-9]*}} bytes spill'
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90a})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefixes=PTX,PTX90 < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.sm_90a.cubin 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PTXAS -DCHIP=sm_90a --implicit-check-not='{{[1-9][0-9]*}} bytes spill'

// The gx product (s4 on sm_80, 4-bit operands on s8 wgmma on sm_90a), then
// the gw product: bf16 pairs stored.
// PTX80-LABEL: .entry hot_int_mma_s4_394x768x384_t64x64x64_w64x32_s3_rescale00_bf16(
// PTX90-LABEL: .entry hot_int_mma_wgmma_s8_394x768x768_t64x64x128_s4_rescale00_bf16(
// PTX: cvt.rn.bf16x2.f32
// PTX: st.global.b32
// PTX80-LABEL: .entry hot_int_mma_s8_768x768x208_t64x128x64_w64x32_s3_rescale00_bf16(
// PTX90-LABEL: .entry hot_int_mma_wgmma_s8_768x768x208_t64x128x128_s4_rescale00_bf16(
// PTX: cvt.rn.bf16x2.f32
// gy's and x's statistics and quantize kernels, W's: bf16 loads,
// extended by integer moves on sm_80 and by cvt.f32.bf16 on sm_90. The
// quantize kernels write the gw product's operands K-contiguous
// ([768][208], K in tails-last order): a block's 8 kept rows of a channel
// as one 8-byte store, the 5 tail rows byte by byte, zeros past K = 202.
// No transpose kernel is left for them.
// PTX-NOT: hot_transpose_s8_202x768
// PTX-LABEL: .entry hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_stats_inmax16_outmax_p26_bf16(
// PTX: ld.global.v4.b16
// PTX80-NOT: cvt.f32.bf16
// PTX90: cvt.f32.bf16
// PTX-LABEL: .entry hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v1_t256_quantize_in16_q7s_out_tensor_q127s_g1x26_kmajor208_tl2x96_bf16(
// PTX: st.global.b8 [%rd{{[0-9]+}}+207], 0;
// PTX: ld.global.b16
// PTX: st.global.v2.b32 [%rd{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}};
// PTX-LABEL: .entry hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_stats_outmax_p26_bf16(
// PTX: ld.global.v4.b16
// PTX-LABEL: .entry hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v1_t256_quantize_out_tensor_q127n_g1x26_kmajor208_tl2x96_bf16(
// PTX: ld.global.b16
// PTX: st.global.v2.b32
// W's SAWB statistics and quantize kernels compute its Hadamard along dim 0
// as they load: a block of 128 threads per 16 rows, each thread loading the
// 16 bf16 values of its columns (6 of them) and running the butterfly in
// registers (no block-transform kernel). The quantize kernel writes the gx
// product's operand K-contiguous, a column's 16 values in one store: packed
// s4 ([768][384], 8 bytes) on sm_80, s8 ([768][768], 16 bytes) on sm_90a. No
// transpose kernel is left.
// PTX-NOT: hot_block_hadamard
// PTX-NOT: hot_transpose
// PTX-LABEL: .entry hot_column_stats_768x768_c16_a4_sawb_bf16(
// PTX-COUNT-96: ld.global.b16
// PTX-NOT: ld.global
// PTX80-LABEL: .entry hot_column_quantize_768x768_c16_a4_q7_nearest_kmajor384s4_sawb_bf16(
// PTX90-LABEL: .entry hot_column_quantize_768x768_c16_a4_q7_nearest_kmajor768_sawb_bf16(
// PTX-COUNT-16: ld.global.b16
// PTX80: st.global.v2.b32
// PTX90: st.global.v4.b32

// ptxas compiles them in reverse order; 8 kernels, none spills.
// PTXAS-COUNT-8: Compiling entry function 'hot_{{.*}}' for '[[CHIP]]'
// PTXAS-NOT: error

func.func @layer(%x3: tensor<2x197x768xbf16>, %w: tensor<768x768xbf16>,
                 %gy3: tensor<2x197x768xbf16>, %seed: i64)
    -> (tensor<394x768xbf16>, tensor<768x768xbf16>) {
  %c1 = arith.constant 4294967296 : i64
  %c2 = arith.constant 8589934592 : i64
  %seed1 = arith.addi %seed, %c1 : i64
  %seed2 = arith.addi %seed, %c2 : i64
  %gyf = arith.extf %gy3 : tensor<2x197x768xbf16> to tensor<2x197x768xf32>
  %gy = tensor.collapse_shape %gyf [[0, 1], [2]] : tensor<2x197x768xf32> into tensor<394x768xf32>
  %wf = arith.extf %w : tensor<768x768xbf16> to tensor<768x768xf32>
  %gyh = hot.hadamard %gy along 1 block 16 : tensor<394x768xf32>
  %wh = hot.hadamard %wf along 0 block 16 : tensor<768x768xf32>
  %qg, %sg = hot.quantize %gyh bits 4 granularity per_tensor scale maxabs
      rounding stochastic seed %seed1 : tensor<394x768xf32> -> tensor<394x768xi8>, tensor<f32>
  %qw, %sw = hot.quantize %wh bits 4 granularity per_tensor scale sawb rounding nearest
      : tensor<768x768xf32> -> tensor<768x768xi8>, tensor<f32>
  %acc = hot.int_matmul %qg, %qw : tensor<394x768xi8>, tensor<768x768xi8> -> tensor<394x768xi32>
  %gx32 = hot.rescale %acc, %sg, %sw : tensor<394x768xi32>, tensor<f32>, tensor<f32> -> tensor<394x768xf32>
  %gx = arith.truncf %gx32 : tensor<394x768xf32> to tensor<394x768xbf16>
  %gyl = hot.lowrank %gyf along 1 block 16 rank 8 allow_tail
      : tensor<2x197x768xf32> -> tensor<2x101x768xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]] : tensor<2x101x768xf32> into tensor<202x768xf32>
  %xe = tensor.empty() : tensor<2x197x768xf32>
  %xf = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x3 : tensor<2x197x768xbf16>) outs(%xe : tensor<2x197x768xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<2x197x768xf32>
  %xl = hot.lowrank %xf along 1 block 16 rank 8 allow_tail
      : tensor<2x197x768xf32> -> tensor<2x101x768xf32>
  %xl2 = tensor.collapse_shape %xl [[0, 1], [2]] : tensor<2x101x768xf32> into tensor<202x768xf32>
  %qgy, %sgy = hot.quantize %gyl2 bits 8 granularity per_tensor scale maxabs
      rounding stochastic seed %seed2 : tensor<202x768xf32> -> tensor<202x768xi8>, tensor<f32>
  %qx, %sx = hot.quantize %xl2 bits 8 granularity per_tensor scale maxabs rounding nearest
      : tensor<202x768xf32> -> tensor<202x768xi8>, tensor<f32>
  %acc2 = hot.int_matmul %qgy transposed, %qx
      : tensor<202x768xi8>, tensor<202x768xi8> -> tensor<768x768xi32>
  %gw32 = hot.rescale %acc2, %sgy, %sx : tensor<768x768xi32>, tensor<f32>, tensor<f32> -> tensor<768x768xf32>
  %ge = tensor.empty() : tensor<768x768xbf16>
  %gw = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%gw32 : tensor<768x768xf32>) outs(%ge : tensor<768x768xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<768x768xbf16>
  return %gx, %gw : tensor<394x768xbf16>, tensor<768x768xbf16>
}
