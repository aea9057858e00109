//===- fake_runtime.cpp - Host-only mgpu* functions for the ABI check -----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Stands in for libhot_cuda_runtime.so so that the exported modules' host code
// runs without a GPU: allocations are host memory (filled with 0xAB), module
// loads and streams are dummies, launches only record their parameters.
//
//===----------------------------------------------------------------------===//

#include "fake_runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

std::set<void *> liveAllocations;
std::vector<std::vector<uint64_t>> launchParams;
int deviceOnlyAllocations = 0;

extern "C" {
void *mgpuMemAlloc(uint64_t sizeBytes, void *, bool isHostShared) {
  if (!isHostShared)
    ++deviceOnlyAllocations;
  void *ptr = std::aligned_alloc(256, (sizeBytes + 255) / 256 * 256 + 256);
  std::memset(ptr, 0xAB, sizeBytes);
  liveAllocations.insert(ptr);
  return ptr;
}

void mgpuMemFree(void *ptr, void *) {
  if (!ptr)
    return;
  if (!liveAllocations.erase(ptr)) {
    std::fprintf(stderr, "abi-check: mgpuMemFree of unknown %p\n", ptr);
    std::exit(1);
  }
  std::free(ptr);
}

void *mgpuModuleLoad(void *, size_t) {
  static int module;
  return &module;
}
void mgpuModuleUnload(void *) {}
void *mgpuModuleGetFunction(void *, const char *name) {
  return const_cast<char *>(name);
}
void *mgpuStreamCreate() {
  static int stream;
  return &stream;
}
void mgpuStreamDestroy(void *) {}
void mgpuStreamSynchronize(void *) {}

void mgpuLaunchKernel(void *, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                      intptr_t, int32_t, void *, void **params, void **,
                      size_t paramsCount) {
  // The first 8 bytes of each parameter (the whole of a pointer; an i32
  // parameter's slot sits in the generated code's argument struct, so reading
  // past it stays inside that struct or its stack frame).
  std::vector<uint64_t> values;
  for (size_t i = 0; i < paramsCount; ++i) {
    uint64_t value = 0;
    std::memcpy(&value, params[i], sizeof(value));
    values.push_back(value);
  }
  launchParams.push_back(values);
}
}
