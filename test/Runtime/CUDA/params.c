// Kernel parameters over the fake driver. The driver reads each kernel's
// parameter layout from PTX (`.param` lists, by the PTX ISA's alignment rules)
// and from a cubin (ptxas's `.nv.info` tables); both readings of one kernel
// must agree with each other and with the layout worked out by hand. The
// runtime compares the host's argument count with the kernel's, once per
// kernel, and does not launch on a mismatch; the driver reads every argument
// and fails a launch whose pointer-like argument is host memory the device
// cannot address, as the kernel would fault on a GPU.
// REQUIRES: hot-cuda-runtime, ptxas
// RUN: rm -rf %t.driver && mkdir %t.driver
// RUN: %build_fake_cuda_driver %t.driver/libcuda.so.1
// RUN: %ptxas -arch=sm_90 %S/Inputs/params.ptx -o %t.cubin
// RUN: %host_cc -O1 -I%S/Inputs %s -o %t -ldl
// RUN: env LD_LIBRARY_PATH=%t.driver FAKE_CUDA_TRACE=1 \
// RUN:   %t %hot_cuda_runtime %S/Inputs/params.ptx %t.cubin 2>&1 | FileCheck %s

#include "host.h"

#include <cuda.h>

static CUresult (*getParamInfo)(CUfunction, size_t, size_t *, size_t *);

static char *readFile(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file)
    exit(2);
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *data = calloc(size + 1, 1);
  if (fread(data, 1, size, file) != (size_t)size)
    exit(2);
  fclose(file);
  return data;
}

/// Prints `label: ordinal@offset+size ...` as cuFuncGetParamInfo answers.
static void printLayout(const char *label, void *function) {
  char line[256] = "";
  size_t offset, size, i = 0;
  while (getParamInfo(function, i, &offset, &size) == CUDA_SUCCESS) {
    char item[32];
    snprintf(item, sizeof(item), " %zu@%zu+%zu", i++, offset, size);
    strcat(line, item);
  }
  say("%s:%s", label, line[0] ? line : " none");
}

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  loadRuntime(argv[1]);
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  *(void **)&getParamInfo = symbol(driver, "cuFuncGetParamInfo");

  // p0 u32, p1 a pointer aligned to 8 (its `.align 16` is the pointee's),
  // p2 24 bytes aligned to 8, p3 u16, p4 f32 aligned to 4, p5 u64.
  // CHECK: ptx args: 0@0+4 1@8+8 2@16+24 3@40+2 4@44+4 5@48+8
  // CHECK-NEXT: ptx none: none
  // CHECK: cubin args: 0@0+4 1@8+8 2@16+24 3@40+2 4@44+4 5@48+8
  // CHECK-NEXT: cubin none: none
  char *ptx = readFile(argv[2]);
  char *cubin = readFile(argv[3]);
  void *ptxModule = rt.moduleLoad(ptx, strlen(ptx) + 1);
  printLayout("ptx args", rt.moduleGetFunction(ptxModule, "args"));
  printLayout("ptx none", rt.moduleGetFunction(ptxModule, "none"));
  void *module = rt.moduleLoad(cubin, 0);
  void *args = rt.moduleGetFunction(module, "args");
  void *none = rt.moduleGetFunction(module, "none");
  printLayout("cubin args", args);
  printLayout("cubin none", none);

  void *stream = rt.streamCreate();
  char *device = rt.memAlloc(256, stream, false);
  uint64_t pointer = (uint64_t)(uintptr_t)device, tail = 0;
  uint32_t count = 7;
  char bytes[24] = {0};
  uint16_t half = 1;
  float scale = 0.5f;
  void *params[] = {&count, &pointer, bytes, &half, &scale, &tail};

  // CHECK: launch args grid (1,1,1) block (32,1,1)
  rt.launchKernel(args, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL, 6);
  // One past the end of an allocation is still the device's.
  // CHECK-NEXT: launch args grid (2,1,1) block (32,1,1)
  tail = (uint64_t)(uintptr_t)(device + 256);
  rt.launchKernel(args, 2, 1, 1, 32, 1, 1, 0, stream, params, NULL, 6);
  // CHECK-NEXT: launch none grid (1,1,1) block (32,1,1)
  rt.launchKernel(none, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL, 0);

  // The host passing one argument too many (or too few): not launched.
  // CHECK-NEXT: hot_cuda_runtime: mgpuLaunchKernel: kernel 'args' declares 6
  // CHECK-SAME: parameters but the host passes 7 (host and kernel lowered
  // CHECK-SAME: with different memref calling conventions?): not launched
  rt.launchKernel(args, 3, 1, 1, 32, 1, 1, 0, stream, params, NULL, 7);
  // CHECK-NEXT: kernel 'none' declares 0 parameters but the host passes 1
  rt.launchKernel(none, 3, 1, 1, 32, 1, 1, 0, stream, params, NULL, 1);

  // A host address where the kernel takes a pointer.
  // CHECK-NEXT: cuLaunchKernel: error 700: parameter 5 of args
  // (0x{{[0-9a-f]+}}) CHECK-SAME: is host memory the device cannot address
  // CHECK-NEXT: mgpuLaunchKernel: cuLaunchKernel(kernel, {{.*}}) failed:
  // CHECK-SAME: CUDA_ERROR_ILLEGAL_ADDRESS
  tail = (uint64_t)(uintptr_t)&count;
  rt.launchKernel(args, 4, 1, 1, 32, 1, 1, 0, stream, params, NULL, 6);
  // Past the end by one more byte: not the allocation's any more.
  // CHECK: parameter 1 of args (0x{{[0-9a-f]+}}) is host memory
  tail = 0;
  pointer = (uint64_t)(uintptr_t)(device + 257);
  rt.launchKernel(args, 5, 1, 1, 32, 1, 1, 0, stream, params, NULL, 6);
  // Arguments but no array for them.
  // CHECK: cuLaunchKernel: error 1: the kernel has parameters and none were
  // CHECK-SAME: given
  rt.launchKernel(args, 6, 1, 1, 32, 1, 1, 0, stream, NULL, NULL, 6);

  rt.streamSynchronize(stream);
  // CHECK: launches: 3, last none
  say("launches: %lld, last %s", rt.launches(), rt.lastKernel());
  rt.memFree(device, stream);
  rt.streamDestroy(stream);
  rt.moduleUnload(module);
  rt.moduleUnload(ptxModule);
  return 0;
}
