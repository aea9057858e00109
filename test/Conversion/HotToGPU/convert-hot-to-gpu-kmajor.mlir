// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu 2>/dev/null \
// RUN:   | FileCheck %s
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: hot-opt %s --split-input-file \
// RUN:   --convert-hot-to-gpu="fuse-transposes=false" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOFUSE

// gw = gy^T x with HLA: both operands K-major. The quantize kernels of the
// two projections write them K-contiguous themselves ([channels][48], K = 2
// samples x 21 rows padded to 48) and no transpose kernel runs. 37 tokens
// are 2 blocks of 16 and a tail of 5, so K is in tails-last order: both
// samples' 16 block rows, then both samples' 5 tail rows. A block's 8 kept
// rows of a channel are one 8-byte store at a multiple of 8; tail rows go
// byte by byte; block row 0 of the grid zeroes K = 42..47.

// REMARK: remark: tensor-core kernel @hot_int_mma_s8_48x40x48_t64x64x64_w64x32_s3_rescale00_f32
// REMARK: remark: lowrank and the quantizes of its result in one pass over the data after a statistics pass: @hot_lowrank_2x37x48_b16_k_0_8_12_4_6_14_10_2_v4_t32_stats_outmax_p6 ({{.*}}) then @hot_lowrank_2x37x48_b16_k_0_8_12_4_6_14_10_2_v1_t64_quantize_out_tensor_q127s_g6_kmajor48_tl2x16 (quantizes y with the CPU path's rounding; y never reaches memory; grid {{[0-9]+x[0-9]+ over [0-9]+ items.*}}); it writes the q of y as the product's K-contiguous operand [48][48] i8 in tails-last K order, in place of @hot_transpose_s8_42x48_to_48x48_tl2x16
// REMARK: remark: lowrank and the quantizes of its result {{.*}} it writes the q of y as the product's K-contiguous operand [40][48] i8 in tails-last K order, in place of @hot_transpose_s8_42x40_to_40x48_tl2x16
// REMARK-NOT: not K-contiguous

// CHECK-LABEL: func.func @gw_tails
//   CHECK-NOT:   hot.
//   CHECK-NOT:   @hot_transpose
//       CHECK:   %[[QGY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<48x48xi8>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x37x48_{{.*}}_stats_outmax_p6
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x37x48_{{.*}}_quantize_out_tensor_q127s_g6_kmajor48_tl2x16
//  CHECK-SAME:     %[[QGY]] : memref<48x48xi8>
//       CHECK:   %[[QX:.*]] = memref.alloc() {alignment = 64 : i64} : memref<40x48xi8>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x37x40_{{.*}}_stats_outmax_p6
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x37x40_{{.*}}_quantize_out_tensor_q127n_g6_kmajor48_tl2x16
//  CHECK-SAME:     %[[QX]] : memref<40x48xi8>
//       CHECK:   %[[A:.*]] = bufferization.to_tensor %[[QGY]]
//       CHECK:   %[[B:.*]] = bufferization.to_tensor %[[QX]]
//       CHECK:   %[[MA:.*]] = bufferization.to_buffer %[[A]]
//       CHECK:   %[[MB:.*]] = bufferization.to_buffer %[[B]]
//       CHECK:   gpu.launch_func @hot_kernels::@hot_int_mma_s8_48x40x48_{{.*}} args(%[[MA]] : memref<48x48xi8>, %[[MB]] : memref<40x48xi8>,
//   CHECK-NOT:   @hot_transpose
//       CHECK: gpu.func @hot_lowrank_2x37x40_{{.*}}_quantize_out_tensor_q127n_g6_kmajor48_tl2x16(%{{.*}}: memref<2x37x40xf32>, %{{.*}}: memref<6xf32>, %[[Q:.*]]: memref<40x48xi8>, %{{.*}}: memref<f32>)
//       CHECK:   memref.store %{{.*}}, %[[Q]][%{{.*}}, %c42{{.*}}] : memref<40x48xi8>
//       CHECK:   memref.store %{{.*}}, %[[Q]][%{{.*}}, %c47{{.*}}] : memref<40x48xi8>
//       CHECK:   scf.for
//       CHECK:     vector.store %{{.*}}, %[[Q]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<40x48xi8>, vector<8xi8>
//       CHECK:     vector.store %{{.*}}, %[[Q]][%{{.*}}, %{{.*}}] {alignment = 1 : i64} : memref<40x48xi8>, vector<1xi8>
//       CHECK: gpu.return

