// Modules and launches over the fake driver: a kernel asking for more than
// 48 KiB of dynamic shared memory is opted in before its launch, one asking
// for more than the device has is refused by the runtime with the figures;
// clusters of more than 8 blocks are opted in; the driver's refusals (bad
// image, unknown kernel, block too large, cluster not dividing the grid) are
// reported with the call that failed, and the next launch works.
// REQUIRES: hot-cuda-runtime
// RUN: rm -rf %t.driver && mkdir %t.driver
// RUN: %build_fake_cuda_driver %t.driver/libcuda.so.1
// RUN: %host_cc -O1 -I%S/Inputs %s -o %t -ldl
// RUN: env LD_LIBRARY_PATH=%t.driver FAKE_CUDA_TRACE=1 \
// RUN:   %t %hot_cuda_runtime 2>&1 | FileCheck %s
// RUN: env LD_LIBRARY_PATH=%t.driver FAKE_CUDA_CC=80 \
// RUN:   %t %hot_cuda_runtime 2>&1 | FileCheck %s --check-prefix=SM80

#include "host.h"

static const char ptx[] = ".version 8.0\n"
                          ".target sm_90a\n"
                          ".address_size 64\n"
                          ".visible .entry small(.param .u64 p)\n{\n ret;\n}\n"
                          ".visible .entry large()\n{\n ret;\n}\n";

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  loadRuntime(argv[1]);
  int major = 0, minor = 0;
  // CHECK: probe: 1 device, sm_90
  // SM80: probe: 1 device, sm_80
  int count = rt.probe(&major, &minor);
  say("probe: %d device, sm_%d%d", count, major, minor);

  // CHECK: mgpuModuleLoad: cuModuleLoadData(&module, data) failed:
  // CHECK-SAME: CUDA_ERROR_INVALID_IMAGE
  // CHECK-NEXT: mgpuModuleLoad: the device is sm_90; was the image built for
  // it? CHECK-NEXT: bad image: null
  char garbage[] = "not a kernel image";
  say("bad image: %s", rt.moduleLoad(garbage, sizeof(garbage)) ? "?" : "null");

  // CHECK: cuModuleLoadData = module{{[0-9]+}} with 2 kernels
  void *module = rt.moduleLoad((void *)ptx, sizeof(ptx));
  void *small = rt.moduleGetFunction(module, "small");
  void *large = rt.moduleGetFunction(module, "large");
  // CHECK: mgpuModuleGetFunction: cuModuleGetFunction(&function,
  // CHECK-SAME: CUDA_ERROR_NOT_FOUND
  // CHECK-NEXT: hot_cuda_runtime: mgpuModuleGetFunction: missing
  rt.moduleGetFunction(module, "missing");

  void *stream = rt.streamCreate();
  uint64_t argument = 42;
  void *params[] = {&argument};
  // CHECK: launch small grid (3,2,1) block (128,1,1) smem 0
  rt.launchKernel(small, 3, 2, 1, 128, 1, 1, 0, stream, params, NULL, 1);

  // 129 KiB of dynamic shared memory, as the wgmma kernels take: opted in.
  // CHECK: cuFuncSetAttribute(large, 8, 132096)
  // CHECK-NEXT: launch large grid (1,1,1) block (256,1,1) smem 132096
  rt.launchKernel(large, 1, 1, 1, 256, 1, 1, 132096, stream, NULL, NULL, 0);
  // Opted in once: the next launch asks the driver nothing.
  // CHECK-NOT: cuFuncSetAttribute
  // CHECK: launch large grid (2,1,1) block (256,1,1) smem 100000
  rt.launchKernel(large, 2, 1, 1, 256, 1, 1, 100000, stream, NULL, NULL, 0);
  // SM80: mgpuLaunchKernel: 240000 bytes of dynamic shared memory plus 0
  // SM80-SAME: static exceed the device's 166912 bytes per block
  // CHECK: mgpuLaunchKernel: 240000 bytes of dynamic shared memory plus 0
  // CHECK-SAME: static exceed the device's 232448 bytes per block
  rt.launchKernel(large, 1, 1, 1, 256, 1, 1, 240000, stream, NULL, NULL, 0);

  // CHECK: cuLaunchKernel: error 1: block dimensions
  // CHECK-NEXT: mgpuLaunchKernel: cuLaunchKernel(kernel, {{.*}}) failed:
  // CHECK-SAME: CUDA_ERROR_INVALID_VALUE
  rt.launchKernel(small, 1, 1, 1, 2048, 1, 1, 0, stream, params, NULL, 1);
  // CHECK: cuLaunchKernel: error 1: grid dimensions
  rt.launchKernel(small, 1, 70000, 1, 32, 1, 1, 0, stream, params, NULL, 1);

  // Clusters: 16 blocks need the non-portable opt-in.
  // CHECK: cuFuncSetAttribute(small, 14, 1)
  // CHECK-NEXT: launch small grid (32,1,1) block (64,1,1) smem 0
  // SM80: mgpuLaunchClusterKernel: cuFuncSetAttribute(
  // SM80-SAME: CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1) failed
  // Refused opt-in: no launch. Only the next cluster launch fails in the
  // driver.
  // SM80-NEXT: mgpuLaunchClusterKernel: cuLaunchKernelEx(&config, kernel,
  // SM80-SAME: CUDA_ERROR_INVALID_CLUSTER_SIZE
  // SM80-NEXT: launches: 4, last small
  rt.launchClusterKernel(small, 16, 1, 1, 32, 1, 1, 64, 1, 1, 0, stream, params,
                         NULL);
  // CHECK: cuLaunchKernelEx: error 912: cluster does not divide the grid
  // CHECK-NEXT: mgpuLaunchClusterKernel: cuLaunchKernelEx(&config, kernel,
  // CHECK-SAME: CUDA_ERROR_INVALID_CLUSTER_SIZE
  rt.launchClusterKernel(small, 4, 1, 1, 6, 1, 1, 64, 1, 1, 0, stream, params,
                         NULL);

  // CHECK: launch small grid (1,1,1) block (32,1,1)
  rt.launchKernel(small, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL, 1);
  rt.streamSynchronize(stream);
  // CHECK: launches: 5, last small
  say("launches: %lld, last %s", rt.launches(), rt.lastKernel());

  // TMA descriptors: a 2-D i8 tile of 128-byte rows with the 128-byte
  // swizzle is valid; 256-byte rows are wider than the swizzle.
  static char buffer[256 * 512] __attribute__((aligned(128)));
  MemRef2D memref = {buffer, buffer, 0, {256, 512}, {512, 1}};
  int64_t box[] = {64, 128};
  // The descriptor is copied to device memory, where kernels read it.
  // CHECK: cuTensorMapEncodeTiled(rank 2, type 0, box[0] 128, swizzle 3)
  // CHECK-NEXT: cuMemAlloc(128) = mem
  // CHECK-NEXT: tensor map: made
  say("tensor map: %s",
      rt.tensorMapEncode(2, &memref, 0, 0, 3, 0, 0, box) ? "made" : "null");
  int64_t wide[] = {64, 256};
  // CHECK: cuTensorMapEncodeTiled: error 1: inner box dimension wider than
  // CHECK: wide tensor map: null
  say("wide tensor map: %s",
      rt.tensorMapEncode(2, &memref, 0, 0, 3, 0, 0, wide) ? "made" : "null");
  // CHECK: mgpuTensorMapEncodeTiledMemref: unsupported rank 6 or data type 0
  rt.tensorMapEncode(6, &memref, 0, 0, 3, 0, 0, box);

  rt.moduleUnload(module);
  // CHECK: cuModuleUnload(module
  return 0;
}
