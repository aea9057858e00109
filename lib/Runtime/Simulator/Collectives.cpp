//===- Collectives.cpp - shfl.sync, ldmatrix, mma.sync; wgmma's plumbing --===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// A lane at a warp collective records its operands and blocks; the scheduler
// performs the collective once all its participants (the lanes of the mask
// for shfl.sync, the whole warp otherwise) wait at the same one. Warpgroup
// collectives (wgmma.mma_async, performed in Wgmma.cpp) wait for the 128
// threads of the warpgroup likewise. Semantics as in the PTX ISA, whose
// sections are cited below by title (and number in PTX ISA 9.0: numbers
// shift between versions).
//
//===----------------------------------------------------------------------===//

#include "Scheduler.h"
#include "Support.h"
#include "hot/Runtime/SimulatorRuntime.h"

#include <algorithm>
#include <cstring>

using namespace hot::simulator;

namespace {
const char *const kShflModes[] = {"bfly", "up", "down", "idx"};

uint32_t participants(const Collective &op) {
  return op.kind == CollectiveKind::Shfl ? static_cast<uint32_t>(op.mask)
                                         : 0xffffffffu;
}

bool sameCollective(const Collective &x, const Collective &y) {
  if (x.kind != y.kind)
    return false;
  switch (x.kind) {
  case CollectiveKind::Shfl:
    return x.mode == y.mode && x.mask == y.mask;
  case CollectiveKind::Ldmatrix:
    return x.num == y.num && x.trans == y.trans;
  case CollectiveKind::Mma:
    return x.mmaKind == y.mmaKind && x.satfinite == y.satfinite;
  case CollectiveKind::Wgmma:
    return x.n == y.n && x.satfinite == y.satfinite && x.scaleD == y.scaleD &&
           x.descA == y.descA && x.descB == y.descB;
  }
  return false;
}

std::string describeWgmmaOperands(const Collective &op) {
  return format("m64n%dk32%s, scale-d %d, descriptors 0x%016llx and 0x%016llx",
                op.n, op.satfinite ? ".satfinite" : "", op.scaleD,
                static_cast<unsigned long long>(op.descA),
                static_cast<unsigned long long>(op.descB));
}

/// shfl.sync, from the pseudo-code of "Data Movement and Conversion
/// Instructions: shfl.sync". Reading a lane outside the mask is
/// undefined there: an error here.
std::string performShfl(Thread *warp, uint32_t members) {
  for (int lane = 0; lane < kWarpSize; ++lane) {
    if (!(members >> lane & 1))
      continue;
    Collective &op = warp[lane].op;
    int bval = op.b & 0x1f, cval = op.c & 0x1f, segmask = (op.c >> 8) & 0x1f;
    int maxLane = (lane & segmask) | (cval & ~segmask);
    int minLane = lane & segmask;
    int j = lane;
    bool pval = false;
    switch (op.mode) {
    case Bfly:
      j = lane ^ bval;
      pval = j <= maxLane;
      break;
    case Up:
      j = lane - bval;
      pval = j >= maxLane;
      break;
    case Down:
      j = lane + bval;
      pval = j <= maxLane;
      break;
    default: // Idx
      j = minLane | (bval & ~segmask);
      pval = j <= maxLane;
      break;
    }
    if (!pval)
      j = lane;
    if (!(members >> j & 1))
      return format("lane %d reads lane %d, which is not in the mask", lane, j);
    op.result = warp[j].op.value;
    op.inRange = pval;
  }
  return {};
}

/// ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16, section 9.7.14.5.15
/// "Warp-level matrix load instruction: ldmatrix": lanes 8j..8j+7 give the
/// row addresses of matrix j; lane i receives in register j the elements
/// (i/4, 2*(i%4)) and (i/4, 2*(i%4)+1) of matrix j (of its transpose with
/// .trans), the first in the low half.
std::string performLdmatrix(Thread *warp) {
  int num = warp[0].op.num, trans = warp[0].op.trans;
  for (int lane = 0; lane < 8 * num; ++lane)
    if (reinterpret_cast<uintptr_t>(warp[lane].op.row) % 16 != 0)
      return format("row address %p of lane %d is not 16-byte aligned",
                    warp[lane].op.row, lane);
  auto element = [&](int matrix, int row, int col) {
    uint16_t value;
    std::memcpy(&value,
                static_cast<const char *>(warp[8 * matrix + row].op.row) +
                    2 * col,
                sizeof(value));
    return static_cast<uint32_t>(value);
  };
  uint32_t result[kWarpSize][4];
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int j = 0; j < num; ++j) {
      int row = lane / 4, col = 2 * (lane % 4);
      uint32_t low = trans ? element(j, col, row) : element(j, row, col);
      uint32_t high =
          trans ? element(j, col + 1, row) : element(j, row, col + 1);
      result[lane][j] = low | high << 16;
    }
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int j = 0; j < num; ++j)
      warp[lane].op.out[j] = static_cast<int32_t>(result[lane][j]);
  return {};
}