// NOFUSE-LABEL: func.func @gw_tails
//       NOFUSE:   gpu.launch_func @hot_kernels::@hot_transpose_s8_42x48_to_48x48_tl2x16
//       NOFUSE:   gpu.launch_func @hot_kernels::@hot_transpose_s8_42x40_to_40x48_tl2x16
//       NOFUSE:   gpu.launch_func @hot_kernels::@hot_int_mma_s8_48x40x48
func.func @gw_tails(%x3: tensor<2x37x40xf32>, %gy3: tensor<2x37x48xf32>, %seed: i64)
    -> tensor<48x40xf32> {
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail
      : tensor<2x37x48xf32> -> tensor<2x21x48xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]] : tensor<2x21x48xf32> into tensor<42x48xf32>
  %xl = hot.lowrank %x3 along 1 block 16 rank 8 allow_tail
      : tensor<2x37x40xf32> -> tensor<2x21x40xf32>
  %xl2 = tensor.collapse_shape %xl [[0, 1], [2]] : tensor<2x21x40xf32> into tensor<42x40xf32>
  %qgy, %sgy = hot.quantize %gyl2 bits 8 granularity per_tensor scale maxabs
      rounding stochastic seed %seed : tensor<42x48xf32> -> tensor<42x48xi8>, tensor<f32>
  %qx, %sx = hot.quantize %xl2 bits 8 granularity per_tensor scale maxabs rounding nearest
      : tensor<42x40xf32> -> tensor<42x40xi8>, tensor<f32>
  %acc = hot.int_matmul %qgy transposed, %qx
      : tensor<42x48xi8>, tensor<42x40xi8> -> tensor<48x40xi32>
  %gw = hot.rescale %acc, %sgy, %sx : tensor<48x40xi32>, tensor<f32>, tensor<f32> -> tensor<48x40xf32>
  return %gw : tensor<48x40xf32>
}

// -----

// qgy is also returned: its q must be stored as it is, and the transpose
// kernel rewrites it, in the tails-last order that x's quantize kernel
// writes the other operand in (the sums need both in one order).

// REMARK: remark: tensor-core kernel @hot_int_mma_s8_48x40x48
// REMARK: remark: lowrank and the quantizes of its result {{.*}}_quantize_out_tensor_q127s_g6 (quantizes y with the CPU path's rounding; y never reaches memory; grid {{[0-9]+x[0-9]+ over [0-9]+ items.*}}){{$}}
// REMARK: remark: lowrank and the quantizes of its result {{.*}}_quantize_out_tensor_q127n_g6_kmajor48_tl2x16 ({{.*}}in place of @hot_transpose_s8_42x40_to_40x48_tl2x16
// REMARK: remark: lhs is not K-contiguous: transposed to [48][K] i8 by @hot_transpose_s8_42x48_to_48x48_tl2x16 (64x64-byte tiles through shared memory) before the product, K in tails-last order (the full blocks' 16 rows of each of 2 samples, then the tails), as the other operand (no kernel that produces it writes it K-major)

// CHECK-LABEL: func.func @gw_projection_returned
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x37x48_{{.*}}_quantize_out_tensor_q127s_g6 blocks
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x37x40_{{.*}}_quantize_out_tensor_q127n_g6_kmajor48_tl2x16
//       CHECK:   gpu.launch_func @hot_kernels::@hot_transpose_s8_42x48_to_48x48_tl2x16
//       CHECK:   gpu.launch_func @hot_kernels::@hot_int_mma_s8_48x40x48
//       CHECK: gpu.func @hot_transpose_s8_42x48_to_48x48_tl2x16
// The source row of output byte k: k < 32 in the samples' block rows
// (k / 16 * 21 + k % 16), else in their tails.
//       CHECK:   arith.cmpi ult, %{{.*}}, %c32
//       CHECK:   arith.divui %{{.*}}, %c16
//       CHECK:   arith.remui %{{.*}}, %c16
//       CHECK:   arith.muli %{{.*}}, %c21
//       CHECK:   arith.divui %{{.*}}, %c5
//   CHECK-NOT: gpu.func @hot_transpose_s8_42x40
func.func @gw_projection_returned(%x3: tensor<2x37x40xf32>, %gy3: tensor<2x37x48xf32>,
                                  %seed: i64) -> (tensor<48x40xf32>, tensor<42x48xi8>) {
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail
      : tensor<2x37x48xf32> -> tensor<2x21x48xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]] : tensor<2x21x48xf32> into tensor<42x48xf32>
  %xl = hot.lowrank %x3 along 1 block 16 rank 8 allow_tail
      : tensor<2x37x40xf32> -> tensor<2x21x40xf32>
  %xl2 = tensor.collapse_shape %xl [[0, 1], [2]] : tensor<2x21x40xf32> into tensor<42x40xf32>
  %qgy, %sgy = hot.quantize %gyl2 bits 8 granularity per_tensor scale maxabs
      rounding stochastic seed %seed : tensor<42x48xf32> -> tensor<42x48xi8>, tensor<f32>
  %qx, %sx = hot.quantize %xl2 bits 8 granularity per_tensor scale maxabs rounding nearest
      : tensor<42x40xf32> -> tensor<42x40xi8>, tensor<f32>
  %acc = hot.int_matmul %qgy transposed, %qx
      : tensor<42x48xi8>, tensor<42x40xi8> -> tensor<48x40xi32>
  %gw = hot.rescale %acc, %sgy, %sx : tensor<48x40xi32>, tensor<f32>, tensor<f32> -> tensor<48x40xf32>
  return %gw, %qgy : tensor<48x40xf32>, tensor<42x48xi8>
}

