//===- Streams.cpp - Streams and events -----------------------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// A launch on a stream runs when the host synchronizes that stream (or
// destroys it, frees or copies memory in its order, or records an event on
// it), not when mgpuLaunchKernel returns, as on a GPU: host code that reads a
// kernel's result without waiting for it reads what was there before, and
// the tests see it. A launch without a stream runs at once. Copies and sets
// are complete when their call returns. An event is complete when recorded
// (its stream's queued work runs then), so waiting on one returns at once.
//
//===----------------------------------------------------------------------===//

#include "Streams.h"
#include "hot/Runtime/SimulatorRuntime.h"

#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

using namespace hot::simulator;

namespace {
/// A queued launch and the copies of its arguments.
struct PendingLaunch {
  Launch launch;
  std::vector<std::max_align_t> arguments;
  std::vector<void *> params;
};

struct Stream {
  std::deque<std::unique_ptr<PendingLaunch>> pending;
};

char eventPlaceholder;

std::mutex &streamsMutex() {
  static std::mutex *mutex = new std::mutex();
  return *mutex;
}

/// The live streams, for flushAllStreams.
std::set<Stream *> &liveStreams() {
  static auto *streams = new std::set<Stream *>();
  return *streams;
}
} // namespace

void hot::simulator::enqueueLaunch(void *stream, const Launch &launch,
                                   size_t paramsCount) {
  const std::vector<uint64_t> &sizes = launch.kernel->paramSizes;
  if (!stream || !launch.kernel->sized || sizes.size() != paramsCount) {
    // After what the stream has queued.
    flushStream(stream);
    runLaunch(launch);
    return;
  }
  auto pending = std::make_unique<PendingLaunch>();
  pending->launch = launch;
  size_t words = 0;
  constexpr size_t kWord = sizeof(std::max_align_t);
  for (uint64_t size : sizes)
    words += (size + kWord - 1) / kWord;
  pending->arguments.resize(words);
  char *at = reinterpret_cast<char *>(pending->arguments.data());
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::memcpy(at, launch.params[i], sizes[i]);
    pending->params.push_back(at);
    at += (sizes[i] + kWord - 1) / kWord * kWord;
  }
  pending->launch.params = pending->params.data();
  std::lock_guard<std::mutex> lock(streamsMutex());
  static_cast<Stream *>(stream)->pending.push_back(std::move(pending));
}

void hot::simulator::flushStream(void *stream) {
  if (!stream)
    return;
  auto *s = static_cast<Stream *>(stream);
  for (;;) {
    std::unique_ptr<PendingLaunch> next;
    {
      std::lock_guard<std::mutex> lock(streamsMutex());
      if (s->pending.empty())
        return;
      next = std::move(s->pending.front());
      s->pending.pop_front();
    }
    // Errors are reported where they happen; the next launch starts afresh.
    runLaunch(next->launch);
  }
}

void hot::simulator::flushAllStreams() {
  std::vector<Stream *> streams;
  {
    std::lock_guard<std::mutex> lock(streamsMutex());
    streams.assign(liveStreams().begin(), liveStreams().end());
  }
  for (Stream *stream : streams)
    flushStream(stream);
}

extern "C" void *mgpuStreamCreate() {
  auto *stream = new Stream();
  std::lock_guard<std::mutex> lock(streamsMutex());
  liveStreams().insert(stream);
  return stream;
}

extern "C" void mgpuStreamDestroy(void *stream) {
  if (!stream)
    return;
  // Work queued before the destruction still runs, as on a GPU.
  flushStream(stream);
  {
    std::lock_guard<std::mutex> lock(streamsMutex());
    liveStreams().erase(static_cast<Stream *>(stream));
  }
  delete static_cast<Stream *>(stream);
}

extern "C" void mgpuStreamSynchronize(void *stream) { flushStream(stream); }

extern "C" void mgpuStreamWaitEvent(void * /*stream*/, void * /*event*/) {}

extern "C" void *mgpuEventCreate() { return &eventPlaceholder; }

extern "C" void mgpuEventDestroy(void * /*event*/) {}

extern "C" void mgpuEventSynchronize(void * /*event*/) {}

extern "C" void mgpuEventRecord(void * /*event*/, void *stream) {
  flushStream(stream);
}
