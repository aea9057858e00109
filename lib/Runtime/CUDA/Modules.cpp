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
#include <string>
#include <unordered_map>

#include <dlfcn.h>

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

/// What the runtime learns about a kernel, once: the number of parameters its
/// image declares, and the dynamic shared memory it has been allowed so far
/// (a step launches the same kernels every call).
struct Kernel {
  int params = kParamsUnknown;
  int32_t allowedShared = kDefaultSharedMemoryLimit;
  static constexpr int kParamsUnknown = -2, kParamsUnavailable = -1;
};

struct Kernels {
  std::mutex mutex;
  std::unordered_map<CUfunction, Kernel> byFunction;
};

Kernels &kernels() {
  static Kernels *state = new Kernels(); // Never freed.
  return *state;
}

/// The driver entry point `symbol`, looked up in the loaded driver rather
/// than linked, so that a driver without it (older than the toolkit) still
/// loads this library; null where it is missing.
template <typename Function> Function lookUpDriver(const char *symbol) {
  void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  return driver ? reinterpret_cast<Function>(dlsym(driver, symbol)) : nullptr;
}

/// cuFuncGetParamInfo (CUDA 12.4).
using GetParamInfo = CUresult (*)(CUfunction, size_t, size_t *, size_t *);
GetParamInfo getParamInfo() {
  static const GetParamInfo function =
      lookUpDriver<GetParamInfo>("cuFuncGetParamInfo");
  return function;
}

/// The kernel's name for a message (cuFuncGetName, CUDA 12.3), or "?".
std::string getKernelName(CUfunction function) {
  using GetName = CUresult (*)(const char **, CUfunction);
  static const GetName getName = lookUpDriver<GetName>("cuFuncGetName");
  const char *name = nullptr;
  if (!getName || getName(&name, function) != CUDA_SUCCESS || !name)
    return "?";
  return name;
}

/// The number of parameters `function` declares (the driver answers an index
/// past the last with CUDA_ERROR_INVALID_VALUE), or kParamsUnavailable.
int countParams(CUfunction function) {
  GetParamInfo info = getParamInfo();
  if (!info)
    return Kernel::kParamsUnavailable;
  size_t offset = 0, size = 0;
  auto has = [&](size_t index) {
    return info(function, index, &offset, &size) == CUDA_SUCCESS;
  };
  // Doubling to a missing index, then halving between the last present one
  // and it: 2 log2(n) calls, once per kernel.
  CUresult first = info(function, 0, &offset, &size);
  if (first != CUDA_SUCCESS)
    return first == CUDA_ERROR_INVALID_VALUE ? 0 : Kernel::kParamsUnavailable;
  size_t present = 0, missing = 1;
  while (has(missing))
    present = missing, missing *= 2;
  while (missing - present > 1) {
    size_t middle = present + (missing - present) / 2;
    (has(middle) ? present : missing) = middle;
  }
  return static_cast<int>(missing);
}

/// Checks, once per kernel, that the host passes as many arguments as the
/// kernel declares (host and kernel code lowered with different memref
/// calling conventions would not), and lets it use `smem` bytes of dynamic
/// shared memory. False (after saying why) when it must not be launched.
bool prepareLaunch(const char *entry, CUfunction function, int32_t smem,
                   size_t paramsCount, bool checkParams, CUdevice device) {
  Kernels &state = kernels();
  std::unique_lock<std::mutex> lock(state.mutex);
  // The map is looked up again after each unlock: a module unloaded
  // meanwhile clears it.
  if (checkParams &&
      state.byFunction[function].params == Kernel::kParamsUnknown) {
    lock.unlock();
    int params = countParams(function);
    lock.lock();
    state.byFunction[function].params = params;
  }
  Kernel &kernel = state.byFunction[function];
  if (checkParams && kernel.params >= 0 &&
      static_cast<size_t>(kernel.params) != paramsCount) {
    std::string message = "kernel '" + getKernelName(function) + "' declares " +
                          std::to_string(kernel.params) +
                          " parameters but the host passes " +
                          std::to_string(paramsCount) +
                          " (host and kernel lowered with different memref "
                          "calling conventions?): not launched";
    lock.unlock();
    reportError(entry, message.c_str());
    return false;
  }
  if (smem <= kernel.allowedShared)
    return true;
  lock.unlock();

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
  lock.lock();
  int32_t &allowed = state.byFunction[function].allowedShared;
  allowed = std::max(allowed, smem);
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
  // A lowered module unloads its image from a global destructor, which at
  // process exit can run after the driver has shut down: the driver freed
  // the image with everything else, so there is nothing to do or report.
  CUcontext current = nullptr;
  if (cuCtxGetCurrent(&current) == CUDA_ERROR_DEINITIALIZED)
    return;
  ContextGuard guard(__func__);
  HOT_CUDA_CHECK(cuModuleUnload(static_cast<CUmodule>(module)));
  // Its functions' handles may name another module's functions later.
  Kernels &state = kernels();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.byFunction.clear();
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  ContextGuard guard(__func__);
  CUfunction function = nullptr;
  auto *image = static_cast<CUmodule>(module);
  if (!HOT_CUDA_CHECK(cuModuleGetFunction(&function, image, name))) {
    reportError(__func__, name);
    return nullptr;
  }
  return function;
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t paramsCount) {
  ContextGuard guard(__func__);
  if (!guard.ok())
    return;
  auto *kernel = static_cast<CUfunction>(function);
  // `extra` packs the arguments into one buffer: no count to compare.
  if (!prepareLaunch(__func__, kernel, smem, paramsCount, !extra,
                     guard.device()))
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
  // Upstream's host code passes no argument count to cluster launches.
  if (!prepareLaunch(__func__, kernel, smem, 0, /*checkParams=*/false,
                     guard.device()))
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
