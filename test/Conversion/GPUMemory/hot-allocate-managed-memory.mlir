// RUN: hot-opt %s -split-input-file -verify-diagnostics --pass-pipeline="builtin.module(func.func(hot-allocate-managed-memory))" | FileCheck %s

// Host buffers become managed memory; the dealloc is chained between waits,
// the copy becomes a linalg op. Nothing else changes (no folding).
// CHECK-LABEL: func.func @host
// CHECK-SAME: (%[[ARG:.*]]: memref<4x8xf32>, %[[N:.*]]: index)
// CHECK-NEXT: %[[A:.*]] = gpu.alloc host_shared () : memref<4x8xf32>
// CHECK-NEXT: %[[D:.*]] = gpu.alloc host_shared (%[[N]]) : memref<?xi8>
// CHECK-NEXT: linalg.copy ins(%[[ARG]] : memref<4x8xf32>) outs(%[[A]] : memref<4x8xf32>)
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[C2:.*]] = arith.addi %[[C1]], %[[C1]] : index
// CHECK-NEXT: %[[V:.*]] = arith.constant 7 : i8
// CHECK-NEXT: memref.store %[[V]], %[[D]][%[[C2]]] : memref<?xi8>
// CHECK-NEXT: %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: %[[T1:.*]] = gpu.dealloc async [%[[T0]]] %[[D]] : memref<?xi8>
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: return %[[A]] : memref<4x8xf32>
func.func @host(%arg: memref<4x8xf32>, %n: index) -> memref<4x8xf32> {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  %d = memref.alloc(%n) : memref<?xi8>
  memref.copy %arg, %a : memref<4x8xf32> to memref<4x8xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.addi %c1, %c1 : index
  %v = arith.constant 7 : i8
  memref.store %v, %d[%c2] : memref<?xi8>
  memref.dealloc %d : memref<?xi8>
  return %a : memref<4x8xf32>
}

// -----

// Left alone: allocations in other memory spaces or with non-identity layouts,
// kernel bodies. A host copy becomes a linalg.copy whatever its layouts.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: gpu.alloc
// CHECK-NOT: gpu.dealloc
// CHECK: %[[S:.*]] = memref.alloc() : memref<4xf32, 3>
// CHECK: %[[T:.*]] = memref.alloc() : memref<4xf32, strided<[2]>>
// CHECK: linalg.copy ins(%[[S]] : memref<4xf32, 3>) outs(%[[T]] : memref<4xf32, strided<[2]>>)
// CHECK: gpu.launch
// CHECK: %[[K:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[K]], %[[K]]
// CHECK: memref.dealloc %[[K]] : memref<4xf32>
// CHECK: memref.dealloc %[[S]] : memref<4xf32, 3>
// CHECK: memref.dealloc %[[T]] : memref<4xf32, strided<[2]>>
// CHECK-NEXT: return
func.func @kept() {
  %c1 = arith.constant 1 : index
  %s = memref.alloc() : memref<4xf32, 3>
  %t = memref.alloc() : memref<4xf32, strided<[2]>>
  memref.copy %s, %t : memref<4xf32, 3> to memref<4xf32, strided<[2]>>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %k = memref.alloc() : memref<4xf32>
    memref.copy %k, %k : memref<4xf32> to memref<4xf32>
    memref.dealloc %k : memref<4xf32>
    gpu.terminator
  }
  memref.dealloc %s : memref<4xf32, 3>
  memref.dealloc %t : memref<4xf32, strided<[2]>>
  return
}

// -----

// A constant global read by the host code: one managed copy per function,
// made with a gpu.memcpy at entry (not a linalg.copy: the source is host
// memory, which kernels cannot read) and freed before every return. A
// mutable global stays.
memref.global "private" constant @table : memref<2x4xf32> = dense<1.0>
memref.global "private" @state : memref<4xf32> = dense<0.0>

// CHECK-LABEL: func.func @globals
// CHECK-SAME: (%[[OUT:.*]]: memref<2x4xf32>, %[[C:.*]]: i1)
// CHECK-NEXT: %[[HOST:.*]] = memref.get_global @table : memref<2x4xf32>
// CHECK-NEXT: %[[M:.*]] = gpu.alloc host_shared () : memref<2x4xf32>
// CHECK-NEXT: %[[W0:.*]] = gpu.wait async
// CHECK-NEXT: %[[W1:.*]] = gpu.memcpy async [%[[W0]]] %[[M]], %[[HOST]] : memref<2x4xf32>, memref<2x4xf32>
// CHECK-NEXT: gpu.wait [%[[W1]]]
// CHECK-NOT: memref.get_global @table
// CHECK: %[[ST:.*]] = memref.get_global @state : memref<4xf32>
// CHECK: linalg.copy ins(%[[M]] : memref<2x4xf32>) outs(%[[OUT]] : memref<2x4xf32>)
// CHECK: cf.cond_br
// CHECK: memref.load %[[M]]
// CHECK: memref.store %{{.*}}, %[[ST]]
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: %[[T1:.*]] = gpu.dealloc async [%[[T0]]] %[[M]] : memref<2x4xf32>
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: return
// CHECK: %[[U0:.*]] = gpu.wait async
// CHECK-NEXT: %[[U1:.*]] = gpu.dealloc async [%[[U0]]] %[[M]] : memref<2x4xf32>
// CHECK-NEXT: gpu.wait [%[[U1]]]
// CHECK-NEXT: return
func.func @globals(%out: memref<2x4xf32>, %c: i1) {
  %g = memref.get_global @table : memref<2x4xf32>
  // expected-remark @below {{mutable global 'state' left in host memory: a kernel reading it would fault}}
  %st = memref.get_global @state : memref<4xf32>
  memref.copy %g, %out : memref<2x4xf32> to memref<2x4xf32>
  cf.cond_br %c, ^a, ^b
^a:
  %c0 = arith.constant 0 : index
  %g2 = memref.get_global @table : memref<2x4xf32>
  %x = memref.load %g2[%c0, %c0] : memref<2x4xf32>
  memref.store %x, %st[%c0] : memref<4xf32>
  return
^b:
  return
}

// A returned copy (through a view) belongs to the caller: not freed.
// CHECK-LABEL: func.func @returned
// CHECK-NEXT: %[[HOST:.*]] = memref.get_global @table : memref<2x4xf32>
// CHECK-NEXT: %[[M:.*]] = gpu.alloc host_shared () : memref<2x4xf32>
// CHECK-NEXT: %[[W0:.*]] = gpu.wait async
// CHECK-NEXT: %[[W1:.*]] = gpu.memcpy async [%[[W0]]] %[[M]], %[[HOST]]
// CHECK-NEXT: gpu.wait [%[[W1]]]
// CHECK-NEXT: %[[V:.*]] = memref.collapse_shape %[[M]]
// CHECK-NEXT: return %[[V]] : memref<8xf32>
func.func @returned() -> memref<8xf32> {
  %g = memref.get_global @table : memref<2x4xf32>
  %v = memref.collapse_shape %g [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  return %v : memref<8xf32>
}

// Inside a kernel body the global is left to kernel outlining.
// CHECK-LABEL: func.func @in_kernel
// CHECK-NOT: gpu.alloc
// CHECK: gpu.launch
// CHECK: memref.get_global @table
func.func @in_kernel() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %g = memref.get_global @table : memref<2x4xf32>
    gpu.terminator
  }
  return
}
