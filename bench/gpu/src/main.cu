//===- main.cu - The GPU benchmark: ceilings, library GEMMs, our kernels --===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Usage: hot-gpu-bench [KERNEL_DIR [EXTRA_DIR...]]. Prints one markdown
// table: device copy bandwidth, then for each backward GEMM of a ViT-B layer
// (64 images of 197 tokens) cuBLAS FP32 / TF32 / BF16, cuBLASLt int8, the
// project's kernels described in KERNEL_DIR ("not built" when it has none) and
// those of the EXTRA_DIRs (README.md).
//
//===----------------------------------------------------------------------===//

#include "copy.h"
#include "gemm.h"

#include <cublasLt.h>

int main(int argc, char **argv) {
  std::string kernelDir = argc > 1 ? argv[1] : "kernels";

  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  std::printf("device: %s, sm_%d%d, %d SMs, %.0f MiB L2, %.1f GiB; driver %d,"
              " cuBLASLt %zu\n\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount,
              prop.l2CacheSize / 1048576.0, prop.totalGlobalMem / 1073741824.0,
              driver, cublasLtGetVersion());

  std::vector<Row> rows = measureCopies(size_t(1) << 30);

  Libraries *libs = createLibraries();
  std::vector<HotKernel *> kernels = loadHotKernels(kernelDir);
  bool built = !kernels.empty();
  for (int i = 2; i < argc; ++i)
    for (HotKernel *kernel : loadHotKernels(argv[i]))
      kernels.push_back(kernel);

  // ViT-B: (out, in) features of the four linear layers of a block.
  struct Layer {
    const char *name;
    int64_t out, in;
  };
  const Layer layers[] = {{"qkv", 2304, 768},
                          {"proj", 768, 768},
                          {"fc1", 3072, 768},
                          {"fc2", 768, 3072}};
  const int64_t tokens = 64 * 197;

  for (const Layer &layer : layers) {
    // gx = gy·W: [N,O]x[O,I]; gw = gyᵀ·x: [O,N]x[N,I].
    std::string gxName = std::string(layer.name) + " gx";
    std::string gwName = std::string(layer.name) + " gw";
    const Shape shapes[] = {{nullptr, tokens, layer.in, layer.out},
                            {nullptr, layer.out, layer.in, tokens}};
    const std::string *names[] = {&gxName, &gwName};
    for (int p = 0; p < 2; ++p) {
      Shape shape = shapes[p];
      shape.name = names[p]->c_str();
      Operands ops;
      makeOperands(ops, shape);
      size_t first = rows.size();
      for (Row &r : runCublasFloat(libs, ops))
        rows.push_back(r);
      Row int8 = runCublasLtInt8(libs, ops);
      rows.push_back(int8);
      if (!built) {
        Row r;
        r.group = shape.name;
        r.shape = shapeString(shape);
        r.impl = "hot int8 (hot-opt --hot-lower-to-nvvm)";
        r.note = "not built";
        rows.push_back(r);
      }
      for (HotKernel *kernel : kernels)
        rows.push_back(runHotKernel(kernel, ops));
      for (size_t i = first; i < rows.size(); ++i)
        if (int8.ms > 0 && rows[i].ms > 0)
          rows[i].vsInt8 = int8.ms / rows[i].ms;
      freeOperands(ops);
    }
  }
  destroyLibraries(libs);
  printTable(rows);
  return 0;
}
