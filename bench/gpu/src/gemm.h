//===- gemm.h - Operands of one GEMM shape and the GEMM rows ----*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_BENCH_GPU_GEMM_H
#define HOT_BENCH_GPU_GEMM_H

#include "common.h"

#include <string>

/// Fresh random operands of one shape, on the host (for the reference) and on
/// the device in each element type, and a 4-byte output buffer.
struct Operands {
  Shape shape;
  std::vector<float> a, b;    ///< uniform [-1, 1): M×K and N×K
  std::vector<int8_t> a8, b8; ///< uniform [-127, 127]
  float *a32 = nullptr, *b32 = nullptr;
  uint16_t *a16 = nullptr, *b16 = nullptr; ///< bfloat16 bits of a, b
  int8_t *a8d = nullptr, *b8d = nullptr;
  void *c = nullptr; ///< M×N f32 or i32
};

/// Draws operands for `shape` and uploads them.
void makeOperands(Operands &ops, const Shape &shape);

/// Frees the device buffers.
void freeOperands(Operands &ops);

/// Float64 references of C[i, j] = Σ_k A[i, k] B[j, k].
double referenceF32(const Operands &ops, int64_t i, int64_t j);
double referenceBf16(const Operands &ops, int64_t i, int64_t j);
double referenceI8(const Operands &ops, int64_t i, int64_t j);

/// Fills the check and timing fields of a GEMM row: poisons C, runs
/// `launch` once, checks C against `reference`, then times `launch`.
void measureGemm(Row &row, Operands &ops, OutType type,
                 double (*reference)(const Operands &, int64_t, int64_t),
                 const std::function<void()> &launch, const char *rateUnit);

/// "M x N x K".
std::string shapeString(const Shape &s);

/// Library handles shared by all GEMM rows.
struct Libraries;
Libraries *createLibraries();
void destroyLibraries(Libraries *libs);

/// cuBLAS FP32, TF32 and BF16 (f32 output, f32 accumulation) rows.
std::vector<Row> runCublasFloat(Libraries *libs, Operands &ops);

/// The cuBLASLt int8 row (i8 × i8 → i32, TN), the baseline of the ratios.
/// The note says whether the heuristic's algorithm is an IMMA one.
Row runCublasLtInt8(Libraries *libs, Operands &ops);

/// One of the project's kernels, described by a JSON file (see README.md).
struct HotKernel;

/// Loads the kernels described by the *.json files of `dir`; an empty list
/// when there are none.
std::vector<HotKernel *> loadHotKernels(const std::string &dir);

/// The row of `kernel` on `ops`; `note` explains a kernel that cannot run
/// this shape.
Row runHotKernel(HotKernel *kernel, Operands &ops);

#endif // HOT_BENCH_GPU_GEMM_H
