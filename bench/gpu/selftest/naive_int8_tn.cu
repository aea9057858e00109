//===- naive_int8_tn.cu - A known-good kernel for the harness's slot ------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// C[M,N] (i32) = A[M,K] · B[N,K]ᵀ (i8, K-contiguous) with dp4a, one output
// per thread, 16x16 outputs per block. run.sh compiles it to PTX and the
// harness loads it exactly like a kernel of hot-opt (naive_int8_tn.json): the
// row proves the slot (loading, launch, check) works, whatever our kernels do.
// Requires M, N multiples of 16 and K a multiple of 64.
//
//===----------------------------------------------------------------------===//

#include <cstdint>

constexpr int kTile = 16;
constexpr int kWords = 16; // 64 bytes of K per step, as 16 words

extern "C" __global__ void naive_int8_tn(const int8_t *a, const int8_t *b,
                                         int32_t *c, int64_t m, int64_t n,
                                         int64_t k) {
  __shared__ int32_t as[kTile][kWords + 1], bs[kTile][kWords + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int64_t row = blockIdx.y * int64_t(kTile) + ty;
  int64_t col = blockIdx.x * int64_t(kTile) + tx;
  const int32_t *aw = reinterpret_cast<const int32_t *>(a);
  const int32_t *bw = reinterpret_cast<const int32_t *>(b);
  int64_t kw = k / 4;
  int32_t sum = 0;
  for (int64_t k0 = 0; k0 < kw; k0 += kWords) {
    // Thread (tx, ty) loads word tx of row ty of both tiles.
    as[ty][tx] = aw[(blockIdx.y * int64_t(kTile) + ty) * kw + k0 + tx];
    bs[ty][tx] = bw[(blockIdx.x * int64_t(kTile) + ty) * kw + k0 + tx];
    __syncthreads();
    for (int w = 0; w < kWords; ++w)
      sum = __dp4a(as[ty][w], bs[tx][w], sum);
    __syncthreads();
  }
  if (row < m && col < n)
    c[row * n + col] = sum;
}
