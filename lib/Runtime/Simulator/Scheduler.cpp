//===- Scheduler.cpp - Threads as fibers, blocks one at a time ------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Also the special registers, shared memory and the block barrier: the
// per-block state the scheduler owns.
//
//===----------------------------------------------------------------------===//

#include "Scheduler.h"
#include "Support.h"
#include "hot/Runtime/SimulatorRuntime.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

using namespace hot::simulator;

namespace {
constexpr size_t kStackBytes = 256 * 1024;
/// Ranges of threads a deadlock report lists.
constexpr int kMaxReportedRanges = 6;

/// A fiber stack with an inaccessible guard page below it: an overflow
/// faults instead of corrupting the neighbouring stack.
class Stack {
public:
  Stack() : guard(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {
    void *map = mmap(nullptr, guard + kStackBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
      fatal("mgpuLaunchKernel", "cannot map a thread stack");
    base = static_cast<char *>(map);
    mprotect(base, guard, PROT_NONE);
  }
  ~Stack() { munmap(base, guard + kStackBytes); }
  Stack(const Stack &) = delete;
  Stack &operator=(const Stack &) = delete;

  void *bottom() const { return base + guard; }

private:
  size_t guard;
  char *base;
};

/// The simulator state of one host thread (launches are synchronous on the
/// thread that makes them). Stacks and the shared window are reused across
/// blocks and launches.
struct Simulator {
  std::vector<std::unique_ptr<Stack>> stacks;
  Block block;
  ucontext_t scheduler;
  Thread *current = nullptr;
  bool abandoned = false;
  std::unique_ptr<char, decltype(&std::free)> shared{nullptr, &std::free};
  size_t sharedCapacity = 0;
};

thread_local Simulator sim;

std::string where(const Block &block) {
  return format("kernel '%s', block (%d,%d,%d)",
                block.launch->kernel->name.c_str(), block.ctaid[0],
                block.ctaid[1], block.ctaid[2]);
}

/// The body of every fiber.
void fiberMain() {
  Thread &thread = *sim.current;
  sim.block.launch->kernel->entry(sim.block.launch->params);
  // The hardware completes a thread's outstanding copies eventually, and its
  // wgmma.mma_async operations read shared memory until they complete.
  performAsyncCopies(thread, UINT64_MAX);
  retireWgmmas("mgpuLaunchKernel", thread, UINT64_MAX);
  thread.wait = Wait::Exited;
  swapcontext(&thread.context, &sim.scheduler);
  __builtin_unreachable(); // Exited threads are never resumed.
}

/// "threads 0-127 wait at the block barrier, thread 128 has exited, ...".
std::string describeThreads(const Block &block) {
  std::string text;
  size_t n = block.threads.size();
  int ranges = 0;
  for (size_t first = 0, last = 0; first < n; first = last + 1) {
    std::string what = describeWait(block.threads[first]);
    for (last = first; last + 1 < n; ++last)
      if (describeWait(block.threads[last + 1]) != what)
        break;
    if (ranges++ == kMaxReportedRanges)
      return text + ", ...";
    bool one = first == last;
    if (!text.empty())
      text += ", ";
    text += one ? format("thread %zu", first)
                : format("threads %zu-%zu", first, last);
    if (block.threads[first].wait == Wait::Exited)
      text += one ? " has exited" : " have exited";
    else
      text += (one ? " waits at " : " wait at ") + what;
  }
  return text;
}

/// Releases the threads waiting at the block barrier, with the reduction of
/// their predicates at a bar.red (exited threads bring none); an error
/// when they wait at different kinds of barrier.
std::string releaseBarrier(Block &block) {
  int32_t reduction = -2;
  int32_t count = 0, waiting = 0;
  for (const Thread &thread : block.threads) {
    if (thread.wait != Wait::Barrier)
      continue;
    if (reduction != -2 && thread.barrierReduction != reduction)
      return format("threads %d and %d meet at different barriers (bar.sync "
                    "and bar.red, or bar.red of different reductions)",
                    block.threads[waiting].linear, thread.linear);
    if (reduction == -2)
      waiting = &thread - block.threads.data();
    reduction = thread.barrierReduction;
    count += thread.barrierPredicate;
  }
  int32_t arrived = 0;
  for (const Thread &thread : block.threads)
    arrived += thread.wait == Wait::Barrier;
  int32_t result = 0;
  switch (reduction) {
  case Popc:
    result = count;
    break;
  case And:
    result = count == arrived;
    break;
  case Or:
    result = count > 0;
    break;
  default:
    break;
  }
  for (Thread &thread : block.threads)
    if (thread.wait == Wait::Barrier) {
      thread.barrierResult = result;
      thread.wait = Wait::Runnable;
    }
  return {};
}

/// The order in which the blocks of a launch run: linear block ids (x
/// fastest), as HOT_SIM_BLOCK_ORDER says.
std::vector<int64_t> blockOrder(int64_t count) {
  std::vector<int64_t> order(count);
  for (int64_t i = 0; i < count; ++i)
    order[i] = i;
  const char *setting = std::getenv("HOT_SIM_BLOCK_ORDER");
  std::string text = setting ? setting : "";
  if (text.empty() || text == "forward")
    return order;
  if (text == "reverse") {
    std::reverse(order.begin(), order.end());
    return order;
  }
  if (text.rfind("shuffle:", 0) == 0) {
    char *end = nullptr;
    uint64_t state = std::strtoull(text.c_str() + 8, &end, 10);
    if (end && *end == '\0' && end != text.c_str() + 8) {
      // Fisher-Yates with a splitmix64 stream: the same seed, the same
      // order on every machine.
      for (int64_t i = count - 1; i > 0; --i) {
        state += 0x9E3779B97F4A7C15ull;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        std::swap(order[i], order[z % uint64_t(i + 1)]);
      }
      return order;
    }
  }
  fatal("mgpuLaunchKernel",
        "HOT_SIM_BLOCK_ORDER must be forward, reverse or shuffle:SEED "
        "(a decimal seed), not '" +
            text + "'");
}

/// Runs the current block to completion; false after an error (reported).
bool runBlock(const char *entry) {
  Block &block = sim.block;
  for (size_t i = 0; i < block.threads.size(); ++i) {
    Thread &thread = block.threads[i];
    thread.wait = Wait::Runnable;
    thread.copies.clear();
    thread.committedGroups = 0;
    thread.wgmmas.clear();
    thread.committedWgmmaGroups = 0;
    getcontext(&thread.context);
    thread.context.uc_stack.ss_sp = sim.stacks[i]->bottom();
    thread.context.uc_stack.ss_size = kStackBytes;
    thread.context.uc_link = nullptr;
    makecontext(&thread.context, fiberMain, 0);
  }
  // Real shared memory starts with whatever the previous block left: poison
  // it (NaN as f32, -1 as integers) so that reading it unwritten shows.
  std::memset(block.shared, 0xFF, block.sharedBytes);

  for (;;) {
    for (Thread &thread : block.threads) {
      if (thread.wait != Wait::Runnable)
        continue;
      sim.current = &thread;
      swapcontext(&sim.scheduler, &thread.context);
      sim.current = nullptr;
      if (sim.abandoned)
        return false;
    }
    size_t live = 0, atBarrier = 0;
    for (const Thread &thread : block.threads) {
      live += thread.wait != Wait::Exited;
      atBarrier += thread.wait == Wait::Barrier;
    }
    if (live == 0)
      return true;
    // Exited threads count as arrived (sm_70 and newer).
    if (atBarrier == live) {
      std::string error = releaseBarrier(block);
      if (!error.empty()) {
        reportError(entry, where(block) + ": " + error);
        return false;
      }
      continue;
    }
    std::string error, mismatch;
    bool progress = resolveCollectives(block, error, mismatch);
    if (error.empty() && !progress)
      error =
          mismatch.empty() ? "deadlock: " + describeThreads(block) : mismatch;
    if (!error.empty()) {
      reportError(entry, where(block) + ": " + error);
      return false;
    }
  }
}
} // namespace

bool hot::simulator::runLaunch(const Launch &launch) {
  const char *entry = "mgpuLaunchKernel";
  if (sim.current)
    fatal(entry, "kernels cannot launch kernels in the simulator");
  Block &block = sim.block;
  int32_t bx = launch.block[0], by = launch.block[1], bz = launch.block[2];
  size_t numThreads = static_cast<size_t>(bx) * by * bz;
  while (sim.stacks.size() < numThreads)
    sim.stacks.push_back(std::make_unique<Stack>());
  block.threads.resize(numThreads);
  for (int32_t z = 0; z < bz; ++z)
    for (int32_t y = 0; y < by; ++y)
      for (int32_t x = 0; x < bx; ++x) {
        Thread &thread = block.threads[x + y * bx + z * bx * by];
        thread.linear = x + y * bx + z * bx * by;
        thread.tid[0] = x;
        thread.tid[1] = y;
        thread.tid[2] = z;
      }

  // The static part, then the dynamic part at the next multiple of 16.
  size_t sharedBytes = (launch.kernel->staticSharedBytes + 15) / 16 * 16 +
                       static_cast<size_t>(launch.dynamicSharedBytes);
  if (sharedBytes > sim.sharedCapacity || !sim.shared) {
    size_t capacity =
        (sharedBytes + kSharedAlignment) / kSharedAlignment * kSharedAlignment;
    sim.shared.reset(
        static_cast<char *>(std::aligned_alloc(kSharedAlignment, capacity)));
    if (!sim.shared)
      fatal(entry, "cannot allocate shared memory");
    sim.sharedCapacity = capacity;
  }
  block.shared = sim.shared.get();
  block.sharedBytes = sharedBytes;
  block.launch = &launch;
  sim.abandoned = false;

  bool ok = true;
  int64_t gx = launch.grid[0], gy = launch.grid[1];
  for (int64_t id : blockOrder(gx * gy * launch.grid[2])) {
    block.ctaid[0] = static_cast<int32_t>(id % gx);
    block.ctaid[1] = static_cast<int32_t>(id / gx % gy);
    block.ctaid[2] = static_cast<int32_t>(id / (gx * gy));
    if (!(ok = runBlock(entry)))
      break;
  }
  block.launch = nullptr;
  return ok;
}

Thread &hot::simulator::currentThread(const char *entry) {
  if (!sim.current)
    fatal(entry, "called outside a kernel launch");
  return *sim.current;
}

Block &hot::simulator::currentBlock(const char *entry) {
  currentThread(entry);
  return sim.block;
}

void hot::simulator::waitAt(Thread &thread, Wait wait) {
  thread.wait = wait;
  swapcontext(&thread.context, &sim.scheduler);
}

void hot::simulator::abandonLaunch(const char *entry,
                                   const std::string &message) {
  Thread &thread = currentThread(entry);
  reportError(entry, where(sim.block) + format(", thread %d: ", thread.linear) +
                         message);
  sim.abandoned = true;
  thread.wait = Wait::Exited;
  swapcontext(&thread.context, &sim.scheduler);
  __builtin_unreachable(); // The scheduler drops the whole launch.
}

extern "C" int32_t __hotsim_sreg(int32_t id) {
  Thread &thread = currentThread(__func__);
  const Block &block = sim.block;
  if (id >= TidX && id <= TidZ)
    return thread.tid[id - TidX];
  if (id >= NtidX && id <= NtidZ)
    return block.launch->block[id - NtidX];
  if (id >= CtaidX && id <= CtaidZ)
    return block.ctaid[id - CtaidX];
  if (id >= NctaidX && id <= NctaidZ)
    return block.launch->grid[id - NctaidX];
  if (id == LaneId)
    return thread.linear % kWarpSize;
  if (id == WarpId)
    return thread.linear / kWarpSize;
  abandonLaunch(__func__, format("unknown special register %d", id));
}

extern "C" void *__hotsim_shared(void) { return currentBlock(__func__).shared; }

extern "C" void __hotsim_barrier(void) {
  Thread &thread = currentThread(__func__);
  thread.barrierReduction = -1;
  waitAt(thread, Wait::Barrier);
}

extern "C" int32_t __hotsim_barrier_red(int32_t kind, int32_t predicate) {
  Thread &thread = currentThread(__func__);
  if (kind != Popc && kind != And && kind != Or)
    abandonLaunch(__func__, format("unknown bar.red reduction %d", kind));
  thread.barrierReduction = kind;
  thread.barrierPredicate = predicate != 0;
  waitAt(thread, Wait::Barrier);
  return thread.barrierResult;
}
