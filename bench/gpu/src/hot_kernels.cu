//===- hot_kernels.cu - The project's lowered modules, loaded and timed ---===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// bench/gpu/export.py lowers modules with hot ops by `hot-opt
// --hot-lower-to-nvvm` into shared objects (host code with the kernels
// embedded) plus a `key = value` description each. Here they are dlopen'ed
// and their host functions called through the C interface of MLIR's memref
// descriptors; the mgpu* calls they make go to libhot_cuda_runtime.so.
//
// Two runtime entry points are interposed (this executable exports them, so
// the shared objects bind to them first): mgpuMemAlloc poisons every buffer a
// step allocates, so that unwritten outputs show, and mgpuLaunchKernel times
// each launch with events on its stream, which gives the kernels-only time of
// a step next to its wall time.
//
//===----------------------------------------------------------------------===//

#include "gemm.h"
#include "memref.h"

#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <random>

namespace {
/// The runtime's `name` (the next definition after this executable's).
void *realEntry(const char *name) {
  void *entry = dlsym(RTLD_NEXT, name);
  if (!entry) {
    std::fprintf(stderr, "hot-gpu-bench: no %s in libhot_cuda_runtime.so\n",
                 name);
    std::exit(1);
  }
  return entry;
}

/// Launch records of the interposed mgpuLaunchKernel.
struct Launch {
  CUevent start, stop;
};
bool recording = false;
bool poisoning = false;
std::vector<Launch> launches;

/// Sums and clears the recorded launches (after a synchronous step).
double takeKernelMs(size_t *count = nullptr) {
  double total = 0;
  for (Launch &l : launches) {
    float ms = 0;
    cuEventSynchronize(l.stop);
    cuEventElapsedTime(&ms, l.start, l.stop);
    total += ms;
    cuEventDestroy(l.start);
    cuEventDestroy(l.stop);
  }
  if (count)
    *count = launches.size();
  launches.clear();
  return total;
}
} // namespace

/// From libhot_cuda_runtime.so; calling it also keeps the library a
/// dependency of this executable (the modules need its other functions).
extern "C" void mgpuSetDefaultDevice(int32_t device);

//===----------------------------------------------------------------------===//
// Interposed runtime entry points
//===----------------------------------------------------------------------===//

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                              bool isHostShared) {
  using Fn = void *(*)(uint64_t, void *, bool);
  static auto real = reinterpret_cast<Fn>(realEntry("mgpuMemAlloc"));
  void *ptr = real(sizeBytes, stream, isHostShared);
  if (poisoning && ptr && sizeBytes >= 4) {
    poisonOutput(ptr, Shape{nullptr, int64_t(sizeBytes / 4), 1, 1});
    // The memset runs on the legacy default stream, the step's kernels on the
    // runtime's non-blocking streams: no implicit order between them.
    CUresult r = cuCtxSynchronize();
    if (r != CUDA_SUCCESS) {
      std::fprintf(stderr, "hot-gpu-bench: cuCtxSynchronize failed (%d)\n",
                   int(r));
      std::exit(1);
    }
  }
  return ptr;
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t paramsCount) {
  using Fn = void (*)(void *, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                      intptr_t, int32_t, void *, void **, void **, size_t);
  static auto real = reinterpret_cast<Fn>(realEntry("mgpuLaunchKernel"));
  if (!recording) {
    real(function, gridX, gridY, gridZ, blockX, blockY, blockZ, smem, stream,
         params, extra, paramsCount);
    return;
  }
  Launch l;
  cuEventCreate(&l.start, CU_EVENT_DEFAULT);
  cuEventCreate(&l.stop, CU_EVENT_DEFAULT);
  cuEventRecord(l.start, static_cast<CUstream>(stream));
  real(function, gridX, gridY, gridZ, blockX, blockY, blockZ, smem, stream,
       params, extra, paramsCount);
  cuEventRecord(l.stop, static_cast<CUstream>(stream));
  launches.push_back(l);
}

//===----------------------------------------------------------------------===//
// Descriptions and rows
//===----------------------------------------------------------------------===//

struct HotModule {
  std::map<std::string, std::string> keys;
  std::string problem; ///< why it cannot run, empty if it can
  void *symbol = nullptr;

  std::string get(const char *key) const {
    auto it = keys.find(key);
    return it == keys.end() ? "" : it->second;
  }
  int64_t number(const char *key) const { return std::atoll(get(key).c_str()); }
};

