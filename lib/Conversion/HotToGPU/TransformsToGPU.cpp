//===- TransformsToGPU.cpp - Lower the transforms, sharing passes ---------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// Lowers hot.quantize, hot.lowrank and hot.hadamard to the transform kernels.
// A per-tensor maxabs quantize needs the max of all its values before it can
// round any of them: a pass of its own over the data. When a lowrank kernel
// reads the same data anyway (the gx path's gy and the gw path's gy are one
// tensor) or writes it (the gw path quantizes the lowrank's result), that
// kernel computes the maximum on its way and the quantize kernel reads its
// partials: for a linear layer's gy, one read of gy and one of the projected
// gy fewer.
//
//===----------------------------------------------------------------------===//

#include "WarpButterfly.h"
#include "hot/Conversion/TransformKernels.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::hot;

/// The tensor whose elements `value` has in the same row-major order: its
/// source through tensor.collapse_shape and tensor.expand_shape.
static Value stripReshapes(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

static bool isPerTensorMaxAbs(QuantizeOp op) {
  return op.getGranularity() == Granularity::PerTensor &&
         op.getScaleMode() == ScaleMode::MaxAbs;
}

/// The product of the dims of `op`'s input after its dim (the channels).
static int64_t getChannels(LowRankOp op) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  int64_t channels = 1;
  for (int64_t d = op.getDim() + 1; d < type.getRank(); ++d)
    channels *= type.getDimSize(d);
  return channels;
}

/// A per-tensor maxabs quantize (not in `claimed`) whose kernel reads the
/// data of `op`'s input with rows of `op`'s channels: the lowrank kernel can
/// compute its max|hadamard(x)|, with the hadamard's block across at most
/// one warp of its threads.
static QuantizeOp findInputQuantize(LowRankOp op,
                                    ArrayRef<QuantizeOp> quantizes,
                                    const llvm::DenseSet<Operation *> &claimed,
                                    const TransformsToGPUOptions &options) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  if (!type.hasStaticShape())
    return nullptr;
  Value root = stripReshapes(op.getInput());
  int64_t channels = getChannels(op);
  int64_t width = channels % 4 == 0 ? 4 : channels % 2 == 0 ? 2 : 1;
  for (QuantizeOp quantize : quantizes) {
    if (claimed.contains(quantize) || !isPerTensorMaxAbs(quantize))
      continue;
    QuantizeSource source = getQuantizeSource(quantize, options);
    auto sourceType = cast<RankedTensorType>(source.source.getType());
    if (stripReshapes(source.source) == root &&
        sourceType.getDimSize(1) == channels &&
        source.block <= kWarpSize * width)
      return quantize;
  }
  return nullptr;
}

/// A per-tensor maxabs quantize (not in `claimed`) of `op`'s result, through
/// reshapes only.
static QuantizeOp findOutputQuantize(LowRankOp op,
                                     ArrayRef<QuantizeOp> quantizes,
                                     const llvm::DenseSet<Operation *> &claimed) {
  for (QuantizeOp quantize : quantizes)
    if (!claimed.contains(quantize) && isPerTensorMaxAbs(quantize) &&
        stripReshapes(quantize.getInput()) == op.getResult())
      return quantize;
  return nullptr;
}

/// Moves `op` and the reshapes that make its input before `anchor`, where
/// they are after it in its block. Fails, moving nothing, when one of them
/// is in another block and does not dominate `anchor`.
static LogicalResult hoistBefore(RewriterBase &rewriter, LowRankOp op,
                                 Operation *anchor, DominanceInfo &dominance) {
  SmallVector<Operation *> chain{op};
  Value value = op.getInput();
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      break;
    chain.push_back(def);
    value = def->getOperand(0);
  }
  if (!dominance.properlyDominates(value, anchor))
    return failure();
  SmallVector<Operation *> toMove;
  for (Operation *def : llvm::reverse(chain)) {
    if (dominance.properlyDominates(def, anchor))
      continue;
    if (def->getBlock() != anchor->getBlock())
      return failure();
    toMove.push_back(def);
  }
  for (Operation *def : toMove)
    rewriter.moveOpBefore(def, anchor);
  return success();
}

void mlir::hot::lowerTransformsToGPU(RewriterBase &rewriter, ModuleOp module,
                                     const TransformsToGPUOptions &options,
                                     bool hadamardQuantize, bool lowRank) {
  SmallVector<QuantizeOp> quantizes;
  module.walk([&](QuantizeOp op) { quantizes.push_back(op); });

  // Lowranks first: they compute what the quantizes they share data with
  // need.
  llvm::DenseMap<Operation *, PartialMaxima> computed;
  if (lowRank) {
    SmallVector<LowRankOp> lowRanks;
    module.walk([&](LowRankOp op) { lowRanks.push_back(op); });
    DominanceInfo dominance(module);
    llvm::DenseSet<Operation *> claimed;
    for (LowRankOp op : lowRanks) {
      QuantizeOp input, output;
      if (hadamardQuantize) {
        input = findInputQuantize(op, quantizes, claimed, options);
        output = findOutputQuantize(op, quantizes, claimed);
      }
      // The statistics must exist before the input's quantize runs.
      if (input && failed(hoistBefore(rewriter, op, input, dominance)))
        input = nullptr;
      LowRankStatistics statistics;
      if (input)
        statistics.inputMaxBlock = getQuantizeSource(input, options).block;
      statistics.outputMax = bool(output);
      bool fuse = input || output;
      if (failed(lowerLowRankToGPU(rewriter, op, options,
                                   fuse ? &statistics : nullptr)))
        continue;
      for (auto [quantize, maxima] :
           {std::make_pair(input, statistics.input),
            std::make_pair(output, statistics.output)}) {
        if (!quantize)
          continue;
        computed[quantize] = maxima;
        claimed.insert(quantize);
      }
    }
  }

  if (hadamardQuantize) {
    for (QuantizeOp op : quantizes) {
      auto it = computed.find(op);
      (void)lowerHadamardQuantizeToGPU(
          rewriter, op, options, it == computed.end() ? nullptr : &it->second);
    }
  }

  // What no quantize kernel fused (along dim 0, or with other users).
  if (lowRank) {
    SmallVector<HadamardOp> hadamards;
    module.walk([&](HadamardOp op) { hadamards.push_back(op); });
    for (HadamardOp op : hadamards)
      (void)lowerHadamardToGPU(rewriter, op, options);
  }
}
