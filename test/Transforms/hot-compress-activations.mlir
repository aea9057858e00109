// RUN: hot-opt %s -hot-rewrite-backward-matmuls="remarks=false" -hot-compress-activations="forward=forward backward=backward" -verify-diagnostics | FileCheck %s
// RUN: not hot-opt %s -hot-compress-activations="forward=nothere backward=backward" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not hot-opt %s -hot-rewrite-backward-matmuls="remarks=false" -hot-compress-activations="forward=forward backward=backward forward-outputs=0" 2>&1 | FileCheck %s --check-prefix=OUTPUTS

// A split graph as AOTAutograd emits it: the forward returns its output, then
// the tensors it saves (h, Wᵀ); the backward takes them, then the tangent.
// ABC computes h's HLA'd INT8 codes in the forward; the forward returns them
// instead of h, and the backward takes them instead of h.

// CHECK-LABEL: func.func @forward
// CHECK-SAME: -> (tensor<2x16x32xf32>, tensor<8x32xf32>, tensor<16x8xi8>, tensor<f32>)
// CHECK: %[[H:.*]] = linalg.generic
// CHECK: hot.lowrank %{{.*}} along 1 block 16 rank 8 allow_tail
// CHECK: %[[Q:.*]], %[[S:.*]] = hot.quantize {{.*}}rounding nearest {hot.compressed
// CHECK: return %{{.*}}, %{{.*}}, %[[Q]], %[[S]]

// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[WT:[^:]*]]: tensor<8x32xf32>, %[[QX:[^:]*]]: tensor<16x8xi8> {hot.compressed_activation = "layer0"}, %[[SX:[^:]*]]: tensor<f32> {hot.compressed_activation = "layer0"}, %[[GY:[^:]*]]: tensor<2x16x32xf32>, %{{.*}}: i64 {hot.seed})
// CHECK-NOT: hot.lowrank %{{.*}} : tensor<2x16x8xf32>
// CHECK: hot.int_matmul %{{.*}} transposed, %[[QX]]
// CHECK: hot.rescale %{{.*}}, %{{.*}}, %[[SX]]

// BAD: hot-compress-activations: forward='nothere' and backward='backward' must name two functions with bodies
// A forward-outputs that pairs saved tensors with the wrong arguments is an
// error before anything is moved, not invalid IR.
// OUTPUTS: error: hot-compress-activations: with forward-outputs=0, result 0 of @forward, of type 'tensor<2x16x32xf32>', would be argument 0 of @backward, of type 'tensor<2x16x8xf32>': forward-outputs must count the results that are not saved tensors
func.func @forward(%x: tensor<2x16x8xf32>, %w: tensor<32x8xf32>)
    -> (tensor<2x16x32xf32>, tensor<2x16x8xf32>, tensor<8x32xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x8xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(b, t, d) -> (b, t, d)>, affine_map<(b, t, d) -> (b, t, d)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x16x8xf32>) outs(%e : tensor<2x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %cst : f32
    linalg.yield %r : f32
  } -> tensor<2x16x8xf32>
  %e0 = tensor.empty() : tensor<8x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x8xf32>) outs(%e0 : tensor<8x32xf32>) permutation = [1, 0]
  %h2 = tensor.collapse_shape %h [[0, 1], [2]] : tensor<2x16x8xf32> into tensor<32x8xf32>
  %e1 = tensor.empty() : tensor<32x32xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %y2 = linalg.matmul ins(%h2, %wt : tensor<32x8xf32>, tensor<8x32xf32>) outs(%z1 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [2, 16, 32] : tensor<32x32xf32> into tensor<2x16x32xf32>
  return %y, %h, %wt : tensor<2x16x32xf32>, tensor<2x16x8xf32>, tensor<8x32xf32>
}

// expected-remark @+1 {{layer0: saved activation compressed in @forward (it returns the INT8 codes and their scale instead of x)}}
func.func @backward(%h: tensor<2x16x8xf32>, %wt: tensor<8x32xf32>, %gy3: tensor<2x16x32xf32>)
    -> (tensor<2x16x8xf32>, tensor<32x8xf32>) {
  %cst = arith.constant 0.0 : f32
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]] : tensor<2x16x32xf32> into tensor<32x32xf32>
  %e0 = tensor.empty() : tensor<32x8xf32>
  %w = linalg.transpose ins(%wt : tensor<8x32xf32>) outs(%e0 : tensor<32x8xf32>) permutation = [1, 0]
  %z2 = linalg.fill ins(%cst : f32) outs(%e0 : tensor<32x8xf32>) -> tensor<32x8xf32>
  %gx2 = linalg.matmul ins(%gy, %w : tensor<32x32xf32>, tensor<32x8xf32>) outs(%z2 : tensor<32x8xf32>) -> tensor<32x8xf32>
  %gx = tensor.expand_shape %gx2 [[0, 1], [2]] output_shape [2, 16, 8] : tensor<32x8xf32> into tensor<2x16x8xf32>
  %e3 = tensor.empty() : tensor<32x32xf32>
  %gyt = linalg.transpose ins(%gy : tensor<32x32xf32>) outs(%e3 : tensor<32x32xf32>) permutation = [1, 0]
  %h2 = tensor.collapse_shape %h [[0, 1], [2]] : tensor<2x16x8xf32> into tensor<32x8xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e0 : tensor<32x8xf32>) -> tensor<32x8xf32>
  %gw = linalg.matmul ins(%gyt, %h2 : tensor<32x32xf32>, tensor<32x8xf32>) outs(%z4 : tensor<32x8xf32>) -> tensor<32x8xf32>
  return %gx, %gw : tensor<2x16x8xf32>, tensor<32x8xf32>
}