// -----

// 32 tokens are two whole blocks: no tail, K in its natural order (the
// kernel names carry no order), 8-byte stores, and K = 32 needs no padding.

// REMARK: remark: lowrank and the quantizes of its result {{.*}}_kmajor32 ({{.*}}operand [24][32] i8, in place of @hot_transpose_s8_32x24_to_24x32{{$}}

// CHECK-LABEL: func.func @gw_no_tail
//   CHECK-NOT:   @hot_transpose
//       CHECK: gpu.func @hot_lowrank_2x32x24_{{.*}}_quantize_out_tensor_q127n_g4_kmajor32(%{{.*}}: memref<2x32x24xf32>, %{{.*}}: memref<4xf32>, %[[Q:.*]]: memref<24x32xi8>, %{{.*}}: memref<f32>)
//   CHECK-NOT:   memref.store %{{.*}}, %[[Q]]
//       CHECK:   vector.store %{{.*}}, %[[Q]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<24x32xi8>, vector<8xi8>
//   CHECK-NOT:   vector<1xi8>
//       CHECK: gpu.return
func.func @gw_no_tail(%x3: tensor<2x32x24xf32>, %gy3: tensor<2x32x16xf32>) -> tensor<16x24xf32> {
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 : tensor<2x32x16xf32> -> tensor<2x16x16xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]] : tensor<2x16x16xf32> into tensor<32x16xf32>
  %xl = hot.lowrank %x3 along 1 block 16 rank 8 : tensor<2x32x24xf32> -> tensor<2x16x24xf32>
  %xl2 = tensor.collapse_shape %xl [[0, 1], [2]] : tensor<2x16x24xf32> into tensor<32x24xf32>
  %qgy, %sgy = hot.quantize %gyl2 bits 8 granularity per_tensor scale maxabs rounding nearest
      : tensor<32x16xf32> -> tensor<32x16xi8>, tensor<f32>
  %qx, %sx = hot.quantize %xl2 bits 8 granularity per_tensor scale maxabs rounding nearest
      : tensor<32x24xf32> -> tensor<32x24xi8>, tensor<f32>
  %acc = hot.int_matmul %qgy transposed, %qx
      : tensor<32x16xi8>, tensor<32x24xi8> -> tensor<16x24xi32>
  %gw = hot.rescale %acc, %sgy, %sx : tensor<16x24xi32>, tensor<f32>, tensor<f32> -> tensor<16x24xf32>
  return %gw : tensor<16x24xf32>
}

// -----

// gx = gy W: W's hadamard along dim 0 and its per-tensor SAWB quantize are two
// column-block kernels, one thread block of 128 threads per 16 rows of W:
// thread t loads column t of the block's 16 rows and runs the whole butterfly
// in registers. The statistics kernel stores a max per warp and each row's f64
// sums, whose 128 partials are the threads' (the tree in shared memory); the
// quantize kernel's first warp folds them to the scale (no Scale kernel) and
// every thread writes its column's 16 values as the product's K-contiguous
// operand: 8 bytes, two s4 values per byte on sm_80. No transpose kernel.

