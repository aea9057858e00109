"""lib/Runtime/CUDA/BlockCache.h, the freed blocks that libhot_cuda_runtime.so's mgpuMemFree
keeps for mgpuMemAlloc to hand out again, checked on the host (it has no CUDA types): a block is
reused only for the same context, kind and exact size, and only once its event is done; the
oldest goes first; the capacity evicts oldest first; a block over the capacity (or a capacity
of 0) is not kept; release() gives back one context's blocks."""

import subprocess
from pathlib import Path

import pytest

HEADER = Path(__file__).resolve().parents[2] / "lib" / "Runtime" / "CUDA" / "BlockCache.h"

DRIVER = r"""
#include "BlockCache.h"
#include <cstdio>
#include <set>
using namespace hot::cuda;

static std::set<void *> doneEvents;
static bool done(void *event) { return doneEvents.count(event) > 0; }
static void *p(long v) { return reinterpret_cast<void *>(v); }
static int failures = 0;
#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::printf("FAILED line %d: %s\n", __LINE__, #cond);                    \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main() {
  CachedBlock out{};
  {
    BlockCache cache(1000);
    EXPECT(!cache.take(p(1), true, 100, done, out)); // empty
    EXPECT(cache.give({p(1), true, 100, p(10), p(90)}).empty());
    EXPECT(cache.give({p(1), true, 100, p(11), nullptr}).empty());
    EXPECT(cache.heldBytes() == 200);
    // Other context, kind or size: no.
    EXPECT(!cache.take(p(2), true, 100, done, out));
    EXPECT(!cache.take(p(1), false, 100, done, out));
    EXPECT(!cache.take(p(1), true, 99, done, out));
    // The oldest (p10) has a pending event: the next one, without event.
    EXPECT(cache.take(p(1), true, 100, done, out) && out.pointer == p(11));
    EXPECT(!cache.take(p(1), true, 100, done, out));
    doneEvents.insert(p(90));
    EXPECT(cache.take(p(1), true, 100, done, out) && out.pointer == p(10) &&
           out.event == p(90));
    EXPECT(cache.heldBytes() == 0);
  }
  {
    BlockCache cache(250);
    EXPECT(cache.give({p(1), true, 100, p(20), nullptr}).empty());
    EXPECT(cache.give({p(1), true, 100, p(21), nullptr}).empty());
    // Over the capacity: the oldest goes.
    std::vector<CachedBlock> evicted = cache.give({p(1), true, 100, p(22), nullptr});
    EXPECT(evicted.size() == 1 && evicted[0].pointer == p(20));
    EXPECT(cache.heldBytes() == 200);
    // A block larger than the capacity is not kept.
    evicted = cache.give({p(1), true, 300, p(23), nullptr});
    EXPECT(evicted.size() == 1 && evicted[0].pointer == p(23));
    EXPECT(cache.give({p(2), false, 50, p(24), nullptr}).empty());
    // release: one context's blocks, then all.
    evicted = cache.release(p(2));
    EXPECT(evicted.size() == 1 && evicted[0].pointer == p(24));
    evicted = cache.release(nullptr);
    EXPECT(evicted.size() == 2 && cache.heldBytes() == 0);
  }
  {
    BlockCache none(0);
    std::vector<CachedBlock> evicted = none.give({p(1), true, 8, p(30), nullptr});
    EXPECT(evicted.size() == 1 && none.heldBytes() == 0);
    EXPECT(!none.take(p(1), true, 8, done, out));
  }
  std::printf("%d failures\n", failures);
  return failures != 0;
}
"""


@pytest.fixture(scope="module")
def driver(host_program):
    return host_program("block_cache", DRIVER, includes=[HEADER.parent],
                        flags=["-Wall", "-Werror"])


def test_block_cache(driver):
    proc = subprocess.run([str(driver)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("0 failures")
