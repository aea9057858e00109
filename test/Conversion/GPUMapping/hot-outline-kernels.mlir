// RUN: hot-opt %s --split-input-file --hot-outline-kernels | FileCheck %s
// RUN: hot-opt %s --split-input-file --hot-outline-kernels=module-name=generic | FileCheck %s --check-prefix=NAMED

// Three launches in two functions: one gpu.module of three kernels, each
// named after the module upstream's outlining gave it (its own name,
// @step_kernel, is taken twice), and the launches follow. The module that
// was there before keeps its kernel.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK:       gpu.module @hot_kernels {
// CHECK-NEXT:    gpu.func @hot_k() kernel
// CHECK:       func.func @step
// CHECK:         gpu.launch_func @hot_kernels::@hot_k blocks
// CHECK:         gpu.launch_func @linalg_kernels::@step_kernel blocks
// CHECK:         gpu.launch_func @linalg_kernels::@step_kernel_0 blocks
// CHECK:       gpu.module @linalg_kernels {
// CHECK-NEXT:    gpu.func @step_kernel(%{{.*}}: f32, %{{.*}}: memref<4xf32>) kernel
// CHECK:           memref.store
// CHECK:         gpu.func @step_kernel_0(%{{.*}}: memref<4xf32>) kernel
// CHECK:           memref.load
// CHECK:         gpu.func @other_kernel() kernel
// CHECK:       func.func @other
// CHECK:         gpu.launch_func @linalg_kernels::@other_kernel blocks
// CHECK-NOT:   gpu.module
// NAMED:       gpu.launch_func @generic::@step_kernel blocks
// NAMED:       gpu.module @generic {
// NAMED-NEXT:    gpu.func @step_kernel(
module attributes {gpu.container_module} {
  gpu.module @hot_kernels {
    gpu.func @hot_k() kernel {
      gpu.return
    }
  }
  func.func @step(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %f = arith.constant 1.0 : f32
    gpu.launch_func @hot_kernels::@hot_k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
               threads(%tx, %ty, %tz) in (%a = %c4, %b = %c1, %c = %c1) {
      memref.store %f, %m[%tx] : memref<4xf32>
      gpu.terminator
    }
    gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
               threads(%tx, %ty, %tz) in (%a = %c4, %b = %c1, %c = %c1) {
      %v = memref.load %m[%tx] : memref<4xf32>
      gpu.terminator
    }
    return
  }
  func.func @other() {
    %c1 = arith.constant 1 : index
    gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
               threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
      gpu.terminator
    }
    return
  }
}

// -----

// The name is taken by a function: the module gets a unique one.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK:       func.func private @linalg_kernels()
// CHECK:       gpu.launch_func @linalg_kernels_0::@f_kernel blocks
// CHECK:       gpu.module @linalg_kernels_0 {
// CHECK-NEXT:    gpu.func @f_kernel() kernel
func.func private @linalg_kernels()
func.func @f() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
    gpu.terminator
  }
  return
}

// -----

// Outlining copies the function that both kernels call into both modules:
// the merged module keeps one copy, and both kernels call it.
// CHECK-LABEL: func.func @helper
// CHECK:       gpu.launch_func @linalg_kernels::@g_kernel blocks
// CHECK:       gpu.launch_func @linalg_kernels::@g_kernel_0 blocks
// CHECK:       gpu.module @linalg_kernels {
// CHECK:         gpu.func @g_kernel(
// CHECK:           func.call @helper
// CHECK:         func.func @helper(
// CHECK-NOT:     func.func @helper
// CHECK:         gpu.func @g_kernel_0(
// CHECK-COUNT-2:   func.call @helper
// CHECK-NOT:     func.func @helper
func.func @helper(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  return %y : f32
}
func.func @g(%m: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%a = %c4, %b = %c1, %c = %c1) {
    %v = memref.load %m[%tx] : memref<4xf32>
    %w = func.call @helper(%v) : (f32) -> f32
    memref.store %w, %m[%tx] : memref<4xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%a = %c4, %b = %c1, %c = %c1) {
    %v = memref.load %m[%tx] : memref<4xf32>
    %w = func.call @helper(%v) : (f32) -> f32
    %u = func.call @helper(%w) : (f32) -> f32
    memref.store %u, %m[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// No launch: nothing changes.
// CHECK-LABEL: func.func @no_launch
// CHECK-NOT:   gpu.module
func.func @no_launch() {
  return
}
