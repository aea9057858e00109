//===- main.cu - The GPU benchmark: ceilings, library GEMMs, our kernels --===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Usage: hot-gpu-bench [KERNEL_DIR]. Prints one markdown
// table: device copy bandwidth, then for each backward GEMM of a ViT-B layer
// (64 images of 197 tokens) cuBLAS FP32 / TF32 / BF16, cuBLASLt int8 and the
// project's modules lowered by export.py into KERNEL_DIR ("not built" when it
// has none), then each layer's fused hadamard + quantize of gy against the
// device copy bandwidth and its HOT backward against cuBLAS (README.md).
//
//===----------------------------------------------------------------------===//

#include "copy.h"
#include "gemm.h"

#include <cublasLt.h>

#include <algorithm>

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
  // The memory ceiling the hadamard + quantize rows are compared with.
  double copyGBs = 0;
  for (const Row &r : rows)
    copyGBs = std::max(copyGBs, r.rate);

  Libraries *libs = createLibraries();
  std::vector<HotModule *> modules = loadHotModules(kernelDir);

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
  // HLA keeps 8 of every 16 tokens of an image (197 -> 101).
  const int64_t hlaTokens = 64 * 101;

  auto notBuilt = [&](const Shape &shape) {
    Row r;
    r.group = shape.name;
    r.shape = shapeString(shape);
    r.impl = "hot (bench/gpu/export.py)";
    r.note = "not built";
    return r;
  };
  for (const Layer &layer : layers) {
    // gx = gy·W: [N,O]x[O,I]; gw = gyᵀ·x: [O,N]x[N,I], and HOT's gw after
    // HLA, [O,N']x[N',I].
    std::string names[] = {std::string(layer.name) + " gx",
                           std::string(layer.name) + " gw",
                           std::string(layer.name) + " gw (HLA)"};
    const Shape shapes[] = {{names[0].c_str(), tokens, layer.in, layer.out},
                            {names[1].c_str(), layer.out, layer.in, tokens},
                            {names[2].c_str(), layer.out, layer.in, hlaTokens}};
    double floatMs[3] = {0, 0, 0}; // FP32, TF32, BF16: gx + gw
    for (int p = 0; p < 3; ++p) {
      const Shape &shape = shapes[p];
      Operands ops;
      makeOperands(ops, shape);
      size_t first = rows.size();
      if (p < 2) {
        std::vector<Row> floats = runCublasFloat(libs, ops);
        for (size_t v = 0; v < floats.size() && v < 3; ++v)
          floatMs[v] += floats[v].ms;
        for (Row &r : floats)
          rows.push_back(r);
      }
      Row int8 = runCublasLtInt8(libs, ops);
      rows.push_back(int8);
      if (p != 1) {
        // Every variant export.py made of this product (wgmma, mma.sync,
        // tilings), one row each.
        std::vector<const HotModule *> gemms =
            findHotGemms(modules, layer.name, shape);
        if (gemms.empty())
          rows.push_back(notBuilt(shape));
        for (const HotModule *m : gemms)
          for (Row &r : runHotGemm(m, ops))
            rows.push_back(r);
      }
      for (size_t i = first; i < rows.size(); ++i)
        if (int8.ms > 0 && rows[i].ms > 0)
          rows[i].vsInt8 = int8.ms / rows[i].ms;
      freeOperands(ops);
    }
    // One layer's backward: cuBLAS gx + gw against HOT's as generated.
    std::string group = std::string(layer.name) + " backward";
    const char *floatNames[] = {"cuBLAS FP32 gx + gw", "cuBLAS TF32 gx + gw",
                                "cuBLAS BF16 gx + gw"};
    for (int v = 0; v < 3; ++v) {
      Row r;
      r.group = group;
      r.shape = "N " + std::to_string(tokens);
      r.impl = floatNames[v];
      r.ms = floatMs[v];
      rows.push_back(r);
    }
    // The fused hadamard + quantize of gy (per row, per tensor) against the
    // device copy bandwidth.
    for (const HotModule *hq : findHotModules(modules, "hq", layer.name))
      for (Row &r : runHotQuantize(hq, copyGBs))
        rows.push_back(r);
    // As generated, (the _unshared module) with every per-tensor quantize's
    // max in a pass of its own, (_lqs) with LQS's finer scales and (_bf16)
    // the bf16 graph: bf16 x, W, gy, gx, gw; the same cuBLAS rows compared.
    std::vector<const HotModule *> layerModules =
        findHotModules(modules, "layer", layer.name);
    if (layerModules.empty()) {
      Shape s{group.c_str(), tokens, layer.in, layer.out};
      rows.push_back(notBuilt(s));
      continue;
    }
    for (const HotModule *m : layerModules)
      for (Row r : runHotLayer(m, group.c_str(), copyGBs)) {
        char ratio[96];
        std::snprintf(ratio, sizeof(ratio),
                      "; vs FP32 %.2fx, TF32 %.2fx, BF16 %.2fx",
                      floatMs[0] / r.ms, floatMs[1] / r.ms, floatMs[2] / r.ms);
        r.note += ratio;
        rows.push_back(r);
      }
  }
  destroyLibraries(libs);
  printTable(rows);
  if (!kernelBreakdown().empty()) {
    std::printf("\nKernel by kernel (median of the timed calls; MB: the "
                "bytes of its buffers, traffic.py's model)\n\n"
                "| module | # | kernel | us | MB | GB/s | of copy |\n"
                "|---|---:|---|---:|---:|---:|---:|\n");
    for (const std::string &line : kernelBreakdown())
      std::printf("%s\n", line.c_str());
  }
  return 0;
}
