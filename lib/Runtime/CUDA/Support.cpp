//===- Support.cpp - Error reporting and contexts of the CUDA runtime -----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

using namespace hot::cuda;

namespace {
/// Device ordinal of the calling thread, as upstream's wrappers keep it: a
/// gpu.set_default_device affects the thread that executes it.
thread_local int defaultDevice = 0;

/// Primary contexts, retained on first use and kept for the process lifetime
/// (modules are unloaded by global destructors, after main returns).
struct Contexts {
  std::mutex mutex;
  bool initialized = false;
  CUresult initResult = CUDA_SUCCESS;
  bool reportedInit = false;
  std::vector<CUcontext> primary;
  std::vector<CUdevice> devices; // Of each primary context.
};

Contexts &contexts() {
  static Contexts *state = new Contexts; // Never destroyed: see above.
  return *state;
}

bool abortOnError() {
  static const bool value = std::getenv("HOT_CUDA_ABORT_ON_ERROR") != nullptr;
  return value;
}
} // namespace

bool hot::cuda::check(CUresult result, const char *entry, const char *call) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *name = nullptr;
  const char *description = nullptr;
  // The stub libcuda.so answers every call, cuGetErrorName included, with
  // CUDA_ERROR_STUB_LIBRARY: name that one here.
  if (result == CUDA_ERROR_STUB_LIBRARY)
    name = "CUDA_ERROR_STUB_LIBRARY";
  else if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = "unknown CUDA error";
  if (result == CUDA_ERROR_STUB_LIBRARY)
    description = "the toolkit's stub libcuda.so was loaded, not the driver's";
  else if (cuGetErrorString(result, &description) != CUDA_SUCCESS ||
           !description)
    description = "no description";
  std::fprintf(stderr, "hot_cuda_runtime: %s: %s failed: %s (%d: %s)\n", entry,
               call, name, static_cast<int>(result), description);
  std::fflush(stderr);
  if (abortOnError())
    std::abort();
  return false;
}

void hot::cuda::reportError(const char *entry, const char *message) {
  std::fprintf(stderr, "hot_cuda_runtime: %s: %s\n", entry, message);
  std::fflush(stderr);
  if (abortOnError())
    std::abort();
}

void hot::cuda::fatal(const char *entry, const char *message) {
  std::fprintf(stderr, "hot_cuda_runtime: %s: %s\n", entry, message);
  std::fflush(stderr);
  std::abort();
}

void hot::cuda::setDefaultDevice(int ordinal) { defaultDevice = ordinal; }

ContextGuard::ContextGuard(const char *entry) {
  Contexts &state = contexts();
  CUcontext context = nullptr;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    if (!state.initialized) {
      state.initialized = true;
      state.initResult = cuInit(/*Flags=*/0);
      check(state.initResult, entry, "cuInit(0)");
    }
    // Every entry says that it did nothing, not only the first one.
    if (state.initResult != CUDA_SUCCESS) {
      if (state.reportedInit)
        reportError(entry, "skipped: the CUDA driver failed to initialize");
      state.reportedInit = true;
      return;
    }
    if (state.primary.size() <= static_cast<size_t>(defaultDevice)) {
      state.primary.resize(defaultDevice + 1, nullptr);
      state.devices.resize(defaultDevice + 1, 0);
    }
    CUcontext &slot = state.primary[defaultDevice];
    if (!slot) {
      if (!check(cuDeviceGet(&state.devices[defaultDevice], defaultDevice),
                 entry, "cuDeviceGet(&device, defaultDevice)") ||
          !check(cuDevicePrimaryCtxRetain(&slot, state.devices[defaultDevice]),
                 entry, "cuDevicePrimaryCtxRetain(&context, device)")) {
        slot = nullptr;
        return;
      }
    }
    context = slot;
    dev = state.devices[defaultDevice];
  }
  CUcontext current = nullptr;
  if (cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context) {
    ctx = context;
    return;
  }
  if (!current) {
    // No context on this thread: the primary one becomes current and stays,
    // as the CUDA runtime API leaves it, so that the next call finds it.
    if (check(cuCtxSetCurrent(context), entry, "cuCtxSetCurrent(context)"))
      ctx = context;
    return;
  }
  // Another context (the caller's): ours for this call only.
  pushed = check(cuCtxPushCurrent(context), entry, "cuCtxPushCurrent(context)");
  if (pushed)
    ctx = context;
}

ContextGuard::~ContextGuard() {
  if (pushed)
    check(cuCtxPopCurrent(nullptr), "ContextGuard", "cuCtxPopCurrent(nullptr)");
}

MemRefView::MemRefView(void *descriptor, int64_t rank) : rank(rank) {
  // The descriptor is the LLVM struct {ptr, ptr, i64, [rank x i64],
  // [rank x i64]}: pointers and i64 are both 8 bytes on the 64-bit hosts CUDA
  // supports, so the fields lie at fixed offsets.
  static_assert(sizeof(void *) == sizeof(int64_t), "64-bit hosts only");
  auto *fields = static_cast<char *>(descriptor);
  std::memcpy(&aligned, fields + sizeof(void *), sizeof(aligned));
  std::memcpy(&offset, fields + 2 * sizeof(void *), sizeof(offset));
  sizes = reinterpret_cast<const int64_t *>(fields + 3 * sizeof(void *));
  strides = sizes + rank;
}

uint64_t MemRefView::spanBytes(int64_t elementSizeBytes) const {
  int64_t last = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (sizes[i] == 0)
      return 0;
    last += (sizes[i] - 1) * strides[i];
  }
  return static_cast<uint64_t>(last + 1) * elementSizeBytes;
}