/// mma.sync.aligned.m16n8k32.row.col{.satfinite}.s32.s8.s8.s32 (kind 0) and
/// m16n8k64 ... .s4.s4 (kind 1). Fragments from sections 9.7.14.5.10
/// "Matrix Fragments for mma.m16n8k32" and 9.7.14.5.11 "Matrix Fragments for
/// mma.m16n8k64" (integer types), with g = groupID = lane >> 2,
/// t = threadID_in_group = lane % 4 and E elements per register (4 .s8, 8 .s4,
/// the lowest element in the lowest bits), K = 8 * E:
///   A, element i = E * r + e of register r (a_i):
///     row = g for i < E or 2E <= i < 3E, else g + 8  (register r odd: + 8)
///     col = t * E + (i % E), + K / 2 for i >= 2E     (registers 2 and 3)
///   B, element i = E * r + e of register r (b_i):
///     row = t * E + (i % E), + K / 2 for i >= E      (register 1)
///     col = g
///   C and D, register i (c_i): row = g (+ 8 for i >= 2), col = 2 t + (i & 1)
void performMma(Thread *warp) {
  int perRegister = warp[0].op.mmaKind == S8M16N8K32 ? 4 : 8;
  int bits = 32 / perRegister, k = 8 * perRegister;
  int32_t a[16][64], b[64][8];
  int64_t c[16][8];
  auto element = [&](int32_t reg, int e) {
    // Shift element e to the top, then sign-extend it down.
    return static_cast<int32_t>(static_cast<uint32_t>(reg)
                                << (32 - bits * (e + 1))) >>
           (32 - bits);
  };
  for (int lane = 0; lane < kWarpSize; ++lane) {
    const Collective &op = warp[lane].op;
    int g = lane >> 2, t = lane % 4;
    for (int r = 0; r < 4; ++r)
      for (int e = 0; e < perRegister; ++e)
        a[g + 8 * (r & 1)][t * perRegister + e + k / 2 * (r >> 1)] =
            element(op.a[r], e);
    for (int r = 0; r < 2; ++r)
      for (int e = 0; e < perRegister; ++e)
        b[t * perRegister + e + k / 2 * r][g] = element(op.bFrag[r], e);
    for (int i = 0; i < 4; ++i)
      c[g + 8 * (i >> 1)][2 * t + (i & 1)] = op.cFrag[i];
  }
  bool satfinite = warp[0].op.satfinite;
  for (int lane = 0; lane < kWarpSize; ++lane) {
    int g = lane >> 2, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      int row = g + 8 * (i >> 1), col = 2 * t + (i & 1);
      int64_t sum = c[row][col];
      for (int kk = 0; kk < k; ++kk)
        sum += static_cast<int64_t>(a[row][kk]) * b[kk][col];
      if (satfinite)
        sum = std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX);
      // Without .satfinite the result wraps around.
      warp[lane].op.d[i] = static_cast<int32_t>(static_cast<uint32_t>(sum));
    }
  }
}

