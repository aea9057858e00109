//===- copy.cu - Device copy bandwidth, the memory ceiling ----------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "copy.h"

namespace {
__global__ void copyKernel(const float4 *__restrict__ src,
                           float4 *__restrict__ dst, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}
} // namespace

std::vector<Row> measureCopies(size_t bytes) {
  void *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, bytes));
  CUDA_CHECK(cudaMalloc(&dst, bytes));
  CUDA_CHECK(cudaMemset(src, 0x3c, bytes));
  CUDA_CHECK(cudaMemset(dst, 0, bytes));

  int smCount = 0;
  CUDA_CHECK(
      cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount, 0));
  size_t vectors = bytes / sizeof(float4);

  std::string shape = std::to_string(bytes >> 20) + " MiB";
  // Bandwidth counts the bytes read and the bytes written.
  auto row = [&](const char *impl, double ms) {
    Row r;
    r.group = "device copy";
    r.shape = shape;
    r.impl = impl;
    r.ms = ms;
    r.rate = 2.0 * bytes / (ms * 1e-3) / 1e9;
    r.rateUnit = "GB/s";
    return r;
  };

  std::vector<Row> rows;
  rows.push_back(row("cudaMemcpy D2D", medianMs([&] {
                       CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes,
                                                  cudaMemcpyDeviceToDevice));
                     })));
  rows.push_back(row("copy kernel (float4)", medianMs([&] {
                       copyKernel<<<smCount * 8, 256>>>(
                           static_cast<const float4 *>(src),
                           static_cast<float4 *>(dst), vectors);
                     })));

  // The copy must have copied: spot-check the last word.
  uint32_t last = 0;
  CUDA_CHECK(cudaMemcpy(&last, static_cast<char *>(dst) + bytes - 4, 4,
                        cudaMemcpyDeviceToHost));
  if (last != 0x3c3c3c3cu)
    for (Row &r : rows)
      r.note = "WRONG RESULT";
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
  return rows;
}
