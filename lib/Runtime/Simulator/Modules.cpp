//===- Modules.cpp - Module loading and kernel launches -------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// A module is a host shared object held in an anonymous file and dlopen'ed
// from /proc/self/fd; a kernel `k` is its function __hotsim_launch_k.
//
//===----------------------------------------------------------------------===//

#include "Scheduler.h"
#include "Streams.h"
#include "Support.h"
#include "hot/Runtime/SimulatorRuntime.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>

using namespace hot::simulator;

namespace {
/// The per-block shared memory limit of sm_90 (with the opt-in).
constexpr int64_t kMaxSharedBytes = 227 * 1024;
constexpr int64_t kMaxGrid[3] = {INT32_MAX, 65535, 65535};
constexpr int64_t kMaxBlock[3] = {1024, 1024, 64};
constexpr int64_t kMaxThreads = 1024;

struct Module {
  void *handle;
  /// The anonymous file, open while the module is loaded: dlopen knows a
  /// loaded object by its path, so the descriptor number must not be reused.
  int fd;
  uint64_t staticSharedBytes;
  std::vector<std::unique_ptr<Kernel>> kernels;
};

std::string fdPath(int fd) { return format("/proc/self/fd/%d", fd); }

/// Host code that links this runtime may have been loaded RTLD_LOCAL (by
/// Python's ctypes): make the runtime's symbols global so that the modules'
/// references to __hotsim_* and __nv_* resolve to it.
bool exposeRuntimeSymbols(const char *entry) {
  static std::once_flag once;
  static bool exposed = false;
  std::call_once(once, [&] {
    Dl_info info;
    if (!dladdr(reinterpret_cast<void *>(&mgpuModuleLoad), &info) ||
        !info.dli_fname) {
      reportError(entry, "cannot find the path of the runtime library");
      return;
    }
    // Never closed: the runtime stays global for the process lifetime.
    if (!dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL)) {
      reportError(entry, dlerror());
      return;
    }
    exposed = true;
  });
  return exposed;
}

bool validateLaunch(const char *entry, const Kernel &kernel,
                    const intptr_t grid[3], const intptr_t block[3],
                    int32_t smem) {
  auto fail = [&](const std::string &message) {
    reportError(entry, "kernel '" + kernel.name + "': " + message);
    return false;
  };
  for (int d = 0; d < 3; ++d) {
    if (grid[d] < 1 || grid[d] > kMaxGrid[d])
      return fail(format("grid dimension %c = %lld is not in [1, %lld]",
                         "xyz"[d], static_cast<long long>(grid[d]),
                         static_cast<long long>(kMaxGrid[d])));
    if (block[d] < 1 || block[d] > kMaxBlock[d])
      return fail(format("block dimension %c = %lld is not in [1, %lld]",
                         "xyz"[d], static_cast<long long>(block[d]),
                         static_cast<long long>(kMaxBlock[d])));
  }
  int64_t threads = static_cast<int64_t>(block[0]) * block[1] * block[2];
  if (threads > kMaxThreads)
    return fail(format("a block of %lld threads exceeds %lld",
                       static_cast<long long>(threads),
                       static_cast<long long>(kMaxThreads)));
  if (smem < 0 ||
      static_cast<int64_t>(kernel.staticSharedBytes) + smem > kMaxSharedBytes)
    return fail(
        format("%llu bytes of static plus %d of dynamic shared memory "
               "exceed %lld bytes per block",
               static_cast<unsigned long long>(kernel.staticSharedBytes), smem,
               static_cast<long long>(kMaxSharedBytes)));
  return true;
}
} // namespace

extern "C" void *mgpuModuleLoad(void *data, size_t size) {
  if (!exposeRuntimeSymbols(__func__))
    return nullptr;
  int fd = memfd_create("hot_simulator_module", MFD_CLOEXEC);
  if (fd < 0) {
    reportError(__func__, format("memfd_create: %s", std::strerror(errno)));
    return nullptr;
  }
  for (size_t written = 0; written < size;) {
    ssize_t n =
        write(fd, static_cast<const char *>(data) + written, size - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      reportError(__func__, format("writing the module: %s",
                                   std::strerror(n < 0 ? errno : EIO)));
      close(fd);
      return nullptr;
    }
    written += static_cast<size_t>(n);
  }
  void *handle = dlopen(fdPath(fd).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    reportError(__func__, dlerror());
    close(fd);
    return nullptr;
  }
  auto *module = new Module{handle, fd, 0, {}};
  if (auto *bytes =
          static_cast<const uint64_t *>(dlsym(handle, kStaticSharedSymbol)))
    module->staticSharedBytes = *bytes;
  return module;
}

