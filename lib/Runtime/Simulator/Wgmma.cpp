//===- Wgmma.cpp - wgmma.mma_async, commit_group and wait_group -----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// wgmma.mma_async.sync.aligned.m64nNk32.s32.s8.s8{.satfinite} with A and B in
// shared memory, K-major and swizzled, is a collective of the 128 threads of
// a warpgroup (Collectives.cpp): the product is computed when it resolves,
// from shared memory as it is then. On the GPU the operands are read
// asynchronously until a wgmma.wait_group retires their wgmma-group, so each
// wgmma.mma_async here records what it read (its descriptors and a checksum
// of the bytes) in every thread of the warpgroup. When the last of them
// retires it (at wgmma.wait_group, or at its exit) the bytes must be
// unchanged: a kernel that overwrites a stage too early fails here instead
// of computing garbage on the GPU only now and then.
//
// PTX ISA sections are cited by title, under "Asynchronous Warpgroup Level
// Matrix Multiply-Accumulate Instructions" (9.7.15 in PTX ISA 8.8).
//
//===----------------------------------------------------------------------===//

#include "Scheduler.h"
#include "Support.h"
#include "hot/Runtime/SimulatorRuntime.h"

#include <algorithm>
#include <cstring>

using namespace hot::simulator;

struct hot::simulator::WgmmaRead {
  uint64_t descA, descB;
  int32_t n;
  uint64_t checksum; // FNV-1a 64 of the bytes read, A then B.
  int unretired;     // Threads of the warpgroup that have not retired it.
};

namespace {
constexpr int kM = 64;
/// K of .s8 operands: 32 bytes a row of A or B.
constexpr uint32_t kRowBytes = 32;

/// A K-major operand as its matrix descriptor places it, from "Matrix
/// Descriptor Format": bits 0-13 start address >> 4 (the address taken as
/// (x & 0x3FFFF) >> 4: a window offset here, kSharedAlignment), 16-29 leading
/// dimension byte offset >> 4, 32-45 stride dimension byte offset >> 4,
/// 49-51 base offset, 62-63 swizzle mode (0 none, 1 128B, 2 64B, 3 32B).
/// The leading dimension byte offset is unused by K-major swizzled layouts
/// (CUTLASS's GmmaDescriptor: "assumed to be 1").
struct Operand {
  uint32_t start;  // Window offset of row 0, K byte 0.
  uint32_t stride; // Stride dimension byte offset: from row 8r to 8r + 8.
  uint32_t width;  // Swizzle width, the bytes of a row within its 8 rows.
};

std::string decode(uint64_t desc, Operand &operand) {
  unsigned mode = desc >> 62, baseOffset = desc >> 49 & 7;
  if (mode == 0)
    return "swizzle mode 0 (no swizzle) is not simulated";
  if (baseOffset != 0)
    return format("base offset %u is not simulated", baseOffset);
  operand.start = (desc & 0x3FFF) << 4;
  operand.stride = (desc >> 32 & 0x3FFF) << 4;
  operand.width = 256 >> mode;
  // A k32 step starts within a swizzled row (at +0, +32, +64 or +96 of a
  // 128-byte one) and does not leave it.
  if (operand.start % operand.width + kRowBytes > operand.width)
    return format("a K slice at byte %u of a %u-byte swizzled row is not "
                  "simulated",
                  operand.start % operand.width, operand.width);
  return {};
}

/// The window offset of the 16 bytes at K byte `k` (0 or 16) of `row`, from
/// "Shared Memory Matrix Layout" (K-major swizzle atoms of 8 rows of `width`
/// bytes) and CUTLASS's Layout_K_SW{128,64,32}_Atom, Swizzle<{3,2,1},4,3>:
/// the 16-byte chunk index (address bits 4 and up) is XORed with the row
/// index within 8 (bits 7 and up) on the address itself, the base offset
/// being 0 (patterns repeating at multiples of 8 * width bytes).
uint32_t locate(const Operand &operand, int row, uint32_t k) {
  uint32_t offset =
      operand.start + row / 8 * operand.stride + row % 8 * operand.width + k;
  return offset ^ (offset >> 3 & (operand.width / 16 - 1) << 4);
}

/// Reads `rows` rows of 32 bytes through `desc` into `out`, folding the
/// bytes into the FNV-1a hash `hash`; a message on failure.
std::string load(const Block &block, uint64_t desc, int rows,
                 int8_t (*out)[kRowBytes], uint64_t &hash) {
  Operand operand;
  std::string failure = decode(desc, operand);
  for (int row = 0; row < rows && failure.empty(); ++row)
    for (uint32_t k = 0; k < kRowBytes && failure.empty(); k += 16) {
      uint32_t offset = locate(operand, row, k);
      if (offset + 16 > block.sharedBytes) {
        failure = format("row %d is at bytes %u-%u, beyond the %zu bytes of "
                         "shared memory",
                         row, offset, offset + 15, block.sharedBytes);
        continue;
      }
      std::memcpy(out[row] + k, block.shared + offset, 16);
      for (int i = 0; i < 16; ++i)
        hash =
            (hash ^ static_cast<uint8_t>(out[row][k + i])) * 0x100000001b3ull;
    }
  if (failure.empty())
    return failure;
  return format("descriptor 0x%016llx: ",
                static_cast<unsigned long long>(desc)) +
         failure;
}

/// A (64 x 32) and B (n x 32, "col": row j of B is column j of the product)
/// and the checksum of their bytes.
struct Operands {
  int8_t a[kM][kRowBytes], b[256][kRowBytes];
  uint64_t checksum = 0xcbf29ce484222325ull;
};

std::string loadOperands(const Block &block, uint64_t descA, uint64_t descB,
                         int n, Operands &operands) {
  std::string failure = load(block, descA, kM, operands.a, operands.checksum);
  if (!failure.empty())
    return "matrix A: " + failure;
  failure = load(block, descB, n, operands.b, operands.checksum);
  return failure.empty() ? failure : "matrix B: " + failure;
}
} // namespace

