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
// Each measurement is a step of steps.h, run in a child process: a kernel
// that faults or hangs fails its own row, and the rest of the table is
// still measured. This process never touches the GPU.
//
//===----------------------------------------------------------------------===//

#include "copy.h"
#include "gemm.h"
#include "steps.h"

#include <cublasLt.h>

#include <algorithm>
#include <deque>

namespace {
// State of the child process running the steps (made by its setup).
Libraries *libs = nullptr;

/// Fresh random operands of `shape`, kept while consecutive steps use the
/// same shape.
Operands &operandsFor(const Shape &shape) {
  static Operands ops;
  static std::string current;
  if (current != shape.name) {
    if (!current.empty())
      freeOperands(ops);
    ops = Operands();
    makeOperands(ops, shape);
    current = shape.name;
  }
  return ops;
}

StepResult rowsOf(std::vector<Row> rows) {
  StepResult r;
  r.rows = std::move(rows);
  return r;
}

/// The device-copy rate (GB/s), the ceiling of the memory-bound rows: the
/// faster of the copy step's rows; 0 when that step failed.
double copyRate(const StepResult &copies) {
  double rate = 0;
  for (const Row &r : copies.rows)
    rate = std::max(rate, r.rate);
  return rate;
}

/// Environment variable `name` in seconds, or `fallback`.
double seconds(const char *name, double fallback) {
  const char *value = std::getenv(name);
  return value ? std::atof(value) : fallback;
}

/// A row for a step that did not run to its end.
Row failureRow(const std::string &group, const std::string &shape,
               const Step &step, const StepResult &result) {
  Row r;
  r.group = group;
  r.shape = shape;
  r.impl = step.label;
  r.note = (result.failure.rfind("not run", 0) == 0 ? "" : "FAILED: ") +
           result.failure;
  return r;
}

/// The row of a product or layer that export.py made no module for.
Row notBuilt(const std::string &group, const std::string &shape) {
  Row r;
  r.group = group;
  r.shape = shape;
  r.impl = "hot (bench/gpu/export.py)";
  r.note = "not built";
  return r;
}

/// ViT-B: (out, in) features of the four linear layers of a block.
struct Layer {
  const char *name;
  int64_t out, in;
};

/// Where one product's steps are: a float step (gx, gw only), the int8
/// baseline, then our variants.
struct ProductPlan {
  Shape shape;
  long floats = -1, int8 = -1;
  std::vector<size_t> hot;
};

struct LayerPlan {
  const Layer *layer;
  ProductPlan products[3];
  std::vector<size_t> quantizes, layers;
};
} // namespace

