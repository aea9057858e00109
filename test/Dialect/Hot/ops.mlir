// RUN: hot-opt %s | FileCheck %s
// RUN: hot-opt %s | hot-opt | FileCheck %s
// RUN: hot-opt %s --mlir-print-op-generic | hot-opt | FileCheck %s

// Every op of the dialect round-trips through its custom and generic forms.

// CHECK-LABEL: func.func @hadamard
// CHECK-SAME: %[[X:.*]]: tensor<197x768xf32>
func.func @hadamard(%x: tensor<197x768xf32>) -> tensor<197x768xf32> {
  // CHECK: hot.hadamard %[[X]] along 1 block 16 : tensor<197x768xf32>
  %y = hot.hadamard %x along 1 block 16 : tensor<197x768xf32>
  return %y : tensor<197x768xf32>
}

// CHECK-LABEL: func.func @hadamard_bf16_rank3
func.func @hadamard_bf16_rank3(%x: tensor<2x4x6xbf16>) -> tensor<2x4x6xbf16> {
  // CHECK: hot.hadamard %{{.*}} along 1 block 4 : tensor<2x4x6xbf16>
  %y = hot.hadamard %x along 1 block 4 : tensor<2x4x6xbf16>
  return %y : tensor<2x4x6xbf16>
}

// CHECK-LABEL: func.func @lowrank
func.func @lowrank(%x: tensor<197x64xf32>, %t: tensor<2x64x8xf32>)
    -> (tensor<101x64xf32>, tensor<2x40x8xf32>, tensor<2x64x8xf32>) {
  // CHECK: hot.lowrank %{{.*}} along 0 block 16 rank 8 allow_tail : tensor<197x64xf32> -> tensor<101x64xf32>
  %a = hot.lowrank %x along 0 block 16 rank 8 allow_tail
      : tensor<197x64xf32> -> tensor<101x64xf32>
  // CHECK: hot.lowrank %{{.*}} along 1 block 16 rank 10 selection triangle : tensor<2x64x8xf32> -> tensor<2x40x8xf32>
  %b = hot.lowrank %t along 1 block 16 rank 10 selection triangle
      : tensor<2x64x8xf32> -> tensor<2x40x8xf32>
  // The default selection is elided.
  // CHECK: hot.lowrank %{{.*}} along 1 block 4 rank 4 : tensor<2x64x8xf32> -> tensor<2x64x8xf32>
  %c = hot.lowrank %t along 1 block 4 rank 4 selection prefix
      : tensor<2x64x8xf32> -> tensor<2x64x8xf32>
  return %a, %b, %c : tensor<101x64xf32>, tensor<2x40x8xf32>, tensor<2x64x8xf32>
}

// CHECK-LABEL: func.func @quantize
// CHECK-SAME: %[[X:.*]]: tensor<8x32xf32>, %[[SEED:.*]]: i64
func.func @quantize(%x: tensor<8x32xf32>, %seed: i64)
    -> (tensor<8x32xi8>, tensor<8xf32>, tensor<8x32xi8>, tensor<f32>,
        tensor<8x32xi8>, tensor<32xf32>) {
  // CHECK: hot.quantize %[[X]] bits 4 granularity per_row scale maxabs rounding stochastic seed %[[SEED]] : tensor<8x32xf32> -> tensor<8x32xi8>, tensor<8xf32>
  %q0, %s0 = hot.quantize %x bits 4 granularity per_row scale maxabs
      rounding stochastic seed %seed
      : tensor<8x32xf32> -> tensor<8x32xi8>, tensor<8xf32>
  // CHECK: hot.quantize %[[X]] bits 4 granularity per_tensor scale sawb rounding nearest : tensor<8x32xf32> -> tensor<8x32xi8>, tensor<f32>
  %q1, %s1 = hot.quantize %x bits 4 granularity per_tensor scale sawb
      rounding nearest : tensor<8x32xf32> -> tensor<8x32xi8>, tensor<f32>
  // CHECK: hot.quantize %[[X]] bits 8 granularity per_col scale maxabs rounding nearest : tensor<8x32xf32> -> tensor<8x32xi8>, tensor<32xf32>
  %q2, %s2 = hot.quantize %x bits 8 granularity per_col scale maxabs
      rounding nearest : tensor<8x32xf32> -> tensor<8x32xi8>, tensor<32xf32>
  return %q0, %s0, %q1, %s1, %q2, %s2 : tensor<8x32xi8>, tensor<8xf32>,
      tensor<8x32xi8>, tensor<f32>, tensor<8x32xi8>, tensor<32xf32>
}

