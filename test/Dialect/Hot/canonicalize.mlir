// RUN: hot-opt %s -split-input-file -canonicalize | FileCheck %s

// Ĥ is an involution: two transforms along the same blocks cancel.
// CHECK-LABEL: func.func @hadamard_involution
// CHECK-SAME: %[[X:.*]]: tensor<4x32xf32>
// CHECK-NOT: hot.hadamard
// CHECK: return %[[X]]
func.func @hadamard_involution(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = hot.hadamard %x along 1 block 16 : tensor<4x32xf32>
  %1 = hot.hadamard %0 along 1 block 16 : tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}

// -----

// Three transforms leave one.
// CHECK-LABEL: func.func @hadamard_three
// CHECK-COUNT-1: hot.hadamard
// CHECK-NOT: hot.hadamard
func.func @hadamard_three(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = hot.hadamard %x along 1 block 16 : tensor<4x32xf32>
  %1 = hot.hadamard %0 along 1 block 16 : tensor<4x32xf32>
  %2 = hot.hadamard %1 along 1 block 16 : tensor<4x32xf32>
  return %2 : tensor<4x32xf32>
}

// -----

// Different blocks do not cancel.
// CHECK-LABEL: func.func @hadamard_different_blocks
// CHECK: hot.hadamard %{{.*}} along 1 block 16
// CHECK: hot.hadamard %{{.*}} along 1 block 8
func.func @hadamard_different_blocks(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = hot.hadamard %x along 1 block 16 : tensor<4x32xf32>
  %1 = hot.hadamard %0 along 1 block 8 : tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}

// -----

// Different dims do not cancel.
// CHECK-LABEL: func.func @hadamard_different_dims
// CHECK: hot.hadamard %{{.*}} along 0 block 4
// CHECK: hot.hadamard %{{.*}} along 1 block 4
func.func @hadamard_different_dims(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = hot.hadamard %x along 0 block 4 : tensor<4x4xf32>
  %1 = hot.hadamard %0 along 1 block 4 : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// -----

// A block of one is the identity.
// CHECK-LABEL: func.func @hadamard_block_one
// CHECK-SAME: %[[X:.*]]: tensor<3x5xf32>
// CHECK-NOT: hot.hadamard
// CHECK: return %[[X]]
func.func @hadamard_block_one(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = hot.hadamard %x along 1 block 1 : tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// A low-rank projection with blocks of one keeps every element as it is.
// CHECK-LABEL: func.func @lowrank_block_one
// CHECK-SAME: %[[X:.*]]: tensor<7x5xf32>
// CHECK-NOT: hot.lowrank
// CHECK: return %[[X]]
func.func @lowrank_block_one(%x: tensor<7x5xf32>) -> tensor<7x5xf32> {
  %0 = hot.lowrank %x along 0 block 1 rank 1 allow_tail : tensor<7x5xf32> -> tensor<7x5xf32>
  return %0 : tensor<7x5xf32>
}

// -----

// With fewer elements along `dim` than a block (4-token samples, block 16),
// everything is the tail, appended unchanged: the identity. One full block
// (16 tokens) is projected, so it stays.
// CHECK-LABEL: func.func @lowrank_all_tail
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4x8xf32>, %[[Y:.*]]: tensor<2x16x8xf32>
// CHECK: %[[P:.*]] = hot.lowrank %[[Y]] along 1 block 16 rank 8 allow_tail
// CHECK-NOT: hot.lowrank
// CHECK: return %[[X]], %[[P]]
func.func @lowrank_all_tail(%x: tensor<2x4x8xf32>, %y: tensor<2x16x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x8x8xf32>) {
  %0 = hot.lowrank %x along 1 block 16 rank 8 allow_tail : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %1 = hot.lowrank %y along 1 block 16 rank 8 allow_tail : tensor<2x16x8xf32> -> tensor<2x8x8xf32>
  return %0, %1 : tensor<2x4x8xf32>, tensor<2x8x8xf32>
}

// -----

// The transform of zero is zero; of a nonzero constant it is not folded.
// CHECK-LABEL: func.func @hadamard_constants
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<2x8xf32>
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<2x8xf32>
// CHECK: %[[H:.*]] = hot.hadamard %[[ONE]]
// CHECK: return %[[ZERO]], %[[H]]
func.func @hadamard_constants() -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %zero = arith.constant dense<0.0> : tensor<2x8xf32>
  %one = arith.constant dense<1.0> : tensor<2x8xf32>
  %0 = hot.hadamard %zero along 1 block 8 : tensor<2x8xf32>
  %1 = hot.hadamard %one along 1 block 8 : tensor<2x8xf32>
  return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// An exact integer product with a zero operand is zero.
// CHECK-LABEL: func.func @int_matmul_zero
// CHECK: %[[Z:.*]] = arith.constant dense<0> : tensor<4x2xi32>
// CHECK-NOT: hot.int_matmul
// CHECK: return %[[Z]]
func.func @int_matmul_zero(%a: tensor<4x8xi8>) -> tensor<4x2xi32> {
  %zero = arith.constant dense<0> : tensor<8x2xi8>
  %0 = hot.int_matmul %a, %zero : tensor<4x8xi8>, tensor<8x2xi8> -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

// CHECK-LABEL: func.func @int_matmul_nonzero
// CHECK: hot.int_matmul
func.func @int_matmul_nonzero(%a: tensor<4x8xi8>) -> tensor<4x2xi32> {
  %one = arith.constant dense<1> : tensor<8x2xi8>
  %0 = hot.int_matmul %a, %one : tensor<4x8xi8>, tensor<8x2xi8> -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

// Pure ops without uses disappear.
// CHECK-LABEL: func.func @dead
// CHECK-NOT: hot.
func.func @dead(%x: tensor<4x8xf32>) {
  %q, %s = hot.quantize %x bits 4 granularity per_row scale maxabs rounding nearest : tensor<4x8xf32> -> tensor<4x8xi8>, tensor<4xf32>
  %l = hot.lowrank %x along 1 block 8 rank 2 : tensor<4x8xf32> -> tensor<4x2xf32>
  return
}
