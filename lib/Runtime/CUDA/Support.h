//===- Support.h - Error reporting and contexts of the CUDA runtime -------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Internal to libhot_cuda_runtime.so.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_LIB_RUNTIME_CUDA_SUPPORT_H
#define HOT_LIB_RUNTIME_CUDA_SUPPORT_H

#include <cuda.h>

#include <cstdint>

namespace hot::cuda {

/// Prints `call` (the source text of a driver call made by `entry`) with the
/// CUDA error name and description when `result` is an error; aborts when
/// HOT_CUDA_ABORT_ON_ERROR is set. Returns true on success.
bool check(CUresult result, const char *entry, const char *call);

/// Prints a runtime error that is not a driver error (same format, same
/// abort rule as check()).
void reportError(const char *entry, const char *message);

/// Prints a runtime error and aborts: for failures after which generated
/// code would crash anyway (e.g. on a null allocation).
[[noreturn]] void fatal(const char *entry, const char *message);

/// Makes the primary context of the calling thread's default device current.
/// On a thread without a current context it stays current afterwards (as the
/// CUDA runtime API leaves it), so that every later call costs one
/// cuCtxGetCurrent; over another context it is pushed for the lifetime of the
/// guard and popped afterwards.
class ContextGuard {
public:
  explicit ContextGuard(const char *entry);
  ~ContextGuard();
  ContextGuard(const ContextGuard &) = delete;
  ContextGuard &operator=(const ContextGuard &) = delete;

  /// Whether a context is current (the driver initialized).
  bool ok() const { return ctx != nullptr; }

  /// The device whose context is current.
  CUdevice device() const { return dev; }

  /// The current context (null unless ok()).
  CUcontext context() const { return ctx; }

private:
  bool pushed = false;
  CUcontext ctx = nullptr;
  CUdevice dev = 0;
};

/// Sets the device ordinal that ContextGuard uses on the calling thread.
void setDefaultDevice(int ordinal);

/// The fields of a ranked LLVM memref descriptor {allocated, aligned, offset,
/// sizes[rank], strides[rank]} that the runtime needs.
struct MemRefView {
  MemRefView(void *descriptor, int64_t rank);

  /// The first element: the aligned pointer advanced by the offset.
  char *begin(int64_t elementSizeBytes) const {
    return aligned + offset * elementSizeBytes;
  }

  /// Bytes from begin() to the end of the last element the strides reach
  /// (0 for an empty memref).
  uint64_t spanBytes(int64_t elementSizeBytes) const;

  int64_t rank;
  char *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
};

} // namespace hot::cuda

/// Checks a driver call made inside the mgpu* function that contains it.
#define HOT_CUDA_CHECK(call) ::hot::cuda::check((call), __func__, #call)

#endif // HOT_LIB_RUNTIME_CUDA_SUPPORT_H
