// RUN: hot-opt %s --split-input-file --hot-tile-parallel-loops | FileCheck %s
// RUN: not hot-opt %s --split-input-file --hot-tile-parallel-loops=threads=96 2>&1 \
// RUN:   | FileCheck %s --check-prefix=THREADS
// RUN: not hot-opt %s --split-input-file --hot-tile-parallel-loops=threads=2048 2>&1 \
// RUN:   | FileCheck %s --check-prefix=THREADS2048

// THREADS: error: hot-tile-parallel-loops: threads must be a power of two in [1, 1024] (the threads of a block), got 96
// THREADS2048: error: hot-tile-parallel-loops: threads must be a power of two in [1, 1024] (the threads of a block), got 2048

// A 2-D loop: the 256 threads go to the contiguous dim first (100 -> 128),
// the rest to the next (2); iterations past the end are guarded.
// CHECK-LABEL: func.func @rows_by_columns
//   CHECK-DAG:   %[[T0:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[T1:.*]] = arith.constant 128 : index
//       CHECK:   %[[S0:.*]] = arith.muli %c1, %[[T0]]
//       CHECK:   %[[S1:.*]] = arith.muli %c1, %[[T1]]
//       CHECK:   scf.parallel (%[[I:.*]], %[[J:.*]]) = (%c0, %c0) to (%c3072, %c100) step (%[[S0]], %[[S1]])
//       CHECK:     scf.parallel (%[[TI:.*]], %[[TJ:.*]]) = (%{{.*}}, %{{.*}}) to (%[[S0]], %[[S1]]) step (%c1{{.*}}, %c1{{.*}})
//       CHECK:       arith.cmpi ult, %{{.*}}, %c100
//       CHECK:       scf.if
//       CHECK:         memref.load
//       CHECK:         memref.store
func.func @rows_by_columns(%a: memref<3072x100xf32>, %b: memref<100x3072xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %c3072 = arith.constant 3072 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c3072, %c100) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<3072x100xf32>
    memref.store %v, %b[%j, %i] : memref<100x3072xf32>
    scf.reduce
  }
  return
}

// -----

// Small dims share the tile: 16 x 16.
// CHECK-LABEL: func.func @small
//       CHECK:   %[[T0:.*]] = arith.constant 16 : index
//       CHECK:   %[[T1:.*]] = arith.constant 16 : index
//       CHECK:   scf.parallel {{.*}} to (%c64, %c16)
//       CHECK:     scf.parallel
func.func @small(%a: memref<64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c16) step (%c1, %c1) {
    memref.store %f, %a[%i, %j] : memref<64x16xf32>
    scf.reduce
  }
  return
}

// -----

// More than two dims: all but the innermost collapse into one (2*3*4 = 24),
// so that the GPU mapping (three dims at most) sees two; 1 x 256 tiles.
// CHECK-LABEL: func.func @four_dims
//       CHECK:   %[[C24:.*]] = arith.constant 24 : index
//       CHECK:   scf.parallel (%{{.*}}, %{{.*}}) = ({{.*}}) to (%[[C24]], %{{.*}}) step
//       CHECK:     scf.parallel (%{{.*}}, %{{.*}}) = ({{.*}}) to
//       CHECK:       arith.divsi
//       CHECK:       memref.store {{.*}} : memref<2x3x4x768xf32>
func.func @four_dims(%a: memref<2x3x4x768xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c768 = arith.constant 768 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k, %l) = (%c0, %c0, %c0, %c0) to (%c2, %c3, %c4, %c768) step (%c1, %c1, %c1, %c1) {
    memref.store %f, %a[%i, %j, %k, %l] : memref<2x3x4x768xf32>
    scf.reduce
  }
  return
}

// -----

// A dynamic trip count takes the whole tile; a loop nest that already has an
// inner parallel loop is left alone.
// CHECK-LABEL: func.func @dynamic
//       CHECK:   %[[T:.*]] = arith.constant 256 : index
//       CHECK:   %[[S:.*]] = arith.muli %c1, %[[T]]
//       CHECK:   scf.parallel (%{{.*}}) = (%c0) to (%{{.*}}) step (%[[S]])
//       CHECK:     scf.parallel
//       CHECK:       scf.if
// CHECK-LABEL: func.func @nested
//  CHECK-NEXT:   arith.constant
//  CHECK-NEXT:   arith.constant
//  CHECK-NEXT:   arith.constant
//  CHECK-NEXT:   arith.constant
//  CHECK-NEXT:   scf.parallel (%{{.*}}) = (%c0) to (%c8) step (%c1)
//  CHECK-NEXT:     scf.parallel (%{{.*}}) = (%c0) to (%c8) step (%c1)
func.func @dynamic(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %f, %a[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
func.func @nested(%a: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      memref.store %f, %a[%i, %j] : memref<8x8xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// A loop with a reduction is left alone.
// CHECK-LABEL: func.func @reduction
//       CHECK:   scf.parallel (%{{.*}}) = (%c0) to (%c1024) step (%c1) init
//   CHECK-NOT:   scf.parallel
func.func @reduction(%a: memref<1024xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.parallel (%i) = (%c0) to (%c1024) step (%c1) init (%zero) -> f32 {
    %v = memref.load %a[%i] : memref<1024xf32>
    scf.reduce(%v : f32) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}
