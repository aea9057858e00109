//===- fake_runtime.cpp - Host-only mgpu* functions for the ABI check -----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Stands in for libhot_cuda_runtime.so so that the exported modules' host code
// runs without a GPU: managed allocations are host memory (filled with 0xAB),
// device allocations address space the host cannot touch, module loads and
// streams are dummies, launches only record their parameters.
//
//===----------------------------------------------------------------------===//

#include "fake_runtime.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

std::set<void *> liveAllocations;
std::vector<std::vector<uint64_t>> launchParams;
std::set<void *> deviceAllocations;

namespace {
std::map<void *, size_t> mappedBytes;
} // namespace

extern "C" {
void *mgpuMemAlloc(uint64_t sizeBytes, void *, bool isHostShared) {
  size_t bytes = (sizeBytes + 255) / 256 * 256 + 256;
  void *ptr = nullptr;
  if (isHostShared) {
    ptr = std::aligned_alloc(256, bytes);
    std::memset(ptr, 0xAB, sizeBytes);
  } else {
    ptr = mmap(nullptr, bytes, PROT_NONE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (ptr == MAP_FAILED) {
      std::perror("abi-check: mmap");
      std::exit(1);
    }
    deviceAllocations.insert(ptr);
    mappedBytes[ptr] = bytes;
  }
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
  if (deviceAllocations.erase(ptr)) {
    munmap(ptr, mappedBytes[ptr]);
    mappedBytes.erase(ptr);
  } else {
    std::free(ptr);
  }
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
