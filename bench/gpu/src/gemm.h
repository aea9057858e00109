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

/// A module lowered by export.py: a shared object and its `key = value`
/// description (README.md).
struct HotModule;

/// The modules described by the *.txt files of `dir`; an empty list when
/// there are none. Reads the descriptions only: each module is loaded
/// (dlopen, which loads its kernels) by the first run* call that needs it, in
/// that process, and one that cannot load says why in its rows.
std::vector<HotModule *> describeHotModules(const std::string &dir);

/// The file name of `module`'s shared object.
std::string hotModuleLibrary(const HotModule *module);

/// The GEMM modules (every variant) for `layer` of `shape`.
std::vector<const HotModule *>
findHotGemms(const std::vector<HotModule *> &modules, const std::string &layer,
             const Shape &shape);

/// Calls a GEMM module on `ops` (A and B of the TN product), checks C exactly
/// (every buffer the step allocates poisoned first) and times it: a wall-time
/// row and a kernels-only row.
std::vector<Row> runHotGemm(const HotModule *module, Operands &ops);

/// The same for a layer's HOT backward, on fresh random x, W, gy; the error
/// is against the exact products gy·W and gyᵀ·x of the inputs as given (a
/// module described `dtype = bf16` takes x, W, gy rounded to bf16 and returns
/// bf16 gx, gw, read back as floats for the check). With the module's
/// `traffic_bytes` (export.py, from traffic.py's model), the note gives the
/// rate of those bytes against `copyGBs`.
std::vector<Row> runHotLayer(const HotModule *module, const char *group,
                             double copyGBs);

/// Table lines (`| module | # | kernel | µs | MB | GB/s | of copy |`) of
/// each launch of the layer modules run since the last call whose layer
/// HOT_GPU_BREAKDOWN names ("fc1" by default, "all", or "none"): median
/// times of the timed calls, with the kernels and bytes export.py describes
/// (`launches`).
std::vector<std::string> takeKernelBreakdown();

/// Calls an hq module (hot.quantize(hot.hadamard(gy)), README.md) on fresh
/// random gy, checks q and the scales bit for bit against the host reference
/// (hq_reference.h) and times it: wall, kernels only, and kernels only with
/// the outputs already on the device; rates in GB/s of bytes read + written,
/// notes with the ratio to `copyGBs`, the measured device copy bandwidth.
std::vector<Row> runHotQuantize(const HotModule *module, double copyGBs);

/// Every module of `kind` for `layer`, in file-name order.
std::vector<const HotModule *>
findHotModules(const std::vector<HotModule *> &modules, const char *kind,
               const std::string &layer);

#endif // HOT_BENCH_GPU_GEMM_H
