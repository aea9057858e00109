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

#include "TransformMath.h"
#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/TransformKernels.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::hot;

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

/// A per-tensor maxabs quantize (not `exclude`, not in `claimed`) whose
/// kernel reads the data of `value` (through reshapes) as rows of `cols`,
/// through a hadamard along them that fits a warp (or none): a kernel that
/// reads that data with `cols` channels can compute its max|hadamard(x)|.
static QuantizeOp findQuantizeOfRows(Value value, int64_t cols,
                                     Operation *exclude,
                                     ArrayRef<QuantizeOp> quantizes,
                                     const llvm::DenseSet<Operation *> &claimed,
                                     const TransformsToGPUOptions &options) {
  if (!cast<RankedTensorType>(value.getType()).hasStaticShape())
    return nullptr;
  Value root = getDataRoot(value);
  for (QuantizeOp quantize : quantizes) {
    if (quantize == exclude || claimed.contains(quantize) ||
        !isPerTensorMaxAbs(quantize))
      continue;
    QuantizeSource source = getQuantizeSource(quantize, options);
    auto sourceType = cast<RankedTensorType>(source.source.getType());
    if (getDataRoot(source.source) == root &&
        sourceType.getDimSize(1) == cols &&
        source.block <= kWarpSize * getVectorWidth(cols))
      return quantize;
  }
  return nullptr;
}

/// The quantize whose statistics the lowrank kernel of `op` can compute
/// from its input (findQuantizeOfRows).
static QuantizeOp findInputQuantize(LowRankOp op,
                                    ArrayRef<QuantizeOp> quantizes,
                                    const llvm::DenseSet<Operation *> &claimed,
                                    const TransformsToGPUOptions &options) {
  return findQuantizeOfRows(op.getInput(), getChannels(op), nullptr, quantizes,
                            claimed, options);
}

/// Another quantize of the matrix `output` quantizes (findQuantizeOfRows).
static QuantizeOp findPairedQuantize(QuantizeOp output,
                                     ArrayRef<QuantizeOp> quantizes,
                                     const llvm::DenseSet<Operation *> &claimed,
                                     const TransformsToGPUOptions &options) {
  auto type = cast<RankedTensorType>(output.getInput().getType());
  return findQuantizeOfRows(output.getInput(), type.getDimSize(1), output,
                            quantizes, claimed, options);
}

/// A maxabs quantize (not in `claimed`) of `op`'s result, through reshapes
/// only: per tensor, or per column with columns = op's channels.
static QuantizeOp
findOutputQuantize(LowRankOp op, ArrayRef<QuantizeOp> quantizes,
                   const llvm::DenseSet<Operation *> &claimed) {
  for (QuantizeOp quantize : quantizes) {
    if (claimed.contains(quantize) ||
        quantize.getScaleMode() != ScaleMode::MaxAbs ||
        stripReshapes(quantize.getInput()) != op.getResult())
      continue;
    if (quantize.getGranularity() == Granularity::PerTensor)
      return quantize;
    auto type = cast<RankedTensorType>(quantize.getInput().getType());
    if (quantize.getGranularity() == Granularity::PerCol &&
        type.getDimSize(1) == getChannels(op))
      return quantize;
  }
  return nullptr;
}

/// Whether `op`'s result, through reshapes that nothing else reads, is read
/// only by `quantize`.
static bool feedsOnly(LowRankOp op, QuantizeOp quantize) {
  Value value = op.getResult();
  while (value.hasOneUse()) {
    Operation *user = *value.getUsers().begin();
    if (user == quantize.getOperation())
      return true;
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user))
      return false;
    value = user->getResult(0);
  }
  return false;
}

/// Makes `value` available before `anchor`: moves its defining op there
/// when it is a pure op of `anchor`'s block after it, its operands first.
/// Fails when some op on the way is not such an op (what was moved stays
/// moved: pure ops whose operands dominate their new place).
static LogicalResult hoistBefore(RewriterBase &rewriter, Value value,
                                 Operation *anchor, DominanceInfo &dominance) {
  if (dominance.properlyDominates(value, anchor))
    return success();
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != anchor->getBlock() || !isPure(def) ||
      def->getNumRegions() != 0)
    return failure();
  for (Value operand : def->getOperands())
    if (failed(hoistBefore(rewriter, operand, anchor, dominance)))
      return failure();
  rewriter.moveOpBefore(def, anchor);
  return success();
}

/// The earlier of `a` and `b` (same block).
static Operation *getFirst(Operation *a, Operation *b) {
  return a->isBeforeInBlock(b) ? a : b;
}

