// RUN: hot-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(hot-gpu-device-buffers))" | FileCheck %s
// RUN: hot-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(hot-gpu-device-buffers{remarks=1}))" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Buffers that kernels alone use (through views, in a launch body, as a
// launch_func operand), freed and asked for their sizes: device memory, in
// the stand-alone async form gpu-to-llvm lowers.
// CHECK-LABEL: func.func @kernels_only
//       CHECK:   %[[S0:.*]] = gpu.wait async
//       CHECK:   %[[A:.*]], %[[S1:.*]] = gpu.alloc async [%[[S0]]] () : memref<16x8xf32>
//       CHECK:   gpu.wait [%[[S1]]]
//       CHECK:   %[[D0:.*]] = gpu.wait async
//       CHECK:   %[[B:.*]], %[[D1:.*]] = gpu.alloc async [%[[D0]]] (%{{.*}}) : memref<?xi8>
//       CHECK:   gpu.wait [%[[D1]]]
//       CHECK:   memref.collapse_shape %[[A]]
//       CHECK:   gpu.launch_func @k::@a
//       CHECK:   gpu.launch
//       CHECK:   memref.dim %[[B]]
//   CHECK-NOT:   host_shared
//       CHECK:   return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a(%m: memref<128xf32>) kernel { gpu.return }
  }
  func.func @kernels_only(%n: index) -> index {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %f = arith.constant 1.0 : f32
    %a = gpu.alloc host_shared () : memref<16x8xf32>
    %b = gpu.alloc host_shared (%n) : memref<?xi8>
    %flat = memref.collapse_shape %a [[0, 1]] : memref<16x8xf32> into memref<128xf32>
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%flat : memref<128xf32>)
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      memref.store %f, %a[%c0, %c0] : memref<16x8xf32>
      %v = memref.load %b[%c0] : memref<?xi8>
      gpu.terminator
    }
    %size = memref.dim %b, %c0 : memref<?xi8>
    %t0 = gpu.wait async
    %t1 = gpu.dealloc async [%t0] %a : memref<16x8xf32>
    gpu.wait [%t1]
    %t2 = gpu.wait async
    %t3 = gpu.dealloc async [%t2] %b : memref<?xi8>
    gpu.wait [%t3]
    return %size : index
  }
}

// -----

// What the host may touch stays managed: a returned buffer, one returned
// through a view, one the host reads, one a call receives; a remark names
// the use. Allocations inside a kernel body are not host code.
// CHECK-LABEL: func.func @host_uses
//   CHECK-COUNT-4: gpu.alloc  host_shared
//   CHECK-NOT: gpu.alloc async
// REMARK: hot-gpu-device-buffers.mlir:[[@LINE+11]]:10: remark: stays in managed memory: 'func.return' may touch it on the host
// REMARK: :[[@LINE+17]]:5: note: used here
// REMARK: :[[@LINE+10]]:10: remark: stays in managed memory: 'func.return' may touch it on the host
// REMARK: :[[@LINE+10]]:10: remark: stays in managed memory: 'memref.load' may touch it on the host
// REMARK: :[[@LINE+10]]:10: remark: stays in managed memory: 'func.call' may touch it on the host
// REMARK-NOT: remark
module attributes {gpu.container_module} {
  func.func private @consume(memref<4xf32>)
  func.func @host_uses() -> (memref<4xf32>, memref<2xf32, strided<[1]>>, f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = gpu.alloc host_shared () : memref<4xf32>
    %w = gpu.alloc host_shared () : memref<4xf32>
    %l = gpu.alloc host_shared () : memref<4xf32>
    %c = gpu.alloc host_shared () : memref<4xf32>
    %v = memref.subview %w[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
    %x = memref.load %l[%c0] : memref<4xf32>
    func.call @consume(%c) : (memref<4xf32>) -> ()
    return %r, %v, %x : memref<4xf32>, memref<2xf32, strided<[1]>>, f32
  }
}
