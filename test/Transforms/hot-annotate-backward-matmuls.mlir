// RUN: hot-opt %s -split-input-file -hot-annotate-backward-matmuls -verify-diagnostics | FileCheck %s

// One linear layer in torch-mlir's shapes: transposes are separate ops.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: hot.original_peak_live_bytes
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "mine", role = forward>}
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "mine", role = gx>}
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "mine", role = gw, bits = 4>}
func.func @linear(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %gy: tensor<8x32xf32>)
    -> (tensor<8x32xf32>, tensor<8x16xf32>, tensor<32x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x16xf32>) outs(%e0 : tensor<16x32xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<8x32xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // expected-remark @+1 {{mine: forward y = x·Wᵀ (O = 32, I = 16)}}
  %y = linalg.matmul ins(%x, %wt : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-remark @+1 {{mine: gx = gy·W over O (O = 32, I = 16)}}
  %gx = linalg.matmul ins(%gy, %w : tensor<8x32xf32>, tensor<32x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e3 = tensor.empty() : tensor<32x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x32xf32>) outs(%e3 : tensor<32x8xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<32x16xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<32x16xf32>) -> tensor<32x16xf32>
  // An override and a name written by the user survive re-annotation: the
  // layer is named after its tagged product.
  // expected-remark @+1 {{mine: gw = gyᵀ·x over 8 tokens [8] (O = 32, I = 16); gy and x told apart by torch's convention (gw laid out [O, I]; nothing in the graph tells them apart)}}
  %gw = linalg.matmul {hot.layer = #hot.layer<name = "mine", role = gw, bits = 4>}
      ins(%gyt, %x : tensor<32x8xf32>, tensor<8x16xf32>) outs(%z4 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %y, %gx, %gw : tensor<8x32xf32>, tensor<8x16xf32>, tensor<32x16xf32>
}

// -----

// MLIR 22's form: transposes in the indexing maps; [B, T, D] activations
// flattened by collapse_shape. A backward without its forward: gy is the
// operand that meets the weight.
// CHECK-LABEL: func.func @maps_and_tokens
// CHECK: role = gx
// CHECK: role = gw
func.func @maps_and_tokens(%x3: tensor<2x17x16xf32>, %w: tensor<32x16xf32>, %gy3: tensor<2x17x32xf32>)
    -> (tensor<34x16xf32>, tensor<32x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %x = tensor.collapse_shape %x3 [[0, 1], [2]] : tensor<2x17x16xf32> into tensor<34x16xf32>
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]] : tensor<2x17x32xf32> into tensor<34x32xf32>
  %e2 = tensor.empty() : tensor<34x16xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<34x16xf32>) -> tensor<34x16xf32>
  // expected-remark @+1 {{layer0: gx = gy·W over O (O = 32, I = 16)}}
  %gx = linalg.matmul ins(%gy, %w : tensor<34x32xf32>, tensor<32x16xf32>) outs(%z2 : tensor<34x16xf32>) -> tensor<34x16xf32>
  %e4 = tensor.empty() : tensor<32x16xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<32x16xf32>) -> tensor<32x16xf32>
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 34 tokens [2x17] (O = 32, I = 16); gy and x told apart by gy alone meeting a weight (a backward graph without its forward)}}
  %gw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%gy, %x : tensor<34x32xf32>, tensor<34x16xf32>) outs(%z4 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %e5 = tensor.empty() : tensor<32x16xf32>
  %twice = linalg.add ins(%gw, %gw : tensor<32x16xf32>, tensor<32x16xf32>) outs(%e5 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %gx, %twice : tensor<34x16xf32>, tensor<32x16xf32>
}

// -----

// JAX's layout (kernels [I, O]): the forward x·K has the form of torch's gx,
// JAX's gx gy·Kᵀ that of torch's forward, and the weight gradient xᵀ·gy is
// returned as [I, O]. The graph tells them apart: gy is computed from x.
// CHECK-LABEL: func.func @jax_joint
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer0", role = forward>} ins(%arg0, %arg1
// CHECK: role = gx>} ins(%[[GY:[0-9]+]], %arg1
// CHECK: role = gw>} ins(%arg0, %[[GY]] :
func.func @jax_joint(%x: tensor<8x16xf32>, %k: tensor<16x32xf32>, %t: tensor<8x32xf32>)
    -> (tensor<8x16xf32>, tensor<16x32xf32>) {
  %cst = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x32xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // expected-remark @+1 {{layer0: forward y = x·Wᵀ (O = 32, I = 16), W laid out [I, O]}}
  %y = linalg.matmul ins(%x, %k : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // The gradient of |y - t|²/2.
  %gy = linalg.sub ins(%y, %t : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-remark @+1 {{layer0: gx = gy·W over O (O = 32, I = 16), W laid out [I, O]}}
  %gx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%gy, %k : tensor<8x32xf32>, tensor<16x32xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e3 = tensor.empty() : tensor<16x32xf32>
  %z3 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 8 tokens [8] (O = 32, I = 16); gy and x told apart by gy being computed from x}}
  %gw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %gy : tensor<8x16xf32>, tensor<8x32xf32>) outs(%z3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %gx, %gw : tensor<8x16xf32>, tensor<16x32xf32>
}

// -----

// A loss linear in y (y.sum()) makes gy a constant: it is still told from x,
// so the forward of a first layer (no gx) is not taken for a gx.
// CHECK-LABEL: func.func @jax_sum_loss
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer0", role = forward>}
// CHECK-NOT: role = gx
// CHECK: role = gw
func.func @jax_sum_loss(%x: tensor<8x16xf32>, %k: tensor<16x32xf32>)
    -> (tensor<8x32xf32>, tensor<16x32xf32>) {
  %cst = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e1 = tensor.empty() : tensor<8x32xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // expected-remark @+1 {{layer0: forward y = x·Wᵀ (O = 32, I = 16), W laid out [I, O]}}
  %y = linalg.matmul ins(%x, %k : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %gy = linalg.fill ins(%one : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e3 = tensor.empty() : tensor<16x32xf32>
  %z3 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 8 tokens [8] (O = 32, I = 16); gy and x told apart by gy being computed from no argument (a loss linear in y)}}
  %gw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %gy : tensor<8x16xf32>, tensor<8x32xf32>) outs(%z3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y, %gw : tensor<8x32xf32>, tensor<16x32xf32>
}

// -----

// JAX's backward alone (gy and x arguments): gy is the operand that meets the
// kernel, although the returned [I, O] gradient has x's dim first.
// CHECK-LABEL: func.func @jax_backward
// CHECK: role = gx>} ins(%arg2, %arg1
// CHECK: role = gw>} ins(%arg0, %arg2
func.func @jax_backward(%x: tensor<8x16xf32>, %k: tensor<16x32xf32>, %gy: tensor<8x32xf32>)
    -> (tensor<8x16xf32>, tensor<16x32xf32>) {
  %cst = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x16xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-remark @+1 {{layer0: gx = gy·W over O (O = 32, I = 16), W laid out [I, O]}}
  %gx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%gy, %k : tensor<8x32xf32>, tensor<16x32xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e3 = tensor.empty() : tensor<16x32xf32>
  %z3 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 8 tokens [8] (O = 32, I = 16); gy and x told apart by gy alone meeting a weight (a backward graph without its forward)}}
  %gw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %gy : tensor<8x16xf32>, tensor<8x32xf32>) outs(%z3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %gx, %gw : tensor<8x16xf32>, tensor<16x32xf32>
}