/// Lowers `op` with `output` (and `input`, when not null) in a statistics
/// pass and a quantize pass (y never stored) when the IR allows: the
/// quantizes and `op` in one block, `output` the only reader of `op`'s
/// result, and what the kernels read movable before the first of them.
static LogicalResult lowerTogether(RewriterBase &rewriter, LowRankOp op,
                                   QuantizeOp input, QuantizeOp output,
                                   const TransformsToGPUOptions &options,
                                   DominanceInfo &dominance,
                                   OperandTransposes &transposes) {
  Block *block = op->getBlock();
  if ((input && input->getBlock() != block) || output->getBlock() != block ||
      !feedsOnly(op, output))
    return failure();
  Operation *anchor = input ? getFirst(input, op) : op.getOperation();
  Value reads[] = {op.getInput(), input ? input.getSeed() : Value(),
                   output.getSeed()};
  for (Value value : reads)
    if (value && failed(hoistBefore(rewriter, value, anchor, dominance)))
      return failure();
  return lowerLowRankAndQuantizesToGPU(rewriter, op, input, output, anchor,
                                       options, transposes);
}

void mlir::hot::lowerTransformsToGPU(RewriterBase &rewriter, ModuleOp module,
                                     const TransformsToGPUOptions &options,
                                     bool hadamardQuantize, bool lowRank,
                                     OperandTransposes &transposes) {
  SmallVector<QuantizeOp> quantizes;
  module.walk([&](QuantizeOp op) { quantizes.push_back(op); });

  // Lowranks first: they compute what the quantizes they share data with
  // need. `claimed`: quantizes paired with a lowrank (already replaced, or
  // with their maxima in `computed`).
  llvm::DenseSet<Operation *> claimed;
  llvm::DenseMap<Operation *, PartialMaxima> computed;
  if (lowRank) {
    SmallVector<LowRankOp> lowRanks;
    module.walk([&](LowRankOp op) { lowRanks.push_back(op); });
    DominanceInfo dominance(module);
    for (LowRankOp op : lowRanks) {
      QuantizeOp input, output;
      if (hadamardQuantize && options.shareStatistics) {
        input = findInputQuantize(op, quantizes, claimed, options);
        output = findOutputQuantize(op, quantizes, claimed);
      }
      // A statistics pass, then one pass that quantizes without storing the
      // projection. Without an input quantize, that reads the input twice
      // where the projection would be written and read back in f32: as many
      // bytes for an f32 input, fewer for bf16/f16, and no f32 buffer (and
      // the quantize kernel can write a product's operand K-major).
      bool perColumn = output && output.getGranularity() == Granularity::PerCol;
      if (output && succeeded(lowerTogether(rewriter, op, input, output,
                                            options, dominance, transposes))) {
        if (input)
          claimed.insert(input);
        claimed.insert(output);
        continue;
      }
      // A per_col quantize of the stored projection gets kernels of its own.
      if (perColumn)
        output = nullptr;
      // The statistics must exist before the input's quantize runs.
      if (input &&
          (input->getBlock() != op->getBlock() ||
           failed(hoistBefore(rewriter, op.getResult(), input, dominance))))
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

  // Two quantizes of one matrix (without a lowrank between: the gw path of
  // 2-D layers quantizes gy itself, the gx path its hadamard).
  if (hadamardQuantize && lowRank && options.shareStatistics) {
    DominanceInfo dominance(module);
    for (QuantizeOp output : quantizes) {
      if (claimed.contains(output) ||
          output.getScaleMode() != ScaleMode::MaxAbs ||
          output.getGranularity() == Granularity::PerRow ||
          output.getInput().getDefiningOp<HadamardOp>())
        continue;
      QuantizeOp input =
          findPairedQuantize(output, quantizes, claimed, options);
      if (!input || input->getBlock() != output->getBlock())
        continue;
      Operation *anchor = getFirst(input, output);
      Value reads[] = {output.getInput(), input.getSeed(), output.getSeed()};
      if (llvm::any_of(reads, [&](Value value) {
            return value &&
                   failed(hoistBefore(rewriter, value, anchor, dominance));
          }))
        continue;
      if (succeeded(lowerQuantizePairToGPU(rewriter, input, output, anchor,
                                           options, transposes))) {
        claimed.insert(input);
        claimed.insert(output);
      }
    }
  }

  if (hadamardQuantize) {
    for (QuantizeOp op : quantizes) {
      auto it = computed.find(op);
      if (it == computed.end() && claimed.contains(op))
        continue; // Replaced with its lowrank.
      (void)lowerHadamardQuantizeToGPU(
          rewriter, op, options, it == computed.end() ? nullptr : &it->second,
          &transposes);
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
