// The simulator runs a launch on a stream when the host synchronizes that
// stream, not when the launch call returns: host code that reads a kernel's
// result without waiting for it reads what was there before (deterministically
// here; on a GPU, whatever the race gives), so the tests see a missing wait.
// This step reads its buffer once before the wait (1, the host's value) and
// once after it (2, the kernel's). A launch without a stream runs at once.
// The IR is already on buffers: the simulator's half of hot-lower-to-nvvm.
// RUN: hot-opt %s --gpu-kernel-outlining --hot-attach-simulator-target="chip=sm_80" \
// RUN:   --gpu-lower-to-nvvm-pipeline="cubin-chip=sm_80 cubin-features=+ptx70 cubin-format=isa" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%hot_simulator_runtime,%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | FileCheck %s

// CHECK: before the wait: 1
// CHECK-NEXT: after the wait: 2
module attributes {gpu.container_module} {
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %m = gpu.alloc host_shared () : memref<1xf32>
  memref.store %one, %m[%c0] : memref<1xf32>
  %t0 = gpu.wait async
  %t1 = gpu.launch async [%t0] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
                   threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %two, %m[%c0] : memref<1xf32>
    gpu.terminator
  }
  %before = memref.load %m[%c0] : memref<1xf32>
  vector.print str "before the wait: "
  vector.print %before : f32
  gpu.wait [%t1]
  %after = memref.load %m[%c0] : memref<1xf32>
  vector.print str "after the wait: "
  vector.print %after : f32
  return
}
}
