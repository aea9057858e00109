//===- BlockCache.h - Freed allocations kept for reuse ----------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Internal to libhot_cuda_runtime.so, and host-only (no CUDA types) so that
// python/tests/test_cuda_block_cache.py tests it without a GPU.
//
// Host code lowered from a training step allocates every temporary with
// mgpuMemAlloc and frees it with mgpuMemFree, on every call. With managed
// memory each fresh allocation costs a driver call, and its pages are
// populated by page faults when a kernel first touches them: a step that
// allocates 100 MB of temporaries pays that on every call. So freed blocks
// are kept, per context, kind and exact size, and handed out again; a block
// is reused only once the work queued before its free has finished (its
// event), which keeps the stream-ordered semantics of a free.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_LIB_RUNTIME_CUDA_BLOCKCACHE_H
#define HOT_LIB_RUNTIME_CUDA_BLOCKCACHE_H

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

namespace hot::cuda {

/// A freed allocation.
struct CachedBlock {
  void *context;  ///< the CUcontext it belongs to
  bool managed;   ///< managed (cuMemAllocManaged) or device memory
  uint64_t bytes; ///< its size as allocated
  void *pointer;
  void *event; ///< recorded on the freeing stream, or null: nothing queued
};

/// Freed blocks up to a capacity in bytes (0: keep none). Not thread-safe:
/// the caller holds a lock.
class BlockCache {
public:
  explicit BlockCache(uint64_t capacityBytes) : capacity(capacityBytes) {}

  /// Takes a cached block of exactly `bytes` of the kind in `context` whose
  /// event `done` reports finished (or that has none), oldest first; false
  /// when there is none. The caller owns the block and its event.
  bool take(void *context, bool managed, uint64_t bytes,
            const std::function<bool(void *event)> &done, CachedBlock &out) {
    for (auto it = blocks.begin(); it != blocks.end(); ++it) {
      if (it->context != context || it->managed != managed ||
          it->bytes != bytes || (it->event && !done(it->event)))
        continue;
      out = *it;
      held -= it->bytes;
      blocks.erase(it);
      return true;
    }
    return false;
  }

  /// Keeps `block` and returns the blocks that no longer fit, oldest first
  /// (`block` itself when it alone is over the capacity): the caller frees
  /// them.
  std::vector<CachedBlock> give(const CachedBlock &block) {
    std::vector<CachedBlock> evicted;
    if (block.bytes > capacity) {
      evicted.push_back(block);
      return evicted;
    }
    blocks.push_back(block);
    held += block.bytes;
    while (held > capacity) {
      evicted.push_back(blocks.front());
      held -= blocks.front().bytes;
      blocks.pop_front();
    }
    return evicted;
  }

  /// Every block of `context` (all contexts when null), for the caller to
  /// free: when an allocation fails for want of memory.
  std::vector<CachedBlock> release(void *context) {
    std::vector<CachedBlock> out;
    for (auto it = blocks.begin(); it != blocks.end();) {
      if (context && it->context != context) {
        ++it;
        continue;
      }
      out.push_back(*it);
      held -= it->bytes;
      it = blocks.erase(it);
    }
    return out;
  }

  uint64_t heldBytes() const { return held; }

private:
  uint64_t capacity;
  uint64_t held = 0;
  std::deque<CachedBlock> blocks; ///< oldest first
};

} // namespace hot::cuda

#endif // HOT_LIB_RUNTIME_CUDA_BLOCKCACHE_H
