// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu 2>/dev/null \
// RUN:   | FileCheck %s
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK

// bf16 and f16 graphs: the transform kernels read the narrow tensor that an
// element-type extension widens to the hot op's f32 input (and load-extend it
// in registers), and a product's epilogue stores the graph's truncation of
// its rescaled result. Neither cast is left as an f32 copy.

// gy in bf16, extended twice (once per path, as the rewrite emits it before
// CSE): both reads are the same data, so the lowrank kernels still compute the
// gx quantize's maximum, and every kernel reads the bf16 tensor.
func.func @shared_bf16(%gy3: tensor<2x37x40xbf16>, %seed: i64)
    -> (tensor<74x40xi8>, tensor<f32>, tensor<42x40xi8>, tensor<f32>) {
  %a = arith.extf %gy3 : tensor<2x37x40xbf16> to tensor<2x37x40xf32>
  %gy = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x37x40xf32> into tensor<74x40xf32>
  %h = hot.hadamard %gy along 1 block 8 : tensor<74x40xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs rounding stochastic seed %seed : tensor<74x40xf32> -> tensor<74x40xi8>, tensor<f32>
  %b = arith.extf %gy3 : tensor<2x37x40xbf16> to tensor<2x37x40xf32>
  %l = hot.lowrank %b along 1 block 16 rank 8 allow_tail : tensor<2x37x40xf32> -> tensor<2x21x40xf32>
  %l2 = tensor.collapse_shape %l [[0, 1], [2]] : tensor<2x21x40xf32> into tensor<42x40xf32>
  %q2, %s2 = hot.quantize %l2 bits 8 granularity per_tensor scale maxabs rounding stochastic seed %seed : tensor<42x40xf32> -> tensor<42x40xi8>, tensor<f32>
  return %q, %s, %q2, %s2 : tensor<74x40xi8>, tensor<f32>, tensor<42x40xi8>, tensor<f32>
}

