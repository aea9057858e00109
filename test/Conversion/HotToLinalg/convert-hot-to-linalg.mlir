// RUN: hot-opt %s -split-input-file -convert-hot-to-linalg | FileCheck %s

// The butterfly: one generic per bit of the block index, reading the pair
// (bit = 0, bit = 1) through constant map results; the last stage scales.
// CHECK-DAG: #[[LO3:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
// CHECK-DAG: #[[HI3:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 1)>
// CHECK-DAG: #[[LO2:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
// CHECK-DAG: #[[HI2:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, 1, d3)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @hadamard
// CHECK-SAME: %[[X:.*]]: tensor<3x8xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2, 3]] output_shape [3, 2, 2, 2]
// CHECK: %[[S0:.*]] = linalg.generic {indexing_maps = [#[[LO3]], #[[HI3]], #[[ID]]]
// CHECK-SAME: ins(%[[E]], %[[E]] :
// CHECK: arith.addf
// CHECK: arith.subf
// CHECK: linalg.index 3
// CHECK: arith.select
// CHECK-NOT: arith.mulf
// CHECK: linalg.yield
// CHECK: %[[S1:.*]] = linalg.generic {indexing_maps = [#[[LO2]], #[[HI2]], #[[ID]]]
// CHECK-SAME: ins(%[[S0]], %[[S0]] :
// CHECK: linalg.index 2
// CHECK: %[[C:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: arith.mulf %{{.*}}, %[[C]]
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[S1]] {{\[\[}}0], [1, 2, 3]]
// CHECK: return %[[R]]
func.func @hadamard(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %y = hot.hadamard %x along 1 block 4 : tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// -----

// HLA: butterfly on the full blocks, gather of the kept Sylvester rows
// (sequency 0 and 1 of H_4 are rows 0 and 2), tail appended unchanged.
// CHECK-LABEL: func.func @lowrank_tail
// CHECK-SAME: %[[X:.*]]: tensor<10x3xf32>
// CHECK: %[[BLOCKS:.*]] = tensor.extract_slice %[[X]][0, 0] [8, 3] [1, 1]
// CHECK: tensor.expand_shape %[[BLOCKS]] {{\[\[}}0, 1, 2], [3]] output_shape [2, 2, 2, 3]
// CHECK-COUNT-2: linalg.generic
// CHECK: %[[T:.*]] = tensor.collapse_shape
// CHECK: %[[B:.*]] = tensor.expand_shape %[[T]] {{\[\[}}0, 1], [2]] output_shape [2, 4, 3]
// CHECK: %[[ROWS:.*]] = arith.constant dense<[0, 2]> : tensor<2xindex>
// CHECK: linalg.generic {{.*}} ins(%[[ROWS]] : tensor<2xindex>) outs(%{{.*}} : tensor<2x2x3xf32>)
// CHECK: ^bb0(%[[ROW:.*]]: index,
// CHECK: tensor.extract %[[B]][%{{.*}}, %[[ROW]], %{{.*}}]
// CHECK: %[[P:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x2x3xf32> into tensor<4x3xf32>
// CHECK: %[[OUT:.*]] = tensor.insert_slice %[[P]] into %{{.*}}[0, 0] [4, 3] [1, 1]
// CHECK: %[[TAIL:.*]] = tensor.extract_slice %[[X]][8, 0] [2, 3] [1, 1]
// CHECK: %[[R:.*]] = tensor.insert_slice %[[TAIL]] into %[[OUT]][4, 0] [2, 3] [1, 1]
// CHECK: return %[[R]]
func.func @lowrank_tail(%x: tensor<10x3xf32>) -> tensor<6x3xf32> {
  %y = hot.lowrank %x along 0 block 4 rank 2 allow_tail : tensor<10x3xf32> -> tensor<6x3xf32>
  return %y : tensor<6x3xf32>
}

// -----

// Triangle on a 4x4 grid keeps the 10 rows w_p (x) w_q with p + q < 4.
// CHECK-LABEL: func.func @lowrank_triangle
// CHECK-NOT: tensor.extract_slice
// CHECK: arith.constant dense<[0, 2, 8, 3, 10, 12, 1, 11, 14, 4]> : tensor<10xindex>
// CHECK-NOT: tensor.insert_slice
func.func @lowrank_triangle(%x: tensor<2x32xf32>) -> tensor<2x20xf32> {
  %y = hot.lowrank %x along 1 block 16 rank 10 selection triangle : tensor<2x32xf32> -> tensor<2x20xf32>
  return %y : tensor<2x20xf32>
}

// -----

// Fewer elements than one block: the projection is the identity.
// CHECK-LABEL: func.func @lowrank_all_tail
// CHECK-SAME: %[[X:.*]]: tensor<5x3xf32>
// CHECK-NEXT: return %[[X]]
func.func @lowrank_all_tail(%x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %y = hot.lowrank %x along 0 block 16 rank 8 allow_tail : tensor<5x3xf32> -> tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}

// -----

// per_row sawb with stochastic rounding: a reduction pass for max |x|; each
// row's f64 sums in docs/numerics.md's 128 partials (columns [0, 256) as a
// [4][2][128] grid reduced along its middle dim, in order, then the last 44
// columns into partials [0, 44)) and the tree, 128 -> 64 -> ... -> 1; the
// scales, then the elementwise quantization.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[PART:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @quantize_sawb_stochastic
// CHECK-SAME: %[[X:.*]]: tensor<4x300xf32>, %[[SEED:.*]]: i64
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<4x300xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: %[[HEAD:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 256] [1, 1]
// CHECK: %[[GRID:.*]] = tensor.expand_shape %[[HEAD]] {{\[\[}}0], [1, 2]] output_shape [4, 2, 128]
// CHECK: %[[P:.*]]:2 = linalg.generic {indexing_maps = [#[[ID3]], #[[PART]], #[[PART]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[GRID]] : tensor<4x2x128xf32>) outs(%{{.*}}, %{{.*}} : tensor<4x128xf64>, tensor<4x128xf64>)
// CHECK: %[[TAIL:.*]] = tensor.extract_slice %[[X]][0, 256] [4, 44] [1, 1]
// CHECK: %[[PT:.*]] = tensor.extract_slice %[[P]]#0[0, 0] [4, 44] [1, 1]
// CHECK: %[[L:.*]]:2 = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[TAIL]] : tensor<4x44xf32>) outs(%[[PT]], %{{.*}} : tensor<4x44xf64>, tensor<4x44xf64>)
// CHECK: %[[S1:.*]] = tensor.insert_slice %[[L]]#0 into %[[P]]#0[0, 0] [4, 44] [1, 1]
// CHECK: %[[LO:.*]] = tensor.extract_slice %[[S1]][0, 0] [4, 64] [1, 1]
// CHECK: %[[HI:.*]] = tensor.extract_slice %[[S1]][0, 64] [4, 64] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[LO]], %[[HI]] : tensor<4x64xf64>, tensor<4x64xf64>)
// CHECK: arith.addf %{{.*}}, %{{.*}} : f64
// CHECK-COUNT-5: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x{{32|16|8|4|2}}xf64>)
// CHECK: %[[T1:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x1xf64>)
// CHECK: %[[SUM1:.*]] = tensor.collapse_shape %[[T1]] {{\[\[}}0, 1]] : tensor<4x1xf64> into tensor<4xf64>
// CHECK: %[[SUM2:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<4x1xf64> into tensor<4xf64>
// CHECK: %[[SCALE:.*]]:2 = linalg.generic {{.*}} ins(%[[MAX]], %[[SUM1]], %[[SUM2]] :
// CHECK: math.sqrt %{{.*}} : f64
// CHECK: arith.constant 1.210000e+01 : f64
// CHECK: arith.constant 1.220000e+01 : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.cmpf ogt
// CHECK: arith.constant 7.000000e+00 : f32
// CHECK: %[[S:.*]] = arith.divf
// The reciprocal, once per group.
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: arith.divf %{{.*}}, %[[S]] : f32
// CHECK: arith.trunci %[[SEED]] : i64 to i32
// Each element multiplied by it.
// CHECK: %[[Q:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[SCALE]]#1 :
// CHECK-NOT: arith.divf
// CHECK: arith.mulf
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.constant 300 : index
// CHECK: arith.index_castui %{{.*}} : index to i32
// CHECK: arith.uitofp
// CHECK: arith.constant 5.96046448E-8 : f32
// CHECK: math.floor
// CHECK: arith.constant -7.000000e+00 : f32
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.cmpf uno
// CHECK: arith.select
// CHECK: arith.fptosi %{{.*}} : f32 to i8
// CHECK: return %[[Q]], %[[SCALE]]#0
func.func @quantize_sawb_stochastic(%x: tensor<4x300xf32>, %s: i64) -> (tensor<4x300xi8>, tensor<4xf32>) {
  %q, %sc = hot.quantize %x bits 4 granularity per_row scale sawb rounding stochastic seed %s : tensor<4x300xf32> -> tensor<4x300xi8>, tensor<4xf32>
  return %q, %sc : tensor<4x300xi8>, tensor<4xf32>
}

// -----

// per_tensor maxabs with nearest rounding: no f64 sums, no hash.
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @quantize_maxabs_nearest
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[ALL]]], iterator_types = ["reduction", "reduction"]}
// CHECK-SAME: outs(%{{.*}} : tensor<f32>)
// CHECK-NOT: f64
// CHECK: arith.constant 1.270000e+02 : f32
// CHECK-NOT: linalg.index
// CHECK: math.round
// CHECK: arith.fptosi
func.func @quantize_maxabs_nearest(%x: tensor<4x8xf32>) -> (tensor<4x8xi8>, tensor<f32>) {
  %q, %sc = hot.quantize %x bits 8 granularity per_tensor scale maxabs rounding nearest : tensor<4x8xf32> -> tensor<4x8xi8>, tensor<f32>
  return %q, %sc : tensor<4x8xi8>, tensor<f32>
}

