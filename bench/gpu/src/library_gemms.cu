//===- library_gemms.cu - cuBLAS and cuBLASLt GEMMs, the baselines --------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "gemm.h"

#include <cublasLt.h>
#include <cublas_v2.h>

#define CUBLAS_CHECK(call)                                                     \
  do {                                                                         \
    cublasStatus_t status_ = (call);                                           \
    if (status_ != CUBLAS_STATUS_SUCCESS) {                                    \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,       \
                   #call, cublasGetStatusName(status_));                       \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

struct Libraries {
  cublasHandle_t blas = nullptr;
  cublasLtHandle_t lt = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = size_t(64) << 20;
};

Libraries *createLibraries() {
  auto *libs = new Libraries;
  CUBLAS_CHECK(cublasCreate(&libs->blas));
  CUBLAS_CHECK(cublasLtCreate(&libs->lt));
  CUDA_CHECK(cudaMalloc(&libs->workspace, libs->workspaceBytes));
  CUBLAS_CHECK(
      cublasSetWorkspace(libs->blas, libs->workspace, libs->workspaceBytes));
  return libs;
}

void destroyLibraries(Libraries *libs) {
  CUBLAS_CHECK(cublasDestroy(libs->blas));
  CUBLAS_CHECK(cublasLtDestroy(libs->lt));
  CUDA_CHECK(cudaFree(libs->workspace));
  delete libs;
}

std::vector<Row> runCublasFloat(Libraries *libs, Operands &ops) {
  struct Variant {
    const char *impl;
    cudaDataType_t inputType;
    cublasComputeType_t compute;
    double (*reference)(const Operands &, int64_t, int64_t);
  };
  // TF32 is checked against the f32 inputs: its error includes the input
  // rounding, as a user of TF32 sees it. BF16 inputs are rounded first.
  const Variant variants[] = {
      {"cuBLAS FP32", CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC, referenceF32},
      {"cuBLAS TF32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, referenceF32},
      {"cuBLAS BF16 (f32 out)", CUDA_R_16BF, CUBLAS_COMPUTE_32F, referenceBf16},
  };
  const Shape &s = ops.shape;
  std::vector<Row> rows;
  for (const Variant &v : variants) {
    const void *a = v.inputType == CUDA_R_32F ? static_cast<void *>(ops.a32)
                                              : static_cast<void *>(ops.a16);
    const void *b = v.inputType == CUDA_R_32F ? static_cast<void *>(ops.b32)
                                              : static_cast<void *>(ops.b16);
    const float alpha = 1, beta = 0;
    // Row-major C = A Bᵀ is column-major Cᵀ = B Aᵀ: cuBLAS's TN with the
    // operands swapped.
    auto launch = [&] {
      CUBLAS_CHECK(cublasGemmEx(libs->blas, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.m,
                                s.k, &alpha, b, v.inputType, s.k, a,
                                v.inputType, s.k, &beta, ops.c, CUDA_R_32F, s.n,
                                v.compute, CUBLAS_GEMM_DEFAULT));
    };
    Row row;
    row.group = s.name;
    row.shape = shapeString(s);
    row.impl = v.impl;
    measureGemm(row, ops, OutType::F32, v.reference, launch, "TFLOP/s");
    rows.push_back(row);
  }
  return rows;
}

Row runCublasLtInt8(Libraries *libs, Operands &ops) {
  const Shape &s = ops.shape;
  cublasLtMatmulDesc_t desc;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32I, CUDA_R_32I));
  cublasOperation_t transA = CUBLAS_OP_T, transB = CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                              &transA, sizeof(transA)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                              &transB, sizeof(transB)));
  // Column-major views: B as K×N, A as K×M (both K-contiguous), C as N×M.
  cublasLtMatrixLayout_t layoutB, layoutA, layoutC;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layoutB, CUDA_R_8I, s.k, s.n, s.k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layoutA, CUDA_R_8I, s.k, s.m, s.k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layoutC, CUDA_R_32I, s.n, s.m, s.n));
  cublasLtMatmulPreference_t preference;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
      &libs->workspaceBytes, sizeof(libs->workspaceBytes)));
  cublasLtMatmulHeuristicResult_t heuristic = {};
  int found = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(libs->lt, desc, layoutB, layoutA,
                                              layoutC, layoutC, preference, 1,
                                              &heuristic, &found));
  Row row;
  row.group = s.name;
  row.shape = shapeString(s);
  row.impl = "cuBLASLt int8";
  if (found == 0) {
    row.note = "no cuBLASLt algorithm";
  } else {
    // Whether the chosen algorithm runs on integer tensor cores.
    uint64_t flags = 0;
    size_t written = 0;
    CUBLAS_CHECK(cublasLtMatmulAlgoCapGetAttribute(
        &heuristic.algo, CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS, &flags,
        sizeof(flags), &written));
    int algoId = -1;
    CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(
        &heuristic.algo, CUBLASLT_ALGO_CONFIG_ID, &algoId, sizeof(algoId),
        &written));
    bool imma = flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_IMMA;
    row.note = std::string(imma ? "IMMA" : "NOT IMMA") + ", algo " +
               std::to_string(algoId);
    const int32_t alpha = 1, beta = 0;
    auto launch = [&] {
      CUBLAS_CHECK(cublasLtMatmul(libs->lt, desc, &alpha, ops.b8d, layoutB,
                                  ops.a8d, layoutA, &beta, ops.c, layoutC,
                                  ops.c, layoutC, &heuristic.algo,
                                  libs->workspace, libs->workspaceBytes, 0));
    };
    measureGemm(row, ops, OutType::I32, referenceI8, launch, "TOPS");
  }
  CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(preference));
  CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(layoutA));
  CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(layoutB));
  CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(layoutC));
  CUBLAS_CHECK(cublasLtMatmulDescDestroy(desc));
  return row;
}
