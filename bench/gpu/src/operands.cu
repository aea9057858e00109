//===- operands.cu - Random operands and float64 references ---------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "gemm.h"

namespace {
template <typename T> T *upload(const std::vector<T> &host) {
  T *device = nullptr;
  CUDA_CHECK(cudaMalloc(&device, host.size() * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T),
                        cudaMemcpyHostToDevice));
  return device;
}

std::vector<uint16_t> toBf16(const std::vector<float> &values) {
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    bits[i] = bf16Bits(values[i]);
  return bits;
}
} // namespace

void makeOperands(Operands &ops, const Shape &shape) {
  ops.shape = shape;
  size_t aCount = size_t(shape.m) * shape.k, bCount = size_t(shape.n) * shape.k;
  fillUniform(ops.a, aCount);
  fillUniform(ops.b, bCount);
  fillInt8(ops.a8, aCount);
  fillInt8(ops.b8, bCount);
  ops.a32 = upload(ops.a);
  ops.b32 = upload(ops.b);
  ops.a16 = upload(toBf16(ops.a));
  ops.b16 = upload(toBf16(ops.b));
  ops.a8d = upload(ops.a8);
  ops.b8d = upload(ops.b8);
  CUDA_CHECK(cudaMalloc(&ops.c, size_t(shape.m) * shape.n * 4));
}

void freeOperands(Operands &ops) {
  for (void *p :
       {static_cast<void *>(ops.a32), static_cast<void *>(ops.b32),
        static_cast<void *>(ops.a16), static_cast<void *>(ops.b16),
        static_cast<void *>(ops.a8d), static_cast<void *>(ops.b8d), ops.c})
    CUDA_CHECK(cudaFree(p));
  ops = Operands();
}

double referenceF32(const Operands &ops, int64_t i, int64_t j) {
  const float *a = &ops.a[i * ops.shape.k], *b = &ops.b[j * ops.shape.k];
  double sum = 0;
  for (int64_t k = 0; k < ops.shape.k; ++k)
    sum += double(a[k]) * double(b[k]);
  return sum;
}

double referenceBf16(const Operands &ops, int64_t i, int64_t j) {
  const float *a = &ops.a[i * ops.shape.k], *b = &ops.b[j * ops.shape.k];
  double sum = 0;
  for (int64_t k = 0; k < ops.shape.k; ++k)
    sum += double(roundToBf16(a[k])) * double(roundToBf16(b[k]));
  return sum;
}

double referenceI8(const Operands &ops, int64_t i, int64_t j) {
  const int8_t *a = &ops.a8[i * ops.shape.k], *b = &ops.b8[j * ops.shape.k];
  int64_t sum = 0;
  for (int64_t k = 0; k < ops.shape.k; ++k)
    sum += int64_t(a[k]) * b[k];
  return double(sum);
}

std::string shapeString(const Shape &s) {
  return std::to_string(s.m) + " x " + std::to_string(s.n) + " x " +
         std::to_string(s.k);
}

void measureGemm(Row &row, Operands &ops, OutType type,
                 double (*reference)(const Operands &, int64_t, int64_t),
                 const std::function<void()> &launch, const char *rateUnit) {
  poisonOutput(ops.c, ops.shape);
  launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  CheckResult check =
      checkOutput(ops.c, type, ops.shape,
                  [&](int64_t i, int64_t j) { return reference(ops, i, j); });
  row.relError = check.relError;
  row.unwritten = check.unwritten;
  row.ms = medianMs(launch);
  row.rate = ops.shape.flops() / (row.ms * 1e-3) / 1e12;
  row.rateUnit = rateUnit;
}
