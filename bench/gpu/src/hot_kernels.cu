//===- hot_kernels.cu - The project's kernels, loaded from PTX or cubin ---===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// A kernel produced by `hot-opt --hot-lower-to-nvvm` comes as an image (PTX,
// cubin or fatbin) and a JSON description next to it (README.md gives the
// format). It is loaded with the driver API into the runtime API's primary
// context, so that it is timed with the same events as the library rows.
//
//===----------------------------------------------------------------------===//

#include "gemm.h"
#include "json.h"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

struct HotKernel {
  std::string label;   ///< table label
  std::string problem; ///< why it cannot run at all, empty if it can
  CUfunction function = nullptr;
  OutType outType = OutType::I32;
  unsigned block[3] = {1, 1, 1};
  int64_t tileM = 1, tileN = 1;
  int64_t divides[3] = {1, 1, 1}; ///< M, N, K must be multiples of these
  unsigned sharedBytes = 0;
  std::vector<std::string> params;
};

namespace {
bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  out = buffer.str();
  return true;
}

std::string driverError(const char *what, CUresult result) {
  const char *name = "unknown";
  cuGetErrorName(result, &name);
  return std::string(what) + " failed: " + name;
}

/// Fills `kernel` from a description; sets kernel->problem on any error.
void describe(HotKernel *kernel, const std::string &dir,
              const std::map<std::string, JsonValue> &json) {
  auto string = [&](const char *key, const char *fallback) -> std::string {
    auto it = json.find(key);
    return it != json.end() && it->second.kind == JsonValue::String
               ? it->second.string
               : fallback;
  };
  auto numbers = [&](const char *key) {
    std::vector<int64_t> out;
    auto it = json.find(key);
    if (it == json.end())
      return out;
    if (it->second.kind == JsonValue::Number)
      out.push_back(int64_t(it->second.number));
    for (const JsonValue &v : it->second.items)
      out.push_back(int64_t(v.number));
    return out;
  };

  std::string name = string("kernel", "");
  std::string image = string("image", "");
  kernel->label = "hot " + string("label", name.c_str());
  if (name.empty() || image.empty()) {
    kernel->problem = "description lacks \"kernel\" or \"image\"";
    return;
  }
  if (string("a_type", "i8") != "i8" || string("b_type", "i8") != "i8") {
    kernel->problem = "only i8 operands are benchmarked";
    return;
  }
  std::string cType = string("c_type", "i32");
  if (cType != "i32" && cType != "f32") {
    kernel->problem = "c_type must be i32 or f32";
    return;
  }
  kernel->outType = cType == "f32" ? OutType::F32 : OutType::I32;

  std::vector<int64_t> block = numbers("block"), tile = numbers("tile"),
                       divides = numbers("divides"),
                       shared = numbers("shared_bytes");
  if (block.empty() || block.size() > 3 || tile.size() != 2) {
    kernel->problem = "\"block\" needs 1-3 numbers and \"tile\" 2";
    return;
  }
  std::copy(block.begin(), block.end(), kernel->block);
  kernel->tileM = tile[0];
  kernel->tileN = tile[1];
  if (divides.size() == 3)
    std::copy(divides.begin(), divides.end(), kernel->divides);
  kernel->sharedBytes = shared.empty() ? 0 : unsigned(shared[0]);

  auto it = json.find("params");
  if (it != json.end())
    for (const JsonValue &v : it->second.items)
      kernel->params.push_back(v.string);
  if (kernel->params.empty())
    kernel->params = {"A", "B", "C", "M", "N", "K"};
  for (const std::string &p : kernel->params)
    if (p != "A" && p != "B" && p != "C" && p != "M" && p != "N" && p != "K" &&
        p != "M32" && p != "N32" && p != "K32") {
      kernel->problem = "unknown parameter " + p;
      return;
    }

  std::string data;
  std::string path = image[0] == '/' ? image : dir + "/" + image;
  if (!readFile(path, data)) {
    kernel->problem = "cannot read " + path;
    return;
  }
  data.push_back('\0'); // PTX must be a C string; cubins ignore the byte.
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log) - 1)};
  CUmodule module = nullptr;
  CUresult r = cuModuleLoadDataEx(&module, data.data(), 2, options, values);
  if (r != CUDA_SUCCESS) {
    kernel->problem = driverError("cuModuleLoadDataEx", r);
    if (log[0])
      std::fprintf(stderr, "%s: JIT log:\n%s\n", path.c_str(), log);
    return;
  }
  r = cuModuleGetFunction(&kernel->function, module, name.c_str());
  if (r != CUDA_SUCCESS) {
    kernel->problem = driverError(("cuModuleGetFunction " + name).c_str(), r);
    return;
  }
  if (kernel->sharedBytes > 48 * 1024) {
    r = cuFuncSetAttribute(kernel->function,
                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                           int(kernel->sharedBytes));
    if (r != CUDA_SUCCESS)
      kernel->problem = driverError("cuFuncSetAttribute", r);
  }
}
} // namespace

