// RUN: hot-opt %s --hot-lower-to-nvvm="chip=sm_90 format=isa c-interface=1 results-to-out-params=1" | FileCheck %s
// RUN: hot-opt %s --hot-lower-to-nvvm="chip=sm_90 format=isa" | FileCheck %s --check-prefix=DEFAULT

// The calling convention of python/hot/runner.py's cuda target, as on the
// CPU: a C wrapper whose tensor results are caller-allocated trailing
// descriptors, filled by a copy kernel from the step's device buffer (freed
// before returning). Without the options the result is returned, no wrapper.
// The allocation, both kernels and the frees go on one stream, synchronized
// once at the end.

// CHECK-LABEL: llvm.func @scale_rows
// CHECK-SAME: %[[OUT:arg12]]: !llvm.ptr, %[[OUTA:arg13]]: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK: %[[DEVICE:.*]] = llvm.mlir.constant(0 : i8) : i8
// Nothing of the function's own is managed memory: the constant's copy (made
// by mgpuMemcpy) and the temporary are device memory, on the stream.
// CHECK-NOT: llvm.mlir.constant(1 : i8)
// CHECK: %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// CHECK: %[[CONST:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[STREAM]], %[[DEVICE]])
// CHECK: llvm.call @mgpuMemcpy(%[[CONST]], %{{.*}}, %{{.*}}, %[[STREAM]])
// CHECK: %[[TMP:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[STREAM]], %[[DEVICE]])
// CHECK: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @linalg_kernels::@scale_rows_kernel
// CHECK-NOT: mgpuStreamSynchronize
// CHECK: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @linalg_kernels::@scale_rows_kernel_0
// CHECK-SAME: args(%[[TMP]] : !llvm.ptr, %[[TMP]] : !llvm.ptr, {{.*}}, %[[OUT]] : !llvm.ptr, %[[OUTA]] : !llvm.ptr,
// CHECK: llvm.call @mgpuMemFree(%[[TMP]], %[[STREAM]])
// CHECK: llvm.call @mgpuMemFree(%[[CONST]], %[[STREAM]])
// CHECK: llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @_mlir_ciface_scale_rows
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT: llvm.func @_mlir_ciface_mgpu

// DEFAULT-LABEL: llvm.func @scale_rows
// DEFAULT-SAME: -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// DEFAULT-NOT: _mlir_ciface_scale_rows
func.func @scale_rows(%acc: tensor<8x16xi32>, %s: tensor<8xf32>) -> tensor<8x16xf32> {
  %one = arith.constant dense<1.0> : tensor<16xf32>
  %y = hot.rescale %acc, %s, %one
      : tensor<8x16xi32>, tensor<8xf32>, tensor<16xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
