//===- abi_check.cpp - The harness's C interface against the modules ------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Usage: abi-check KERNEL_DIR. Without a GPU, calls every exported module's
// `_mlir_ciface_` entry with the harness's own declarations (src/memref.h)
// against host-only mgpu* functions (fake_runtime.cpp), and checks what a
// wrong declaration would break: the returned descriptors (shape, dense
// strides, offset, base pointer = an allocation of the step), that the
// arguments reach the kernels, that the host code never touches them (they
// are PROT_NONE here, device memory in the harness), nor the temporaries it
// gives device memory (PROT_NONE too), that the results are managed memory the
// caller can read, and that every temporary is freed. Prints one line per
// module; exit 1 on a failure.
//
//===----------------------------------------------------------------------===//

#include "../src/memref.h"
#include "fake_runtime.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

namespace {
int failures = 0;

void expect(bool ok, const std::string &module, const std::string &what) {
  if (!ok) {
    std::printf("abi-check: %s: %s\n", module.c_str(), what.c_str());
    ++failures;
  }
}

/// `bytes` of address space the host code must not touch.
void *noAccess(size_t bytes) {
  void *p = mmap(nullptr, bytes, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  return p;
}

bool passedToKernel(const void *ptr) {
  for (const auto &launch : launchParams)
    if (std::find(launch.begin(), launch.end(),
                  reinterpret_cast<uint64_t>(ptr)) != launch.end())
      return true;
  return false;
}

template <int R>
void checkResult(const std::string &module, const char *name,
                 const MemRef<R> &m, const int64_t (&sizes)[R],
                 size_t elementBytes = 4) {
  std::string why;
  expect(denseData(m, elementBytes, why) != nullptr, module,
         std::string(name) + ": " + why);
  for (int d = 0; d < R; ++d)
    expect(m.sizes[d] == sizes[d], module,
           std::string(name) + ": size " + std::to_string(d) + " is " +
               std::to_string(m.sizes[d]) + ", expected " +
               std::to_string(sizes[d]));
  expect(m.offset == 0 && m.allocated == m.aligned, module,
         std::string(name) + ": not the base of its allocation");
  expect(liveAllocations.count(m.allocated) == 1, module,
         std::string(name) + ": not allocated by the step's mgpuMemAlloc");
  expect(deviceAllocations.count(m.allocated) == 0, module,
         std::string(name) + ": device memory, which the caller cannot read");
  expect(passedToKernel(m.aligned), module,
         std::string(name) + ": written by no kernel");
}

std::map<std::string, std::string> readKeys(const std::string &path) {
  std::map<std::string, std::string> keys;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos)
      continue;
    auto trim = [](std::string s) {
      size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    keys[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
  }
  return keys;
}

int64_t number(std::map<std::string, std::string> &keys, const char *key) {
  return std::atoll(keys[key].c_str());
}

void checkModule(const std::string &dir, const std::string &txt) {
  auto keys = readKeys(dir + "/" + txt);
  std::string name = keys["library"];
  void *handle = dlopen((dir + "/" + name).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    expect(false, name, std::string("dlopen: ") + dlerror());
    return;
  }
  void *symbol = dlsym(handle, keys["symbol"].c_str());
  if (!symbol) {
    expect(false, name, "no symbol " + keys["symbol"]);
    return;
  }
  launchParams.clear();
  size_t liveBefore = liveAllocations.size();
  std::vector<void *> results;
  if (keys["kind"] == "gemm") {
    int64_t m = number(keys, "m"), n = number(keys, "n"), k = number(keys, "k");
    void *a = noAccess(m * k), *b = noAccess(n * k);
    MemRef<2> am = wrap<2>(a, {m, k}), bm = wrap<2>(b, {n, k}), c;
    reinterpret_cast<GemmFn>(symbol)(&c, &am, &bm);
    checkResult(name, "C", c, {m, n});
    expect(passedToKernel(a) && passedToKernel(b), name,
           "an operand reaches no kernel");
    results = {c.allocated};
  } else if (keys["kind"] == "layer") {
    int64_t batch = number(keys, "batch"), tokens = number(keys, "tokens"),
            o = number(keys, "out"), in = number(keys, "in");
    // f32 (no dtype key: older descriptions) or bf16 arguments and results.
    std::string dtype = keys.count("dtype") ? keys["dtype"] : "f32";
    if (dtype != "f32" && dtype != "bf16") {
      expect(false, name, "unknown dtype '" + dtype + "'");
      return;
    }
    int64_t e = dtype == "bf16" ? 2 : 4;
    void *x = noAccess(batch * tokens * in * e), *w = noAccess(o * in * e),
         *gy = noAccess(batch * tokens * o * e);
    MemRef<3> xm = wrap<3>(x, {batch, tokens, in}),
              gym = wrap<3>(gy, {batch, tokens, o});
    MemRef<2> wm = wrap<2>(w, {o, in});
    LayerResults r;
    reinterpret_cast<LayerFn>(symbol)(&r, &xm, &wm, &gym, 1234);
    checkResult(name, "gx", r.gx, {batch * tokens, in}, e);
    checkResult(name, "gw", r.gw, {o, in}, e);
    expect(passedToKernel(x) && passedToKernel(w) && passedToKernel(gy), name,
           "an argument reaches no kernel");
    results = {r.gx.allocated, r.gw.allocated};
  } else if (keys["kind"] == "hq") {
    int64_t rows = number(keys, "rows"), cols = number(keys, "cols");
    void *gy = noAccess(rows * cols * 4);
    MemRef<2> gym = wrap<2>(gy, {rows, cols});
    if (keys["granularity"] == "per_row") {
      QuantizeResults<MemRef<1>> r;
      reinterpret_cast<QuantizeFn<MemRef<1>>>(symbol)(&r, &gym, 1234);
      checkResult(name, "q", r.q, {rows, cols});
      checkResult(name, "scale", r.scale, {rows});
      results = {r.q.allocated, r.scale.allocated};
    } else {
      QuantizeResults<MemRef0> r;
      reinterpret_cast<QuantizeFn<MemRef0>>(symbol)(&r, &gym, 1234);
      checkResult(name, "q", r.q, {rows, cols});
      expect(r.scale.offset == 0 && r.scale.allocated == r.scale.aligned &&
                 liveAllocations.count(r.scale.allocated) == 1 &&
                 deviceAllocations.count(r.scale.allocated) == 0 &&
                 passedToKernel(r.scale.aligned),
             name, "scale: not a managed step allocation written by a kernel");
      results = {r.q.allocated, r.scale.allocated};
    }
    expect(passedToKernel(gy), name, "gy reaches no kernel");
  } else {
    expect(false, name, "unknown kind '" + keys["kind"] + "'");
    return;
  }
  expect(liveAllocations.size() == liveBefore + results.size(), name,
         std::to_string(liveAllocations.size() - liveBefore - results.size()) +
             " temporaries not freed");
  for (void *p : results)
    if (liveAllocations.erase(p))
      std::free(p);
  std::printf("abi-check: %s: %zu launches\n", name.c_str(),
              launchParams.size());
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: abi-check KERNEL_DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  std::vector<std::string> txts;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string f = e->d_name;
      if (f.size() > 4 && f.compare(f.size() - 4, 4, ".txt") == 0)
        txts.push_back(f);
    }
    closedir(d);
  }
  std::sort(txts.begin(), txts.end());
  for (const std::string &txt : txts)
    checkModule(dir, txt);
  std::printf("abi-check: %zu modules, %d failures\n", txts.size(), failures);
  return failures || txts.empty() ? 1 : 0;
}
