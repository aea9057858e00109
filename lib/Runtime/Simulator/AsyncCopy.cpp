//===- AsyncCopy.cpp - cp.async, commit_group and wait_group --------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// cp.async is asynchronous here too: a copy is queued in the issuing thread's
// open group and happens only at a cp.async.wait_group that covers its group,
// or when the thread exits. A barrier completes nothing, so a kernel that
// reads the destination without waiting sees the shared-memory poison.
//
//===----------------------------------------------------------------------===//

#include "Scheduler.h"
#include "Support.h"
#include "hot/Runtime/SimulatorRuntime.h"

#include <cstring>

using namespace hot::simulator;

void hot::simulator::performAsyncCopies(Thread &thread, uint64_t group) {
  size_t done = 0;
  for (; done < thread.copies.size() && thread.copies[done].group < group;
       ++done) {
    const AsyncCopy &copy = thread.copies[done];
    std::memcpy(copy.dst, copy.src, copy.srcSize);
    std::memset(static_cast<char *>(copy.dst) + copy.srcSize, 0,
                copy.size - copy.srcSize);
  }
  thread.copies.erase(thread.copies.begin(), thread.copies.begin() + done);
}

extern "C" void __hotsim_cp_async(void *dst, const void *src, int32_t size,
                                  int32_t srcSize) {
  Thread &thread = currentThread(__func__);
  if (size != 4 && size != 8 && size != 16)
    abandonLaunch(__func__,
                  format("cp.async of %d bytes: not 4, 8 or 16", size));
  if (srcSize < 0 || srcSize > size)
    abandonLaunch(__func__, format("cp.async source size %d is not in [0, %d]",
                                   srcSize, size));
  if (reinterpret_cast<uintptr_t>(dst) % size != 0 ||
      reinterpret_cast<uintptr_t>(src) % size != 0)
    abandonLaunch(__func__,
                  format("cp.async of %d bytes from %p to %p: both addresses "
                         "must be %d-byte aligned",
                         size, src, dst, size));
  thread.copies.push_back({dst, src, size, srcSize, thread.committedGroups});
}

extern "C" void __hotsim_cp_async_commit(void) {
  ++currentThread(__func__).committedGroups;
}

extern "C" void __hotsim_cp_async_wait(int32_t n) {
  Thread &thread = currentThread(__func__);
  performAsyncCopies(thread,
                     groupsToRetire(__func__, thread.committedGroups, n));
}

uint64_t hot::simulator::groupsToRetire(const char *entry, uint64_t committed,
                                        int32_t n) {
  if (n < 0)
    abandonLaunch(entry, format("wait_group %d: negative", n));
  uint64_t pending = static_cast<uint64_t>(n);
  return committed > pending ? committed - pending : 0;
}
