// RUN: hot-opt %s --hot-outline-loop-nests | FileCheck %s

// Each outermost loop of a function (not one inside another loop, but one
// inside an scf.if) becomes a private, internal, never-inlined function that
// takes the values it uses from outside, with the constants cloned in, and
// returns the loop's results; a call takes the loop's place. Names skip
// those already taken.

// CHECK-LABEL: func.func private @step_loop0(
// CHECK-SAME: %[[A0:.*]]: memref<8xf32>, %[[S0:.*]]: f32, %[[B0:.*]]: memref<8xf32>)
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
// CHECK:   scf.for %[[I:.*]] = %[[C0]] to %[[C8]]
// CHECK:     scf.for
// CHECK:       memref.load %[[A0]]
// CHECK:       arith.mulf %{{.*}}, %[[S0]]
// CHECK:       memref.store %{{.*}}, %[[B0]][%[[I]]]
// CHECK:   return
// CHECK: func.func private @step_loop2(%[[B2:.*]]: memref<8xf32>) -> f32
// CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:   %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// CHECK:   return %[[R]] : f32
// CHECK: func.func private @step_loop3(%{{.*}}: memref<8xf32>)
// CHECK:   scf.parallel
// CHECK: func.func private @step_loop4(%{{.*}}: f32) -> f32
// CHECK:   scf.while

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>, %[[S:.*]]: f32, %[[C:.*]]: i1)
// CHECK-NOT:   scf.for
// CHECK:   call @step_loop0(%[[A]], %[[S]], %[[B]]) : (memref<8xf32>, f32, memref<8xf32>) -> ()
// CHECK:   %[[SUM:.*]] = call @step_loop2(%[[B]]) : (memref<8xf32>) -> f32
// CHECK:   scf.if %[[C]] {
// CHECK:     func.call @step_loop3(%[[B]]) : (memref<8xf32>) -> ()
// CHECK:   }
// CHECK:   %[[W:.*]] = call @step_loop4(%[[S]]) : (f32) -> f32
// CHECK:   return %[[SUM]], %[[W]] : f32, f32
// CHECK: func.func private @step_loop1()
func.func @step(%a: memref<8xf32>, %b: memref<8xf32>, %s: f32, %c: i1) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %a[%j] : memref<8xf32>
      %w = arith.mulf %v, %s : f32
      memref.store %w, %b[%i] : memref<8xf32>
    }
  }
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %b[%i] : memref<8xf32>
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  scf.if %c {
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %zero, %b[%i] : memref<8xf32>
    }
  }
  %w = scf.while (%x = %s) : (f32) -> f32 {
    %small = arith.cmpf olt, %x, %zero : f32
    scf.condition(%small) %x : f32
  } do {
  ^bb0(%y: f32):
    %z = arith.addf %y, %y : f32
    scf.yield %z : f32
  }
  return %sum, %w : f32, f32
}

// @step_loop1 is taken.
func.func private @step_loop1()