int main(int argc, char **argv) {
  std::string kernelDir = argc > 1 ? argv[1] : "kernels";
  // A failed runtime call ends the child at the step that made it.
  setenv("HOT_CUDA_ABORT_ON_ERROR", "1", 0);

  std::vector<HotModule *> modules = describeHotModules(kernelDir);
  std::vector<Step> steps;
  auto add =
      [&](std::string label,
          std::function<StepResult(const std::vector<StepResult> &)> run) {
        steps.push_back({std::move(label), std::move(run)});
        return steps.size() - 1;
      };

  add("device", [](const std::vector<StepResult> &) {
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    int driver = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    char line[512];
    std::snprintf(line, sizeof(line),
                  "device: %s, sm_%d%d, %d SMs, %.0f MiB L2, %.1f GiB; "
                  "driver %d, cuBLASLt %zu",
                  prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                  prop.l2CacheSize / 1048576.0,
                  prop.totalGlobalMem / 1073741824.0, driver,
                  cublasLtGetVersion());
    StepResult r;
    r.lines.push_back(line);
    return r;
  });
  const size_t copyStep = add("device copy", [](auto &) {
    return rowsOf(measureCopies(size_t(1) << 30));
  });

  static const Layer layers[] = {{"qkv", 2304, 768},
                                 {"proj", 768, 768},
                                 {"fc1", 3072, 768},
                                 {"fc2", 768, 3072}};
  const int64_t tokens = 64 * 197;
  // HLA keeps 8 of every 16 tokens of an image (197 -> 101).
  const int64_t hlaTokens = 64 * 101;
  std::deque<std::string> names; // the shapes' names, alive for the run
  std::vector<LayerPlan> plans;
  for (const Layer &layer : layers) {
    LayerPlan plan;
    plan.layer = &layer;
    // gx = gy·W: [N,O]x[O,I]; gw = gyᵀ·x: [O,N]x[N,I], and HOT's gw after
    // HLA, [O,N']x[N',I].
    const char *suffixes[] = {" gx", " gw", " gw (HLA)"};
    const int64_t dims[3][3] = {{tokens, layer.in, layer.out},
                                {layer.out, layer.in, tokens},
                                {layer.out, layer.in, hlaTokens}};
    for (int p = 0; p < 3; ++p) {
      names.push_back(layer.name + std::string(suffixes[p]));
      ProductPlan &product = plan.products[p];
      product.shape = {names.back().c_str(), dims[p][0], dims[p][1],
                       dims[p][2]};
      const Shape shape = product.shape;
      if (p < 2)
        product.floats = long(
            add(names.back() + ": cuBLAS FP32, TF32, BF16", [shape](auto &) {
              return rowsOf(runCublasFloat(libs, operandsFor(shape)));
            }));
      product.int8 =
          long(add(names.back() + ": cuBLASLt int8", [shape](auto &) {
            return rowsOf({runCublasLtInt8(libs, operandsFor(shape))});
          }));
      // Every variant export.py made of this product (wgmma, mma.sync,
      // tilings), one step each.
      if (p != 1)
        for (const HotModule *m : findHotGemms(modules, layer.name, shape))
          product.hot.push_back(
              add(names.back() + ": hot " + hotModuleLibrary(m),
                  [m, shape](auto &) {
                    return rowsOf(runHotGemm(m, operandsFor(shape)));
                  }));
    }
    // The fused hadamard + quantize of gy (per row, per tensor) against the
    // device copy bandwidth.
    for (const HotModule *m : findHotModules(modules, "hq", layer.name))
      plan.quantizes.push_back(
          add("hot " + hotModuleLibrary(m), [m, copyStep](auto &done) {
            return rowsOf(runHotQuantize(m, copyRate(done[copyStep])));
          }));
    // As generated, (the _unshared module) with every per-tensor quantize's
    // max in a pass of its own, (_lqs) with LQS's finer scales and (_bf16)
    // the bf16 graph: bf16 x, W, gy, gx, gw; the same cuBLAS rows compared.
    names.push_back(layer.name + std::string(" backward"));
    const char *group = names.back().c_str();
    for (const HotModule *m : findHotModules(modules, "layer", layer.name))
      plan.layers.push_back(
          add("hot " + hotModuleLibrary(m), [m, group, copyStep](auto &done) {
            StepResult r =
                rowsOf(runHotLayer(m, group, copyRate(done[copyStep])));
            r.lines = takeKernelBreakdown();
            return r;
          }));
    plans.push_back(std::move(plan));
  }

  StepLimits limits;
  limits.step = seconds("HOT_GPU_STEP_LIMIT_S", limits.step);
  limits.total = seconds("HOT_GPU_TOTAL_LIMIT_S", limits.total);
  std::vector<StepResult> results = runSteps(
      steps,
      [] {
        CUDA_CHECK(cudaFree(nullptr));
        libs = createLibraries();
      },
      limits);

  // The table, in the order of the plan.
  std::vector<Row> rows;
  auto append = [&](size_t step, const std::string &group,
                    const std::string &shape) {
    if (!results[step].failure.empty())
      rows.push_back(failureRow(group, shape, steps[step], results[step]));
    for (const Row &r : results[step].rows)
      rows.push_back(r);
  };
  for (const std::string &line : results[0].lines)
    std::printf("%s\n\n", line.c_str());
  append(0, "device", "-");
  append(copyStep, "device copy", "-");
  for (LayerPlan &plan : plans) {
    // FP32, TF32, BF16: the sum of gx's and gw's times; negative when one of
    // them is missing.
    double floatMs[3] = {0, 0, 0};
    for (ProductPlan &product : plan.products) {
      const Shape &s = product.shape;
      size_t first = rows.size();
      if (product.floats >= 0) {
        const StepResult &floats = results[product.floats];
        for (int v = 0; v < 3; ++v)
          floatMs[v] = v < int(floats.rows.size()) && floats.rows[v].ms > 0 &&
                               floatMs[v] >= 0
                           ? floatMs[v] + floats.rows[v].ms
                           : -1;
        append(product.floats, s.name, shapeString(s));
      }
      append(product.int8, s.name, shapeString(s));
      const std::vector<Row> &int8 = results[product.int8].rows;
      double int8Ms = int8.empty() ? -1 : int8[0].ms;
      for (size_t step : product.hot)
        append(step, s.name, shapeString(s));
      if (product.hot.empty() && &product != &plan.products[1])
        rows.push_back(notBuilt(s.name, shapeString(s)));
      for (size_t i = first; i < rows.size(); ++i)
        if (int8Ms > 0 && rows[i].ms > 0)
          rows[i].vsInt8 = int8Ms / rows[i].ms;
    }
    // One layer's backward: cuBLAS gx + gw against HOT's as generated.
    std::string group = std::string(plan.layer->name) + " backward";
    std::string shape = "N " + std::to_string(tokens);
    const char *floatNames[] = {"cuBLAS FP32 gx + gw", "cuBLAS TF32 gx + gw",
                                "cuBLAS BF16 gx + gw"};
    for (int v = 0; v < 3; ++v) {
      Row r;
      r.group = group;
      r.shape = shape;
      r.impl = floatNames[v];
      r.ms = floatMs[v];
      rows.push_back(r);
    }
    for (size_t step : plan.quantizes)
      append(step, plan.layer->name + std::string(" hadamard+quantize"), "-");
    if (plan.layers.empty())
      rows.push_back(notBuilt(group, shape));
    for (size_t step : plan.layers) {
      size_t first = rows.size();
      append(step, group, shape);
      for (size_t i = first; i < rows.size(); ++i) {
        Row &r = rows[i];
        const char *against[] = {"FP32", "TF32", "BF16"};
        const char *separator = "; vs";
        for (int v = 0; v < 3; ++v) {
          if (r.ms <= 0 || floatMs[v] <= 0)
            continue;
          char ratio[48];
          std::snprintf(ratio, sizeof(ratio), "%s %s %.2fx", separator,
                        against[v], floatMs[v] / r.ms);
          r.note += ratio;
          separator = ",";
        }
      }
    }
  }
  printTable(rows);
  std::vector<std::string> breakdown;
  for (const LayerPlan &plan : plans)
    for (size_t step : plan.layers)
      breakdown.insert(breakdown.end(), results[step].lines.begin(),
                       results[step].lines.end());
  if (!breakdown.empty()) {
    std::printf("\nKernel by kernel (median of the timed calls; MB: the "
                "bytes of its buffers, traffic.py's model)\n\n"
                "| module | # | kernel | us | MB | GB/s | of copy |\n"
                "|---|---:|---|---:|---:|---:|---:|\n");
    for (const std::string &line : breakdown)
      std::printf("%s\n", line.c_str());
  }
  size_t failed =
      std::count_if(results.begin(), results.end(),
                    [](const StepResult &r) { return !r.failure.empty(); });
  if (failed)
    std::printf("\n%zu of %zu steps did not run to their end (rows marked "
                "FAILED or not run; the log above has their errors).\n",
                failed, steps.size());
  return failed ? 1 : 0;
}
