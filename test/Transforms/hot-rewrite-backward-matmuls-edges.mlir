// Graphs at the edges of what the rewrite handles (a helper's sweep found each
// of these breaking the IR or the pass): each is rewritten into valid IR, left
// alone with a remark that says why, or refused with a located error.
// RUN: not hot-opt %s -split-input-file -hot-training-pipeline 2>&1 | FileCheck %s
// RUN: not hot-opt %s -split-input-file -hot-training-pipeline="remarks=false" 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=IR

// Two layers read the same x, one in each branch of an scf.if: the else
// branch cannot use the INT8 x the then branch made; each quantizes its own.
// CHECK: remark: layer0: gw rewritten
// CHECK: remark: layer1: gw rewritten
// CHECK-NOT: does not dominate
// IR-LABEL: func.func @branches
// IR: scf.if
// IR: hot.quantize %{{.*}} bits 8 granularity per_tensor scale maxabs rounding nearest
// IR: hot.int_matmul
// IR: } else {
// IR: hot.quantize %{{.*}} bits 8 granularity per_tensor scale maxabs rounding nearest
// IR: hot.int_matmul
func.func @branches(%x: tensor<8x64xf32>, %gy: tensor<8x16xf32>, %c: i1) -> tensor<16x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<16x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x16xf32>) outs(%e3 : tensor<16x8xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<16x64xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %r = scf.if %c -> (tensor<16x64xf32>) {
    %gw = linalg.matmul ins(%gyt, %x : tensor<16x8xf32>, tensor<8x64xf32>) outs(%z4 : tensor<16x64xf32>) -> tensor<16x64xf32>
    scf.yield %gw : tensor<16x64xf32>
  } else {
    %gw2 = linalg.matmul ins(%gyt, %x : tensor<16x8xf32>, tensor<8x64xf32>) outs(%z4 : tensor<16x64xf32>) -> tensor<16x64xf32>
    scf.yield %gw2 : tensor<16x64xf32>
  }
  return %r : tensor<16x64xf32>
}

// -----

// A function with callers gets no new seed argument: its calls would break.
// CHECK: hot-rewrite-backward-matmuls-edges.mlir:[[@LINE+1]]:1: error: @called has callers, which a new seed argument would break: tag an i64 argument with hot.seed or name one with seed-arg
func.func private @called(%x: tensor<8x64xf32>, %gy: tensor<8x16xf32>) -> tensor<16x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<16x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x16xf32>) outs(%e3 : tensor<16x8xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<16x64xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<16x8xf32>, tensor<8x64xf32>) outs(%z4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %gw : tensor<16x64xf32>
}
func.func @caller(%x: tensor<8x64xf32>, %gy: tensor<8x16xf32>) -> tensor<16x64xf32> {
  %gw = func.call @called(%x, %gy) : (tensor<8x64xf32>, tensor<8x16xf32>) -> tensor<16x64xf32>
  return %gw : tensor<16x64xf32>
}

// -----

// With a seed of its own, a called function is rewritten and its callers are
// untouched.
// CHECK: remark: layer0: gw rewritten
// IR-LABEL: func.func private @called_with_seed
// IR: hot.int_matmul
// IR-LABEL: func.func @caller_with_seed
// IR: call @called_with_seed(%{{.*}}, %{{.*}}, %{{.*}})
func.func private @called_with_seed(%x: tensor<8x64xf32>, %gy: tensor<8x16xf32>, %s: i64 {hot.seed}) -> tensor<16x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<16x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x16xf32>) outs(%e3 : tensor<16x8xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<16x64xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<16x8xf32>, tensor<8x64xf32>) outs(%z4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %gw : tensor<16x64xf32>
}
func.func @caller_with_seed(%x: tensor<8x64xf32>, %gy: tensor<8x16xf32>, %s: i64) -> tensor<16x64xf32> {
  %gw = func.call @called_with_seed(%x, %gy, %s) : (tensor<8x64xf32>, tensor<8x16xf32>, i64) -> tensor<16x64xf32>
  return %gw : tensor<16x64xf32>
}

// -----