extern "C" void *mgpuModuleLoadJIT(void * /*data*/, int /*optLevel*/) {
  reportError(__func__, "the simulator needs a binary object (a host shared "
                        "object and its size), not PTX to compile");
  return nullptr;
}

extern "C" void mgpuModuleUnload(void *module) {
  if (!module)
    return;
  // Queued launches may run this module's kernels.
  flushAllStreams();
  auto *loaded = static_cast<Module *>(module);
  if (dlclose(loaded->handle) != 0)
    reportError(__func__, dlerror());
  // An object that stays loaded (marked NODELETE) keeps its descriptor.
  std::string path = fdPath(loaded->fd);
  if (void *still = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD))
    dlclose(still);
  else
    close(loaded->fd);
  delete loaded;
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!module) {
    reportError(__func__, format("kernel '%s': no module", name));
    return nullptr;
  }
  auto *loaded = static_cast<Module *>(module);
  for (const std::unique_ptr<Kernel> &kernel : loaded->kernels)
    if (kernel->name == name)
      return kernel.get();
  std::string symbol = kLaunchPrefix + std::string(name);
  void *entry = dlsym(loaded->handle, symbol.c_str());
  if (!entry) {
    reportError(__func__, format("kernel '%s' not found: the module has no %s",
                                 name, symbol.c_str()));
    return nullptr;
  }
  uint64_t staticSharedBytes = loaded->staticSharedBytes;
  std::string sharedSymbol = kStaticSharedPrefix + std::string(name);
  if (auto *bytes = static_cast<const uint64_t *>(
          dlsym(loaded->handle, sharedSymbol.c_str())))
    staticSharedBytes = *bytes;
  auto kernel = std::make_unique<Kernel>(Kernel{
      reinterpret_cast<void (*)(void **)>(entry), name, staticSharedBytes});
  std::string sizesSymbol = kParamSizesPrefix + std::string(name);
  if (auto *sizes = static_cast<const uint64_t *>(
          dlsym(loaded->handle, sizesSymbol.c_str()))) {
    kernel->paramSizes.assign(sizes + 1, sizes + 1 + sizes[0]);
    kernel->sized = true;
  }
  loaded->kernels.push_back(std::move(kernel));
  return loaded->kernels.back().get();
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t paramsCount) {
  if (!function) {
    reportError(__func__, "no kernel");
    return;
  }
  const auto &kernel = *static_cast<const Kernel *>(function);
  if (extra) {
    reportError(__func__, "kernel '" + kernel.name +
                              "': `extra` launch parameters are not supported");
    return;
  }
  const intptr_t grid[3] = {gridX, gridY, gridZ};
  const intptr_t block[3] = {blockX, blockY, blockZ};
  if (!validateLaunch(__func__, kernel, grid, block, smem))
    return;
  Launch launch{&kernel,
                {static_cast<int32_t>(gridX), static_cast<int32_t>(gridY),
                 static_cast<int32_t>(gridZ)},
                {static_cast<int32_t>(blockX), static_cast<int32_t>(blockY),
                 static_cast<int32_t>(blockZ)},
                smem,
                params};
  // In stream order; errors are reported where they happen, and the next
  // launch starts afresh.
  enqueueLaunch(stream, launch, paramsCount);
}

/// A plain launch: the runtime's ABI has no cluster operations (distributed
/// shared memory, cluster barriers), so cluster boundaries change nothing a
/// kernel can observe. Only the grid's divisibility is checked.
extern "C" void mgpuLaunchClusterKernel(void *function, intptr_t clusterX,
                                        intptr_t clusterY, intptr_t clusterZ,
                                        intptr_t gridX, intptr_t gridY,
                                        intptr_t gridZ, intptr_t blockX,
                                        intptr_t blockY, intptr_t blockZ,
                                        int32_t smem, void *stream,
                                        void **params, void **extra) {
  if (clusterX < 1 || clusterY < 1 || clusterZ < 1 || gridX % clusterX ||
      gridY % clusterY || gridZ % clusterZ) {
    reportError(
        __func__,
        format("grid (%lld,%lld,%lld) is not a multiple of the "
               "cluster (%lld,%lld,%lld)",
               static_cast<long long>(gridX), static_cast<long long>(gridY),
               static_cast<long long>(gridZ), static_cast<long long>(clusterX),
               static_cast<long long>(clusterY),
               static_cast<long long>(clusterZ)));
    return;
  }
  // The upstream ABI passes no parameter count here: the kernel's own.
  const auto *kernel = static_cast<const Kernel *>(function);
  size_t paramsCount = kernel && kernel->sized ? kernel->paramSizes.size() : 0;
  mgpuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY, blockZ, smem,
                   stream, params, extra, paramsCount);
}
