// RUN: hot-opt %s --hot-lower-to-nvvm="chip=sm_90 format=isa" | FileCheck %s
// RUN: hot-opt %s --hot-lower-to-nvvm="chip=sm_90 format=isa" \
// RUN:   --mlir-print-ir-after=hot-outline-kernels -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LAUNCH

// The generic kernel's iterations go to the threads of a block (tiled by
// hot-tile-parallel-loops), here all 4 x 8 in one block.
// LAUNCH: gpu.launch_func async [%{{.*}}] @linalg_kernels::@add_constant_kernel blocks in (%c1, %c1, %c1) threads in (%c4, %c8, %c1)

// Host code after the whole pipeline: the returned buffer is managed memory
// (mgpuMemAlloc with isHostShared = 1, never malloc), and a constant the
// kernel reads reaches it as a device copy of the host global (isHostShared =
// 0: only the kernel touches it), made by mgpuMemcpy and freed after the
// launch; never the global's own address. The copy's allocation, the copy,
// the launch and the free go on one stream that the host synchronizes once,
// at the end (hot-gpu-device-buffers, hot-gpu-async-launches).

// CHECK-NOT: llvm.call @malloc
// CHECK-LABEL: llvm.func @add_constant
// CHECK-SAME: (%[[X:[a-z0-9]+]]: !llvm.ptr, %[[XA:[a-z0-9]+]]: !llvm.ptr,
// CHECK-DAG: %[[DEVICE:.*]] = llvm.mlir.constant(0 : i8) : i8
// CHECK-DAG: %[[SHARED:.*]] = llvm.mlir.constant(1 : i8) : i8
// CHECK-DAG: %[[GLOBAL:.*]] = llvm.mlir.addressof @__constant_4x8xf32
// CHECK: %[[SRC:.*]] = llvm.getelementptr %[[GLOBAL]][0, 0, 0]
// CHECK: %[[OUT:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %{{.*}}, %[[SHARED]])
// CHECK: %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// CHECK: %[[COPY:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[STREAM]], %[[DEVICE]])
// CHECK: llvm.call @mgpuMemcpy(%[[COPY]], %[[SRC]], %{{.*}}, %[[STREAM]])
// CHECK: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @linalg_kernels::@add_constant_kernel
// CHECK-SAME: args(%[[X]] : !llvm.ptr, %[[XA]] : !llvm.ptr, {{.*}}, %[[COPY]] : !llvm.ptr, %[[COPY]] : !llvm.ptr, {{.*}}, %[[OUT]] : !llvm.ptr, %[[OUT]] : !llvm.ptr,
// CHECK: llvm.call @mgpuMemFree(%[[COPY]], %[[STREAM]])
// CHECK: llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// CHECK: llvm.call @mgpuStreamDestroy(%[[STREAM]])
// CHECK-NOT: @mgpuMemFree(%[[OUT]]
// CHECK: llvm.return
// CHECK-NOT: llvm.call @malloc
func.func @add_constant(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                             [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                             [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                             [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 9.0]]> : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.add ins(%x, %c : tensor<4x8xf32>, tensor<4x8xf32>)
                  outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
