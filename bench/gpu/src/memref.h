//===- memref.h - The C interface of the exported modules ----------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// How the harness calls the `_mlir_ciface_` functions of bench/gpu/kernels:
// MLIR's memref descriptors and the two entry-point signatures export.py
// produces. Plain C++ (no CUDA), shared by hot_kernels.cu and the host-only
// check in bench/gpu/abicheck, which runs these declarations against the
// exported modules on a machine without a GPU.
//
// From the LLVM IR of the wrappers (mlir-translate of hot-lower-to-nvvm):
//   void _mlir_ciface_gx_qkv(ptr %result, ptr %a, ptr %b)
//     result: { ptr, ptr, i64, [2 x i64], [2 x i64] } written by the callee
//   void _mlir_ciface_layer_qkv(ptr %r, ptr %x, ptr %w, ptr %gy, i64 %seed)
//     r: { desc2, desc2 } (gx, gw) written by the callee; x, gy rank 3
//   void _mlir_ciface_hq_qkv(ptr %r, ptr %gy, i64 %seed)
//     r: { desc2, desc1 } (q, per-row scales) written by the callee;
//     hq_qkv_tensor: { desc2, desc0 } (q, the per-tensor scale)
//
//===----------------------------------------------------------------------===//

#ifndef HOT_BENCH_GPU_MEMREF_H
#define HOT_BENCH_GPU_MEMREF_H

#include <cstddef>
#include <cstdint>
#include <string>

/// An MLIR memref descriptor of rank R, as the C interface passes it.
template <int R> struct MemRef {
  void *allocated = nullptr, *aligned = nullptr;
  int64_t offset = 0, sizes[R] = {}, strides[R] = {};
};

/// The first element of a returned row-major memref, or null (with `why`)
/// when the callee returned another layout than the dense one the checks read.
template <int R>
void *denseData(const MemRef<R> &m, size_t elementBytes, std::string &why) {
  int64_t stride = 1;
  for (int d = R - 1; d >= 0; --d) {
    if (m.sizes[d] != 1 && m.strides[d] != stride) {
      why = "returned memref is not row-major";
      return nullptr;
    }
    stride *= m.sizes[d];
  }
  return static_cast<char *>(m.aligned) + m.offset * elementBytes;
}

/// A dense row-major descriptor of `data`.
template <int R> MemRef<R> wrap(void *data, const int64_t (&sizes)[R]) {
  MemRef<R> m;
  m.allocated = m.aligned = data;
  int64_t stride = 1;
  for (int d = R - 1; d >= 0; --d) {
    m.sizes[d] = sizes[d];
    m.strides[d] = stride;
    stride *= sizes[d];
  }
  return m;
}

/// gemm modules: C[M,N] i32 = A[M,K] i8 · B[N,K]ᵀ i8, C returned.
using GemmFn = void (*)(MemRef<2> *, MemRef<2> *, MemRef<2> *);
/// layer modules: (gx[N,I], gw[O,I]) f32 of x[B,T,I], W[O,I], gy[B,T,O] f32
/// (all bf16 where the description says `dtype = bf16`: the descriptors are the
/// same) and a seed (stochastic rounding); both results returned through one
/// struct.
struct LayerResults {
  MemRef<2> gx, gw;
};
using LayerFn = void (*)(LayerResults *, MemRef<3> *, MemRef<2> *, MemRef<3> *,
                         int64_t);

/// A rank-0 memref descriptor (no sizes, no strides).
struct MemRef0 {
  void *allocated = nullptr, *aligned = nullptr;
  int64_t offset = 0;
};
/// hq modules: q[N,O] i8 and the scales (MemRef<1> per row, MemRef0 per
/// tensor) of hot.quantize(hot.hadamard(gy[N,O])) with a seed (stochastic
/// rounding); both results returned through one struct.
template <typename Scale> struct QuantizeResults {
  MemRef<2> q;
  Scale scale;
};
template <typename Scale>
using QuantizeFn = void (*)(QuantizeResults<Scale> *, MemRef<2> *, int64_t);

// The LLVM struct layouts above, with no padding.
static_assert(sizeof(MemRef<2>) == 7 * 8 && sizeof(MemRef<3>) == 9 * 8);
static_assert(offsetof(LayerResults, gw) == sizeof(MemRef<2>));
static_assert(sizeof(MemRef<1>) == 5 * 8 && sizeof(MemRef0) == 3 * 8);
static_assert(sizeof(QuantizeResults<MemRef<1>>) == 12 * 8 &&
              sizeof(QuantizeResults<MemRef0>) == 10 * 8);

#endif // HOT_BENCH_GPU_MEMREF_H
