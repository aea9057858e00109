// RUN: hot-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(hot-gpu-async-launches))" | FileCheck %s
// RUN: hot-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(hot-gpu-async-launches))" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Where the host waits before a function's end, a remark says why.
// REMARK: gpu-async-launches.mlir:[[@LINE+33]]:10: remark: the host waits here for the 2 kernel launches before it: 'memref.load' may touch memory on the host
// REMARK: remark: the host waits here for the 1 kernel launch before it: 'memref.store' may touch memory on the host
// REMARK: remark: the host waits here for the 1 kernel launch before it: 'scf.for' may touch memory on the host
// REMARK: remark: the host waits here for the 2 kernel launches before it: they end the body of 'scf.for', which waits for them each time it runs
// REMARK: remark: the host waits here for the 1 kernel launch before it: 'gpu.wait' is a GPU op with its own stream order, left alone
// REMARK-NOT: remark

// Two launches with an allocation and a view between them: the allocation
// moves before the first launch, both launches chain on one token (one
// stream), and the host waits once, before the load that reads the result.
// CHECK-LABEL: func.func @chain
//       CHECK:   %[[B:.*]] = gpu.alloc  host_shared () : memref<16xf32>
//       CHECK:   %[[T0:.*]] = gpu.wait async
//       CHECK:   %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @k::@a
//       CHECK:   memref.subview %[[B]]
//       CHECK:   %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @k::@b
//       CHECK:   gpu.wait [%[[T2]]]
//       CHECK:   memref.load %[[B]]
//   CHECK-NOT:   gpu.wait
//       CHECK:   return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a() kernel { gpu.return }
    gpu.func @b(%m: memref<8xf32, strided<[1], offset: 8>>) kernel { gpu.return }
  }
  func.func @chain() -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
    %b = gpu.alloc host_shared () : memref<16xf32>
    %v = memref.subview %b[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
    gpu.launch_func @k::@b blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%v : memref<8xf32, strided<[1], offset: 8>>)
    %r = memref.load %b[%c0] : memref<16xf32>
    return %r : f32
  }
}

// -----

// An op that touches memory on the host ends a chain; a gpu.launch (not yet
// outlined) chains like a launch_func; the chain of a loop body ends before
// its terminator, the loop itself (which launches) ends the function's.
// CHECK-LABEL: func.func @runs
//       CHECK:   %[[T0:.*]] = gpu.wait async
//       CHECK:   %[[T1:.*]] = gpu.launch async [%[[T0]]]
//       CHECK:   gpu.wait [%[[T1]]]
//       CHECK:   memref.store
//       CHECK:   %[[T2:.*]] = gpu.wait async
//       CHECK:   %[[T3:.*]] = gpu.launch_func async [%[[T2]]] @k::@a
//       CHECK:   gpu.wait [%[[T3]]]
//       CHECK:   scf.for
//       CHECK:     %[[T4:.*]] = gpu.wait async
//       CHECK:     %[[T5:.*]] = gpu.launch_func async [%[[T4]]] @k::@a
//       CHECK:     %[[T6:.*]] = gpu.launch_func async [%[[T5]]] @k::@a
//       CHECK:     gpu.wait [%[[T6]]]
//  CHECK-NEXT:   }
//       CHECK:   return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a() kernel { gpu.return }
  }
  func.func @runs(%m: memref<4xf32>, %x: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      memref.store %x, %m[%tx] : memref<4xf32>
      gpu.terminator
    }
    memref.store %x, %m[%c0] : memref<4xf32>
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
    scf.for %i = %c0 to %c4 step %c1 {
      gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
      gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
    }
    return
  }
}

// -----

// A launch that is already async is the caller's chain: left alone, and it
// ends ours. A function without launches is unchanged.
// CHECK-LABEL: func.func @caller_chain
//       CHECK:   %[[T0:.*]] = gpu.wait async
//       CHECK:   %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @k::@a
//       CHECK:   gpu.wait [%[[T1]]]
//       CHECK:   %[[U:.*]] = gpu.launch_func async [%[[D:.*]]] @k::@a
//       CHECK:   gpu.wait [%[[U]]]
//   CHECK-NOT:   gpu.wait
//       CHECK:   return
// CHECK-LABEL: func.func @no_launch
//   CHECK-NOT:   gpu.
//       CHECK:   return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a() kernel { gpu.return }
  }
  func.func @caller_chain() {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
    %d = gpu.wait async
    %u = gpu.launch_func async [%d] @k::@a blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
    gpu.wait [%u]
    return
  }
  func.func @no_launch(%m: memref<4xf32>, %x: f32) {
    %c0 = arith.constant 0 : index
    memref.store %x, %m[%c0] : memref<4xf32>
    return
  }
}

