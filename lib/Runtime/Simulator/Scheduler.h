//===- Scheduler.h - Threads as fibers, blocks one at a time ----*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Internal to libhot_simulator_runtime.so. Every thread of a block is a fiber
// on its own stack. The scheduler runs each runnable fiber until it returns
// or blocks at a barrier, a warp collective or a warpgroup collective, then
// releases what can be released, and repeats; a round that releases nothing
// is a deadlock.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_LIB_RUNTIME_SIMULATOR_SCHEDULER_H
#define HOT_LIB_RUNTIME_SIMULATOR_SCHEDULER_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ucontext.h>

namespace hot::simulator {

constexpr int kWarpSize = 32;
/// The threads of a warpgroup (wgmma's collectives): 4 consecutive warps.
constexpr int kWarpgroupSize = 4 * kWarpSize;

/// What a thread is waiting at.
enum class Wait : uint8_t { Runnable, Barrier, Collective, Exited };

/// Warp collectives, then warpgroup ones (isWarpgroupCollective).
enum class CollectiveKind : uint8_t { Shfl, Ldmatrix, Mma, Wgmma };

inline bool isWarpgroupCollective(CollectiveKind kind) {
  return kind == CollectiveKind::Wgmma;
}

/// The operands a thread brings to a collective, and its results. Pointers
/// into the thread's stack stay valid while it waits.
struct Collective {
  CollectiveKind kind = CollectiveKind::Shfl;
  // shfl.sync: mode (0 bfly, 1 up, 2 down, 3 idx), operands, results.
  int32_t mode = 0, mask = 0, value = 0, b = 0, c = 0;
  int32_t result = 0, inRange = 0;
  // ldmatrix: this lane's row address, .x1/.x2/.x4, .trans, destination.
  const void *row = nullptr;
  int32_t num = 0, trans = 0;
  int32_t *out = nullptr;
  // mma: shape/type, .satfinite, fragments.
  int32_t mmaKind = 0, satfinite = 0;
  const int32_t *a = nullptr, *bFrag = nullptr, *cFrag = nullptr;
  int32_t *d = nullptr;
  // wgmma.mma_async: N, scale-d and the descriptors of A and B; .satfinite
  // and the accumulators (in: cFrag, out: d) as for mma.
  int32_t n = 0, scaleD = 0;
  uint64_t descA = 0, descB = 0;
};

/// One queued cp.async: `group` is the number of commit_groups the thread
/// had executed when issuing it.
struct AsyncCopy {
  void *dst;
  const void *src;
  int32_t size, srcSize;
  uint64_t group;
};

/// What a wgmma.mma_async read from shared memory (Wgmma.cpp), shared by
/// the threads of its warpgroup.
struct WgmmaRead;

/// A wgmma.mma_async a thread has not retired: `group` as for AsyncCopy.
struct PendingWgmma {
  std::shared_ptr<WgmmaRead> read;
  uint64_t group;
};

struct Thread {
  ucontext_t context;
  int32_t linear = 0; // x + y * ntid.x + z * ntid.x * ntid.y
  int32_t tid[3] = {0, 0, 0};
  Wait wait = Wait::Runnable;
  Collective op;
  std::vector<AsyncCopy> copies; // In issue order.
  uint64_t committedGroups = 0;
  std::vector<PendingWgmma> wgmmas; // In issue order.
  uint64_t committedWgmmaGroups = 0;
  /// At a barrier: the reduction of bar.red (-1 for bar.sync) and this
  /// thread's predicate; once released, the block's reduction.
  int32_t barrierReduction = -1;
  bool barrierPredicate = false;
  int32_t barrierResult = 0;
};

/// A kernel of a loaded module.
struct Kernel {
  void (*entry)(void **params);
  std::string name;
  uint64_t staticSharedBytes;
  /// Each parameter's size in bytes, when the module exports them
  /// (`sized`): what a launch queued on a stream copies.
  std::vector<uint64_t> paramSizes = {};
  bool sized = false;
};

struct Launch {
  const Kernel *kernel;
  int32_t grid[3], block[3];
  int32_t dynamicSharedBytes;
  void **params;
};

/// The block being simulated on the calling host thread.
struct Block {
  const Launch *launch = nullptr;
  int32_t ctaid[3] = {0, 0, 0};
  char *shared = nullptr;
  size_t sharedBytes = 0; // Static and dynamic.
  std::vector<Thread> threads;
};

/// Runs every block of `launch`, one at a time: in z, y, x order (x
/// fastest), or as HOT_SIM_BLOCK_ORDER says (`reverse`, or `shuffle:SEED`
/// for a fixed pseudo-random permutation), to show kernels that depend on
/// the order in which blocks run; false after an error, already reported,
/// which abandoned the launch.
bool runLaunch(const Launch &launch);

/// The calling kernel thread and its block; fatal outside a launch.
Thread &currentThread(const char *entry);
Block &currentBlock(const char *entry);

/// Suspends the calling thread at `wait` until the scheduler releases it.
void waitAt(Thread &thread, Wait wait);

/// Reports an error of the calling kernel thread and abandons the launch.
[[noreturn]] void abandonLaunch(const char *entry, const std::string &message);

/// Performs the warp and warpgroup collectives of `block` whose participants
/// have all arrived and agree; true when it performed any. A malformed one
/// (exited participant, non-full warp or warpgroup, wgmma operands that
/// differ between threads, ...) sets `error`; warp participants that all
/// arrived but disagree set `mismatch` (an error only when nothing else can
/// progress). Collectives.cpp.
bool resolveCollectives(Block &block, std::string &error,
                        std::string &mismatch);

/// Describes what `thread` waits at ("the block barrier", "ldmatrix.x4"...).
std::string describeWait(const Thread &thread);

/// Performs, in issue order, the queued copies of `thread` issued before its
/// commit number `group` (UINT64_MAX: all, the open group included).
/// AsyncCopy.cpp.
void performAsyncCopies(Thread &thread, uint64_t group);

/// The commit number before which `wait_group n` retires every group (all but
/// the newest n of `committed`); aborts the launch for a negative n.
uint64_t groupsToRetire(const char *entry, uint64_t committed, int32_t n);

/// Performs the wgmma.mma_async at which the 128 threads from `warpgroup`
/// wait (and agree); a message on failure. Wgmma.cpp.
std::string performWgmma(Block &block, Thread *warpgroup);

/// Retires, in issue order, the wgmma.mma_async operations of the calling
/// `thread` issued before its commit number `group` (UINT64_MAX: all);
/// abandons the launch if the shared memory one read has changed when its
/// last thread retires it. Wgmma.cpp.
void retireWgmmas(const char *entry, Thread &thread, uint64_t group);

} // namespace hot::simulator

#endif // HOT_LIB_RUNTIME_SIMULATOR_SCHEDULER_H
