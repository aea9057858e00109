// RUN: hot-opt %s -split-input-file -hot-rewrite-backward-matmuls="remarks=false" | FileCheck %s
// RUN: hot-opt %s -split-input-file -hot-rewrite-backward-matmuls="gx-bits=0 gw-bits=0 hla-rank=16 remarks=false" | FileCheck %s --check-prefix=FP
// RUN: hot-opt %s -split-input-file -hot-rewrite-backward-matmuls="gx-granularity=per_row gw-granularity=per_col hla-selection=triangle remarks=false" | FileCheck %s --check-prefix=FINE
// RUN: not hot-opt %s -split-input-file -hot-rewrite-backward-matmuls="gx-bits=9" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: hot-opt %s -split-input-file -hot-rewrite-backward-matmuls="frozen-gx=false remarks=false" | FileCheck %s --check-prefix=NOFROZEN
// RUN: not hot-opt %s -split-input-file -hot-rewrite-backward-matmuls="seed-arg=65" 2>&1 | FileCheck %s --check-prefix=SEEDARG
// The index as a number (an int64_t option streamed as such, not a char).
// SEEDARG: error: seed-arg=65 does not name an i64 argument

// A layer with [B, T, .] activations: gx through Hadamard + INT4, gw through
// HLA along each sample's 17 tokens (one block of 16 + a tail of 1) + INT8.

// CHECK-LABEL: func.func @layer
// CHECK-SAME: %[[X3:[^:]*]]: tensor<2x17x16xf32>, %[[W:[^:]*]]: tensor<32x16xf32>, %[[GY3:[^:]*]]: tensor<2x17x32xf32>, %[[SEED:.*]]: i64 {hot.seed})
// CHECK: %[[S1:.*]] = arith.addi %[[SEED]], %{{.*}} : i64
// CHECK: %[[GY:.*]] = tensor.collapse_shape %[[GY3]] {{\[\[}}0, 1], [2]]
// CHECK: %[[GYH:.*]] = hot.hadamard %{{.*}} along 1 block 16 {hot.layer = #hot.layer<name = "layer0", role = gx>}
// CHECK: %[[WH:.*]] = hot.hadamard %[[W]] along 0 block 16
// CHECK: %[[QG:.*]], %[[SG:.*]] = hot.quantize %[[GYH]] bits 4 granularity per_tensor scale maxabs rounding stochastic seed %[[S1]]
// CHECK: %[[QW:.*]], %[[SW:.*]] = hot.quantize %[[WH]] bits 4 granularity per_tensor scale sawb rounding nearest
// CHECK: %[[ACC:.*]] = hot.int_matmul %[[QG]], %[[QW]] {{.*}}: tensor<34x32xi8>, tensor<32x16xi8> -> tensor<34x16xi32>
// CHECK: %[[GX:.*]] = hot.rescale %[[ACC]], %[[SG]], %[[SW]]
// CHECK-NOT: linalg.matmul
// CHECK: %[[GYL:.*]] = hot.lowrank %{{.*}} along 1 block 16 rank 8 allow_tail {{.*}}: tensor<2x17x32xf32> -> tensor<2x9x32xf32>
// CHECK: tensor.collapse_shape %[[X3]] {{.*}}hot.saved_activation
// CHECK: %[[XL:.*]] = hot.lowrank %{{.*}} along 1 block 16 rank 8 allow_tail {hot.layer = {{.*}}, hot.saved_activation} : tensor<2x17x16xf32> -> tensor<2x9x16xf32>
// CHECK: hot.quantize %{{.*}} bits 8 granularity per_tensor scale maxabs rounding stochastic seed
// CHECK: hot.quantize %{{.*}} bits 8 granularity per_tensor scale maxabs rounding nearest {{.*}}hot.saved_activation
// CHECK: %[[ACCW:.*]] = hot.int_matmul %{{.*}} transposed, %{{.*}} {{.*}}: tensor<18x32xi8>, tensor<18x16xi8> -> tensor<32x16xi32>
// CHECK: %[[GW:.*]] = hot.rescale %[[ACCW]]
// CHECK: return %{{.*}}, %[[GX]], %[[GW]]