// -----

// Two layers summed into one output (a parallel attention + MLP block) share
// gy: each gw is paired with the gx of the weight its x meets.
// CHECK-LABEL: func.func @parallel_layers
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer0", role = forward>} ins(%arg0, %[[W1T:[a-z_0-9]+]] :
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer1", role = forward>} ins(%arg1, %[[W2T:[a-z_0-9]+]] :
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer1", role = gx>} ins(%{{.*}}, %arg3 :
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer0", role = gx>} ins(%{{.*}}, %arg2 :
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer0", role = gw>} ins(%{{.*}}, %arg0 :
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer1", role = gw>} ins(%{{.*}}, %arg1 :
func.func @parallel_layers(%x1: tensor<8x16xf32>, %x2: tensor<8x16xf32>, %w1: tensor<16x16xf32>,
                           %w2: tensor<16x16xf32>, %t: tensor<8x16xf32>)
    -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %ew = tensor.empty() : tensor<16x16xf32>
  %w1t = linalg.transpose ins(%w1 : tensor<16x16xf32>) outs(%ew : tensor<16x16xf32>) permutation = [1, 0]
  %w2t = linalg.transpose ins(%w2 : tensor<16x16xf32>) outs(%ew : tensor<16x16xf32>) permutation = [1, 0]
  // expected-remark @+1 {{layer0: forward y = x·Wᵀ (O = 16, I = 16)}}
  %y1 = linalg.matmul ins(%x1, %w1t : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-remark @+1 {{layer1: forward y = x·Wᵀ (O = 16, I = 16)}}
  %y2 = linalg.matmul ins(%x2, %w2t : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.add ins(%y1, %y2 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %gy = linalg.sub ins(%y, %t : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-remark @+1 {{layer1: gx = gy·W over O (O = 16, I = 16)}}
  %gx2 = linalg.matmul ins(%gy, %w2 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-remark @+1 {{layer0: gx = gy·W over O (O = 16, I = 16)}}
  %gx1 = linalg.matmul ins(%gy, %w1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  %et = tensor.empty() : tensor<16x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x16xf32>) outs(%et : tensor<16x8xf32>) permutation = [1, 0]
  %zw = linalg.fill ins(%cst : f32) outs(%ew : tensor<16x16xf32>) -> tensor<16x16xf32>
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 8 tokens [8] (O = 16, I = 16); gy and x told apart by gy being computed from x}}
  %gw1 = linalg.matmul ins(%gyt, %x1 : tensor<16x8xf32>, tensor<8x16xf32>) outs(%zw : tensor<16x16xf32>) -> tensor<16x16xf32>
  // expected-remark @+1 {{layer1: gw = gyᵀ·x over 8 tokens [8] (O = 16, I = 16); gy and x told apart by gy being computed from x}}
  %gw2 = linalg.matmul ins(%gyt, %x2 : tensor<16x8xf32>, tensor<8x16xf32>) outs(%zw : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %gx1, %gx2, %gw1, %gw2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// Products over tokens that are not weight gradients: a Gram matrix (style
// losses, second-order statistics), and single-head attention's gradient of
// v, which the v projection's gx and gw then contract.
// CHECK-LABEL: func.func @not_weight_gradients
// CHECK-COUNT-2: linalg.matmul ins
// CHECK: role = gx
// CHECK: role = gw
func.func @not_weight_gradients(%x: tensor<8x16xf32>, %attn: tensor<8x8xf32>, %gout: tensor<8x16xf32>,
                                %wv: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<8x16xf32>, tensor<16x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<16x8xf32>
  %xt = linalg.transpose ins(%x : tensor<8x16xf32>) outs(%et : tensor<16x8xf32>) permutation = [1, 0]
  %ew = tensor.empty() : tensor<16x16xf32>
  %zw = linalg.fill ins(%cst : f32) outs(%ew : tensor<16x16xf32>) -> tensor<16x16xf32>
  // expected-remark @+1 {{not rewritten: a Gram matrix (a value against itself, as in style losses or second-order statistics), not a weight gradient}}
  %gram = linalg.matmul ins(%xt, %x : tensor<16x8xf32>, tensor<8x16xf32>) outs(%zw : tensor<16x16xf32>) -> tensor<16x16xf32>
  %ea = tensor.empty() : tensor<8x8xf32>
  %attnt = linalg.transpose ins(%attn : tensor<8x8xf32>) outs(%ea : tensor<8x8xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-remark @+1 {{not rewritten: a product over tokens whose result is an operand of another product (an activation's gradient, as in attention), not a weight gradient}}
  %gv = linalg.matmul ins(%attnt, %gout : tensor<8x8xf32>, tensor<8x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-remark @+1 {{layer0: gx = gy·W over O (O = 16, I = 16)}}
  %gx = linalg.matmul ins(%gv, %wv : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  %gvt = linalg.transpose ins(%gv : tensor<8x16xf32>) outs(%et : tensor<16x8xf32>) permutation = [1, 0]
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 8 tokens [8] (O = 16, I = 16); gy and x told apart by gy alone meeting a weight (a backward graph without its forward)}}
  %gw = linalg.matmul ins(%gvt, %x : tensor<16x8xf32>, tensor<8x16xf32>) outs(%zw : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %gram, %gx, %gw : tensor<16x16xf32>, tensor<8x16xf32>, tensor<16x16xf32>
}

// -----

// x feeds a frozen layer (no weight gradient) and a trained one without a
// gx: the trained layer's forward is the product with a weight of its shape.
// CHECK-LABEL: func.func @frozen_beside_trained
// CHECK: linalg.matmul ins(%arg0, %{{.*}} : tensor<8x16xf32>, tensor<16x32xf32>)
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer0", role = forward>} ins(%arg0, %{{.*}} : tensor<8x16xf32>, tensor<16x24xf32>)
func.func @frozen_beside_trained(%x: tensor<8x16xf32>, %frozen: tensor<32x16xf32>, %w: tensor<24x16xf32>,
                                 %t: tensor<8x24xf32>) -> (tensor<8x32xf32>, tensor<24x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x32xf32>
  %frozent = linalg.transpose ins(%frozen : tensor<32x16xf32>) outs(%e1 : tensor<16x32xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<8x32xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // expected-remark @+1 {{not rewritten: not part of a linear layer}}
  %y1 = linalg.matmul ins(%x, %frozent : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e3 = tensor.empty() : tensor<16x24xf32>
  %wt = linalg.transpose ins(%w : tensor<24x16xf32>) outs(%e3 : tensor<16x24xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<8x24xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<8x24xf32>) -> tensor<8x24xf32>
  // expected-remark @+1 {{layer0: forward y = x·Wᵀ (O = 24, I = 16)}}
  %y2 = linalg.matmul ins(%x, %wt : tensor<8x16xf32>, tensor<16x24xf32>) outs(%z4 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %gy = linalg.sub ins(%y2, %t : tensor<8x24xf32>, tensor<8x24xf32>) outs(%e4 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %e5 = tensor.empty() : tensor<24x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x24xf32>) outs(%e5 : tensor<24x8xf32>) permutation = [1, 0]
  %e6 = tensor.empty() : tensor<24x16xf32>
  %z6 = linalg.fill ins(%cst : f32) outs(%e6 : tensor<24x16xf32>) -> tensor<24x16xf32>
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 8 tokens [8] (O = 24, I = 16); gy and x told apart by gy being computed from x}}
  %gw = linalg.matmul ins(%gyt, %x : tensor<24x8xf32>, tensor<8x16xf32>) outs(%z6 : tensor<24x16xf32>) -> tensor<24x16xf32>
  return %y1, %gw : tensor<8x32xf32>, tensor<24x16xf32>
}

// -----

// JAX's backward alone, two layers: the first has no gx, and nothing in the
// graph tells its gy from its x but the layout of the other layer's weight
// gradient (x's dim first: [I, O]).
// CHECK-LABEL: func.func @jax_backward_chain
// CHECK: role = gw>} ins(%arg1, %arg3 :
// CHECK: role = gx>} ins(%arg3, %arg2 :
// CHECK: role = gw>} ins(%arg0, %{{.*}} : tensor<8x16xf32>, tensor<8x32xf32>)
func.func @jax_backward_chain(%x: tensor<8x16xf32>, %h: tensor<8x32xf32>, %k2: tensor<32x24xf32>,
                              %gy2: tensor<8x24xf32>, %mask: tensor<8x32xf32>)
    -> (tensor<16x32xf32>, tensor<32x24xf32>) {
  %cst = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<32x24xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<32x24xf32>) -> tensor<32x24xf32>
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 8 tokens [8] (O = 24, I = 32); gy and x told apart by gy alone meeting a weight (a backward graph without its forward)}}
  %gw2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%h, %gy2 : tensor<8x32xf32>, tensor<8x24xf32>) outs(%z2 : tensor<32x24xf32>) -> tensor<32x24xf32>
  %e = tensor.empty() : tensor<8x32xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  // expected-remark @+1 {{layer0: gx = gy·W over O (O = 24, I = 32), W laid out [I, O]}}
  %gx2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%gy2, %k2 : tensor<8x24xf32>, tensor<32x24xf32>) outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
  %gy1 = linalg.mul ins(%gx2, %mask : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e1 = tensor.empty() : tensor<16x32xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<16x32xf32>) -> tensor<16x32xf32>
  // expected-remark @+1 {{layer1: gw = gyᵀ·x over 8 tokens [8] (O = 32, I = 16); gy and x told apart by the layout of the function's other weight gradients (x's dim first)}}
  %gw1 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %gy1 : tensor<8x16xf32>, tensor<8x32xf32>) outs(%z1 : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %gw1, %gw2 : tensor<16x32xf32>, tensor<32x24xf32>
}

// -----

// Attention products (batched, both operands activations) are left alone.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: hot.layer
func.func @attention(%q: tensor<4x17x8xf32>, %k: tensor<4x8x17xf32>) -> tensor<4x17x17xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x17x17xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<4x17x17xf32>) -> tensor<4x17x17xf32>
  // expected-remark @+1 {{not rewritten: a batched product (both operands carry the batch dims, as in attention); not a linear layer}}
  %s = linalg.batch_matmul ins(%q, %k : tensor<4x17x8xf32>, tensor<4x8x17xf32>) outs(%z : tensor<4x17x17xf32>) -> tensor<4x17x17xf32>
  return %s : tensor<4x17x17xf32>
}

// -----

// A "weight" computed in the graph (an activation) is not a parameter: the
// product over O is left alone, the weight gradient is still found.
// CHECK-LABEL: func.func @weight_is_activation
// CHECK: linalg.matmul ins
// CHECK: role = gw
func.func @weight_is_activation(%x: tensor<8x16xf32>, %a: tensor<32x16xf32>, %gy: tensor<8x32xf32>)
    -> (tensor<8x16xf32>, tensor<32x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %act = linalg.exp ins(%a : tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-remark @+1 {{not rewritten: its weight operand is computed in the graph, not a parameter (function argument)}}
  %gx = linalg.matmul ins(%gy, %act : tensor<8x32xf32>, tensor<32x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e3 = tensor.empty() : tensor<32x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x32xf32>) outs(%e3 : tensor<32x8xf32>) permutation = [1, 0]
  %z4 = linalg.fill ins(%cst : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 8 tokens [8] (O = 32, I = 16)}}
  %gw = linalg.matmul ins(%gyt, %x : tensor<32x8xf32>, tensor<8x16xf32>) outs(%z4 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %gx, %gw : tensor<8x16xf32>, tensor<32x16xf32>
}

// -----

// Dynamic shapes are skipped with a remark; a lone product has no layer.
// CHECK-LABEL: func.func @dynamic_and_lone
// CHECK-NOT: hot.layer
func.func @dynamic_and_lone(%x: tensor<?x16xf32>, %w: tensor<16x32xf32>, %init: tensor<?x32xf32>,
                            %a: tensor<8x16xf32>, %init2: tensor<8x32xf32>) -> (tensor<?x32xf32>, tensor<8x32xf32>) {
  // expected-remark @+1 {{not rewritten: dynamic shapes are not supported}}
  %y = linalg.matmul ins(%x, %w : tensor<?x16xf32>, tensor<16x32xf32>) outs(%init : tensor<?x32xf32>) -> tensor<?x32xf32>
  // expected-remark @+1 {{not rewritten: not part of a linear layer: no weight-gradient product (a contraction over tokens) shares its operands}}
  %z = linalg.matmul ins(%a, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%init2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %y, %z : tensor<?x32xf32>, tensor<8x32xf32>
}

// -----

// LoRA on a layer above a trained one: y = h·W1ᵀ + (h·Aᵀ)·Bᵀ with W1 frozen.
// A and B are layers with gw; W1 has none, but layer0's gw needs gh, so the
// backward computes gy·W1: a frozen layer's gx, found as the product of a
// parameter with a gradient computed from its own forward.
// CHECK-LABEL: func.func @lora
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer1", role = forward>} ins(%{{.*}}, %{{.*}} : tensor<8x32xf32>, tensor<32x24xf32>)
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer1", role = gx>} ins(%{{.*}}, %arg2 : tensor<8x24xf32>, tensor<24x32xf32>)
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer2", role = gx>} ins(%{{.*}}, %arg3 : tensor<8x4xf32>, tensor<4x32xf32>)
func.func @lora(%x: tensor<8x16xf32>, %w0: tensor<32x16xf32>, %w1: tensor<24x32xf32>,
                %a: tensor<4x32xf32>, %b: tensor<24x4xf32>, %t: tensor<8x24xf32>)
    -> (tensor<32x16xf32>, tensor<4x32xf32>, tensor<24x4xf32>) {
  %cst = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x32xf32>
  %w0t = linalg.transpose ins(%w0 : tensor<32x16xf32>) outs(%e0 : tensor<16x32xf32>) permutation = [1, 0]
  %e832 = tensor.empty() : tensor<8x32xf32>
  %z832 = linalg.fill ins(%cst : f32) outs(%e832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // expected-remark @+1 {{layer0: forward y = x·Wᵀ (O = 32, I = 16)}}
  %h = linalg.matmul ins(%x, %w0t : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e1 = tensor.empty() : tensor<32x24xf32>
  %w1t = linalg.transpose ins(%w1 : tensor<24x32xf32>) outs(%e1 : tensor<32x24xf32>) permutation = [1, 0]
  %e824 = tensor.empty() : tensor<8x24xf32>
  %z824 = linalg.fill ins(%cst : f32) outs(%e824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  // expected-remark @+1 {{layer1: forward y = x·Wᵀ (O = 24, I = 32)}}
  %yb = linalg.matmul ins(%h, %w1t : tensor<8x32xf32>, tensor<32x24xf32>) outs(%z824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %ea = tensor.empty() : tensor<32x4xf32>
  %at = linalg.transpose ins(%a : tensor<4x32xf32>) outs(%ea : tensor<32x4xf32>) permutation = [1, 0]
  %e84 = tensor.empty() : tensor<8x4xf32>
  %z84 = linalg.fill ins(%cst : f32) outs(%e84 : tensor<8x4xf32>) -> tensor<8x4xf32>
  // expected-remark @+1 {{layer2: forward y = x·Wᵀ (O = 4, I = 32)}}
  %u = linalg.matmul ins(%h, %at : tensor<8x32xf32>, tensor<32x4xf32>) outs(%z84 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %eb = tensor.empty() : tensor<4x24xf32>
  %bt = linalg.transpose ins(%b : tensor<24x4xf32>) outs(%eb : tensor<4x24xf32>) permutation = [1, 0]
  // expected-remark @+1 {{layer3: forward y = x·Wᵀ (O = 24, I = 4)}}
  %yl = linalg.matmul ins(%u, %bt : tensor<8x4xf32>, tensor<4x24xf32>) outs(%z824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %y = linalg.add ins(%yb, %yl : tensor<8x24xf32>, tensor<8x24xf32>) outs(%e824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %gy = linalg.sub ins(%y, %t : tensor<8x24xf32>, tensor<8x24xf32>) outs(%e824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %e248 = tensor.empty() : tensor<24x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x24xf32>) outs(%e248 : tensor<24x8xf32>) permutation = [1, 0]
  %e244 = tensor.empty() : tensor<24x4xf32>
  %z244 = linalg.fill ins(%cst : f32) outs(%e244 : tensor<24x4xf32>) -> tensor<24x4xf32>
  // expected-remark @+1 {{layer3: gw = gyᵀ·x over 8 tokens [8] (O = 24, I = 4); gy and x told apart by gy being computed from x}}
  %gb = linalg.matmul ins(%gyt, %u : tensor<24x8xf32>, tensor<8x4xf32>) outs(%z244 : tensor<24x4xf32>) -> tensor<24x4xf32>
  // expected-remark @+1 {{layer3: gx = gy·W over O (O = 24, I = 4)}}
  %gu = linalg.matmul ins(%gy, %b : tensor<8x24xf32>, tensor<24x4xf32>) outs(%z84 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e48 = tensor.empty() : tensor<4x8xf32>
  %gut = linalg.transpose ins(%gu : tensor<8x4xf32>) outs(%e48 : tensor<4x8xf32>) permutation = [1, 0]
  %e432 = tensor.empty() : tensor<4x32xf32>
  %z432 = linalg.fill ins(%cst : f32) outs(%e432 : tensor<4x32xf32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{layer2: gw = gyᵀ·x over 8 tokens [8] (O = 4, I = 32); gy and x told apart by gy being computed from x}}
  %ga = linalg.matmul ins(%gut, %h : tensor<4x8xf32>, tensor<8x32xf32>) outs(%z432 : tensor<4x32xf32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{layer1: gx = gy·W over O (O = 24, I = 32); W is frozen (no gw), gy told by gy being computed from the layer's forward y = x·Wᵀ}}
  %ghb = linalg.matmul ins(%gy, %w1 : tensor<8x24xf32>, tensor<24x32xf32>) outs(%z832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // expected-remark @+1 {{layer2: gx = gy·W over O (O = 4, I = 32)}}
  %ghl = linalg.matmul ins(%gu, %a : tensor<8x4xf32>, tensor<4x32xf32>) outs(%z832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %gh = linalg.add ins(%ghb, %ghl : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e328 = tensor.empty() : tensor<32x8xf32>
  %ght = linalg.transpose ins(%gh : tensor<8x32xf32>) outs(%e328 : tensor<32x8xf32>) permutation = [1, 0]
  %e3216 = tensor.empty() : tensor<32x16xf32>
  %z3216 = linalg.fill ins(%cst : f32) outs(%e3216 : tensor<32x16xf32>) -> tensor<32x16xf32>
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 8 tokens [8] (O = 32, I = 16); gy and x told apart by gy being computed from x}}
  %gw0 = linalg.matmul ins(%ght, %x : tensor<32x8xf32>, tensor<8x16xf32>) outs(%z3216 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %gw0, %ga, %gb : tensor<32x16xf32>, tensor<4x32xf32>, tensor<24x4xf32>
}


// -----

// A frozen head above a trained layer, its kernel laid out [I, O] as JAX
// lays it out: the head's gx is found from its forward, and O and I from
// which dim of the kernel gx contracts.
// CHECK-LABEL: func.func @frozen_head
// CHECK: role = forward>} ins(%{{.*}}, %arg2 : tensor<8x32xf32>, tensor<32x24xf32>)
// CHECK: {hot.layer = #hot.layer<name = "layer1", role = gx>} ins(%{{.*}}, %arg2 : tensor<8x24xf32>, tensor<32x24xf32>)
func.func @frozen_head(%x: tensor<8x16xf32>, %w0: tensor<32x16xf32>, %k: tensor<32x24xf32>,
                       %t: tensor<8x24xf32>) -> tensor<32x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x32xf32>
  %w0t = linalg.transpose ins(%w0 : tensor<32x16xf32>) outs(%e0 : tensor<16x32xf32>) permutation = [1, 0]
  %e832 = tensor.empty() : tensor<8x32xf32>
  %z832 = linalg.fill ins(%cst : f32) outs(%e832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // expected-remark @+1 {{layer0: forward y = x·Wᵀ (O = 32, I = 16)}}
  %h = linalg.matmul ins(%x, %w0t : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e824 = tensor.empty() : tensor<8x24xf32>
  %z824 = linalg.fill ins(%cst : f32) outs(%e824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  // expected-remark @+1 {{layer1: forward y = x·Wᵀ (O = 24, I = 32), W laid out [I, O]}}
  %y = linalg.matmul ins(%h, %k : tensor<8x32xf32>, tensor<32x24xf32>) outs(%z824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %gy = linalg.sub ins(%y, %t : tensor<8x24xf32>, tensor<8x24xf32>) outs(%e824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  // expected-remark @+1 {{layer1: gx = gy·W over O (O = 24, I = 32), W laid out [I, O]; W is frozen (no gw), gy told by gy being computed from the layer's forward y = x·Wᵀ}}
  %gh = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%gy, %k : tensor<8x24xf32>, tensor<32x24xf32>) outs(%z832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e328 = tensor.empty() : tensor<32x8xf32>
  %ght = linalg.transpose ins(%gh : tensor<8x32xf32>) outs(%e328 : tensor<32x8xf32>) permutation = [1, 0]
  %e3216 = tensor.empty() : tensor<32x16xf32>
  %z3216 = linalg.fill ins(%cst : f32) outs(%e3216 : tensor<32x16xf32>) -> tensor<32x16xf32>
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 8 tokens [8] (O = 32, I = 16); gy and x told apart by gy being computed from x}}
  %gw0 = linalg.matmul ins(%ght, %x : tensor<32x8xf32>, tensor<8x16xf32>) outs(%z3216 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %gw0 : tensor<32x16xf32>
}


// -----

// A backward graph alone (torch's split graphs) with a frozen layer between
// two trained ones: the frozen gx has no forward to be found from, but its
// gy is computed from the gy of the layer above.
// CHECK-LABEL: func.func @frozen_backward
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer1", role = gx>} ins(%{{.*}}, %arg3 : tensor<8x24xf32>, tensor<24x32xf32>)
func.func @frozen_backward(%x: tensor<8x16xf32>, %h2: tensor<8x24xf32>, %mask: tensor<8x24xf32>,
                           %w1: tensor<24x32xf32>, %w2: tensor<10x24xf32>, %gy2: tensor<8x10xf32>)
    -> (tensor<32x16xf32>, tensor<10x24xf32>) {
  %cst = arith.constant 0.0 : f32
  %e108 = tensor.empty() : tensor<10x8xf32>
  %gy2t = linalg.transpose ins(%gy2 : tensor<8x10xf32>) outs(%e108 : tensor<10x8xf32>) permutation = [1, 0]
  %e1024 = tensor.empty() : tensor<10x24xf32>
  %z1024 = linalg.fill ins(%cst : f32) outs(%e1024 : tensor<10x24xf32>) -> tensor<10x24xf32>
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 8 tokens [8] (O = 10, I = 24); gy and x told apart by gy alone meeting a weight (a backward graph without its forward)}}
  %gw2 = linalg.matmul ins(%gy2t, %h2 : tensor<10x8xf32>, tensor<8x24xf32>) outs(%z1024 : tensor<10x24xf32>) -> tensor<10x24xf32>
  %e824 = tensor.empty() : tensor<8x24xf32>
  %z824 = linalg.fill ins(%cst : f32) outs(%e824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  // expected-remark @+1 {{layer0: gx = gy·W over O (O = 10, I = 24)}}
  %gh2 = linalg.matmul ins(%gy2, %w2 : tensor<8x10xf32>, tensor<10x24xf32>) outs(%z824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %gy1 = linalg.mul ins(%gh2, %mask : tensor<8x24xf32>, tensor<8x24xf32>) outs(%e824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %e832 = tensor.empty() : tensor<8x32xf32>
  %z832 = linalg.fill ins(%cst : f32) outs(%e832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // expected-remark @+1 {{layer1: gx = gy·W over O (O = 24, I = 32); W is frozen (no gw), gy told by gy being computed from the gradients of a backward graph without its forward}}
  %gh1 = linalg.matmul ins(%gy1, %w1 : tensor<8x24xf32>, tensor<24x32xf32>) outs(%z832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e328 = tensor.empty() : tensor<32x8xf32>
  %gh1t = linalg.transpose ins(%gh1 : tensor<8x32xf32>) outs(%e328 : tensor<32x8xf32>) permutation = [1, 0]
  %e3216 = tensor.empty() : tensor<32x16xf32>
  %z3216 = linalg.fill ins(%cst : f32) outs(%e3216 : tensor<32x16xf32>) -> tensor<32x16xf32>
  // expected-remark @+1 {{layer2: gw = gyᵀ·x over 8 tokens [8] (O = 32, I = 16); gy and x told apart by the layout of the function's other weight gradients (gy's dim first)}}
  %gw0 = linalg.matmul ins(%gh1t, %x : tensor<32x8xf32>, tensor<8x16xf32>) outs(%z3216 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %gw0, %gw2 : tensor<32x16xf32>, tensor<10x24xf32>
}


// -----

// A backward graph alone whose frozen layer lies above every trained one
// (LoRA below a frozen top block): no layer's gy meets it, but its gy is an
// argument that the trained layer's gy is computed from and its x is not,
// the gradient the graph receives.
// CHECK-LABEL: func.func @frozen_top_backward
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer0", role = gx>} ins(%arg3, %arg2 : tensor<8x24xf32>, tensor<24x32xf32>)
func.func @frozen_top_backward(%x: tensor<8x16xf32>, %mask: tensor<8x32xf32>, %w2: tensor<24x32xf32>,
                               %gy: tensor<8x24xf32>) -> tensor<32x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e832 = tensor.empty() : tensor<8x32xf32>
  %z832 = linalg.fill ins(%cst : f32) outs(%e832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // expected-remark @+1 {{layer0: gx = gy·W over O (O = 24, I = 32); W is frozen (no gw), gy told by gy being computed from the gradients of a backward graph without its forward}}
  %gh = linalg.matmul ins(%gy, %w2 : tensor<8x24xf32>, tensor<24x32xf32>) outs(%z832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %gy1 = linalg.mul ins(%gh, %mask : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e328 = tensor.empty() : tensor<32x8xf32>
  %gy1t = linalg.transpose ins(%gy1 : tensor<8x32xf32>) outs(%e328 : tensor<32x8xf32>) permutation = [1, 0]
  %e3216 = tensor.empty() : tensor<32x16xf32>
  %z3216 = linalg.fill ins(%cst : f32) outs(%e3216 : tensor<32x16xf32>) -> tensor<32x16xf32>
  // expected-remark @+1 {{layer1: gw = gyᵀ·x over 8 tokens [8] (O = 32, I = 16); gy and x told apart by torch's convention (gw laid out [O, I]; nothing in the graph tells them apart)}}
  %gw1 = linalg.matmul ins(%gy1t, %x : tensor<32x8xf32>, tensor<8x16xf32>) outs(%z3216 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %gw1 : tensor<32x16xf32>
}


// -----

// A frozen weight tied between a one-hot embedding (onehot·E) and the output
// head (h·Eᵀ): the head's h is computed from the embedding, so the head has
// the form of the embedding's gx. The gx ends the chain of E's products: the
// head is the forward of gy·E, and the embedding no layer's product.
// CHECK-LABEL: func.func @tied_frozen_head
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer1", role = forward>} ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x50xf32>)
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer1", role = gx>} ins(%{{.*}}, %arg1 : tensor<8x50xf32>, tensor<50x16xf32>)
func.func @tied_frozen_head(%onehot: tensor<8x50xf32>, %e: tensor<50x16xf32>, %w0: tensor<16x16xf32>,
                            %t: tensor<8x50xf32>) -> tensor<16x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e816 = tensor.empty() : tensor<8x16xf32>
  %z816 = linalg.fill ins(%cst : f32) outs(%e816 : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-remark @+1 {{not rewritten: not part of a linear layer: no weight-gradient product (a contraction over tokens) shares its operands, and no operand is a gradient against a parameter}}
  %emb = linalg.matmul ins(%onehot, %e : tensor<8x50xf32>, tensor<50x16xf32>) outs(%z816 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e1616 = tensor.empty() : tensor<16x16xf32>
  %w0t = linalg.transpose ins(%w0 : tensor<16x16xf32>) outs(%e1616 : tensor<16x16xf32>) permutation = [1, 0]
  // expected-remark @+1 {{layer0: forward y = x·Wᵀ (O = 16, I = 16)}}
  %h = linalg.matmul ins(%emb, %w0t : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z816 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e1650 = tensor.empty() : tensor<16x50xf32>
  %et = linalg.transpose ins(%e : tensor<50x16xf32>) outs(%e1650 : tensor<16x50xf32>) permutation = [1, 0]
  %e850 = tensor.empty() : tensor<8x50xf32>
  %z850 = linalg.fill ins(%cst : f32) outs(%e850 : tensor<8x50xf32>) -> tensor<8x50xf32>
  // expected-remark @+1 {{layer1: forward y = x·Wᵀ (O = 50, I = 16)}}
  %logits = linalg.matmul ins(%h, %et : tensor<8x16xf32>, tensor<16x50xf32>) outs(%z850 : tensor<8x50xf32>) -> tensor<8x50xf32>
  %gy = linalg.sub ins(%logits, %t : tensor<8x50xf32>, tensor<8x50xf32>) outs(%e850 : tensor<8x50xf32>) -> tensor<8x50xf32>
  // expected-remark @+1 {{layer1: gx = gy·W over O (O = 50, I = 16); W is frozen (no gw), gy told by gy being computed from the layer's forward y = x·Wᵀ}}
  %gh = linalg.matmul ins(%gy, %e : tensor<8x50xf32>, tensor<50x16xf32>) outs(%z816 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e168 = tensor.empty() : tensor<16x8xf32>
  %ght = linalg.transpose ins(%gh : tensor<8x16xf32>) outs(%e168 : tensor<16x8xf32>) permutation = [1, 0]
  %z1616 = linalg.fill ins(%cst : f32) outs(%e1616 : tensor<16x16xf32>) -> tensor<16x16xf32>
  // expected-remark @+1 {{layer0: gw = gyᵀ·x over 8 tokens [8] (O = 16, I = 16); gy and x told apart by gy being computed from x}}
  %gw0 = linalg.matmul ins(%ght, %emb : tensor<16x8xf32>, tensor<8x16xf32>) outs(%z1616 : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %gw0 : tensor<16x16xf32>
}

