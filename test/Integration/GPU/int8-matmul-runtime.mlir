// REQUIRES: cuda, ptxas
// A cubin for the device's chip, loaded with mgpuModuleLoad:
// RUN: mlir-opt %s --gpu-lower-to-nvvm-pipeline="cubin-chip=%cuda_chip cubin-features=%cuda_ptx_features cubin-format=fatbin opt-level=3" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%hot_cuda_runtime,%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | FileCheck %s
// PTX, compiled by the driver's JIT in mgpuModuleLoadJIT:
// RUN: mlir-opt %s --gpu-lower-to-nvvm-pipeline="cubin-chip=%cuda_chip cubin-features=%cuda_ptx_features cubin-format=isa opt-level=3" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%hot_cuda_runtime,%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | FileCheck %s

// An i8 x i8 -> i32 product C = A Bᵀ (16x16, K = 64) on the GPU through
// libhot_cuda_runtime.so, compared with the same product computed on the host.
// It exercises managed memory (A), device memory with copies both ways (B, C),
// a 32-bit memset (C is poisoned before the launch), a stream chain of async
// tokens, and 64 KiB of dynamic shared memory, above the 48 KiB that needs the
// runtime's opt-in. A[i, k] = (7i + 3k) mod 17 - 8, B[j, k] = (5j + k) mod 13
// - 6; the expected rows were computed with numpy.