// Quantization off: the same transforms, f32 products.
// FP-LABEL: func.func @layer
// FP-NOT: hot.quantize
// FP: hot.hadamard
// FP: linalg.matmul
// FP: hot.lowrank %{{.*}} along 1 block 16 rank 16 allow_tail
// FP: linalg.matmul

// Finer scales and the triangle selection.
// FINE-LABEL: func.func @layer
// FINE: hot.quantize %{{.*}} bits 4 granularity per_row scale maxabs rounding stochastic
// FINE: hot.lowrank %{{.*}} along 1 block 16 rank 10 selection triangle allow_tail
// FINE: hot.quantize %{{.*}} bits 8 granularity per_col scale maxabs rounding stochastic

// BAD: hot-rewrite-backward-matmuls: bits must be 0 (no quantization) or in [2, 8], got 9
func.func @layer(%x3: tensor<2x17x16xf32>, %w: tensor<32x16xf32>, %gy3: tensor<2x17x32xf32>)
    -> (tensor<34x32xf32>, tensor<34x16xf32>, tensor<32x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %x = tensor.collapse_shape %x3 [[0, 1], [2]] : tensor<2x17x16xf32> into tensor<34x16xf32>
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]] : tensor<2x17x32xf32> into tensor<34x32xf32>
  %e0 = tensor.empty() : tensor<16x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x16xf32>) outs(%e0 : tensor<16x32xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<34x32xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<34x32xf32>) -> tensor<34x32xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<34x16xf32>, tensor<16x32xf32>) outs(%z1 : tensor<34x32xf32>) -> tensor<34x32xf32>
  %e2 = tensor.empty() : tensor<34x16xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<34x16xf32>) -> tensor<34x16xf32>
  %gx = linalg.matmul ins(%gy, %w : tensor<34x32xf32>, tensor<32x16xf32>) outs(%z2 : tensor<34x16xf32>) -> tensor<34x16xf32>
  %e3 = tensor.empty() : tensor<32x34xf32>
  %gyt = linalg.transpose ins(%gy : tensor<34x32xf32>) outs(%e3 : tensor<32x34xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<32x16xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<32x34xf32>, tensor<34x16xf32>) outs(%z4 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %y, %gx, %gw : tensor<34x32xf32>, tensor<34x16xf32>, tensor<32x16xf32>
}

// -----

// 2-D activations (a batch of independent samples): no HLA on gw; O = 10 has
// only a factor 2, so the Hadamard block on gx is 2. A user-named seed.
// CHECK-LABEL: func.func @mlp_layer
// CHECK-SAME: %{{.*}}: i64 {hot.seed}, %[[GY:.*]]: tensor<8x10xf32>)
// CHECK: hot.hadamard %[[GY]] along 1 block 2
// CHECK-NOT: hot.lowrank
// CHECK: hot.int_matmul %{{.*}} transposed, %{{.*}} {{.*}}: tensor<8x10xi8>, tensor<8x64xi8> -> tensor<10x64xi32>
func.func @mlp_layer(%x: tensor<8x64xf32>, %w: tensor<10x64xf32>, %seed: i64 {hot.seed}, %gy: tensor<8x10xf32>)
    -> (tensor<8x64xf32>, tensor<10x64xf32>) {
  %cst = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x64xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %gx = linalg.matmul ins(%gy, %w : tensor<8x10xf32>, tensor<10x64xf32>) outs(%z2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %e3 = tensor.empty() : tensor<10x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x10xf32>) outs(%e3 : tensor<10x8xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<10x64xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<10x64xf32>) -> tensor<10x64xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<10x8xf32>, tensor<8x64xf32>) outs(%z4 : tensor<10x64xf32>) -> tensor<10x64xf32>
  return %gx, %gw : tensor<8x64xf32>, tensor<10x64xf32>
}

// -----

