//===- Modules.cpp - Module loading and kernel launches -------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Support.h"
#include "hot/Runtime/CudaRuntime.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <mutex>
#include <unordered_map>

using namespace hot::cuda;

namespace {
/// Without opting in, a launch may use at most 48 KiB of shared memory.
constexpr int kDefaultSharedMemoryLimit = 48 * 1024;

/// Names the device's compute capability after a failed load: the usual cause
/// is an image built for another chip.
void reportDevice(const char *entry, CUdevice device) {
  int major = 0, minor = 0;
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                       device);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                       device);
  char message[96];
  std::snprintf(message, sizeof(message),
                "the device is sm_%d%d; was the image built for it?", major,
                minor);
  reportError(entry, message);
}

/// The dynamic shared memory each function has been allowed so far: a step
/// launches the same kernels every call, and the opt-in needs doing once.
struct SharedMemoryOptIns {
  std::mutex mutex;
  std::unordered_map<CUfunction, int32_t> allowed;
};

SharedMemoryOptIns &sharedMemoryOptIns() {
  static SharedMemoryOptIns *state = new SharedMemoryOptIns(); // Never freed.
  return *state;
}

/// Lets `function` use `smem` bytes of dynamic shared memory; false (after
/// saying why) when the device cannot give that much.
bool allowSharedMemory(const char *entry, CUfunction function, int32_t smem,
                       CUdevice device) {
  if (smem <= kDefaultSharedMemoryLimit)
    return true;
  SharedMemoryOptIns &optIns = sharedMemoryOptIns();
  {
    std::lock_guard<std::mutex> lock(optIns.mutex);
    auto it = optIns.allowed.find(function);
    if (it != optIns.allowed.end() && it->second >= smem)
      return true;
  }
  int optIn = 0, staticBytes = 0;
  HOT_CUDA_CHECK(cuDeviceGetAttribute(
      &optIn, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device));
  HOT_CUDA_CHECK(cuFuncGetAttribute(
      &staticBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function));
  if (static_cast<int64_t>(smem) + staticBytes > optIn) {
    char message[160];
    std::snprintf(message, sizeof(message),
                  "%d bytes of dynamic shared memory plus %d static exceed the "
                  "device's %d bytes per block",
                  smem, staticBytes, optIn);
    reportError(entry, message);
    return false;
  }
  if (!check(cuFuncSetAttribute(function,
                                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                smem),
             entry,
             "cuFuncSetAttribute(function, "
             "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem)"))
    return false;
  std::lock_guard<std::mutex> lock(optIns.mutex);
  optIns.allowed[function] = smem;
  return true;
}
} // namespace

extern "C" void *mgpuModuleLoad(void *data, size_t /*size*/) {
  ContextGuard guard(__func__);
  if (!guard.ok())
    return nullptr;
  // cuModuleLoadData recognizes cubin, fatbin and PTX images by their header.
  CUmodule module = nullptr;
  if (!HOT_CUDA_CHECK(cuModuleLoadData(&module, data)))
    reportDevice(__func__, guard.device());
  return module;
}

extern "C" void *mgpuModuleLoadJIT(void *data, int optLevel) {
  ContextGuard guard(__func__);
  if (!guard.ok())
    return nullptr;
  char errorLog[8192] = {0};
  unsigned level = static_cast<unsigned>(std::clamp(optLevel, 0, 4));
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {reinterpret_cast<void *>(static_cast<uintptr_t>(level)),
                    errorLog, reinterpret_cast<void *>(sizeof(errorLog) - 1)};
  CUmodule module = nullptr;
  if (!HOT_CUDA_CHECK(cuModuleLoadDataEx(&module, data, std::size(options),
                                         options, values))) {
    reportError(__func__, errorLog[0] ? errorLog : "(empty JIT log)");
    reportDevice(__func__, guard.device());
  }
  return module;
}

extern "C" void mgpuModuleUnload(void *module) {
  if (!module)
    return;
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuModuleUnload(static_cast<CUmodule>(module)));
  // Its functions' handles may name another module's functions later.
  SharedMemoryOptIns &optIns = sharedMemoryOptIns();
  std::lock_guard<std::mutex> lock(optIns.mutex);
  optIns.allowed.clear();
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  ContextGuard guard(__func__);
  CUfunction function = nullptr;
  if (!HOT_CUDA_CHECK(
          cuModuleGetFunction(&function, static_cast<CUmodule>(module), name)))
    reportError(__func__, name);
  return function;
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t /*paramsCount*/) {
  ContextGuard guard(__func__);
  if (!guard.ok())
    return;
  auto *kernel = static_cast<CUfunction>(function);
  if (!allowSharedMemory(__func__, kernel, smem, guard.device()))
    return;
  HOT_CUDA_CHECK(cuLaunchKernel(kernel, gridX, gridY, gridZ, blockX, blockY,
                                blockZ, smem, static_cast<CUstream>(stream),
                                params, extra));
}

extern "C" void mgpuLaunchClusterKernel(void *function, intptr_t clusterX,
                                        intptr_t clusterY, intptr_t clusterZ,
                                        intptr_t gridX, intptr_t gridY,
                                        intptr_t gridZ, intptr_t blockX,
                                        intptr_t blockY, intptr_t blockZ,
                                        int32_t smem, void *stream,
                                        void **params, void **extra) {
  ContextGuard guard(__func__);
  if (!guard.ok())
    return;
  auto *kernel = static_cast<CUfunction>(function);
  if (!allowSharedMemory(__func__, kernel, smem, guard.device()))
    return;
  // Clusters of more than 8 blocks are legal on sm_90 only after opting in.
  if (clusterX * clusterY * clusterZ > 8 &&
      !HOT_CUDA_CHECK(cuFuncSetAttribute(
          kernel, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)))
    return;

  CUlaunchAttribute attribute = {};
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = static_cast<unsigned>(clusterX);
  attribute.value.clusterDim.y = static_cast<unsigned>(clusterY);
  attribute.value.clusterDim.z = static_cast<unsigned>(clusterZ);

  CUlaunchConfig config = {};
  config.gridDimX = static_cast<unsigned>(gridX);
  config.gridDimY = static_cast<unsigned>(gridY);
  config.gridDimZ = static_cast<unsigned>(gridZ);
  config.blockDimX = static_cast<unsigned>(blockX);
  config.blockDimY = static_cast<unsigned>(blockY);
  config.blockDimZ = static_cast<unsigned>(blockZ);
  config.sharedMemBytes = static_cast<unsigned>(smem);
  config.hStream = static_cast<CUstream>(stream);
  config.attrs = &attribute;
  config.numAttrs = 1;
  HOT_CUDA_CHECK(cuLaunchKernelEx(&config, kernel, params, extra));
}
