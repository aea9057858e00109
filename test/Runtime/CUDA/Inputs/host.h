//===- host.h - Host side of the CUDA runtime tests -----------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// The driver of a test: `<test> <libhot_cuda_runtime.so> <scenario>`, run
// with LD_LIBRARY_PATH naming the folder of the fake driver (fake_driver.c
// built as libcuda.so.1). It loads the runtime as Python's ctypes does and
// reaches the fake driver's counters through the copy the runtime loaded.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_TEST_RUNTIME_CUDA_HOST_H
#define HOT_TEST_RUNTIME_CUDA_HOST_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
  void *(*moduleLoad)(void *, size_t);
  void (*moduleUnload)(void *);
  void *(*moduleGetFunction)(void *, const char *);
  void (*launchKernel)(void *, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                       intptr_t, int32_t, void *, void **, void **, size_t);
  void (*launchClusterKernel)(void *, intptr_t, intptr_t, intptr_t, intptr_t,
                              intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                              int32_t, void *, void **, void **);
  void *(*streamCreate)(void);
  void (*streamDestroy)(void *);
  void (*streamSynchronize)(void *);
  void (*streamWaitEvent)(void *, void *);
  void *(*eventCreate)(void);
  void (*eventDestroy)(void *);
  void (*eventSynchronize)(void *);
  void (*eventRecord)(void *, void *);
  void *(*memAlloc)(uint64_t, void *, bool);
  void (*memFree)(void *, void *);
  void (*memcpy)(void *, void *, size_t, void *);
  void (*memset32)(void *, unsigned, size_t, void *);
  void (*memset16)(void *, unsigned short, size_t, void *);
  void (*hostRegisterMemRef)(int64_t, void *, int64_t);
  void (*hostUnregisterMemRef)(int64_t, void *, int64_t);
  void *(*tensorMapEncode)(int64_t, void *, int64_t, int64_t, int64_t, int64_t,
                           int64_t, int64_t *);
  int (*probe)(int *, int *);
  // The fake driver's counters.
  int (*liveAllocations)(void);
  size_t (*bytesInUse)(void);
  long long (*launches)(void);
  int (*errors)(void);
  int (*oversubscribed)(void);
  const char *(*lastKernel)(void);
} rt;

static void *symbol(void *library, const char *name) {
  void *address = dlsym(library, name);
  if (!address) {
    fprintf(stderr, "host: %s\n", dlerror());
    exit(2);
  }
  return address;
}

static void loadRuntime(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "host: %s\n", dlerror());
    exit(2);
  }
  // The driver the runtime loaded: it must be the fake, never a real one.
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!driver || !dlsym(driver, "fakeCudaLaunches")) {
    fprintf(stderr, "host: libcuda.so.1 is not the fake driver\n");
    exit(2);
  }
#define GET(field, name) *(void **)&rt.field = symbol(lib, name)
  GET(moduleLoad, "mgpuModuleLoad");
  GET(moduleUnload, "mgpuModuleUnload");
  GET(moduleGetFunction, "mgpuModuleGetFunction");
  GET(launchKernel, "mgpuLaunchKernel");
  GET(launchClusterKernel, "mgpuLaunchClusterKernel");
  GET(streamCreate, "mgpuStreamCreate");
  GET(streamDestroy, "mgpuStreamDestroy");
  GET(streamSynchronize, "mgpuStreamSynchronize");
  GET(streamWaitEvent, "mgpuStreamWaitEvent");
  GET(eventCreate, "mgpuEventCreate");
  GET(eventDestroy, "mgpuEventDestroy");
  GET(eventSynchronize, "mgpuEventSynchronize");
  GET(eventRecord, "mgpuEventRecord");
  GET(memAlloc, "mgpuMemAlloc");
  GET(memFree, "mgpuMemFree");
  GET(memcpy, "mgpuMemcpy");
  GET(memset32, "mgpuMemset32");
  GET(memset16, "mgpuMemset16");
  GET(hostRegisterMemRef, "mgpuMemHostRegisterMemRef");
  GET(hostUnregisterMemRef, "mgpuMemHostUnregisterMemRef");
  GET(tensorMapEncode, "mgpuTensorMapEncodeTiledMemref");
  GET(probe, "hotCudaRuntimeProbe");
#undef GET
#define GET(field, name) *(void **)&rt.field = symbol(driver, name)
  GET(liveAllocations, "fakeCudaLiveAllocations");
  GET(bytesInUse, "fakeCudaBytesInUse");
  GET(launches, "fakeCudaLaunches");
  GET(errors, "fakeCudaErrors");
  GET(oversubscribed, "fakeCudaOversubscribed");
  GET(lastKernel, "fakeCudaLastKernel");
#undef GET
}

/// A ranked memref descriptor as the LLVM lowering lays it out.
typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} MemRef2D;

/// Prints a line on stdout in the order of the runtime's stderr messages.
static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...) {
  fflush(stderr);
  va_list args;
  va_start(args, format);
  vprintf(format, args);
  va_end(args);
  printf("\n");
  fflush(stdout);
}

#endif // HOT_TEST_RUNTIME_CUDA_HOST_H
