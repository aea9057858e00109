//===- host.h - Host side of the simulator runtime tests ------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// The driver of a test: `<test> <libhot_simulator_runtime.so> <kernels.so>`.
// It loads the runtime as Python's ctypes does (RTLD_LOCAL: the runtime must
// make its own symbols global for the kernels), loads kernels.so through
// mgpuModuleLoad and launches through mgpuLaunchKernel.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_TEST_RUNTIME_SIMULATOR_HOST_H
#define HOT_TEST_RUNTIME_SIMULATOR_HOST_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
  void *(*moduleLoad)(void *, size_t);
  void *(*moduleLoadJIT)(void *, int);
  void (*moduleUnload)(void *);
  void *(*moduleGetFunction)(void *, const char *);
  void (*launchKernel)(void *, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                       intptr_t, int32_t, void *, void **, void **, size_t);
  void *(*memAlloc)(uint64_t, void *, bool);
  void (*memFree)(void *, void *);
  void *(*streamCreate)(void);
  void *module;
} rt;

static void *symbol(void *library, const char *name) {
  void *address = dlsym(library, name);
  if (!address) {
    fprintf(stderr, "host: %s\n", dlerror());
    exit(2);
  }
  return address;
}

static void hostInit(int argc, char **argv) {
  // Keep stdout and the runtime's stderr in order for FileCheck.
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc != 3) {
    fprintf(stderr, "usage: %s <runtime.so> <kernels.so>\n", argv[0]);
    exit(2);
  }
  void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    fprintf(stderr, "host: %s\n", dlerror());
    exit(2);
  }
  rt.moduleLoad = symbol(library, "mgpuModuleLoad");
  rt.moduleLoadJIT = symbol(library, "mgpuModuleLoadJIT");
  rt.moduleUnload = symbol(library, "mgpuModuleUnload");
  rt.moduleGetFunction = symbol(library, "mgpuModuleGetFunction");
  rt.launchKernel = symbol(library, "mgpuLaunchKernel");
  rt.memAlloc = symbol(library, "mgpuMemAlloc");
  rt.memFree = symbol(library, "mgpuMemFree");
  rt.streamCreate = symbol(library, "mgpuStreamCreate");

  FILE *file = fopen(argv[2], "rb");
  if (!file) {
    perror(argv[2]);
    exit(2);
  }
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *bytes = malloc(size);
  if (fread(bytes, 1, size, file) != (size_t)size)
    exit(2);
  fclose(file);
  rt.module = rt.moduleLoad(bytes, size);
  free(bytes); // The runtime keeps its own copy.
  if (!rt.module)
    exit(1);
}

static void *deviceAlloc(size_t bytes) {
  void *ptr = rt.memAlloc(bytes, NULL, false);
  if ((uintptr_t)ptr % 256 != 0)
    printf("host: allocation %p is not 256-byte aligned\n", ptr);
  return ptr;
}

static void launch(const char *name, int gx, int gy, int gz, int bx, int by,
                   int bz, int smem, void **params) {
  void *function = rt.moduleGetFunction(rt.module, name);
  if (function)
    rt.launchKernel(function, gx, gy, gz, bx, by, bz, smem, rt.streamCreate(),
                    params, NULL, 0);
}

#endif // HOT_TEST_RUNTIME_SIMULATOR_HOST_H
