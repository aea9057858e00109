// RUN: hot-opt %s --split-input-file --hot-parallel-dims-outermost | FileCheck %s
// RUN: hot-opt %s --split-input-file --hot-parallel-dims-outermost --convert-linalg-to-parallel-loops | FileCheck %s --check-prefix=LOOPS

// A bias gradient: [tokens, channels] summed over the tokens (d0). The
// parallel channel dim goes first; each output still adds the tokens in
// order.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @bias_grad
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: arith.addf %[[A]], %[[B]] : f32
// LOOPS-LABEL: func.func @bias_grad
// LOOPS: scf.parallel (%[[C:.*]]) = (%c0) to (%c32) step (%c1) {
// LOOPS-NEXT: scf.for %[[T:.*]] = %c0 to %c34 step %c1 {
// LOOPS-NEXT: memref.load %{{.*}}[%[[T]], %[[C]]] : memref<34x32xf32>
func.func @bias_grad(%gy: memref<34x32xf32>, %gb: memref<32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%gy : memref<34x32xf32>) outs(%gb : memref<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A named op with its reduction first is generalized, then interchanged.
// CHECK-LABEL: func.func @reduce_rows
// CHECK-NOT: linalg.reduce
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// LOOPS-LABEL: func.func @reduce_rows
// LOOPS: scf.parallel
// LOOPS-NEXT: scf.for
func.func @reduce_rows(%x: memref<8x4x16xf32>, %y: memref<4x16xf32>) {
  linalg.reduce ins(%x : memref<8x4x16xf32>) outs(%y : memref<4x16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Already in order (a matmul), or nothing parallel (a sum to a scalar):
// unchanged.
// CHECK-LABEL: func.func @unchanged
// CHECK: linalg.matmul
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
func.func @unchanged(%a: memref<4x8xf32>, %b: memref<8x2xf32>, %c: memref<4x2xf32>, %s: memref<f32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x2xf32>) outs(%c : memref<4x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<4x8xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %t = arith.addf %in, %acc : f32
    linalg.yield %t : f32
  }
  return
}