// CHECK-LABEL: func.func @shared_bf16
//  CHECK-SAME: (%[[GY:.*]]: tensor<2x37x40xbf16>
//   CHECK-NOT:   arith.extf
//       CHECK:   %[[X:.*]] = bufferization.to_buffer %[[GY]] read_only : tensor<2x37x40xbf16> to memref<2x37x40xbf16>
//   CHECK-NOT:   arith.extf
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x37x40_b16_k_0_8_12_4_6_14_10_2_v4_t32_stats_inmax8_outmax_p6_bf16 {{.*}} args(%[[X]] : memref<2x37x40xbf16>,
//   CHECK-NOT:   arith.extf
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x37x40_b16_k_0_8_12_4_6_14_10_2_v1_t64_quantize_in8_q7s_out_tensor_q127s_g6_bf16 {{.*}} args(%[[X]] : memref<2x37x40xbf16>,
//   CHECK-NOT:   arith.extf
//       CHECK:   return
//       CHECK: gpu.func @hot_lowrank_2x37x40_b16_k_0_8_12_4_6_14_10_2_v4_t32_stats_inmax8_outmax_p6_bf16(%[[IN:.*]]: memref<2x37x40xbf16>,
//       CHECK:   %[[V:.*]] = vector.load %[[IN]][{{.*}}] {alignment = 8 : i64} : memref<2x37x40xbf16>, vector<4xbf16>
//       CHECK:   %[[E:.*]] = vector.extract %[[V]][0] : bf16 from vector<4xbf16>
//       CHECK:   arith.extf %[[E]] : bf16 to f32
// REMARK: remark: lowrank and the quantizes of its input's hadamard and of its result in one pass over the data after a statistics pass: @hot_lowrank_2x37x40_b16_k_0_8_12_4_6_14_10_2_v4_t32_stats_inmax8_outmax_p6_bf16

// -----

// f16 x extended by a linalg.generic (torch-mlir's form), per-row quantize.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @row_f16(%x: tensor<8x64xf16>) -> (tensor<8x64xi8>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8x64xf32>
  %xf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf16>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %v = arith.extf %in : f16 to f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %h = hot.hadamard %xf along 1 block 16 : tensor<8x64xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_row scale maxabs rounding nearest : tensor<8x64xf32> -> tensor<8x64xi8>, tensor<8xf32>
  return %q, %s : tensor<8x64xi8>, tensor<8xf32>
}

// CHECK-LABEL: func.func @row_f16
//  CHECK-SAME: (%[[X:.*]]: tensor<8x64xf16>)
//   CHECK-NOT:   linalg.generic
//       CHECK:   %[[B:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<8x64xf16> to memref<8x64xf16>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_quantize_row_8x64_b16_v4_w4_q7_nearest_regs_f16 {{.*}} args(%[[B]] : memref<8x64xf16>,
//       CHECK: gpu.func @hot_hadamard_quantize_row_8x64_b16_v4_w4_q7_nearest_regs_f16(%[[IN:.*]]: memref<8x64xf16>,
//       CHECK:   vector.load %[[IN]][{{.*}}] {alignment = 8 : i64} : memref<8x64xf16>, vector<4xf16>
//       CHECK:   arith.extf %{{.*}} : f16 to f32
// REMARK: remark: fused hadamard (block 16) + per_row quantize kernel @hot_hadamard_quantize_row_8x64_b16_v4_w4_q7_nearest_regs_f16

// -----

// The products' truncations to bf16: by arith.truncf, and by a generic.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @truncated(%a: tensor<8x48xi8>, %b: tensor<16x48xi8>, %s: tensor<f32>) -> (tensor<8x16xbf16>, tensor<8x16xf16>) {
  %acc = hot.int_matmul %a, %b transposed : tensor<8x48xi8>, tensor<16x48xi8> -> tensor<8x16xi32>
  %y = hot.rescale %acc, %s, %s : tensor<8x16xi32>, tensor<f32>, tensor<f32> -> tensor<8x16xf32>
  %t = arith.truncf %y : tensor<8x16xf32> to tensor<8x16xbf16>
  %acc2 = hot.int_matmul %a, %b transposed : tensor<8x48xi8>, tensor<16x48xi8> -> tensor<8x16xi32>
  %y2 = hot.rescale %acc2, %s, %s : tensor<8x16xi32>, tensor<f32>, tensor<f32> -> tensor<8x16xf32>
  %e = tensor.empty() : tensor<8x16xf16>
  %t2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y2 : tensor<8x16xf32>) outs(%e : tensor<8x16xf16>) {
  ^bb0(%in: f32, %out: f16):
    %v = arith.truncf %in : f32 to f16
    linalg.yield %v : f16
  } -> tensor<8x16xf16>
  return %t, %t2 : tensor<8x16xbf16>, tensor<8x16xf16>
}

// CHECK-LABEL: func.func @truncated
//   CHECK-NOT:   arith.truncf
//   CHECK-NOT:   linalg.generic
//       CHECK:   %[[BF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x16xbf16>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_int_mma_s8_8x16x48_t64x64x64_w64x32_s3_rescale00_bf16 {{.*}} %[[BF]] : memref<8x16xbf16>
//       CHECK:   %[[H:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x16xf16>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_int_mma_s8_8x16x48_t64x64x64_w64x32_s3_rescale00_f16 {{.*}} %[[H]] : memref<8x16xf16>
//   CHECK-NOT:   arith.truncf
//   CHECK-NOT:   linalg.generic
//       CHECK:   return
//       CHECK: gpu.func @hot_int_mma_s8_8x16x48_t64x64x64_w64x32_s3_rescale00_bf16
//       CHECK:   arith.truncf %{{.*}} : f32 to bf16
//       CHECK: gpu.func @hot_int_mma_s8_8x16x48_t64x64x64_w64x32_s3_rescale00_f16
//       CHECK:   arith.truncf %{{.*}} : f32 to f16
// REMARK: remark: tensor-core kernel @hot_int_mma_s8_8x16x48_t64x64x64_w64x32_s3_rescale00_bf16: s8 mma.sync m16n8k32 (operands on an 8-bit grid), hot.rescale fused into the epilogue with its truncation to 'bf16'
// REMARK: remark: tensor-core kernel @hot_int_mma_s8_8x16x48_t64x64x64_w64x32_s3_rescale00_f16: {{.*}} with its truncation to 'f16'