// A per-layer override: 8-bit gx for this layer only.
// CHECK-LABEL: func.func @override
// CHECK: hot.quantize %{{.*}} bits 8 granularity per_row
func.func @override(%x: tensor<8x64xf32>, %w: tensor<16x64xf32>, %gy: tensor<8x16xf32>)
    -> (tensor<8x64xf32>, tensor<16x64xf32>) {
  %cst = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x64xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %gx = linalg.matmul {hot.layer = #hot.layer<name = "layer0", role = gx, bits = 8, granularity = per_row>}
      ins(%gy, %w : tensor<8x16xf32>, tensor<16x64xf32>) outs(%z2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %e3 = tensor.empty() : tensor<16x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x16xf32>) outs(%e3 : tensor<16x8xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<16x64xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<16x8xf32>, tensor<8x64xf32>) outs(%z4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %gx, %gw : tensor<8x64xf32>, tensor<16x64xf32>
}

// -----

// O = 7 has no factor of two: no Hadamard transform on gx (plain INT4
// quantization), as hot-method.md section 3 says.
// CHECK-LABEL: func.func @odd_out_features
// CHECK-NOT: hot.hadamard
// CHECK: hot.quantize %{{.*}} bits 4 granularity per_tensor scale maxabs rounding stochastic
// CHECK: hot.int_matmul
func.func @odd_out_features(%x: tensor<8x64xf32>, %w: tensor<7x64xf32>, %gy: tensor<8x7xf32>)
    -> (tensor<8x64xf32>, tensor<7x64xf32>) {
  %cst = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x64xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %gx = linalg.matmul ins(%gy, %w : tensor<8x7xf32>, tensor<7x64xf32>) outs(%z2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %e3 = tensor.empty() : tensor<7x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x7xf32>) outs(%e3 : tensor<7x8xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<7x64xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<7x64xf32>) -> tensor<7x64xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<7x8xf32>, tensor<8x64xf32>) outs(%z4 : tensor<7x64xf32>) -> tensor<7x64xf32>
  return %gx, %gw : tensor<8x64xf32>, tensor<7x64xf32>
}

// -----

// A product accumulating into a non-zero output is left alone, with a remark.
// CHECK-LABEL: func.func @accumulating
// CHECK-NOT: hot.int_matmul
// CHECK: linalg.matmul
func.func @accumulating(%x: tensor<8x64xf32>, %gy: tensor<8x16xf32>, %acc: tensor<16x64xf32>)
    -> tensor<16x64xf32> {
  %e3 = tensor.empty() : tensor<16x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x16xf32>) outs(%e3 : tensor<16x8xf32>) permutation = [1, 0]
  %gw = linalg.matmul ins(%gyt, %x : tensor<16x8xf32>, tensor<8x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %gw : tensor<16x64xf32>
}

// -----

// A backward graph with a frozen layer (layer1: gx, no gw) between two
// trained ones. Its gx is rewritten like any other and recorded without a gw;
// the gw below reads the rewritten gx, whose product was replaced only after
// every product of the function was built.
// CHECK-LABEL: func.func @frozen_backward
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x16xf32>, %{{[^:]*}}: tensor<8x24xf32>, %{{[^:]*}}: tensor<8x24xf32>, %[[W1:[^:]*]]: tensor<24x32xf32>
// CHECK-SAME: hot.layers = [{gw = {{{[^}]*}}}, gx = {{{[^}]*}}}, in_features = 24 : i64, name = "layer0"
// CHECK-SAME: {gx = {bits = 4 : i64, block = 8 : i64, granularity = "per_tensor", hla = false, rank = 0 : i64, rewritten = true}, in_features = 32 : i64, name = "layer1", out_features = 24 : i64, tokens = array<i64: 8>}
// CHECK-SAME: {gw = {{{[^}]*}}rewritten = true}, in_features = 16 : i64, name = "layer2"
// CHECK: %[[MASKED:.*]] = linalg.mul
// CHECK: %[[GYH:.*]] = hot.hadamard %[[MASKED]] along 1 block 8 {hot.layer = #hot.layer<name = "layer1", role = gx>}
// CHECK: %[[WH:.*]] = hot.hadamard %[[W1]] along 0 block 8 {hot.layer = #hot.layer<name = "layer1", role = gx>}
// CHECK: %[[QG:.*]], %[[SG:.*]] = hot.quantize %[[GYH]] bits 4
// CHECK: %[[QW:.*]], %[[SW:.*]] = hot.quantize %[[WH]] bits 4
// CHECK: %[[ACC:.*]] = hot.int_matmul %[[QG]], %[[QW]] {{.*}}: tensor<8x24xi8>, tensor<24x32xi8> -> tensor<8x32xi32>
// CHECK: %[[GX1:.*]] = hot.rescale %[[ACC]], %[[SG]], %[[SW]]
// CHECK: hot.quantize %[[GX1]] bits 8 {{.*}}name = "layer2", role = gw
// CHECK: hot.quantize %[[X]] bits 8 {{.*}}name = "layer2", role = gw
// CHECK-NOT: linalg.matmul
// With frozen-gx=false the frozen gx stays a float product, and the other
// products keep the seeds they have without it: layer2's gw is the third
// quantized product (seed + (3 << 32)), not the fourth.
// NOFROZEN-LABEL: func.func @frozen_backward
// NOFROZEN-SAME: {gx = {reason = "a frozen layer's gx (frozen-gx=false)", rewritten = false}, in_features = 32 : i64, name = "layer1"
// NOFROZEN: linalg.matmul {hot.layer = #hot.layer<name = "layer1", role = gx>} ins(%{{.*}}, %arg3 : tensor<8x24xf32>, tensor<24x32xf32>)
// NOFROZEN: arith.constant 12884901888 : i64
// NOFROZEN-NOT: arith.constant 17179869184 : i64
// NOFROZEN: return
func.func @frozen_backward(%x: tensor<8x16xf32>, %h2: tensor<8x24xf32>, %mask: tensor<8x24xf32>,
                           %w1: tensor<24x32xf32>, %w2: tensor<10x24xf32>, %gy2: tensor<8x10xf32>)
    -> (tensor<32x16xf32>, tensor<10x24xf32>) {
  %cst = arith.constant 0.0 : f32
  %e108 = tensor.empty() : tensor<10x8xf32>
  %gy2t = linalg.transpose ins(%gy2 : tensor<8x10xf32>) outs(%e108 : tensor<10x8xf32>) permutation = [1, 0]
  %e1024 = tensor.empty() : tensor<10x24xf32>
  %z1024 = linalg.fill ins(%cst : f32) outs(%e1024 : tensor<10x24xf32>) -> tensor<10x24xf32>
  %gw2 = linalg.matmul ins(%gy2t, %h2 : tensor<10x8xf32>, tensor<8x24xf32>) outs(%z1024 : tensor<10x24xf32>) -> tensor<10x24xf32>
  %e824 = tensor.empty() : tensor<8x24xf32>
  %z824 = linalg.fill ins(%cst : f32) outs(%e824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %gh2 = linalg.matmul ins(%gy2, %w2 : tensor<8x10xf32>, tensor<10x24xf32>) outs(%z824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %gy1 = linalg.mul ins(%gh2, %mask : tensor<8x24xf32>, tensor<8x24xf32>) outs(%e824 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %e832 = tensor.empty() : tensor<8x32xf32>
  %z832 = linalg.fill ins(%cst : f32) outs(%e832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %gh1 = linalg.matmul ins(%gy1, %w1 : tensor<8x24xf32>, tensor<24x32xf32>) outs(%z832 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e328 = tensor.empty() : tensor<32x8xf32>
  %gh1t = linalg.transpose ins(%gh1 : tensor<8x32xf32>) outs(%e328 : tensor<32x8xf32>) permutation = [1, 0]
  %e3216 = tensor.empty() : tensor<32x16xf32>
  %z3216 = linalg.fill ins(%cst : f32) outs(%e3216 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %gw0 = linalg.matmul ins(%gh1t, %x : tensor<32x8xf32>, tensor<8x16xf32>) outs(%z3216 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %gw0, %gw2 : tensor<32x16xf32>, tensor<10x24xf32>
}