std::vector<HotKernel *> loadHotKernels(const std::string &dir) {
  std::vector<HotKernel *> kernels;
  DIR *d = opendir(dir.c_str());
  if (!d)
    return kernels;
  std::vector<std::string> names;
  while (dirent *entry = readdir(d)) {
    std::string file = entry->d_name;
    if (file.size() > 5 && file.compare(file.size() - 5, 5, ".json") == 0)
      names.push_back(file);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  // The driver API needs the context the runtime API made current.
  CUDA_CHECK(cudaFree(nullptr));
  for (const std::string &file : names) {
    auto *kernel = new HotKernel;
    kernel->label = "hot " + file;
    std::string text, error;
    std::map<std::string, JsonValue> json;
    if (!readFile(dir + "/" + file, text) || !parseFlatJson(text, json, error))
      kernel->problem = file + ": " + (error.empty() ? "unreadable" : error);
    else
      describe(kernel, dir, json);
    kernels.push_back(kernel);
  }
  return kernels;
}

Row runHotKernel(HotKernel *kernel, Operands &ops) {
  const Shape &s = ops.shape;
  Row row;
  row.group = s.name;
  row.shape = shapeString(s);
  row.impl = kernel->label;
  if (!kernel->problem.empty()) {
    row.note = kernel->problem;
    return row;
  }
  if (s.m % kernel->divides[0] || s.n % kernel->divides[1] ||
      s.k % kernel->divides[2]) {
    row.note = "shape not supported (divides " +
               std::to_string(kernel->divides[0]) + "," +
               std::to_string(kernel->divides[1]) + "," +
               std::to_string(kernel->divides[2]) + ")";
    return row;
  }

  // Parameter values live here; the driver reads them through `args`.
  CUdeviceptr a = reinterpret_cast<CUdeviceptr>(ops.a8d),
              b = reinterpret_cast<CUdeviceptr>(ops.b8d),
              c = reinterpret_cast<CUdeviceptr>(ops.c);
  int64_t m = s.m, n = s.n, k = s.k;
  int32_t m32 = int32_t(s.m), n32 = int32_t(s.n), k32 = int32_t(s.k);
  std::vector<void *> args;
  for (const std::string &p : kernel->params)
    args.push_back(p == "A"     ? static_cast<void *>(&a)
                   : p == "B"   ? static_cast<void *>(&b)
                   : p == "C"   ? static_cast<void *>(&c)
                   : p == "M"   ? static_cast<void *>(&m)
                   : p == "N"   ? static_cast<void *>(&n)
                   : p == "K"   ? static_cast<void *>(&k)
                   : p == "M32" ? static_cast<void *>(&m32)
                   : p == "N32" ? static_cast<void *>(&n32)
                                : static_cast<void *>(&k32));
  unsigned gridX = unsigned((s.n + kernel->tileN - 1) / kernel->tileN);
  unsigned gridY = unsigned((s.m + kernel->tileM - 1) / kernel->tileM);
  auto launch = [&] {
    CUresult r =
        cuLaunchKernel(kernel->function, gridX, gridY, 1, kernel->block[0],
                       kernel->block[1], kernel->block[2], kernel->sharedBytes,
                       /*hStream=*/nullptr, args.data(), nullptr);
    if (r != CUDA_SUCCESS) {
      std::fprintf(stderr, "%s\n", driverError("cuLaunchKernel", r).c_str());
      std::exit(1);
    }
  };
  // f32 output: the kernel converts the exact i32 sum, so the same reference.
  measureGemm(row, ops, kernel->outType, referenceI8, launch, "TOPS");
  return row;
}
