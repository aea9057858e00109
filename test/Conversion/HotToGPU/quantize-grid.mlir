// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu=chip=sm_90a 2>&1 \
// RUN:   | FileCheck %s --check-prefix=H200
// RUN: hot-opt %s --split-input-file \
// RUN:   --convert-hot-to-gpu="chip=sm_90a sm-count=114" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SM114
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu=chip=sm_80 2>&1 \
// RUN:   | FileCheck %s --check-prefix=A100

// The grid of the lowrank quantize kernel that ViT-B fc1's gy gets (64
// samples of 197 tokens, 3072 channels): 64 * 13 = 832 items (12 full token
// blocks of 16 and the tail per sample), 3072 / 256 = 12 blocks across the
// channels. Its blocks loop over the items, so the grid is the fewest block
// rows that finish in the fewest rounds of resident blocks times items per
// block:
//  - sm_90a, 132 SMs at 6 blocks per SM (its hint): 792 blocks at once, one
//    round takes up to 66 rows; ceil(832 / 66) = 13 items, and 64 rows are the
//    fewest with 13 (64 * 13 = 832). Two rounds of 7 items would be longer;
//  - sm-count=114: 684 at once, up to 57 rows, ceil(832 / 57) = 15 items, and
//    56 rows the fewest with 15 (55 * 15 = 825 < 832);
//  - sm_80, 108 SMs at 5 per SM: 540 at once, up to 45 rows, 19 items, and
//    44 rows the fewest (43 * 19 = 817 < 832).

// H200: remark: {{.*}}then @[[Q:hot_lowrank_64x197x3072_[a-z0-9_]*_quantize_[a-z0-9_]*]] ({{.*}}; grid 12x64 over 832 items, for 792 blocks at once (6 per SM on 132 SMs))
// H200: func.func @gy
// H200: %[[C12:.*]] = arith.constant 12 : index
// H200: %[[C64:.*]] = arith.constant 64 : index
// H200: gpu.launch_func @hot_kernels::@[[Q]] blocks in (%[[C12]], %[[C64]], %{{.*}})
// H200: gpu.func @[[Q]]({{.*}}nvvm.minctasm = 6

// SM114: remark: {{.*}}then @[[Q:hot_lowrank_64x197x3072_[a-z0-9_]*_quantize_[a-z0-9_]*]] ({{.*}}; grid 12x56 over 832 items, for 684 blocks at once (6 per SM on 114 SMs))

// A100: remark: {{.*}}then @[[Q:hot_lowrank_64x197x3072_[a-z0-9_]*_quantize_[a-z0-9_]*]] ({{.*}}; grid 12x44 over 832 items, for 540 blocks at once (5 per SM on 108 SMs))
// A100: gpu.func @[[Q]]({{.*}}nvvm.minctasm = 5
func.func @gy(%gy3: tensor<64x197x3072xf32>, %seed: i64)
    -> (tensor<12608x3072xi8>, tensor<f32>, tensor<6464x3072xi8>, tensor<f32>) {
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]]
      : tensor<64x197x3072xf32> into tensor<12608x3072xf32>
  %h = hot.hadamard %gy along 1 block 16 : tensor<12608x3072xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<12608x3072xf32> -> tensor<12608x3072xi8>, tensor<f32>
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail
      : tensor<64x197x3072xf32> -> tensor<64x101x3072xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]]
      : tensor<64x101x3072xf32> into tensor<6464x3072xf32>
  %q2, %s2 = hot.quantize %gyl2 bits 8 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<6464x3072xf32> -> tensor<6464x3072xi8>, tensor<f32>
  return %q, %s, %q2, %s2
      : tensor<12608x3072xi8>, tensor<f32>, tensor<6464x3072xi8>, tensor<f32>
}

// -----

// Per-channel scales (LQS): 4 channels per thread and no occupancy hint, so
// no count of resident blocks. The kernel reads the Scales kernel's scales, no
// partials to reduce, so each block takes one item: 832 rows.

// H200: remark: {{.*}}then @hot_lowrank_64x197x3072_{{[a-z0-9_]*}}_quantize_{{[a-z0-9_]*}} ({{.*}}; grid 3x832 over 832 items)

// -----

// With a per-tensor input quantize too (gx per tensor, gw per channel), the
// kernel reduces the statistics' partials as it starts: at most 1024 blocks,
// 1024 / 3 = 341 rows.

// H200: remark: {{.*}}then @hot_lowrank_64x197x3072_{{[a-z0-9_]*}}_quantize_in16{{[a-z0-9_]*}} ({{.*}}; grid 3x341 over 832 items)
func.func @gy_per_channel(%gy3: tensor<64x197x3072xf32>, %seed: i64)
    -> (tensor<6464x3072xi8>, tensor<3072xf32>) {
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail
      : tensor<64x197x3072xf32> -> tensor<64x101x3072xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]]
      : tensor<64x101x3072xf32> into tensor<6464x3072xf32>
  %q2, %s2 = hot.quantize %gyl2 bits 8 granularity per_col scale maxabs
      rounding stochastic seed %seed
      : tensor<6464x3072xf32> -> tensor<6464x3072xi8>, tensor<3072xf32>
  return %q2, %s2 : tensor<6464x3072xi8>, tensor<3072xf32>
}

func.func @gy_tensor_and_per_channel(%gy3: tensor<64x197x3072xf32>, %seed: i64)
    -> (tensor<12608x3072xi8>, tensor<f32>, tensor<6464x3072xi8>,
        tensor<3072xf32>) {
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]]
      : tensor<64x197x3072xf32> into tensor<12608x3072xf32>
  %h = hot.hadamard %gy along 1 block 16 : tensor<12608x3072xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<12608x3072xf32> -> tensor<12608x3072xi8>, tensor<f32>
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail
      : tensor<64x197x3072xf32> -> tensor<64x101x3072xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]]
      : tensor<64x101x3072xf32> into tensor<6464x3072xf32>
  %q2, %s2 = hot.quantize %gyl2 bits 8 granularity per_col scale maxabs
      rounding stochastic seed %seed
      : tensor<6464x3072xf32> -> tensor<6464x3072xi8>, tensor<3072xf32>
  return %q, %s, %q2, %s2
      : tensor<12608x3072xi8>, tensor<f32>, tensor<6464x3072xi8>,
        tensor<3072xf32>
}
