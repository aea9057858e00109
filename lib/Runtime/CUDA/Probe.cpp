//===- Probe.cpp - Is a CUDA device usable? -------------------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Runtime/CudaRuntime.h"

#include <cuda.h>

extern "C" int hotCudaRuntimeProbe(int *major, int *minor) {
  // Quiet on purpose: "no GPU" is an answer here, not an error.
  int count = 0;
  CUdevice device = 0;
  if (cuInit(/*Flags=*/0) != CUDA_SUCCESS ||
      cuDeviceGetCount(&count) != CUDA_SUCCESS || count <= 0 ||
      cuDeviceGet(&device, 0) != CUDA_SUCCESS)
    return 0;
  if (major)
    cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                         device);
  if (minor)
    cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                         device);
  // A device in exclusive or prohibited compute mode enumerates but cannot
  // run anything: retaining its context is the real test.
  CUcontext context = nullptr;
  if (cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS)
    return 0;
  cuDevicePrimaryCtxRelease(device);
  return count;
}