// -----

// Not fused: a truncation with another rounding mode, and one of a rescaled
// product that something else reads too.
func.func @not_fused(%a: tensor<8x48xi8>, %b: tensor<16x48xi8>, %s: tensor<f32>) -> (tensor<8x16xbf16>, tensor<8x16xbf16>, tensor<8x16xf32>) {
  %acc = hot.int_matmul %a, %b transposed : tensor<8x48xi8>, tensor<16x48xi8> -> tensor<8x16xi32>
  %y = hot.rescale %acc, %s, %s : tensor<8x16xi32>, tensor<f32>, tensor<f32> -> tensor<8x16xf32>
  %t = arith.truncf %y to_nearest_away : tensor<8x16xf32> to tensor<8x16xbf16>
  %acc2 = hot.int_matmul %a, %b transposed : tensor<8x48xi8>, tensor<16x48xi8> -> tensor<8x16xi32>
  %y2 = hot.rescale %acc2, %s, %s : tensor<8x16xi32>, tensor<f32>, tensor<f32> -> tensor<8x16xf32>
  %t2 = arith.truncf %y2 : tensor<8x16xf32> to tensor<8x16xbf16>
  return %t, %t2, %y2 : tensor<8x16xbf16>, tensor<8x16xbf16>, tensor<8x16xf32>
}

// CHECK-LABEL: func.func @not_fused
//       CHECK:   gpu.launch_func @hot_kernels::@hot_int_mma_s8_8x16x48_t64x64x64_w64x32_s3_rescale00_f32
//       CHECK:   %[[Y:.*]] = bufferization.to_tensor %{{.*}} : memref<8x16xf32> to tensor<8x16xf32>
//       CHECK:   arith.truncf %[[Y]] to_nearest_away : tensor<8x16xf32> to tensor<8x16xbf16>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_int_mma_s8_8x16x48_t64x64x64_w64x32_s3_rescale00_f32
//       CHECK:   %[[Y2:.*]] = bufferization.to_tensor %{{.*}} : memref<8x16xf32> to tensor<8x16xf32>
//       CHECK:   %[[T2:.*]] = arith.truncf %[[Y2]] : tensor<8x16xf32> to tensor<8x16xbf16>
//       CHECK:   return %{{.*}}, %[[T2]], %[[Y2]]
// REMARK: remark: tensor-core kernel @hot_int_mma_s8_8x16x48_t64x64x64_w64x32_s3_rescale00_f32: s8 mma.sync m16n8k32 (operands on an 8-bit grid), hot.rescale fused into the epilogue; 64x64 tiles (the model of the kernel's time on 108 SMs: {{.*}}){{$}}
// REMARK: remark: tensor-core kernel @hot_int_mma_s8_8x16x48_t64x64x64_w64x32_s3_rescale00_f32: s8 mma.sync m16n8k32 (operands on an 8-bit grid), hot.rescale fused into the epilogue; 64x64 tiles (the model of the kernel's time on 108 SMs: {{.*}}){{$}}


// -----

// Only the casts that the lowering leaves dead are erased: a dead op on
// tensors that was dead before the pass is the user's (a canonicalization
// may erase it), and stays.
func.func @unrelated_dead(%x: tensor<8x64xbf16>, %y: tensor<4xf32>) -> (tensor<8x64xi8>, tensor<8xf32>) {
  %unused = arith.addf %y, %y : tensor<4xf32>
  %e = arith.extf %x : tensor<8x64xbf16> to tensor<8x64xf32>
  %q, %s = hot.quantize %e bits 4 granularity per_row scale maxabs rounding nearest : tensor<8x64xf32> -> tensor<8x64xi8>, tensor<8xf32>
  return %q, %s : tensor<8x64xi8>, tensor<8xf32>
}

// CHECK-LABEL: func.func @unrelated_dead
//       CHECK:   arith.addf %{{.*}}, %{{.*}} : tensor<4xf32>
//   CHECK-NOT:   arith.extf
//       CHECK:   gpu.launch_func
//   CHECK-NOT:   arith.extf
//       CHECK:   return