std::string perform(CollectiveKind kind, Thread *warp, uint32_t members) {
  switch (kind) {
  case CollectiveKind::Shfl:
    return performShfl(warp, members);
  case CollectiveKind::Ldmatrix:
    return performLdmatrix(warp);
  case CollectiveKind::Mma:
    performMma(warp);
    return {};
  case CollectiveKind::Wgmma:
    break; // resolveWarpgroups.
  }
  return {};
}

/// Performs the warpgroup collectives whose 128 threads have all arrived.
/// The PTX ISA requires uniform wgmma.mma_async operands across the
/// warpgroup ("Asynchronous Warpgroup Level Matrix Multiply-Accumulate
/// Instructions: wgmma.mma_async"): disagreeing ones are an error at once.
/// Threads of other warps may be at other collectives meanwhile.
bool resolveWarpgroups(Block &block, std::string &error) {
  bool progress = false;
  int numThreads = static_cast<int>(block.threads.size());
  for (int base = 0; base < numThreads; base += kWarpgroupSize) {
    Thread *group = &block.threads[base];
    int size = std::min(kWarpgroupSize, numThreads - base);
    auto waiting = [&](int i) {
      return group[i].wait == Wait::Collective &&
             isWarpgroupCollective(group[i].op.kind);
    };
    int first = 0;
    while (first < size && !waiting(first))
      ++first;
    if (first == size)
      continue;
    const Collective &op = group[first].op;
    auto what = [&] {
      return format("%s of thread %d", describeWait(group[first]).c_str(),
                    base + first);
    };
    if (size < kWarpgroupSize) {
      error =
          what() + format(" needs thread %d, but warpgroup %d has %d threads",
                          base + size, base / kWarpgroupSize, size);
      return false;
    }
    bool ready = true;
    for (int i = 0; i < size; ++i) {
      if (group[i].wait == Wait::Exited) {
        error = what() + format(" needs thread %d, which has exited", base + i);
        return false;
      }
      if (!waiting(i)) {
        ready = false;
      } else if (!sameCollective(group[i].op, op)) {
        error = format("warpgroup %d disagrees on wgmma.mma_async: thread "
                       "%d has %s; thread %d has %s",
                       base / kWarpgroupSize, base + first,
                       describeWgmmaOperands(op).c_str(), base + i,
                       describeWgmmaOperands(group[i].op).c_str());
        return false;
      }
    }
    if (!ready)
      continue;
    std::string failure = performWgmma(block, group);
    if (!failure.empty()) {
      error = what() + ": " + failure;
      return false;
    }
    for (int i = 0; i < size; ++i)
      group[i].wait = Wait::Runnable;
    progress = true;
  }
  return progress;
}
} // namespace

bool hot::simulator::resolveCollectives(Block &block, std::string &error,
                                        std::string &mismatch) {
  bool progress = false;
  int numThreads = static_cast<int>(block.threads.size());
  for (int base = 0; base < numThreads; base += kWarpSize) {
    Thread *warp = &block.threads[base];
    int lanes = std::min(kWarpSize, numThreads - base);
    for (int lane = 0; lane < lanes; ++lane) {
      if (warp[lane].wait != Wait::Collective ||
          isWarpgroupCollective(warp[lane].op.kind))
        continue;
      const Collective &op = warp[lane].op;
      uint32_t members = participants(op);
      auto what = [&] {
        return format("%s of thread %d", describeWait(warp[lane]).c_str(),
                      base + lane);
      };
      if (!(members >> lane & 1)) {
        error = what() + format(" excludes its own lane %d", lane);
        return false;
      }
      bool ready = true;
      for (int m = 0; m < kWarpSize && ready; ++m) {
        if (!(members >> m & 1))
          continue;
        if (m >= lanes) {
          error = what() + format(" needs lane %d, but warp %d has %d threads",
                                  m, base / kWarpSize, lanes);
          return false;
        }
        const Thread &peer = warp[m];
        if (peer.wait == Wait::Exited) {
          error =
              what() + format(" needs lane %d (thread %d), which has exited", m,
                              base + m);
          return false;
        }
        ready = peer.wait == Wait::Collective && sameCollective(peer.op, op);
        if (peer.wait == Wait::Collective && !ready && mismatch.empty())
          mismatch = format("warp %d disagrees: thread %d waits at %s, "
                            "thread %d at %s",
                            base / kWarpSize, base + lane,
                            describeWait(warp[lane]).c_str(), base + m,
                            describeWait(peer).c_str());
      }
      if (!ready)
        continue;
      std::string failure = perform(op.kind, warp, members);
      if (!failure.empty()) {
        error = what() + ": " + failure;
        return false;
      }
      for (int m = 0; m < kWarpSize; ++m)
        if (members >> m & 1)
          warp[m].wait = Wait::Runnable;
      progress = true;
    }
  }
  return resolveWarpgroups(block, error) || progress;
}

