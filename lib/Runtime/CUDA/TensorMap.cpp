//===- TensorMap.cpp - TMA descriptors for Hopper -------------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Support.h"
#include "hot/Runtime/CudaRuntime.h"

#include <cstdio>
#include <iterator>

using namespace hot::cuda;

namespace {
/// Bytes per element of the CUtensorMapDataType values that nvgpu-to-nvvm
/// emits (UINT8 ... TFLOAT32_FTZ), in enum order.
constexpr int kElementBytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
constexpr int64_t kMaxRank = 5;
} // namespace

extern "C" void *mgpuTensorMapEncodeTiledMemref(
    int64_t tensorRank, void *descriptor, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t l2Promotion, int64_t oobFill, int64_t *boxDims) {
  if (tensorRank < 1 || tensorRank > kMaxRank || dataType < 0 ||
      dataType >= static_cast<int64_t>(std::size(kElementBytes))) {
    char message[96];
    std::snprintf(
        message, sizeof(message), "unsupported rank %lld or data type %lld",
        static_cast<long long>(tensorRank), static_cast<long long>(dataType));
    reportError(__func__, message);
    return nullptr;
  }
  ContextGuard guard(__func__);
  if (!guard.ok())
    return nullptr;

  // The driver counts dimensions innermost first; MLIR outermost first. The
  // innermost stride is implicit (one element).
  MemRefView memref(descriptor, tensorRank);
  int elementBytes = kElementBytes[dataType];
  cuuint64_t globalDim[kMaxRank] = {1, 1, 1, 1, 1};
  cuuint64_t globalStrides[kMaxRank] = {0};
  cuuint32_t boxDim[kMaxRank] = {1, 1, 1, 1, 1};
  cuuint32_t elementStrides[kMaxRank] = {1, 1, 1, 1, 1};
  for (int64_t i = 0; i < tensorRank; ++i) {
    int64_t mlirDim = tensorRank - 1 - i;
    globalDim[i] = static_cast<cuuint64_t>(memref.sizes[mlirDim]);
    boxDim[i] = static_cast<cuuint32_t>(boxDims[mlirDim]);
    if (i + 1 < tensorRank)
      globalStrides[i] =
          static_cast<cuuint64_t>(memref.strides[mlirDim - 1]) * elementBytes;
  }

  CUtensorMap tensorMap;
  if (!HOT_CUDA_CHECK(cuTensorMapEncodeTiled(
          &tensorMap, static_cast<CUtensorMapDataType>(dataType),
          static_cast<cuuint32_t>(tensorRank), memref.begin(elementBytes),
          globalDim, globalStrides, boxDim, elementStrides,
          static_cast<CUtensorMapInterleave>(interleave),
          static_cast<CUtensorMapSwizzle>(swizzle),
          static_cast<CUtensorMapL2promotion>(l2Promotion),
          static_cast<CUtensorMapFloatOOBfill>(oobFill))))
    return nullptr;

  // Kernels read the descriptor through a global-memory pointer, as upstream's
  // lowering expects; it lives as long as the process.
  CUdeviceptr deviceMap = 0;
  if (!HOT_CUDA_CHECK(cuMemAlloc(&deviceMap, sizeof(tensorMap))) ||
      !HOT_CUDA_CHECK(cuMemcpyHtoD(deviceMap, &tensorMap, sizeof(tensorMap))))
    return nullptr;
  return reinterpret_cast<void *>(deviceMap);
}