// -----

// per_col groups reduce over the rows.
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @quantize_per_col
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[COL]]], iterator_types = ["reduction", "parallel"]}
func.func @quantize_per_col(%x: tensor<4x8xf32>) -> (tensor<4x8xi8>, tensor<8xf32>) {
  %q, %sc = hot.quantize %x bits 8 granularity per_col scale maxabs rounding nearest : tensor<4x8xf32> -> tensor<4x8xi8>, tensor<8xf32>
  return %q, %sc : tensor<4x8xi8>, tensor<8xf32>
}

// -----

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @dequantize
// CHECK-SAME: %[[Q:.*]]: tensor<4x8xi8>, %[[S:.*]]: tensor<8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]], {{.*}}} ins(%[[Q]], %[[S]] :
// CHECK: arith.sitofp %{{.*}} : i8 to f32
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @dequantize(%q: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xbf16> {
  %x = hot.dequantize %q, %s granularity per_col : tensor<4x8xi8>, tensor<8xf32> -> tensor<4x8xbf16>
  return %x : tensor<4x8xbf16>
}

// -----

// CHECK-DAG: #[[A_T:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @int_matmul_transposed_lhs
// CHECK-SAME: %[[A:.*]]: tensor<32x8xi8>, %[[BB:.*]]: tensor<32x16xi8>
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : i32)
// CHECK: linalg.matmul indexing_maps = [#[[A_T]], #[[B]], #[[C]]] ins(%[[A]], %[[BB]] : tensor<32x8xi8>, tensor<32x16xi8>) outs(%[[INIT]] : tensor<8x16xi32>)
func.func @int_matmul_transposed_lhs(%a: tensor<32x8xi8>, %b: tensor<32x16xi8>) -> tensor<8x16xi32> {
  %m = hot.int_matmul %a transposed, %b : tensor<32x8xi8>, tensor<32x16xi8> -> tensor<8x16xi32>
  return %m : tensor<8x16xi32>
}