/// D = A * B (+ D with scale-d): accumulators from "Register Fragments"
/// (Matrix Fragments for wgmma.mma_async.m64nNk32, .s32 D) and CUTLASS's
/// CLayout_64xN: warp w of the warpgroup holds rows 16w..16w+15; with
/// g = lane >> 2 and t = lane % 4, register i holds row 16w + g (+ 8 when
/// i % 4 >= 2), column 8 * (i / 4) + 2t + (i % 2).
std::string hot::simulator::performWgmma(Block &block, Thread *warpgroup) {
  const Collective &op = warpgroup[0].op;
  Operands operands;
  std::string failure = loadOperands(block, op.descA, op.descB, op.n, operands);
  if (!failure.empty())
    return failure;
  for (int thread = 0; thread < kWarpgroupSize; ++thread) {
    const Collective &mine = warpgroup[thread].op;
    int lane = thread % kWarpSize, g = lane >> 2, t = lane % 4;
    for (int i = 0; i < op.n / 2; ++i) {
      int row = 16 * (thread / kWarpSize) + g + 8 * (i >> 1 & 1);
      int col = 8 * (i / 4) + 2 * t + (i & 1);
      int32_t product = 0; // At most 32 * 128 * 128 in magnitude.
      for (uint32_t k = 0; k < kRowBytes; ++k)
        product += operands.a[row][k] * operands.b[col][k];
      int64_t sum = product + (op.scaleD ? int64_t{mine.cFrag[i]} : 0);
      if (op.satfinite)
        sum = std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX);
      // Reads cFrag[i] before writing d[i]: they may alias.
      mine.d[i] = static_cast<int32_t>(static_cast<uint32_t>(sum));
    }
  }
  auto read = std::make_shared<WgmmaRead>(
      WgmmaRead{op.descA, op.descB, op.n, operands.checksum, kWarpgroupSize});
  for (int thread = 0; thread < kWarpgroupSize; ++thread)
    warpgroup[thread].wgmmas.push_back(
        {read, warpgroup[thread].committedWgmmaGroups});
  return {};
}

void hot::simulator::retireWgmmas(const char *entry, Thread &thread,
                                  uint64_t group) {
  size_t done = 0;
  for (; done < thread.wgmmas.size() && thread.wgmmas[done].group < group;
       ++done) {
    WgmmaRead &read = *thread.wgmmas[done].read;
    if (--read.unretired > 0)
      continue;
    Operands operands;
    loadOperands(currentBlock(entry), read.descA, read.descB, read.n, operands);
    if (operands.checksum != read.checksum)
      abandonLaunch(
          entry,
          format("shared memory read by wgmma.mma_async was overwritten "
                 "before wgmma.wait_group retired it (m64n%dk32, A at shared "
                 "offset %u, B at %u%s)",
                 read.n, static_cast<unsigned>(read.descA & 0x3FFF) << 4,
                 static_cast<unsigned>(read.descB & 0x3FFF) << 4,
                 group == UINT64_MAX ? "; pending when the thread exited"
                                     : ""));
  }
  thread.wgmmas.erase(thread.wgmmas.begin(), thread.wgmmas.begin() + done);
}

extern "C" void __hotsim_wgmma(int32_t n, int32_t satfinite, int32_t scaleD,
                               uint64_t descA, uint64_t descB,
                               const int32_t *accIn, int32_t *accOut) {
  Thread &thread = currentThread(__func__);
  // "Matrix Shape": .s8 multiplicands allow N = 8, 16, 24 and the multiples
  // of 16 from 32 to 256 (as CUTLASS's MMA_64xNx32_S32S8S8_SS_TN).
  if (!(n == 8 || n == 16 || n == 24 || (n % 16 == 0 && n >= 32 && n <= 256)))
    abandonLaunch(__func__,
                  format("wgmma.mma_async m64n%dk32 .s8: not a valid N", n));
  Collective &op = thread.op;
  op = Collective();
  op.kind = CollectiveKind::Wgmma;
  op.n = n;
  op.satfinite = satfinite != 0;
  op.scaleD = scaleD != 0;
  op.descA = descA;
  op.descB = descB;
  op.cFrag = accIn;
  op.d = accOut;
  waitAt(thread, Wait::Collective);
}

extern "C" void __hotsim_wgmma_commit(void) {
  ++currentThread(__func__).committedWgmmaGroups;
}

extern "C" void __hotsim_wgmma_wait(int32_t n) {
  Thread &thread = currentThread(__func__);
  retireWgmmas(__func__, thread,
               groupsToRetire(__func__, thread.committedWgmmaGroups, n));
}