// REMARK: remark: fused hadamard along dim 0 (block 16) + per_tensor sawb quantize: two kernels of 4 blocks, {{.*}}@hot_column_stats_64x48_c16_a4_sawb (max|y| per warp; each row's f64 sums, partial t in thread t, the tree in shared memory) then @hot_column_quantize_64x48_c16_a4_q7_nearest_kmajor32s4_sawb ({{.*}}); it writes q as the product's K-contiguous operand [48][32] i8 (s4, two per byte), in place of @hot_transpose_s4_64x48_to_48x32{{$}}
// NOFUSE: remark: fused hadamard along dim 0 (block 16) + per_tensor sawb quantize: two kernels of 4 blocks, {{.*}}@hot_column_quantize_64x48_c16_a4_q7_nearest_sawb ({{[^;]*}}){{$}}
// NOFUSE: remark: rhs is not K-contiguous: transposed to [48][K] i8 by @hot_transpose_s4_64x48_to_48x32

// CHECK-LABEL: func.func @gx_w
//       CHECK:   gpu.launch_func @hot_kernels::@hot_column_stats_64x48_c16_a4_sawb blocks in (%c4{{.*}}) threads in (%c128{{.*}}) args(%[[W:.*]] : memref<64x48xf32>, %[[P:.*]] : memref<16xf32>, %[[SUMS:.*]] : memref<2x64xf64>)
//       CHECK:   gpu.launch_func @hot_kernels::@hot_column_quantize_64x48_c16_a4_q7_nearest_kmajor32s4_sawb blocks in (%c4{{.*}}) threads in (%c128{{.*}}) args(%[[W]] : memref<64x48xf32>, %[[P]] : memref<16xf32>, %[[SUMS]] : memref<2x64xf64>, %[[WT:.*]] : memref<48x32xi8>, %[[SW:.*]] : memref<f32>)
//   CHECK-NOT:   @hot_transpose
//       CHECK:   gpu.launch_func @hot_kernels::@hot_int_mma_s4_40x48x32_{{.*}} args(%{{.*}} : memref<40x32xi8>, %{{.*}} : memref<48x32xi8>,
//       CHECK: gpu.func @hot_column_stats_64x48_c16_a4_sawb({{.*}}) workgroup(%[[TREES:.*]] : memref<32x128xf64, #gpu.address_space<workgroup>>)
//  CHECK-COUNT-16:   vector.load %{{.*}} : memref<64x48xf32>, vector<1xf32>
//   CHECK-NOT:   gpu.shuffle  idx
//       CHECK:   memref.store %{{.*}}, %[[TREES]][%c31{{.*}}, %{{.*}}]
//       CHECK:   gpu.barrier
//       CHECK:   arith.addf {{.*}} : f64
//       CHECK:   gpu.barrier
//       CHECK:   memref.store %{{.*}} : memref<2x64xf64>
//       CHECK: gpu.func @hot_column_quantize_64x48_c16_a4_q7_nearest_kmajor32s4_sawb({{.*}}%[[Q:[^:]*]]: memref<48x32xi8>, %{{.*}}: memref<f32>) workgroup(%{{.*}} : memref<1xf32, #gpu.address_space<workgroup>>)
//  CHECK-COUNT-16:   vector.load %{{.*}} : memref<64x48xf32>, vector<1xf32>
//       CHECK:   gpu.barrier
//       CHECK:   arith.shli {{.*}} : i8
//   CHECK-NOT:   memref.store %{{.*}}, %[[Q]]
//       CHECK:   vector.store %{{.*}}, %[[Q]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<48x32xi8>, vector<8xi8>
//       CHECK: gpu.return
func.func @gx_w(%gy: tensor<40x64xf32>, %w: tensor<64x48xf32>, %seed: i64) -> tensor<40x48xf32> {
  %gyh = hot.hadamard %gy along 1 block 16 : tensor<40x64xf32>
  %wh = hot.hadamard %w along 0 block 16 : tensor<64x48xf32>
  %qg, %sg = hot.quantize %gyh bits 4 granularity per_tensor scale maxabs
      rounding stochastic seed %seed : tensor<40x64xf32> -> tensor<40x64xi8>, tensor<f32>
  %qw, %sw = hot.quantize %wh bits 4 granularity per_tensor scale sawb rounding nearest
      : tensor<64x48xf32> -> tensor<64x48xi8>, tensor<f32>
  %acc = hot.int_matmul %qg, %qw : tensor<40x64xi8>, tensor<64x48xi8> -> tensor<40x48xi32>
  %gx = hot.rescale %acc, %sg, %sw : tensor<40x48xi32>, tensor<f32>, tensor<f32> -> tensor<40x48xf32>
  return %gx : tensor<40x48xf32>
}
