// REQUIRES: hot-cuda-runtime
// RUN: mlir-opt %s --convert-nvgpu-to-nvvm --gpu-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-translate --mlir-to-llvmir -o %t.ll
// RUN: grep -o '^declare .*@mgpu[A-Za-z0-9]*' %t.ll | grep -o 'mgpu[A-Za-z0-9]*' \
// RUN: | sort -u > %t.used
// RUN: FileCheck %s --check-prefix=USED < %t.used
// RUN: count 23 < %t.used
// Every one of them is a function libhot_cuda_runtime.so defines and exports.
// RUN: sed 's/.*/CHECK-DAG: {{^[0-9a-f]+ T }}&{{$}}/' %t.used > %t.checks
// RUN: llvm-nm -D --defined-only %hot_cuda_runtime | FileCheck %t.checks

// The runtime's ABI against the host code MLIR 22 generates: this function
// uses every gpu op that becomes a runtime call (gpu-to-llvm, the LLVM IR
// translation of gpu.binary and gpu.launch_func, nvgpu-to-nvvm for TMA), and
// the library must export each function that the LLVM module declares. An
// MLIR upgrade that adds or renames one fails here, without a GPU. (Argument
// types are not visible to llvm-nm: include/hot/Runtime/CudaRuntime.h
// mirrors the declarations in the comments below.)

// USED:      mgpuEventCreate
// USED-NEXT: mgpuEventDestroy
// USED-NEXT: mgpuEventRecord
// USED-NEXT: mgpuEventSynchronize
// USED-NEXT: mgpuLaunchClusterKernel
// USED-NEXT: mgpuLaunchKernel
// USED-NEXT: mgpuMemAlloc
// USED-NEXT: mgpuMemFree
// USED-NEXT: mgpuMemHostRegisterMemRef
// USED-NEXT: mgpuMemHostUnregisterMemRef
// USED-NEXT: mgpuMemcpy
// USED-NEXT: mgpuMemset16
// USED-NEXT: mgpuMemset32
// USED-NEXT: mgpuModuleGetFunction
// USED-NEXT: mgpuModuleLoad
// USED-NEXT: mgpuModuleLoadJIT
// USED-NEXT: mgpuModuleUnload
// USED-NEXT: mgpuSetDefaultDevice
// USED-NEXT: mgpuStreamCreate
// USED-NEXT: mgpuStreamDestroy
// USED-NEXT: mgpuStreamSynchronize
// USED-NEXT: mgpuStreamWaitEvent
// USED-NEXT: mgpuTensorMapEncodeTiledMemref

module attributes {gpu.container_module} {
  // A cubin/fatbin object loads with mgpuModuleLoad(ptr, i64 size), a PTX
  // one with mgpuModuleLoadJIT(ptr, i32 optLevel); the images are never read.
  gpu.binary @cubin [#gpu.object<#nvvm.target<chip = "sm_90">, "not a cubin">]
  gpu.binary @ptx [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "not PTX">]

  func.func @host(%h: memref<16xf32>, %m: memref<128x64xf16>, %n: index,
                  %event: !gpu.async.token) {
    %c1 = arith.constant 1 : index
    %dev = arith.constant 0 : i32
    %smem = arith.constant 65536 : i32
    // mgpuSetDefaultDevice(i32)
    gpu.set_default_device %dev
    // mgpuMemHostRegisterMemRef(i64 rank, ptr descriptor, i64 elementBytes)
    %u = memref.cast %h : memref<16xf32> to memref<*xf32>
    gpu.host_register %u : memref<*xf32>
    // mgpuMemAlloc(i64 bytes, ptr stream, i8 isHostShared)
    %shared = gpu.alloc host_shared () : memref<16xf32>
    // mgpuStreamCreate()
    %t0 = gpu.wait async
    %a, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %b, %t2 = gpu.alloc async [%t1] () : memref<16xf16>
    // mgpuMemcpy(ptr dst, ptr src, i64 bytes, ptr stream)
    %t3 = gpu.memcpy async [%t2] %a, %h : memref<16xf32>, memref<16xf32>
    // mgpuMemset32(ptr, i32 value, i64 count, ptr stream), mgpuMemset16(ptr,
    // i16 value, i64 count, ptr stream)
    %f = arith.constant 1.0 : f32
    %t4 = gpu.memset async [%t3] %a, %f : memref<16xf32>, f32
    %g = arith.constant 1.0 : f16
    %t5 = gpu.memset async [%t4] %b, %g : memref<16xf16>, f16
    // mgpuModuleGetFunction(ptr module, ptr name); mgpuLaunchKernel(ptr
    // function, i64 grid x3, i64 block x3, i32 smem, ptr stream, ptr params,
    // ptr extra, i64 paramsCount)
    %t6 = gpu.launch_func async [%t5] @cubin::@k blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) dynamic_shared_memory_size %smem
        args(%a : memref<16xf32>)
    // mgpuLaunchClusterKernel(ptr function, i64 cluster x3, i64 grid x3,
    // i64 block x3, i32 smem, ptr stream, ptr params, ptr extra)
    %t7 = gpu.launch_func async [%t6] @ptx::@k clusters in (%c1, %c1, %c1)
        blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%a : memref<16xf32>)
    // mgpuMemFree(ptr, ptr stream)
    %t8 = gpu.dealloc async [%t7] %a : memref<16xf32>
    %t9 = gpu.dealloc async [%t7] %b : memref<16xf16>
    // Joining two chains: mgpuEventCreate(), mgpuEventRecord(ptr event, ptr
    // stream), mgpuStreamWaitEvent(ptr stream, ptr event),
    // mgpuEventDestroy(ptr).
    %t10 = gpu.wait async [%t8, %t9]
    // mgpuStreamSynchronize(ptr), mgpuStreamDestroy(ptr)
    gpu.wait [%t10]
    %t11 = gpu.wait async
    %t12 = gpu.dealloc async [%t11] %shared : memref<16xf32>
    gpu.wait [%t12]
    // mgpuMemHostUnregisterMemRef(i64 rank, ptr descriptor, i64 elementBytes)
    gpu.host_unregister %u : memref<*xf32>
    // mgpuTensorMapEncodeTiledMemref(i64 rank, ptr descriptor, i64 dataType,
    // i64 interleave, i64 swizzle, i64 l2Promotion, i64 oobFill, ptr box)
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %mu = memref.cast %m : memref<128x64xf16> to memref<*xf16>
    %d = nvgpu.tma.create.descriptor %mu box[%c128, %c64]
        : memref<*xf16> -> !nvgpu.tensormap.descriptor<
            tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b,
            l2promo = none, oob = zero, interleave = none>
    // A token from outside (not a stream created here) is an event:
    // mgpuEventSynchronize(ptr), then mgpuEventDestroy.
    gpu.wait [%event]
    return
  }
}