// -----

// The frees of hot-allocate-managed-memory after the launches (each a
// `gpu.wait async`, a `gpu.dealloc async` and a blocking `gpu.wait`) join the
// chain: freed in stream order after the kernels, one host wait at the end. A
// free with no launch before it keeps its own stream.
// CHECK-LABEL: func.func @frees
//       CHECK:   %[[A:.*]] = gpu.alloc  host_shared () : memref<16xf32>
//       CHECK:   %[[B:.*]] = gpu.alloc  host_shared () : memref<16xf32>
//       CHECK:   %[[W0:.*]] = gpu.wait async
//       CHECK:   %[[D0:.*]] = gpu.dealloc async [%[[W0]]] %[[B]]
//       CHECK:   gpu.wait [%[[D0]]]
//       CHECK:   %[[T0:.*]] = gpu.wait async
//       CHECK:   %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @k::@a
//  CHECK-NEXT:   %[[T2:.*]] = gpu.dealloc async [%[[T1]]] %[[A]]
//  CHECK-NEXT:   gpu.wait [%[[T2]]]
//  CHECK-NEXT:   return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a(%m: memref<16xf32>) kernel { gpu.return }
  }
  func.func @frees() {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %a = gpu.alloc host_shared () : memref<16xf32>
    %b = gpu.alloc host_shared () : memref<16xf32>
    %w0 = gpu.wait async
    %d0 = gpu.dealloc async [%w0] %b : memref<16xf32>
    gpu.wait [%d0]
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : memref<16xf32>)
    %w1 = gpu.wait async
    %d1 = gpu.dealloc async [%w1] %a : memref<16xf32>
    gpu.wait [%d1]
    return
  }
}

// -----

// Device allocations in hot-gpu-device-buffers' stand-alone form: the first,
// before any launch, starts the chain; a copy (a constant's, from
// hot-allocate-managed-memory) and an allocation between launches join it,
// as do the frees after them. One stream, one host synchronization.
// CHECK-LABEL: func.func @device_buffers
//       CHECK:   %[[T0:.*]] = gpu.wait async
//       CHECK:   %[[A:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<16xf32>
//   CHECK-NOT:   gpu.wait
//       CHECK:   %[[C:.*]] = gpu.memcpy async [%[[T1]]] %[[A]]
//   CHECK-NOT:   gpu.wait
//       CHECK:   %[[T2:.*]] = gpu.launch_func async [%[[C]]] @k::@a
//   CHECK-NOT:   gpu.wait
//       CHECK:   %[[B:.*]], %[[T3:.*]] = gpu.alloc async [%[[T2]]] () : memref<16xf32>
//   CHECK-NOT:   gpu.wait
//       CHECK:   %[[T4:.*]] = gpu.launch_func async [%[[T3]]] @k::@b
//       CHECK:   %[[T5:.*]] = gpu.dealloc async [%[[T4]]] %[[A]]
//       CHECK:   %[[T6:.*]] = gpu.dealloc async [%[[T5]]] %[[B]]
//  CHECK-NEXT:   gpu.wait [%[[T6]]]
//  CHECK-NEXT:   return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a(%m: memref<16xf32>) kernel { gpu.return }
    gpu.func @b(%m: memref<16xf32>) kernel { gpu.return }
  }
  func.func @device_buffers(%host: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    %s0 = gpu.wait async
    %a, %s1 = gpu.alloc async [%s0] () : memref<16xf32>
    gpu.wait [%s1]
    %m0 = gpu.wait async
    %m1 = gpu.memcpy async [%m0] %a, %host : memref<16xf32>, memref<16xf32>
    gpu.wait [%m1]
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    %t0 = gpu.wait async
    %b, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    gpu.wait [%t1]
    gpu.launch_func @k::@b blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<16xf32>)
    %f0 = gpu.wait async
    %f1 = gpu.dealloc async [%f0] %a : memref<16xf32>
    gpu.wait [%f1]
    %g0 = gpu.wait async
    %g1 = gpu.dealloc async [%g0] %b : memref<16xf32>
    gpu.wait [%g1]
    return
  }
}
