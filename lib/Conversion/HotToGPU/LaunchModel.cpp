//===- LaunchModel.cpp - Chips, and the tiles and K split of a product ----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/HotToGPU.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::hot;

bool mlir::hot::hasNativeInt4TensorCores(StringRef chip) {
  return llvm::is_contained({"sm_80", "sm_86", "sm_87", "sm_89"}, chip);
}

bool mlir::hot::hasWarpgroupMma(StringRef chip) { return chip == "sm_90a"; }

int64_t mlir::hot::getTypicalSMCount(StringRef chip) {
  return llvm::StringSwitch<int64_t>(chip)
      .Case("sm_80", 108)              // A100
      .Case("sm_86", 84)               // A40 (RTX 3090: 82)
      .Case("sm_87", 16)               // Jetson AGX Orin
      .Case("sm_89", 128)              // RTX 4090
      .Cases({"sm_90", "sm_90a"}, 132) // H100 / H200 SXM
      .Default(108);
}

int64_t mlir::hot::getMaxThreadsPerSM(StringRef chip) {
  return llvm::is_contained({"sm_86", "sm_87", "sm_89"}, chip) ? 1536 : 2048;
}

/// The model of chooseIntMmaLaunch, in units of one K step of 128 bytes of a
/// 128 x 128 output tile at the tensor cores' full rate. Calibrated on an H200
/// (bench/RESULTS.md, 2026-12-04): 21 wgmma kernels of the ViT-B backward
/// products (gx and HLA gw of the four layers; 128 x 256, 128 x 128 and
/// 64 x 128 tiles; K unsplit and split in 2 to 4) fit with one unit = 0.43 us
/// and a root-mean-square relative error of 12 %, and the model then picks
/// the fastest measured variant of each product. A block's fixed latency
/// (pipeline fill, epilogue) ~9 units; storing or loading a 128 x 128 i32
/// accumulator tile ~2.5; a split's fixed cost (the launch that zeroes the
/// tile counters, the last blocks' reductions) ~22.5. The first estimates
/// (3, 2 and 5) made a split look cheap: 128 x 128 tiles of fc1's gw split in
/// 3 ran 28 % slower than unsplit.
static constexpr double kBlockLatency = 9, kTileExchange = 2.5,
                        kSplitCost = 22.5;
static constexpr int64_t kMaxSplitK = 16;
/// The largest workspace an automatic split may take (every split's
/// accumulators): 256 MiB.
static constexpr int64_t kMaxAutoWorkspaceBytes = int64_t(256) << 20;

/// Operand bytes per MAC that L2 can feed an SM when every SM loads: H100
/// ~40 bytes per clock per SM against 4096 int8 MACs; A100 ~33 against
/// 2048. The H200's figures fit 0.012 best of 0.008 to 0.016: 128 x 128
/// tiles, which load 1/64 byte per MAC, are bound by L2 on Hopper when the
/// chip is full, and small tiles more so.
static double getL2BytesPerMac(StringRef chip) {
  return chip.starts_with("sm_90") ? 0.012 : 0.016;
}

double mlir::hot::modelIntMmaTime(const IntMmaKernelSpec &spec, int64_t sms,
                                  StringRef chip) {
  const IntMmaTiling &t = spec.tiling;
  constexpr double unit = 128.0 * 128 * 128;
  double area = double(t.tileM * t.tileN) / (128 * 128);
  int64_t blocks = spec.getNumTiles() * spec.splitK;
  double busy = double(std::min(blocks, sms)) / double(sms);
  double macs = double(t.tileM * t.tileN * t.tileKBytes) / unit;
  double loads = double((t.tileM + t.tileN) * t.tileKBytes) /
                 getL2BytesPerMac(chip) / unit * busy;
  double work = double(spec.getKTilesPerSplit()) * std::max(macs, loads);
  double waves = double(llvm::divideCeil(blocks, sms));
  if (spec.splitK == 1)
    return waves * (work + kBlockLatency);
  double exchange = kTileExchange * area;
  // Every block stores its tile; the last of a tile loads all of them.
  return waves * (work + kBlockLatency + exchange) +
         double(spec.splitK) * exchange + kSplitCost;
}

void mlir::hot::chooseIntMmaLaunch(const IntMatmulToGPUOptions &options,
                                   IntMmaKernelSpec &spec, int64_t sms) {
  SmallVector<IntMmaTiling> tilings{options.tiling};
  // wgmma's N is the tile's, up to 256: a wider tile loads fewer operand
  // bytes per MAC from L2, where the model finds 128 x 128 bound on Hopper;
  // and 1.5 times as wide (192 for 128) fills the last wave better where N
  // is a multiple of 192 and 256 leaves it a quarter full (ViT-B's 768:
  // 396 blocks of 128 x 192 are 3 waves on 132 SMs, 297 of 128 x 256 are
  // 2.25).
  SmallVector<int64_t, 4> tileNs{options.tiling.tileN,
                                 options.tiling.tileN / 2};
  if (spec.kind == IntMmaKind::WgmmaS8)
    tileNs.insert(tileNs.begin(),
                  {2 * options.tiling.tileN, 3 * options.tiling.tileN / 2});
  if (options.autoTiles)
    for (int64_t tileN : tileNs)
      for (int64_t tileM : {options.tiling.tileM, options.tiling.tileM / 2}) {
        IntMmaTiling tiling = options.tiling;
        tiling.tileM = tileM;
        tiling.tileN = tileN;
        std::string reason;
        if ((tileM != options.tiling.tileM || tileN != options.tiling.tileN) &&
            tileM >= 64 && tileN >= 64 &&
            int64_t(llvm::divideCeil(spec.m, tileM)) <= kMaxGridY &&
            succeeded(verifyIntMmaTiling(tiling, spec.kind, reason)))
          tilings.push_back(tiling);
      }
  IntMmaKernelSpec best = spec;
  double bestTime = std::numeric_limits<double>::infinity();
  for (const IntMmaTiling &tiling : tilings) {
    IntMmaKernelSpec candidate = spec;
    candidate.tiling = tiling;
    int64_t kTiles = candidate.getNumKTiles();
    int64_t first = options.splitK > 0 ? std::min(options.splitK, kTiles) : 1;
    int64_t last = options.splitK > 0 ? first : std::min(kMaxSplitK, kTiles);
    for (int64_t splitK = first; splitK <= last; ++splitK) {
      candidate.splitK =
          llvm::divideCeil(kTiles, llvm::divideCeil(kTiles, splitK));
      if (options.splitK == 0 &&
          candidate.getWorkspaceWords() * 4 > kMaxAutoWorkspaceBytes)
        break;
      double time = modelIntMmaTime(candidate, sms, options.chip);
      if (time < bestTime) {
        best = candidate;
        bestTime = time;
      }
    }
  }
  spec = best;
}