std::string hot::simulator::describeWait(const Thread &thread) {
  const Collective &op = thread.op;
  switch (thread.wait) {
  case Wait::Runnable:
    return "nothing";
  case Wait::Exited:
    return "the exit";
  case Wait::Barrier:
    return "the block barrier";
  case Wait::Collective:
    break;
  }
  switch (op.kind) {
  case CollectiveKind::Shfl:
    return format("shfl.sync.%s with mask 0x%08x", kShflModes[op.mode],
                  static_cast<uint32_t>(op.mask));
  case CollectiveKind::Ldmatrix:
    return format("ldmatrix.x%d%s", op.num, op.trans ? ".trans" : "");
  case CollectiveKind::Mma:
    return format("mma.sync.%s%s",
                  op.mmaKind == S8M16N8K32 ? "m16n8k32.s8" : "m16n8k64.s4",
                  op.satfinite ? ".satfinite" : "");
  case CollectiveKind::Wgmma:
    return format("wgmma.mma_async m64n%dk32", op.n);
  }
  return "?";
}

extern "C" int32_t __hotsim_shfl(int32_t kind, int32_t mask, int32_t value,
                                 int32_t b, int32_t c, int32_t *valid) {
  Thread &thread = currentThread(__func__);
  if (kind < Bfly || kind > Idx)
    abandonLaunch(__func__, format("unknown shfl.sync mode %d", kind));
  Collective &op = thread.op;
  op = Collective();
  op.kind = CollectiveKind::Shfl;
  op.mode = kind;
  op.mask = mask;
  op.value = value;
  op.b = b;
  op.c = c;
  waitAt(thread, Wait::Collective);
  if (valid)
    *valid = op.inRange;
  return op.result;
}

extern "C" void __hotsim_ldmatrix(const void *addr, int32_t num, int32_t trans,
                                  int32_t *out) {
  Thread &thread = currentThread(__func__);
  if (num != 1 && num != 2 && num != 4)
    abandonLaunch(__func__, format("ldmatrix.x%d: not x1, x2 or x4", num));
  Collective &op = thread.op;
  op = Collective();
  op.kind = CollectiveKind::Ldmatrix;
  op.row = addr;
  op.num = num;
  op.trans = trans != 0;
  op.out = out;
  waitAt(thread, Wait::Collective);
}

extern "C" void __hotsim_mma(int32_t kind, int32_t satfinite, const int32_t *a,
                             const int32_t *b, const int32_t *c, int32_t *d) {
  Thread &thread = currentThread(__func__);
  if (kind != S8M16N8K32 && kind != S4M16N8K64)
    abandonLaunch(__func__, format("unknown mma kind %d", kind));
  Collective &op = thread.op;
  op = Collective();
  op.kind = CollectiveKind::Mma;
  op.mmaKind = kind;
  op.satfinite = satfinite != 0;
  op.a = a;
  op.bFrag = b;
  op.cFrag = c;
  op.d = d;
  waitAt(thread, Wait::Collective);
}