namespace {
/// Reads `key = value` lines; `#` starts a comment line.
std::map<std::string, std::string> readKeys(const std::string &path) {
  std::map<std::string, std::string> keys;
  std::ifstream in(path);
  auto trim = [](std::string s) {
    size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos)
      continue;
    keys[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
  }
  return keys;
}

/// Times `step` (a synchronous host call): `warmup` calls, then the median
/// wall time and the median of the summed kernel times of `reps` calls.
void timeStep(const std::function<void()> &step, double &wallMs,
              double &kernelMs, size_t &kernels, int warmup = 3,
              int reps = 15) {
  for (int i = 0; i < warmup; ++i)
    step();
  std::vector<double> walls, sums;
  recording = true;
  for (int i = 0; i < reps; ++i) {
    takeKernelMs();
    auto t0 = std::chrono::steady_clock::now();
    step();
    auto t1 = std::chrono::steady_clock::now();
    walls.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    sums.push_back(takeKernelMs(&kernels));
  }
  recording = false;
  std::sort(walls.begin(), walls.end());
  std::sort(sums.begin(), sums.end());
  wallMs = walls[reps / 2];
  kernelMs = sums[reps / 2];
}

/// The wall-time row and the kernels-only row of one module.
std::vector<Row> stepRows(const HotModule *module, const std::string &group,
                          const std::string &shape, double flops,
                          const char *unit, double relError,
                          long long unwritten,
                          const std::function<void()> &step) {
  double wall = 0, kernel = 0;
  size_t count = 0;
  timeStep(step, wall, kernel, count);
  Row w, k;
  w.group = k.group = group;
  w.shape = k.shape = shape;
  w.impl = "hot " + module->get("library") + " (host call, wall)";
  k.impl = "hot " + module->get("library") + " (kernels only)";
  w.ms = wall;
  k.ms = kernel;
  w.rate = flops / (wall * 1e-3) / 1e12;
  k.rate = flops / (kernel * 1e-3) / 1e12;
  w.rateUnit = k.rateUnit = unit;
  w.relError = k.relError = relError;
  w.unwritten = k.unwritten = unwritten;
  k.note = std::to_string(count) + " launches";
  w.note = "incl. managed allocations, stream per launch";
  return {w, k};
}
} // namespace