// CHECK-LABEL: func.func @dequantize
func.func @dequantize(%q: tensor<4x8xi8>, %s: tensor<4xf32>, %t: tensor<f32>)
    -> (tensor<4x8xf32>, tensor<4x8xbf16>) {
  // CHECK: hot.dequantize %{{.*}}, %{{.*}} granularity per_row : tensor<4x8xi8>, tensor<4xf32> -> tensor<4x8xf32>
  %a = hot.dequantize %q, %s granularity per_row
      : tensor<4x8xi8>, tensor<4xf32> -> tensor<4x8xf32>
  // CHECK: hot.dequantize %{{.*}}, %{{.*}} granularity per_tensor : tensor<4x8xi8>, tensor<f32> -> tensor<4x8xbf16>
  %b = hot.dequantize %q, %t granularity per_tensor
      : tensor<4x8xi8>, tensor<f32> -> tensor<4x8xbf16>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xbf16>
}

// CHECK-LABEL: func.func @int_matmul
func.func @int_matmul(%a: tensor<8x32xi8>, %b: tensor<32x16xi8>,
                      %bt: tensor<16x32xi8>, %at: tensor<32x8xi8>)
    -> (tensor<8x16xi32>, tensor<8x16xi32>, tensor<8x16xi32>) {
  // CHECK: hot.int_matmul %{{.*}}, %{{.*}} : tensor<8x32xi8>, tensor<32x16xi8> -> tensor<8x16xi32>
  %0 = hot.int_matmul %a, %b : tensor<8x32xi8>, tensor<32x16xi8> -> tensor<8x16xi32>
  // CHECK: hot.int_matmul %{{.*}}, %{{.*}} transposed : tensor<8x32xi8>, tensor<16x32xi8> -> tensor<8x16xi32>
  %1 = hot.int_matmul %a, %bt transposed
      : tensor<8x32xi8>, tensor<16x32xi8> -> tensor<8x16xi32>
  // CHECK: hot.int_matmul %{{.*}} transposed, %{{.*}} : tensor<32x8xi8>, tensor<32x16xi8> -> tensor<8x16xi32>
  %2 = hot.int_matmul %at transposed, %b
      : tensor<32x8xi8>, tensor<32x16xi8> -> tensor<8x16xi32>
  return %0, %1, %2 : tensor<8x16xi32>, tensor<8x16xi32>, tensor<8x16xi32>
}

// CHECK-LABEL: func.func @rescale
func.func @rescale(%acc: tensor<8x16xi32>, %r: tensor<8xf32>, %c: tensor<16xf32>,
                   %t: tensor<f32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  // CHECK: hot.rescale %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x16xi32>, tensor<8xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %0 = hot.rescale %acc, %r, %c
      : tensor<8x16xi32>, tensor<8xf32>, tensor<16xf32> -> tensor<8x16xf32>
  // CHECK: hot.rescale %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x16xi32>, tensor<f32>, tensor<f32> -> tensor<8x16xf32>
  %1 = hot.rescale %acc, %t, %t
      : tensor<8x16xi32>, tensor<f32>, tensor<f32> -> tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// The enum attributes also stand alone.
// CHECK-LABEL: func.func @attributes
// CHECK: hot.granularity = #hot<granularity per_col>
// CHECK-SAME: hot.path = #hot<path gw>
// CHECK-SAME: hot.rounding = #hot<rounding stochastic>
// CHECK-SAME: hot.scale = #hot<scale_mode sawb>
// CHECK-SAME: hot.selection = #hot<selection triangle>
func.func @attributes() attributes {
    hot.granularity = #hot<granularity per_col>, hot.path = #hot<path gw>,
    hot.rounding = #hot<rounding stochastic>, hot.scale = #hot<scale_mode sawb>,
    hot.selection = #hot<selection triangle>} {
  return
}