// -----

// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[B_T:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @int_matmul_transposed_rhs
// CHECK: linalg.matmul indexing_maps = [#[[A]], #[[B_T]], #{{.*}}]
func.func @int_matmul_transposed_rhs(%a: tensor<8x32xi8>, %b: tensor<16x32xi8>) -> tensor<8x16xi32> {
  %m = hot.int_matmul %a, %b transposed : tensor<8x32xi8>, tensor<16x32xi8> -> tensor<8x16xi32>
  return %m : tensor<8x16xi32>
}

// -----

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @rescale
// CHECK-SAME: %[[ACC:.*]]: tensor<8x16xi32>, %[[R:.*]]: tensor<8xf32>, %[[C:.*]]: tensor<f32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ALL]], #[[ID]]], {{.*}}} ins(%[[ACC]], %[[R]], %[[C]] :
// CHECK: ^bb0(%[[IN:.*]]: i32, %[[RS:.*]]: f32, %[[CS:.*]]: f32,
// CHECK: %[[F:.*]] = arith.sitofp %[[IN]] : i32 to f32
// CHECK: %[[T:.*]] = arith.mulf %[[F]], %[[RS]]
// CHECK: arith.mulf %[[T]], %[[CS]]
func.func @rescale(%acc: tensor<8x16xi32>, %r: tensor<8xf32>, %c: tensor<f32>) -> tensor<8x16xf32> {
  %y = hot.rescale %acc, %r, %c : tensor<8x16xi32>, tensor<8xf32>, tensor<f32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// Nothing of the hot dialect survives, and other ops are left alone.
// CHECK-LABEL: func.func @mixed
// CHECK-NOT: hot.
// CHECK: arith.addf
func.func @mixed(%x: tensor<2x4xf32>, %y: f32) -> (tensor<2x4xf32>, f32) {
  %h = hot.hadamard %x along 1 block 4 : tensor<2x4xf32>
  %z = arith.addf %y, %y : f32
  return %h, %z : tensor<2x4xf32>, f32
}

// -----

// An empty batch with a tail along the projected dim: the result is empty
// too, and no slice of the empty input is taken.
// CHECK-LABEL: func.func @lowrank_empty
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<0x9xf32>
//  CHECK-NEXT:   return %[[E]]
func.func @lowrank_empty(%x: tensor<0x17xf32>) -> tensor<0x9xf32> {
  %y = hot.lowrank %x along 1 block 8 rank 4 allow_tail : tensor<0x17xf32> -> tensor<0x9xf32>
  return %y : tensor<0x9xf32>
}