std::vector<HotModule *> loadHotModules(const std::string &dir) {
  std::vector<HotModule *> modules;
  DIR *d = opendir(dir.c_str());
  if (!d)
    return modules;
  std::vector<std::string> names;
  while (dirent *entry = readdir(d)) {
    std::string file = entry->d_name;
    if (file.size() > 4 && file.compare(file.size() - 4, 4, ".txt") == 0)
      names.push_back(file);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  // The runtime's primary context is the one the runtime API made current.
  CUDA_CHECK(cudaFree(nullptr));
  mgpuSetDefaultDevice(0);
  for (const std::string &file : names) {
    auto *module = new HotModule;
    module->keys = readKeys(dir + "/" + file);
    std::string lib = dir + "/" + module->get("library");
    // RTLD_LOCAL: every module has its own copies of the same kernel symbols.
    void *handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      module->problem = std::string("dlopen: ") + dlerror();
    else if (!(module->symbol = dlsym(handle, module->get("symbol").c_str())))
      module->problem = "no symbol " + module->get("symbol");
    modules.push_back(module);
  }
  return modules;
}

const HotModule *findHotModule(const std::vector<HotModule *> &modules,
                               const char *kind, const std::string &layer,
                               const Shape *shape) {
  for (const HotModule *m : modules)
    if (m->get("kind") == kind && m->get("layer") == layer &&
        (!shape || (m->number("m") == shape->m && m->number("n") == shape->n &&
                    m->number("k") == shape->k)))
      return m;
  return nullptr;
}

std::vector<Row> runHotGemm(const HotModule *module, Operands &ops) {
  const Shape &s = ops.shape;
  if (!module->problem.empty()) {
    Row r;
    r.group = s.name;
    r.shape = shapeString(s);
    r.impl = "hot " + module->get("library");
    r.note = module->problem;
    return {r};
  }
  auto fn = reinterpret_cast<GemmFn>(module->symbol);
  MemRef<2> a = wrap<2>(ops.a8d, {s.m, s.k}), b = wrap<2>(ops.b8d, {s.n, s.k});
  MemRef<2> c;
  // The check: every buffer the step allocates is poisoned first.
  poisoning = true;
  fn(&c, &a, &b);
  poisoning = false;
  CUDA_CHECK(cudaDeviceSynchronize());
  std::string why;
  void *data = denseData(c, sizeof(int32_t), why);
  if (!data || c.sizes[0] != s.m || c.sizes[1] != s.n) {
    Row r;
    r.group = s.name;
    r.shape = shapeString(s);
    r.impl = "hot " + module->get("library");
    r.note = why.empty() ? "returned memref has another shape" : why;
    return {r};
  }
  CheckResult check =
      checkOutput(data, OutType::I32, s,
                  [&](int64_t i, int64_t j) { return referenceI8(ops, i, j); });
  CUDA_CHECK(cudaFree(c.allocated));
  return stepRows(module, s.name, shapeString(s), s.flops(), "TOPS",
                  check.relError, check.unwritten, [&] {
                    MemRef<2> out;
                    fn(&out, &a, &b);
                    CUDA_CHECK(cudaFree(out.allocated));
                  });
}

std::vector<Row> runHotLayer(const HotModule *module, const char *group) {
  int64_t batch = module->number("batch"), tokens = module->number("tokens"),
          o = module->number("out"), in = module->number("in");
  int64_t n = batch * tokens;
  std::string shape = "N " + std::to_string(n) + ", O " + std::to_string(o) +
                      ", I " + std::to_string(in);
  double flops = 2.0 * 2.0 * double(n) * o * in; // gx and gw, unrewritten
  if (!module->problem.empty()) {
    Row r;
    r.group = group;
    r.shape = shape;
    r.impl = "hot " + module->get("library");
    r.note = module->problem;
    return {r};
  }
  std::vector<float> x, w, gy;
  fillUniform(x, size_t(n) * in);
  fillUniform(w, size_t(o) * in);
  fillUniform(gy, size_t(n) * o);
  // Managed memory: the step's host code may read its arguments too.
  auto managed = [](const std::vector<float> &host) {
    float *p = nullptr;
    CUDA_CHECK(cudaMallocManaged(&p, host.size() * sizeof(float)));
    std::copy(host.begin(), host.end(), p);
    return p;
  };
  float *xd = managed(x), *wd = managed(w), *gyd = managed(gy);
  MemRef<3> xm = wrap<3>(xd, {batch, tokens, in}),
            gym = wrap<3>(gyd, {batch, tokens, o});
  MemRef<2> wm = wrap<2>(wd, {o, in});
  auto fn = reinterpret_cast<LayerFn>(module->symbol);

  LayerResults res;
  poisoning = true;
  fn(&res, &xm, &wm, &gym, /*seed=*/1234);
  poisoning = false;
  CUDA_CHECK(cudaDeviceSynchronize());
  // Against the exact products gy·W and gyᵀ·x: HOT's own error (quantization,
  // HLA), not only the kernels'.
  Shape gxShape{group, n, in, o}, gwShape{group, o, in, n};
  std::string why;
  void *gxData = denseData(res.gx, sizeof(float), why);
  void *gwData = denseData(res.gw, sizeof(float), why);
  if (!gxData || !gwData || res.gx.sizes[0] != n || res.gx.sizes[1] != in ||
      res.gw.sizes[0] != o || res.gw.sizes[1] != in) {
    Row r;
    r.group = group;
    r.shape = shape;
    r.impl = "hot " + module->get("library");
    r.note = why.empty() ? "returned memrefs have other shapes" : why;
    return {r};
  }
  CheckResult cx =
      checkOutput(gxData, OutType::F32, gxShape, [&](int64_t i, int64_t j) {
        double sum = 0;
        for (int64_t k = 0; k < o; ++k)
          sum += double(gy[i * o + k]) * w[k * in + j];
        return sum;
      });
  CheckResult cw =
      checkOutput(gwData, OutType::F32, gwShape, [&](int64_t i, int64_t j) {
        double sum = 0;
        for (int64_t k = 0; k < n; ++k)
          sum += double(gy[k * o + i]) * x[k * in + j];
        return sum;
      });
  CUDA_CHECK(cudaFree(res.gx.allocated));
  CUDA_CHECK(cudaFree(res.gw.allocated));
  std::vector<Row> rows = stepRows(module, group, shape, flops, "TFLOP/s",
                                   std::max(cx.relError, cw.relError),
                                   cx.unwritten + cw.unwritten, [&] {
                                     LayerResults r;
                                     fn(&r, &xm, &wm, &gym, 1234);
                                     CUDA_CHECK(cudaFree(r.gx.allocated));
                                     CUDA_CHECK(cudaFree(r.gw.allocated));
                                   });
  char note[96];
  std::snprintf(note, sizeof(note), "; rel. error gx %.3g, gw %.3g",
                cx.relError, cw.relError);
  for (Row &r : rows)
    r.note += note;
  for (float *p : {xd, wd, gyd})
    CUDA_CHECK(cudaFree(p));
  return rows;
}