// CHECK: [45,  -37,  -67,  111,  29,  -40,  -109,  -9,  182,  9,  -151,  14,  23,  45,  -37,  -67]
// CHECK: [-7,  -116,  9,  160,  12,  -123,  2,  36,  -21,  -39,  -44,  94,  37,  -7,  -116,  9]
// CHECK: mismatches: 0
// CHECK-NEXT: checksum: -126
// CHECK-NOT: hot_cuda_runtime

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // One block of 16x16 threads, thread (x, y) computes C[y, x]. The block
    // first stages B in dynamic shared memory (row j by thread y = j).
    gpu.func @matmul_tn(%a: memref<16x64xi8>, %b: memref<16x64xi8>,
                        %c: memref<16x16xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0 : i32
      %x = gpu.thread_id x
      %y = gpu.thread_id y
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %bs = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>>
          to memref<16x64xi8, #gpu.address_space<workgroup>>
      %k0 = arith.muli %x, %c4 : index
      %k1 = arith.addi %k0, %c4 : index
      scf.for %k = %k0 to %k1 step %c1 {
        %v = memref.load %b[%y, %k] : memref<16x64xi8>
        memref.store %v, %bs[%y, %k] : memref<16x64xi8, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %sum = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> i32 {
        %av = memref.load %a[%y, %k] : memref<16x64xi8>
        %bv = memref.load %bs[%x, %k] : memref<16x64xi8, #gpu.address_space<workgroup>>
        %ae = arith.extsi %av : i8 to i32
        %be = arith.extsi %bv : i8 to i32
        %p = arith.muli %ae, %be : i32
        %s = arith.addi %acc, %p : i32
        scf.yield %s : i32
      }
      memref.store %sum, %c[%y, %x] : memref<16x16xi32>
      gpu.return
    }
  }

  func.func private @printMemrefI32(memref<*xi32>)
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func private @printString(!llvm.ptr)

  // (m * i + n * k) mod p - o as i8.
  func.func @pattern(%i: index, %k: index, %m: index, %n: index, %p: index,
                     %o: index) -> i8 {
    %mi = arith.muli %m, %i : index
    %nk = arith.muli %n, %k : index
    %s = arith.addi %mi, %nk : index
    %r = arith.remui %s, %p : index
    %v = arith.subi %r, %o : index
    %w = arith.index_cast %v : index to i32
    %t = arith.trunci %w : i32 to i8
    return %t : i8
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c6 = arith.constant 6 : index
    %c7 = arith.constant 7 : index
    %c8 = arith.constant 8 : index
    %c13 = arith.constant 13 : index
    %c15 = arith.constant 15 : index
    %c16 = arith.constant 16 : index
    %c17 = arith.constant 17 : index
    %c64 = arith.constant 64 : index
    %smem = arith.constant 65536 : i32
    %poison = arith.constant -559038737 : i32
    %zero = arith.constant 0 : i64
    %one = arith.constant 1 : i64

    // A in managed memory, written by the host directly.
    %a = gpu.alloc host_shared () : memref<16x64xi8>
    %hb = memref.alloc() : memref<16x64xi8>
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %k = %c0 to %c64 step %c1 {
        %av = func.call @pattern(%i, %k, %c7, %c3, %c17, %c8)
            : (index, index, index, index, index, index) -> i8
        memref.store %av, %a[%i, %k] : memref<16x64xi8>
        %bv = func.call @pattern(%i, %k, %c5, %c1, %c13, %c6)
            : (index, index, index, index, index, index) -> i8
        memref.store %bv, %hb[%i, %k] : memref<16x64xi8>
      }
    }

    %t0 = gpu.wait async
    %b, %t1 = gpu.alloc async [%t0] () : memref<16x64xi8>
    %c, %t2 = gpu.alloc async [%t1] () : memref<16x16xi32>
    %t3 = gpu.memcpy async [%t2] %b, %hb : memref<16x64xi8>, memref<16x64xi8>
    %t4 = gpu.memset async [%t3] %c, %poison : memref<16x16xi32>, i32
    %t5 = gpu.launch_func async [%t4] @kernels::@matmul_tn
        blocks in (%c1, %c1, %c1) threads in (%c16, %c16, %c1)
        dynamic_shared_memory_size %smem
        args(%a : memref<16x64xi8>, %b : memref<16x64xi8>, %c : memref<16x16xi32>)
    %hc = memref.alloc() : memref<16x16xi32>
    %t6 = gpu.memcpy async [%t5] %hc, %c : memref<16x16xi32>, memref<16x16xi32>
    %t7 = gpu.dealloc async [%t6] %b : memref<16x64xi8>
    %t8 = gpu.dealloc async [%t7] %c : memref<16x16xi32>
    gpu.wait [%t8]

    %row0 = memref.subview %hc[0, 0] [1, 16] [1, 1]
        : memref<16x16xi32> to memref<1x16xi32, strided<[16, 1]>>
    %u0 = memref.cast %row0 : memref<1x16xi32, strided<[16, 1]>> to memref<*xi32>
    call @printMemrefI32(%u0) : (memref<*xi32>) -> ()
    %row15 = memref.subview %hc[15, 0] [1, 16] [1, 1]
        : memref<16x16xi32> to memref<1x16xi32, strided<[16, 1], offset: 240>>
    %u15 = memref.cast %row15 : memref<1x16xi32, strided<[16, 1], offset: 240>> to memref<*xi32>
    call @printMemrefI32(%u15) : (memref<*xi32>) -> ()

    // The host reference, over the same A (managed) and B (host copy).
    %bad, %total = scf.for %i = %c0 to %c16 step %c1
        iter_args(%nbad = %zero, %sum = %zero) -> (i64, i64) {
      %r:2 = scf.for %j = %c0 to %c16 step %c1
          iter_args(%nb = %nbad, %s = %sum) -> (i64, i64) {
        %ref = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> i64 {
          %av = memref.load %a[%i, %k] : memref<16x64xi8>
          %bv = memref.load %hb[%j, %k] : memref<16x64xi8>
          %ae = arith.extsi %av : i8 to i64
          %be = arith.extsi %bv : i8 to i64
          %p = arith.muli %ae, %be : i64
          %n = arith.addi %acc, %p : i64
          scf.yield %n : i64
        }
        %gv = memref.load %hc[%i, %j] : memref<16x16xi32>
        %g = arith.extsi %gv : i32 to i64
        %ne = arith.cmpi ne, %g, %ref : i64
        %inc = arith.select %ne, %one, %zero : i64
        %nb2 = arith.addi %nb, %inc : i64
        %s2 = arith.addi %s, %g : i64
        scf.yield %nb2, %s2 : i64, i64
      }
      scf.yield %r#0, %r#1 : i64, i64
    }
    %msg0 = llvm.mlir.addressof @mismatches : !llvm.ptr
    call @printString(%msg0) : (!llvm.ptr) -> ()
    call @printI64(%bad) : (i64) -> ()
    call @printNewline() : () -> ()
    %msg1 = llvm.mlir.addressof @checksum : !llvm.ptr
    call @printString(%msg1) : (!llvm.ptr) -> ()
    call @printI64(%total) : (i64) -> ()
    call @printNewline() : () -> ()

    %t9 = gpu.wait async
    %t10 = gpu.dealloc async [%t9] %a : memref<16x64xi8>
    gpu.wait [%t10]
    memref.dealloc %hb : memref<16x64xi8>
    memref.dealloc %hc : memref<16x16xi32>
    return
  }

  llvm.mlir.global internal constant @mismatches("mismatches: \00")
  llvm.mlir.global internal constant @checksum("checksum: \00")
}
