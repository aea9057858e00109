// The pipeline's share-statistics option reaches convert-hot-to-gpu: by
// default a layer's gy goes through a statistics kernel and one quantize
// kernel for both paths; with share-statistics=0 each per-tensor quantize
// has its absmax kernel and the projection is stored.
// RUN: hot-opt %s --hot-lower-to-nvvm="chip=sm_90 format=isa" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHARED
// RUN: hot-opt %s --hot-lower-to-nvvm="chip=sm_90 format=isa share-statistics=0" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNSHARED

// SHARED: remark: lowrank and the quantizes of its input's hadamard and of its result in one pass over the data after a statistics pass: @hot_lowrank_4x20x64_b16_k_0_8_12_4_6_14_10_2_v4_t32_stats_inmax16_outmax_p8
// SHARED-SAME: then @hot_lowrank_4x20x64_b16_k_0_8_12_4_6_14_10_2_v1_t64_quantize_in16_q7s_out_tensor_q127s_g8
// SHARED-NOT: absmax

// UNSHARED-DAG: remark: lowrank kernel @hot_lowrank_4x20x64_b16_k_0_8_12_4_6_14_10_2_v4_t32:
// UNSHARED-DAG: remark: fused hadamard (block 16) + per_tensor quantize: two kernels, @hot_hadamard_absmax_80x64
// UNSHARED-DAG: remark: fused per_tensor quantize: two kernels, @hot_hadamard_absmax_48x64
func.func @gy(%gy3: tensor<4x20x64xf32>, %seed: i64)
    -> (tensor<80x64xi8>, tensor<f32>, tensor<48x64xi8>, tensor<f32>) {
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]]
      : tensor<4x20x64xf32> into tensor<80x64xf32>
  %h = hot.hadamard %gy along 1 block 16 : tensor<80x64xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<80x64xf32> -> tensor<80x64xi8>, tensor<f32>
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail
      : tensor<4x20x64xf32> -> tensor<4x12x64xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]]
      : tensor<4x12x64xf32> into tensor<48x64xf32>
  %q2, %s2 = hot.quantize %gyl2 bits 8 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<48x64xf32> -> tensor<48x64xi8>, tensor<f32>
  return %q, %s, %q2, %s2
      : tensor<80x64xi8>, tensor<f32>, tensor<48x64xi8>, tensor<f32>
}