// The seed must be one i64.
// CHECK: hot-rewrite-backward-matmuls-edges.mlir:[[@LINE+1]]:1: error: argument #2 is tagged hot.seed but is 'i32', not an i64
func.func @seed_i32(%x: tensor<8x64xf32>, %gy: tensor<8x16xf32>, %s: i32 {hot.seed}) -> tensor<16x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<16x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x16xf32>) outs(%e3 : tensor<16x8xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<16x64xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<16x8xf32>, tensor<8x64xf32>) outs(%z4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %gw : tensor<16x64xf32>
}

// -----

// CHECK: hot-rewrite-backward-matmuls-edges.mlir:[[@LINE+1]]:1: error: arguments #2 and #3 are both tagged hot.seed: one seed per step
func.func @two_seeds(%x: tensor<8x64xf32>, %gy: tensor<8x16xf32>, %s: i64 {hot.seed}, %t: i64 {hot.seed}) -> tensor<16x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<16x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x16xf32>) outs(%e3 : tensor<16x8xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<16x64xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<16x8xf32>, tensor<8x64xf32>) outs(%z4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %gw : tensor<16x64xf32>
}

// -----

// Integer products are not a float layer's gradients: left alone.
// CHECK: hot-rewrite-backward-matmuls-edges.mlir:[[@LINE+10]]:9: remark: not rewritten: not a floating-point product (HOT rewrites the gradients of floating-point layers)
// IR-LABEL: func.func @integer
// IR-NOT: hot.quantize
// IR: return
func.func @integer(%x: tensor<8x16xi8>, %gy: tensor<8x16xi8>) -> tensor<16x16xi32> {
  %cst = arith.constant 0 : i32
  %e3 = tensor.empty() : tensor<16x8xi8>
  %gyt = linalg.transpose ins(%gy : tensor<8x16xi8>) outs(%e3 : tensor<16x8xi8>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<16x16xi32>
  %z4 = linalg.fill ins(%cst : i32) outs(%e4 : tensor<16x16xi32>) -> tensor<16x16xi32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<16x8xi8>, tensor<8x16xi8>) outs(%z4 : tensor<16x16xi32>) -> tensor<16x16xi32>
  return %gw : tensor<16x16xi32>
}

// -----

// A layer with no output features: nothing to quantize.
// CHECK: hot-rewrite-backward-matmuls-edges.mlir:[[@LINE+7]]:9: remark: layer0: gw left unchanged: the product is empty
func.func @empty(%x: tensor<8x16xf32>, %gy: tensor<8x0xf32>) -> tensor<0x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<0x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x0xf32>) outs(%e3 : tensor<0x8xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<0x16xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<0x16xf32>) -> tensor<0x16xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<0x8xf32>, tensor<8x16xf32>) outs(%z4 : tensor<0x16xf32>) -> tensor<0x16xf32>
  return %gw : tensor<0x16xf32>
}

// -----

// gy of 2^32 elements: stochastic rounding hashes 32-bit element indices.
// CHECK: hot-rewrite-backward-matmuls-edges.mlir:[[@LINE+5]]:9: remark: layer0: gx left unchanged: stochastic rounding of its 4294967296-element output gradient needs more than 32-bit element indices
func.func @huge(%w: tensor<65536x2xf32>, %gy: tensor<65536x65536xf32>, %x: tensor<65536x2xf32>) -> (tensor<65536x2xf32>, tensor<65536x2xf32>) {
  %cst = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<65536x2xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<65536x2xf32>) -> tensor<65536x2xf32>
  %gx = linalg.matmul ins(%gy, %w : tensor<65536x65536xf32>, tensor<65536x2xf32>) outs(%z2 : tensor<65536x2xf32>) -> tensor<65536x2xf32>
  %e3 = tensor.empty() : tensor<65536x65536xf32>
  %gyt = linalg.transpose ins(%gy : tensor<65536x65536xf32>) outs(%e3 : tensor<65536x65536xf32>) permutation = [1, 0]
  %gw = linalg.matmul ins(%gyt, %x : tensor<65536x65536xf32>, tensor<65536x2xf32>) outs(%z2 : tensor<65536x2xf32>) -> tensor<65536x2xf32>
  return %gx, %gw : tensor<65536x2xf32>, tensor<65536x2xf32>
}
