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
// step allocates, so that unwritten outputs show (or, for the bandwidth rows of
// the hq modules, prefetches it to the device, so that the kernels do not pay
// the first-touch page faults of fresh managed memory), and mgpuLaunchKernel
// times each launch with events on its stream, which gives the kernels-only
// time of a step next to its wall time.
//
//===----------------------------------------------------------------------===//

#include "gemm.h"
#include "hq_reference.h"
#include "memref.h"

#include <cuda_bf16.h>
#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <type_traits>

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
bool prefetching = false;
std::vector<Launch> launches;
/// The median time of each launch of the last timeStep, in launch order.
std::vector<double> lastLaunchMs;
/// Per-kernel lines of the layers that HOT_GPU_BREAKDOWN names.
std::vector<std::string> breakdown;

/// Sums and clears the recorded launches (after a synchronous step); with
/// `each`, also appends each launch's time to it.
double takeKernelMs(size_t *count = nullptr,
                    std::vector<double> *each = nullptr) {
  double total = 0;
  for (Launch &l : launches) {
    float ms = 0;
    cuEventSynchronize(l.stop);
    cuEventElapsedTime(&ms, l.start, l.stop);
    total += ms;
    if (each)
      each->push_back(ms);
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
/// The runtime's: the timed calls give their results back to it, as a
/// framework would, so that it can hand the blocks out again (its cache).
extern "C" void mgpuMemFree(void *ptr, void *stream);

//===----------------------------------------------------------------------===//
// Interposed runtime entry points
//===----------------------------------------------------------------------===//

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                              bool isHostShared) {
  using Fn = void *(*)(uint64_t, void *, bool);
  static auto real = reinterpret_cast<Fn>(realEntry("mgpuMemAlloc"));
  void *ptr = real(sizeBytes, stream, isHostShared);
  if (prefetching && ptr && isHostShared) {
    cudaMemLocation device{};
    device.type = cudaMemLocationTypeDevice;
    device.id = 0;
    CUDA_CHECK(cudaMemPrefetchAsync(ptr, sizeBytes, device, 0, nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  if (poisoning && ptr && sizeBytes >= 2) {
    // NaN in f32 and in bf16 elements alike (the buffer's type is not known).
    poisonBytes(ptr, sizeBytes);
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
  std::string dir; ///< where its description and library are
  // Loaded on first use, in the process that runs it (loadModule).
  mutable bool loaded = false;
  mutable std::string problem; ///< why it cannot run, empty if it can
  mutable void *symbol = nullptr;

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
  // Each launch's times over the reps (launch i of every rep).
  std::vector<std::vector<double>> perLaunch;
  recording = true;
  for (int i = 0; i < reps; ++i) {
    takeKernelMs();
    auto t0 = std::chrono::steady_clock::now();
    step();
    auto t1 = std::chrono::steady_clock::now();
    walls.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    std::vector<double> each;
    sums.push_back(takeKernelMs(&kernels, &each));
    perLaunch.resize(std::max(perLaunch.size(), each.size()));
    for (size_t l = 0; l < each.size(); ++l)
      perLaunch[l].push_back(each[l]);
  }
  recording = false;
  std::sort(walls.begin(), walls.end());
  std::sort(sums.begin(), sums.end());
  wallMs = walls[reps / 2];
  kernelMs = sums[reps / 2];
  lastLaunchMs.clear();
  for (std::vector<double> &times : perLaunch) {
    std::sort(times.begin(), times.end());
    lastLaunchMs.push_back(times[times.size() / 2]);
  }
}

/// The wall-time row and the kernels-only row of one module.
std::vector<Row> stepRows(const HotModule *module, const std::string &group,
                          const std::string &shape, double work,
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
  // work: operations for TFLOP/s and TOPS, bytes for GB/s.
  const double perUnit = std::strcmp(unit, "GB/s") == 0 ? 1e9 : 1e12;
  w.rate = work / (wall * 1e-3) / perUnit;
  k.rate = work / (kernel * 1e-3) / perUnit;
  w.rateUnit = k.rateUnit = unit;
  w.relError = k.relError = relError;
  w.unwritten = k.unwritten = unwritten;
  k.note = std::to_string(count) + " launches";
  w.note = "incl. allocations (cached blocks after the warm-up), one stream and one host sync";
  return {w, k};
}
} // namespace

std::vector<HotModule *> describeHotModules(const std::string &dir) {
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
  for (const std::string &file : names) {
    auto *module = new HotModule;
    module->keys = readKeys(dir + "/" + file);
    module->dir = dir;
    modules.push_back(module);
  }
  return modules;
}

namespace {
/// Loads `module`'s library (dlopen: its kernels load into the current
/// context) and finds its entry; false, with module->problem saying why, when
/// it cannot run.
bool loadModule(const HotModule *module) {
  if (!module->loaded) {
    module->loaded = true;
    // The runtime's primary context is the one the runtime API made current.
    static bool contextReady = [] {
      CUDA_CHECK(cudaFree(nullptr));
      mgpuSetDefaultDevice(0);
      return true;
    }();
    (void)contextReady;
    std::string lib = module->dir + "/" + module->get("library");
    // RTLD_LOCAL: every module has its own copies of the same kernel symbols.
    void *handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      module->problem = std::string("dlopen: ") + dlerror();
    else if (!(module->symbol = dlsym(handle, module->get("symbol").c_str())))
      module->problem = "no symbol " + module->get("symbol");
  }
  return module->problem.empty();
}
} // namespace

std::string hotModuleLibrary(const HotModule *module) {
  return module->get("library");
}

std::vector<const HotModule *>
findHotModules(const std::vector<HotModule *> &modules, const char *kind,
               const std::string &layer) {
  std::vector<const HotModule *> found;
  for (const HotModule *m : modules)
    if (m->get("kind") == kind && m->get("layer") == layer)
      found.push_back(m);
  return found;
}

std::vector<const HotModule *>
findHotGemms(const std::vector<HotModule *> &modules, const std::string &layer,
             const Shape &shape) {
  std::vector<const HotModule *> found;
  for (const HotModule *m : findHotModules(modules, "gemm", layer))
    if (m->number("m") == shape.m && m->number("n") == shape.n &&
        m->number("k") == shape.k)
      found.push_back(m);
  return found;
}

std::vector<Row> runHotGemm(const HotModule *module, Operands &ops) {
  const Shape &s = ops.shape;
  if (!loadModule(module)) {
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
  std::vector<Row> rows = stepRows(
      module, s.name, shapeString(s), s.flops(), "TOPS", check.relError,
      check.unwritten, [&] {
        MemRef<2> out;
        fn(&out, &a, &b);
        mgpuMemFree(out.allocated, nullptr);
      });
  // Which kernel this variant is (hot-opt's remark, kept by export.py).
  rows.back().note += "; " + module->get("kernel");
  return rows;
}

namespace {
/// Lines of the kernel-by-kernel table of a layer module, for the layers
/// that HOT_GPU_BREAKDOWN names ("fc1" by default, "all", or "none"): the
/// median time of each launch of its last timeStep, with the kernel and
/// the bytes of its buffers from export.py's `launches` key.
void addKernelBreakdown(const HotModule *module, double copyGBs) {
  const char *env = std::getenv("HOT_GPU_BREAKDOWN");
  std::string wanted = env ? env : "fc1";
  if (wanted != "all" && wanted != module->get("layer"))
    return;
  std::vector<std::pair<std::string, double>> described;
  std::istringstream words(module->get("launches"));
  for (std::string word; words >> word;) {
    size_t colon = word.rfind(':');
    if (colon == std::string::npos)
      continue;
    described.push_back(
        {word.substr(0, colon), std::atof(word.c_str() + colon + 1)});
  }
  bool named = described.size() == lastLaunchMs.size();
  double total = 0;
  for (size_t l = 0; l < lastLaunchMs.size(); ++l) {
    double us = lastLaunchMs[l] * 1e3;
    total += us;
    char line[512];
    if (named) {
      double gbs = described[l].second / (us * 1e3);
      std::snprintf(line, sizeof(line),
                    "| %s | %zu | %s | %.1f | %.1f | %.0f | %.0f %% |",
                    module->get("library").c_str(), l,
                    described[l].first.c_str(), us,
                    described[l].second / 1e6, gbs,
                    copyGBs > 0 ? 100 * gbs / copyGBs : 0.0);
    } else {
      std::snprintf(line, sizeof(line), "| %s | %zu | ? | %.1f | | | |",
                    module->get("library").c_str(), l, us);
    }
    breakdown.push_back(line);
  }
  char line[256];
  std::snprintf(line, sizeof(line), "| %s | all | %zu launches%s | %.1f | | | |",
                module->get("library").c_str(), lastLaunchMs.size(),
                named ? "" : " (not as export.py described them)", total);
  breakdown.push_back(line);
}
} // namespace


std::vector<Row> runHotLayer(const HotModule *module, const char *group,
                             double copyGBs) {
  int64_t batch = module->number("batch"), tokens = module->number("tokens"),
          o = module->number("out"), in = module->number("in");
  int64_t n = batch * tokens;
  std::string shape = "N " + std::to_string(n) + ", O " + std::to_string(o) +
                      ", I " + std::to_string(in);
  double flops = 2.0 * 2.0 * double(n) * o * in; // gx and gw, unrewritten
  if (!loadModule(module)) {
    Row r;
    r.group = group;
    r.shape = shape;
    r.impl = "hot " + module->get("library");
    r.note = module->problem;
    return {r};
  }
  // `dtype = bf16` (export.py's layer_<layer>_bf16): x, W, gy and the
  // returned gx, gw are bf16; no key (older descriptions) or f32: all f32.
  std::string dtype = module->get("dtype");
  bool bf16 = dtype == "bf16";
  if (!bf16 && !dtype.empty() && dtype != "f32") {
    Row r;
    r.group = group;
    r.shape = shape;
    r.impl = "hot " + module->get("library");
    r.note = "the harness runs f32 and bf16 layers only, not dtype " + dtype;
    return {r};
  }
  const size_t elementBytes = bf16 ? sizeof(__nv_bfloat16) : sizeof(float);
  const OutType outType = bf16 ? OutType::BF16 : OutType::F32;
  std::vector<float> x, w, gy;
  fillUniform(x, size_t(n) * in);
  fillUniform(w, size_t(o) * in);
  fillUniform(gy, size_t(n) * o);
  // A bf16 module is given the inputs rounded to bf16 (to nearest even): the
  // reference multiplies those same values, so that the error compares like
  // with like.
  if (bf16)
    for (std::vector<float> *values : {&x, &w, &gy})
      for (float &v : *values)
        v = __bfloat162float(__float2bfloat16_rn(v));
  // Managed memory: the step's host code may read its arguments too.
  auto managed = [&](const std::vector<float> &host) -> void * {
    if (bf16) {
      __nv_bfloat16 *p = nullptr;
      CUDA_CHECK(cudaMallocManaged(&p, host.size() * sizeof(*p)));
      for (size_t e = 0; e < host.size(); ++e)
        p[e] = __float2bfloat16_rn(host[e]); // exact: already rounded
      return p;
    }
    float *p = nullptr;
    CUDA_CHECK(cudaMallocManaged(&p, host.size() * sizeof(*p)));
    std::copy(host.begin(), host.end(), p);
    return p;
  };
  void *xd = managed(x), *wd = managed(w), *gyd = managed(gy);
  MemRef<3> xm = wrap<3>(xd, {batch, tokens, in}),
            gym = wrap<3>(gyd, {batch, tokens, o});
  MemRef<2> wm = wrap<2>(wd, {o, in});
  auto fn = reinterpret_cast<LayerFn>(module->symbol);

  LayerResults res;
  poisoning = true;
  fn(&res, &xm, &wm, &gym, /*seed=*/1234);
  poisoning = false;
  CUDA_CHECK(cudaDeviceSynchronize());
  // Against the exact products gy·W and gyᵀ·x (of the inputs as given, bf16
  // ones for a bf16 module): HOT's own error (quantization, HLA; bf16: and
  // the rounding of gx, gw to bf16), not only the kernels'.
  Shape gxShape{group, n, in, o}, gwShape{group, o, in, n};
  std::string why;
  void *gxData = denseData(res.gx, elementBytes, why);
  void *gwData = denseData(res.gw, elementBytes, why);
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
      checkOutput(gxData, outType, gxShape, [&](int64_t i, int64_t j) {
        double sum = 0;
        for (int64_t k = 0; k < o; ++k)
          sum += double(gy[i * o + k]) * w[k * in + j];
        return sum;
      });
  CheckResult cw =
      checkOutput(gwData, outType, gwShape, [&](int64_t i, int64_t j) {
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
                                     mgpuMemFree(r.gx.allocated, nullptr);
                                     mgpuMemFree(r.gw.allocated, nullptr);
                                   });
  char note[128];
  std::snprintf(note, sizeof(note), "; %srel. error gx %.3g, gw %.3g",
                bf16 ? "bf16 x, W, gy, gx, gw; " : "", cx.relError,
                cw.relError);
  // traffic.py's byte count of the module's kernels, over this row's time.
  double bytes = double(module->number("traffic_bytes"));
  for (Row &r : rows) {
    r.note += note;
    if (bytes > 0 && r.ms > 0) {
      char traffic[128];
      double gbs = bytes / (r.ms * 1e6);
      std::snprintf(traffic, sizeof(traffic),
                    "; kernels' buffers %.0f MB: %.0f GB/s (%.0f %% of copy)",
                    bytes / 1e6, gbs, copyGBs > 0 ? 100 * gbs / copyGBs : 0.0);
      r.note += traffic;
    }
  }
  addKernelBreakdown(module, copyGBs);
  for (void *p : {xd, wd, gyd})
    CUDA_CHECK(cudaFree(p));
  return rows;
}

std::vector<std::string> takeKernelBreakdown() {
  std::vector<std::string> lines;
  lines.swap(breakdown);
  return lines;
}

namespace {
/// Runs an hq module once: q [rows, cols] i8 and the scales, copied back.
template <typename Scale>
bool runQuantizeOnce(const HotModule *module, MemRef<2> &gym, int64_t seed,
                     int64_t rows, int64_t cols, std::vector<int8_t> &q,
                     std::vector<float> &scales, std::string &why) {
  auto fn = reinterpret_cast<QuantizeFn<Scale>>(module->symbol);
  QuantizeResults<Scale> res;
  poisoning = true;
  fn(&res, &gym, seed);
  poisoning = false;
  CUDA_CHECK(cudaDeviceSynchronize());
  void *qData = denseData(res.q, 1, why);
  if (!qData)
    return false;
  if (res.q.sizes[0] != rows || res.q.sizes[1] != cols) {
    why = "q has another shape";
    return false;
  }
  const float *sData =
      static_cast<const float *>(res.scale.aligned) + res.scale.offset;
  if constexpr (std::is_same_v<Scale, MemRef<1>>) {
    if (res.scale.sizes[0] != rows || res.scale.strides[0] != 1) {
      why = "scales have another shape";
      return false;
    }
    scales.resize(rows);
  } else {
    scales.resize(1);
  }
  q.resize(size_t(rows) * cols);
  CUDA_CHECK(cudaMemcpy(q.data(), qData, q.size(), cudaMemcpyDefault));
  CUDA_CHECK(cudaMemcpy(scales.data(), sData, scales.size() * sizeof(float),
                        cudaMemcpyDefault));
  CUDA_CHECK(cudaFree(res.q.allocated));
  CUDA_CHECK(cudaFree(res.scale.allocated));
  return true;
}

template <typename Scale>
void freeQuantizeStep(const HotModule *module, MemRef<2> &gym, int64_t seed) {
  QuantizeResults<Scale> res;
  reinterpret_cast<QuantizeFn<Scale>>(module->symbol)(&res, &gym, seed);
  CUDA_CHECK(cudaFree(res.q.allocated));
  CUDA_CHECK(cudaFree(res.scale.allocated));
}
} // namespace

std::vector<Row> runHotQuantize(const HotModule *module, double copyGBs) {
  int64_t rows = module->number("rows"), cols = module->number("cols"),
          block = module->number("block");
  int bits = int(module->number("bits"));
  bool perRow = module->get("granularity") == "per_row";
  std::string group = std::string(module->get("layer")) +
                      " hadamard+quantize " + module->get("granularity");
  std::string shape = std::to_string(rows) + " x " + std::to_string(cols) +
                      ", block " + std::to_string(block) + ", " +
                      std::to_string(bits) + " bits";
  auto problemRow = [&](const std::string &why) {
    Row r;
    r.group = group;
    r.shape = shape;
    r.impl = "hot " + module->get("library");
    r.note = why;
    return std::vector<Row>{r};
  };
  if (!loadModule(module))
    return problemRow(module->problem);
  if (module->get("rounding") != "stochastic" ||
      module->get("scale") != "maxabs")
    return problemRow("the harness checks maxabs + stochastic modules only");

  // Normal values: a realistic spread of row maxima (not all rows alike).
  std::vector<float> gy;
  fillUniform(gy, size_t(rows) * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      gy[size_t(i) * cols + j] *= 1.0f + float(i % 7);
  float *gyd = nullptr;
  CUDA_CHECK(cudaMalloc(&gyd, gy.size() * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(gyd, gy.data(), gy.size() * sizeof(float),
                        cudaMemcpyHostToDevice));
  MemRef<2> gym = wrap<2>(gyd, {rows, cols});
  const int64_t seed = 0x5eed1234abcdLL;

  // The check: the whole q and every scale, bit for bit, against the host
  // reference of docs/numerics.md (stochastic rounding included: the hash is
  // part of the contract).
  std::vector<int8_t> q;
  std::vector<float> scales;
  std::string why;
  bool ran = perRow ? runQuantizeOnce<MemRef<1>>(module, gym, seed, rows, cols,
                                                 q, scales, why)
                    : runQuantizeOnce<MemRef0>(module, gym, seed, rows, cols, q,
                                               scales, why);
  if (!ran) {
    CUDA_CHECK(cudaFree(gyd));
    return problemRow(why);
  }
  std::vector<int8_t> refQ;
  std::vector<float> refScales;
  hq::reference(gy, rows, cols, block, bits, perRow, seed, refQ, refScales);
  const int qmax = (1 << (bits - 1)) - 1;
  long long qDiff = 0, outOfRange = 0, scaleDiff = 0;
  int maxDelta = 0;
  for (size_t e = 0; e < q.size(); ++e) {
    if (q[e] < -qmax || q[e] > qmax)
      ++outOfRange; // poison bytes or a wrong clamp
    int delta = std::abs(int(q[e]) - int(refQ[e]));
    qDiff += delta != 0;
    maxDelta = std::max(maxDelta, delta);
  }
  for (size_t g = 0; g < scales.size(); ++g) {
    uint32_t a, b;
    std::memcpy(&a, &scales[g], 4);
    std::memcpy(&b, &refScales[g], 4);
    scaleDiff += a != b;
  }
  char check[160];
  std::snprintf(check, sizeof(check),
                "; exact check: q %lld of %zu differ (max |dq| %d), scales "
                "%lld of %zu differ",
                qDiff, q.size(), maxDelta, scaleDiff, scales.size());

  // Bytes that must move: gy read once, q and the scales written once.
  double bytes = double(rows) * cols * (sizeof(float) + 1) +
                 double(scales.size()) * sizeof(float);
  auto step = [&] {
    if (perRow)
      freeQuantizeStep<MemRef<1>>(module, gym, seed);
    else
      freeQuantizeStep<MemRef0>(module, gym, seed);
  };
  std::vector<Row> out =
      stepRows(module, group, shape, bytes, "GB/s",
               double(qDiff) / double(q.size()), outOfRange, step);
  // The kernels' own bandwidth: outputs prefetched to the device first.
  prefetching = true;
  std::vector<Row> fast =
      stepRows(module, group, shape, bytes, "GB/s",
               double(qDiff) / double(q.size()), outOfRange, step);
  prefetching = false;
  Row k = fast[1];
  k.impl = "hot " + module->get("library") +
           " (kernels only, outputs on the device)";
  out.push_back(k);
  for (Row &r : out) {
    char ratio[64];
    std::snprintf(ratio, sizeof(ratio), "; %.0f%% of device copy",
                  100.0 * r.rate / copyGBs);
    r.note += ratio;
    r.note += check;
  }
  CUDA_CHECK(cudaFree(gyd));
  return out;
}
