//===- LowRankToGPU.cpp - Launch the HLA kernel for hot.lowrank -----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "KernelLaunch.h"
#include "TransformMath.h"
#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/TransformKernels.h"
#include "hot/Dialect/Hot/Walsh.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::hot;

/// CUDA's bound on grid.y and grid.z.
static constexpr int64_t kMaxGridYZ = 65535;

/// Reshapes `value` (rank r, static) to [outer, size(dim), inner] or back
/// (`toThreeD` false, `shape` the rank-r shape): a collapse of the dims
/// before and after `dim`, then an expand that adds the missing unit dims.
static Value reshapeAroundDim(OpBuilder &b, Location loc, Value value,
                              int64_t dim, ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> threeD, bool toThreeD) {
  int64_t rank = shape.size();
  auto elementType = cast<ShapedType>(value.getType()).getElementType();
  // Groups of the rank-r shape: [0, dim), {dim}, (dim, rank).
  SmallVector<ReassociationIndices> present;
  if (dim > 0)
    present.push_back(llvm::to_vector(llvm::seq<int64_t>(0, dim)));
  present.push_back({dim});
  if (dim + 1 < rank)
    present.push_back(llvm::to_vector(llvm::seq<int64_t>(dim + 1, rank)));
  // Groups of the rank-3 shape over those: the unit dims that do not exist
  // in the rank-r shape join the group of `dim`.
  bool hasOuter = dim > 0, hasInner = dim + 1 < rank;
  SmallVector<ReassociationIndices> padded;
  if (hasOuter)
    padded.push_back({0});
  ReassociationIndices tokens;
  if (!hasOuter)
    tokens.push_back(0);
  tokens.push_back(1);
  if (!hasInner)
    tokens.push_back(2);
  padded.push_back(tokens);
  if (hasInner)
    padded.push_back({2});
  SmallVector<int64_t> middle;
  for (const ReassociationIndices &group : present) {
    int64_t size = 1;
    for (int64_t d : group)
      size *= shape[d];
    middle.push_back(size);
  }
  auto middleType = RankedTensorType::get(middle, elementType);
  auto threeDType = RankedTensorType::get(threeD, elementType);
  auto shapeType = RankedTensorType::get(shape, elementType);
  auto via = [&](Value v, RankedTensorType to,
                 ArrayRef<ReassociationIndices> groups, bool collapse) {
    if (cast<RankedTensorType>(v.getType()) == to)
      return v;
    if (collapse)
      return Value(tensor::CollapseShapeOp::create(b, loc, to, v, groups));
    return Value(tensor::ExpandShapeOp::create(b, loc, to, v, groups));
  };
  if (toThreeD) {
    Value collapsed = via(value, middleType, present, /*collapse=*/true);
    return via(collapsed, threeDType, padded, /*collapse=*/false);
  }
  Value collapsed = via(value, middleType, padded, /*collapse=*/true);
  return via(collapsed, shapeType, present, /*collapse=*/false);
}

namespace {
/// What a block-transform kernel computes, from the op it replaces.
struct BlockTransform {
  Operation *op;
  Value input;
  int64_t dim, block;
  /// The rows each block keeps, in order: asked for only once the block is
  /// known to be small (a block of 2^40 is a valid op).
  std::function<SmallVector<int64_t>()> keptRows;
  RankedTensorType resultType;
};

/// The rows of a block of 1.
SmallVector<int64_t> keepRowZero() { return {0}; }
} // namespace

/// The kernel's x: the transform's input (or the bf16/f16 tensor it extends)
/// as a read-only [outer, n, inner] buffer.
static Value toKernelInput(OpBuilder &b, Location loc,
                           const BlockTransform &transform,
                           const LowRankKernelSpec &spec) {
  auto type = cast<RankedTensorType>(transform.input.getType());
  SmallVector<int64_t> inShape{spec.outer, spec.n, spec.inner};
  Value source = getKernelSource(b, loc, transform.input);
  Value input = reshapeAroundDim(b, loc, source, transform.dim, type.getShape(),
                                 inShape, /*toThreeD=*/true);
  return getKernelInput(b, loc, input);
}

/// Launches the kernel of `transform` (its checks passed) and replaces the
/// op; fills `statistics` when given. Returns the kernel.
static gpu::GPUFuncOp launchBlockTransform(RewriterBase &rewriter,
                                           const BlockTransform &transform,
                                           gpu::GPUModuleOp gpuModule,
                                           LowRankKernelSpec &spec,
                                           LowRankStatistics *statistics) {
  Operation *op = transform.op;
  Location loc = op->getLoc();
  gpu::GPUFuncOp kernel = buildLowRankKernel(rewriter, loc, gpuModule, spec);

  rewriter.setInsertionPoint(op);
  SmallVector<int64_t> outShape{spec.outer, spec.projectedSize(), spec.inner};
  Value x = toKernelInput(rewriter, loc, transform, spec);
  Type f32 = rewriter.getF32Type();
  auto allocate = [&](ArrayRef<int64_t> shape) {
    return allocateKernelOutput(rewriter, loc, MemRefType::get(shape, f32));
  };
  Value y = allocate(outShape);
  SmallVector<Value> args{x, y};
  if (statistics) {
    auto addPartials = [&](PartialMaxima &maxima) {
      maxima.partials = allocate({spec.numPartials()});
      maxima.count = spec.numPartials();
      maxima.producer = kernel.getName().str();
      args.push_back(maxima.partials);
    };
    if (spec.inputMaxBlock > 0)
      addPartials(statistics->input);
    if (spec.outputMax != OutputMax::None)
      addPartials(statistics->output);
  }
  launchKernel(rewriter, loc, kernel, {spec.gridX(), spec.gridY}, spec.threads,
               args);
  Value result = getKernelResult(rewriter, loc, y);
  result = reshapeAroundDim(rewriter, loc, result, transform.dim,
                            transform.resultType.getShape(), outShape,
                            /*toThreeD=*/false);
  rewriter.replaceOp(op, result);
  return kernel;
}

/// `width` consecutive channels per thread (vector accesses), and as many
/// threads per block as the channels need, in whole warps, up to 256.
static void setChannelsPerThread(LowRankKernelSpec &spec, int64_t width) {
  spec.vectorWidth = width;
  spec.threads = std::min<int64_t>(
      256, llvm::alignTo(spec.inner / spec.vectorWidth, kWarpSize));
}

/// Checks `transform` and fills the kernel spec (without statistics). On
/// failure returns the reason.
static FailureOr<LowRankKernelSpec>
getBlockTransformSpec(const BlockTransform &transform,
                      const TransformsToGPUOptions &options,
                      std::string &reason) {
  auto type = cast<RankedTensorType>(transform.input.getType());
  if (!type.getElementType().isF32()) {
    reason = "the kernel computes in f32 only";
    return failure();
  }
  if (!type.hasStaticShape() || type.getNumElements() == 0) {
    reason = "the kernel is specialized to static, non-empty shapes";
    return failure();
  }
  if (transform.block > options.maxLowRankBlock) {
    reason = ("block " + Twine(transform.block) + " is larger than the " +
              Twine(options.maxLowRankBlock) +
              " values one thread keeps in registers")
                 .str();
    return failure();
  }
  LowRankKernelSpec spec;
  spec.n = type.getDimSize(transform.dim);
  spec.block = transform.block;
  if (spec.numBlocks() == 0) {
    reason = "no full block: the transform is the identity";
    return failure();
  }
  for (int64_t d = 0; d < transform.dim; ++d)
    spec.outer *= type.getDimSize(d);
  for (int64_t d = transform.dim + 1; d < type.getRank(); ++d)
    spec.inner *= type.getDimSize(d);
  spec.rows = transform.keptRows();
  spec.inputElementType = getKernelSourceElementType(transform.input);
  setChannelsPerThread(spec, getVectorWidth(spec.inner));
  // Items of 8 tokens at least: 8 independent loads per thread (16 rows of
  // two quantizations take ~250 registers).
  spec.itemBlocks = std::max<int64_t>(1, 8 / spec.block);
  // One item per thread block, up to CUDA's bound.
  spec.gridY = std::min(spec.numItems(), kMaxGridYZ);
  return spec;
}

/// Most partial maxima of a lowrank kernel with statistics (every warp of
/// the quantize kernel that reads them reduces them all).
static constexpr int64_t kMaxStatisticsPartials = 512;
/// Most thread blocks of a Quantize kernel: each starts by reducing the
/// partials to its scales, which the blocks' items then amortize (a 2-D
/// matrix has one item per row).
static constexpr int64_t kMaxQuantizeBlocks = 1024;
/// What a Quantize block's start costs, in items (chooseQuantizeGridY).
static constexpr double kBlockStartItems = 0.25;

/// The nvvm.minctasm of a Statistics or Quantize kernel on `chip` (0:
/// none), where ptxas 13 alone would spill or lose occupancy. The channel
/// butterfly's ±1 signs take registers of their own:
///  - a one-channel Quantize kernel (gy's, both quantizations) then takes
///    48 registers, 5 blocks of 256 threads per SM; held to 40 (6 blocks) it
///    spills nothing, except on sm_80, where 40 spilled 44 bytes: there it
///    is held to 5 blocks, what it takes anyway. Without the channel
///    butterfly (x's), 32 registers (8 blocks) on every chip. The hint is
///    also what the Quantize kernel's grid is chosen for
///    (chooseQuantizeGridY), so every such kernel has one;
///  - on sm_80, the 192-thread Statistics kernel of a 768-channel gy is held
///    to 64 registers and spills 16 bytes; asked for 4 blocks per SM, it
///    takes 80 and spills nothing. Without the channel butterfly (x's), no
///    hint.
/// A hint never exceeds the blocks the chip's threads per SM allow.
static int64_t getMinBlocksPerSM(const LowRankKernelSpec &spec,
                                 StringRef chip) {
  bool sm80 = chip == "sm_80";
  int64_t blocks = 0;
  if (spec.stage == LowRankStage::Statistics && sm80 && spec.inputMaxBlock > 1)
    blocks = 4;
  if (spec.stage == LowRankStage::Quantize && spec.vectorWidth == 1) {
    int64_t registers = spec.inputMaxBlock <= 1 ? 32 : sm80 ? 48 : 40;
    blocks = getBlocksPerSM(spec.threads, registers);
  }
  return std::min(blocks, getMaxThreadsPerSM(chip) / spec.threads);
}

/// The rows of a Quantize kernel's grid. Its blocks loop over the items, all
/// alike, so its time goes as the rounds of blocks that the SMs hold at once
/// (`slots` blocks) times the items of a block, plus each block's start
/// (the reduction of the partials, about a quarter of an item). The fewest
/// blocks of the least time: a grid of 1024 blocks of fc1's gy on an H200
/// (6 blocks per SM, 792 at once) ran a second round of 228 blocks, each as
/// long as the first round's, where 792 blocks of 13 items each take one.
/// Without `slots` (0: no occupancy hint), rounds cannot be counted: a
/// kernel that reads no partials (per-channel scales, which the Scales
/// kernel computed) starts at no cost and gets one item per block, so that
/// its last round is one of many; one that reduces partials gets at most
/// kMaxQuantizeBlocks.
static int64_t chooseQuantizeGridY(const LowRankKernelSpec &spec,
                                   int64_t slots) {
  int64_t items = spec.numItems(), gridX = spec.gridX();
  int64_t limit = std::min(items, kMaxGridYZ);
  bool readsPartials =
      spec.inputMaxBlock > 0 || spec.outputMax == OutputMax::Tensor;
  if (slots <= 0 && !readsPartials)
    return limit;
  if (slots <= 0)
    return std::clamp<int64_t>(kMaxQuantizeBlocks / gridX, 1, limit);
  int64_t best = 1;
  double bestTime = std::numeric_limits<double>::infinity();
  for (int64_t rows = 1; rows <= limit; ++rows) {
    double rounds = double(llvm::divideCeil(gridX * rows, slots));
    double time =
        rounds * (double(llvm::divideCeil(items, rows)) + kBlockStartItems);
    if (time < bestTime) {
      best = rows;
      bestTime = time;
    }
  }
  return best;
}

/// What one thread of the kernel of `spec` owns, for remarks.
static std::string describeThreads(const LowRankKernelSpec &spec) {
  if (spec.vectorWidth == 1)
    return "one channel per thread";
  return std::to_string(spec.vectorWidth) +
         " consecutive channels per thread (vector accesses)";
}

/// The projection of `op`.
static BlockTransform getBlockTransform(LowRankOp op) {
  return {op,
          op.getInput(),
          int64_t(op.getDim()),
          int64_t(op.getBlock()),
          [op]() mutable {
            return getKeptWalshRows(op.getBlock(), op.getRank(),
                                    op.getSelection());
          },
          cast<RankedTensorType>(op.getType())};
}

static ModuleOp getModule(Operation *op, std::string &reason) {
  ModuleOp module = op->getParentOfType<ModuleOp>();
  if (!module)
    reason = "no enclosing builtin.module for the kernel";
  return module;
}

LogicalResult
mlir::hot::lowerLowRankToGPU(RewriterBase &rewriter, LowRankOp op,
                             const TransformsToGPUOptions &options,
                             LowRankStatistics *statistics) {
  BlockTransform transform = getBlockTransform(op);
  std::string reason;
  FailureOr<LowRankKernelSpec> spec =
      getBlockTransformSpec(transform, options, reason);
  ModuleOp module = succeeded(spec) ? getModule(op, reason) : nullptr;
  if (!module) {
    op.emitRemark() << "lowrank left to the generic path: " << reason;
    return rewriter.notifyMatchFailure(op, reason);
  }
  if (statistics) {
    spec->inputMaxBlock = statistics->inputMaxBlock;
    spec->outputMax =
        statistics->outputMax ? OutputMax::Tensor : OutputMax::None;
    // Thread blocks loop over items, so that the partials stay few.
    spec->gridY = std::clamp<int64_t>(kMaxStatisticsPartials / spec->gridX(), 1,
                                      spec->numItems());
  }
  gpu::GPUModuleOp gpuModule =
      getOrCreateGPUModule(rewriter, module, options.gpuModuleName);
  Location loc = op.getLoc();
  gpu::GPUFuncOp kernel =
      launchBlockTransform(rewriter, transform, gpuModule, *spec, statistics);
  InFlightDiagnostic remark = mlir::emitRemark(loc);
  remark << "lowrank kernel @" << kernel.getName() << ": "
         << describeThreads(*spec) << " and block of " << spec->block
         << " tokens, " << spec->threads << " threads per block, grid "
         << spec->gridX() << "x" << spec->gridY << " over " << spec->numItems()
         << " (sample, token block) items; butterfly in registers in the CPU "
            "path's order, "
         << spec->rows.size() << " kept rows"
         << (spec->tail() ? ", tail copied" : "");
  if (spec->inputMaxBlock > 0)
    remark << "; also the max|"
           << (spec->inputMaxBlock > 1
                   ? "hadamard along the channels (block " +
                         std::to_string(spec->inputMaxBlock) + ")"
                   : std::string("x"))
           << "| of a per-tensor quantize of the same data";
  if (spec->outputMax != OutputMax::None)
    remark << "; also the max|y| of the per-tensor quantize of its result";
  if (spec->hasStatistics())
    remark << " (" << spec->numPartials() << " partials each)";
  return success();
}

LogicalResult
mlir::hot::lowerHadamardToGPU(RewriterBase &rewriter, HadamardOp op,
                              const TransformsToGPUOptions &options) {
  int64_t block = op.getBlock();
  BlockTransform transform{
      op,
      op.getInput(),
      int64_t(op.getDim()),
      block,
      [block] { return llvm::to_vector(llvm::seq<int64_t>(0, block)); },
      cast<RankedTensorType>(op.getType())};
  std::string reason = "block 1 is the identity";
  FailureOr<LowRankKernelSpec> spec = failure();
  if (block > 1)
    spec = getBlockTransformSpec(transform, options, reason);
  ModuleOp module = succeeded(spec) ? getModule(op, reason) : nullptr;
  if (!module) {
    op.emitRemark() << "hadamard left to the generic path: " << reason;
    return rewriter.notifyMatchFailure(op, reason);
  }
  gpu::GPUModuleOp gpuModule =
      getOrCreateGPUModule(rewriter, module, options.gpuModuleName);
  Location loc = op.getLoc();
  gpu::GPUFuncOp kernel = launchBlockTransform(rewriter, transform, gpuModule,
                                               *spec, /*statistics=*/nullptr);
  mlir::emitRemark(loc) << "hadamard kernel @" << kernel.getName() << ": "
                        << describeThreads(*spec) << " and block of " << block
                        << " along dim " << transform.dim
                        << ", butterfly in registers in the CPU path's order";
  return success();
}

static LowRankQuantization getQuantization(QuantizeOp op) {
  return {op.getQMax(), op.getRounding() == Rounding::Stochastic};
}

/// The transpose in `transposes` that the Quantize kernel `spec` can take
/// over for `output`: of its q, [outer * n', inner] s8, in the natural K
/// order or this projection's tails-last one. Null when there is none.
static OperandTransposeLaunch *
findFusableTranspose(OperandTransposes &transposes, QuantizeOp output,
                     const LowRankKernelSpec &spec, Operation *anchor) {
  OperandTransposeLaunch *transpose =
      findTransposeOf(transposes, output.getQ(), anchor);
  if (!transpose)
    return nullptr;
  const OperandTransposeSpec &layout = transpose->spec;
  if (layout.packS4 || layout.k != spec.outer * spec.projectedSize() ||
      layout.rows != spec.inner ||
      !(layout.order.isNatural() ||
        layout.order == spec.getKOrder(/*tailsLast=*/true)))
    return nullptr;
  return transpose;
}

/// Launches the kernels that compute `transform`'s statistics and quantize
/// with them (see lowerLowRankAndQuantizesToGPU), before `anchor`, and
/// replaces the quantizes. `input` may be null. Returns the remark.
static FailureOr<std::string>
launchWithQuantizes(RewriterBase &rewriter, const BlockTransform &transform,
                    QuantizeOp input, QuantizeOp output, Operation *anchor,
                    const TransformsToGPUOptions &options,
                    OperandTransposes &transposes) {
  Operation *op = transform.op;
  std::string reason;
  FailureOr<LowRankKernelSpec> spec =
      getBlockTransformSpec(transform, options, reason);
  ModuleOp module = succeeded(spec) ? getModule(op, reason) : nullptr;
  if (!module)
    return failure();
  // What the input quantize's kernel would have read: its block, and the
  // hadamard op to erase once unused.
  QuantizeSource inputSource;
  if (input)
    inputSource = getQuantizeSource(input, options);
  int64_t hadamardBlock = input ? inputSource.block : int64_t(0);
  bool column = output.getGranularity() == Granularity::PerCol;

  LowRankKernelSpec stats = *spec;
  stats.stage = LowRankStage::Statistics;
  stats.inputMaxBlock = hadamardBlock;
  stats.outputMax = column ? OutputMax::Column : OutputMax::Tensor;
  stats.gridY = std::clamp<int64_t>(kMaxStatisticsPartials / stats.gridX(), 1,
                                    stats.numItems());
  LowRankKernelSpec quantize = *spec;
  quantize.stage = LowRankStage::Quantize;
  // Per tensor, one channel per thread: the quantize kernel keeps a block's
  // tokens of each of its channels in registers with both quantizations'
  // work, and 4 channels took 127 registers (2 blocks of 256 threads per SM,
  // latency bound); 1 takes 60 (4 blocks; 40 since quantizing multiplies
  // by a reciprocal). On an H200 this kernel of ViT-B fc1's gy ran in 142 us
  // against 169 (qkv's: 109 against 171), x's in 21 against 24
  // (bench/RESULTS.md); the Statistics kernel, with few registers, keeps 4
  // (vector loads). Per channel (LQS), not measured yet, keeps the vector
  // width. quantize-channels-per-thread overrides both, for measurements.
  int64_t width = column ? quantize.vectorWidth : 1;
  if (int64_t requested = options.quantizeChannelsPerThread; requested > 0) {
    if (quantize.inner % requested == 0)
      width = requested;
    else
      op->emitRemark() << "quantize-channels-per-thread=" << requested
                       << " does not divide the " << quantize.inner
                       << " channels: the quantize kernel keeps " << width;
  }
  setChannelsPerThread(quantize, width);
  quantize.inputMaxBlock = hadamardBlock;
  quantize.outputMax = stats.outputMax;
  quantize.statisticsGridX = stats.gridX();
  quantize.statisticsGridY = stats.gridY;
  if (input)
    quantize.inputQuantization = getQuantization(input);
  quantize.outputQuantization = getQuantization(output);
  LowRankKernelSpec scales = quantize;
  scales.stage = LowRankStage::Scales;
  scales.gridY = 1;
  // The product's operand written K-contiguous, instead of y's q and a
  // transpose of it.
  OperandTransposeLaunch *transpose =
      options.writeOperandsKMajor
          ? findFusableTranspose(transposes, output, quantize, anchor)
          : nullptr;
  std::string transposeName;
  if (transpose) {
    quantize.outputKBytes = transpose->spec.kBytes;
    quantize.outputKOrder = quantize.getKOrder(transpose->spec.order.tailsLast);
    transposeName = transpose->spec.getKernelName();
  }

  stats.minBlocksPerSM = getMinBlocksPerSM(stats, options.chip);
  quantize.minBlocksPerSM = getMinBlocksPerSM(quantize, options.chip);
  int64_t sms = getSMCount(options.smCount, options.chip);
  quantize.gridY = chooseQuantizeGridY(quantize, quantize.minBlocksPerSM * sms);

  gpu::GPUModuleOp gpuModule =
      getOrCreateGPUModule(rewriter, module, options.gpuModuleName);
  Location loc = op->getLoc();
  gpu::GPUFuncOp statsKernel =
      buildLowRankKernel(rewriter, loc, gpuModule, stats);
  gpu::GPUFuncOp scalesKernel =
      column ? buildLowRankKernel(rewriter, loc, gpuModule, scales) : nullptr;
  gpu::GPUFuncOp quantizeKernel =
      buildLowRankKernel(rewriter, loc, gpuModule, quantize);

  rewriter.setInsertionPoint(anchor);
  SmallVector<int64_t> inShape{spec->outer, spec->n, spec->inner};
  SmallVector<int64_t> outShape{spec->outer, spec->projectedSize(),
                                spec->inner};
  Value x = toKernelInput(rewriter, loc, transform, *spec);
  Type f32 = rewriter.getF32Type(), i8 = rewriter.getI8Type();
  auto allocate = [&](ArrayRef<int64_t> shape, Type element) {
    return allocateKernelOutput(rewriter, loc, MemRefType::get(shape, element));
  };
  auto launch = [&](gpu::GPUFuncOp kernel, const LowRankKernelSpec &spec,
                    ValueRange args) {
    launchKernel(rewriter, loc, kernel, {spec.gridX(), spec.gridY},
                 spec.threads, args);
  };
  SmallVector<Value> statsArgs{x}, quantizeArgs{x};
  Value qIn, scaleIn;
  if (input) {
    Value partials = allocate({stats.numPartials()}, f32);
    qIn = allocate(inShape, i8);
    scaleIn = allocate({}, f32);
    statsArgs.push_back(partials);
    quantizeArgs.append({partials, qIn, scaleIn});
  }
  Value outPartials = column ? allocate({stats.gridY, spec->inner}, f32)
                             : allocate({stats.numPartials()}, f32);
  statsArgs.push_back(outPartials);
  Value qOut;
  if (transpose) {
    // q's only reader was the transpose: this kernel writes its result.
    qOut = takeOverTranspose(rewriter, transposes, transpose, anchor);
  } else {
    qOut = allocate(outShape, i8);
  }
  Value scaleOut = column ? allocate({spec->inner}, f32) : allocate({}, f32);
  if (!column)
    quantizeArgs.push_back(outPartials);
  quantizeArgs.append({qOut, scaleOut});
  for (QuantizeOp q : {input, output})
    if (q)
      if (Value seed = q.getSeed())
        quantizeArgs.push_back(seed);
  launch(statsKernel, stats, statsArgs);
  if (column)
    launch(scalesKernel, scales, {outPartials, scaleOut});
  launch(quantizeKernel, quantize, quantizeArgs);

  auto replace = [&](QuantizeOp q, Value qBuffer, Value scale) {
    Value values =
        reshapeTo(rewriter, loc, getKernelResult(rewriter, loc, qBuffer),
                  cast<RankedTensorType>(q.getQ().getType()));
    rewriter.replaceOp(q, {values, getKernelResult(rewriter, loc, scale)});
  };
  if (input) {
    HadamardOp hadamard = inputSource.hadamard;
    replace(input, qIn, scaleIn);
    if (hadamard && hadamard->use_empty())
      rewriter.eraseOp(hadamard);
  }
  if (!transposeName.empty()) { // q is read by nothing now.
    rewriter.replaceAllUsesWith(output.getScale(),
                                getKernelResult(rewriter, loc, scaleOut));
    rewriter.eraseOp(output);
  } else {
    replace(output, qOut, scaleOut);
  }

  std::string remark;
  llvm::raw_string_ostream os(remark);
  os << "@" << statsKernel.getName() << " (" << describeThreads(*spec) << "; ";
  if (input)
    os << "max|hadamard along the channels (block " << hadamardBlock << ")|, "
       << stats.numPartials() << " partials; ";
  if (column)
    os << "max|" << (transform.block == 1 ? "x" : "y")
       << "| per channel, a row of partials per block row (" << stats.gridY
       << ")), @" << scalesKernel.getName() << " (the per-channel scales)";
  else
    os << "max|" << (transform.block == 1 ? "x" : "y") << "|, "
       << stats.numPartials() << " partials)";
  bool identity = transform.block == 1;
  os << " then @" << quantizeKernel.getName() << " (quantizes "
     << (input ? "the hadamard and " : "") << (identity ? "x" : "y")
     << " with the CPU path's rounding"
     << (identity ? "" : "; y never reaches memory") << "; grid "
     << quantize.gridX() << "x" << quantize.gridY << " over "
     << quantize.numItems() << " items";
  if (int64_t perSM = quantize.minBlocksPerSM)
    os << ", for " << perSM * sms << " blocks at once (" << perSM
       << " per SM on " << sms << " SMs)";
  os << ")";
  if (!transposeName.empty()) {
    os << "; it writes the q of " << (identity ? "x" : "y") << " as the "
       << "product's K-contiguous operand [" << spec->inner << "]["
       << quantize.outputKBytes << "] i8";
    if (quantize.outputKOrder.tailsLast)
      os << " in tails-last K order";
    os << ", in place of @" << transposeName;
  }
  return remark;
}

LogicalResult mlir::hot::lowerLowRankAndQuantizesToGPU(
    RewriterBase &rewriter, LowRankOp op, QuantizeOp input, QuantizeOp output,
    Operation *anchor, const TransformsToGPUOptions &options,
    OperandTransposes &transposes) {
  BlockTransform transform = getBlockTransform(op);
  Location loc = op.getLoc();
  FailureOr<std::string> remark = launchWithQuantizes(
      rewriter, transform, input, output, anchor, options, transposes);
  if (failed(remark))
    return failure();
  // The projection's result, through its reshapes, fed only the output
  // quantize.
  SmallVector<Operation *> dead{op};
  for (Value v = op.getResult(); v.hasOneUse();) {
    Operation *user = *v.getUsers().begin();
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user))
      break;
    dead.push_back(user);
    v = user->getResult(0);
  }
  for (Operation *d : llvm::reverse(dead))
    if (d->use_empty())
      rewriter.eraseOp(d);
  mlir::emitRemark(loc) << "lowrank and the quantizes of "
                        << (input ? "its input's hadamard and of " : "")
                        << "its result in one pass over the data after a "
                           "statistics pass: "
                        << *remark;
  return success();
}

LogicalResult
mlir::hot::lowerPerColumnQuantizeToGPU(RewriterBase &rewriter, QuantizeOp op,
                                       const TransformsToGPUOptions &options) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  BlockTransform transform{op, op.getInput(), 0, 1, keepRowZero, type};
  Location loc = op.getLoc();
  FailureOr<std::string> remark;
  OperandTransposes none;
  if (type.hasStaticShape() && type.getNumElements() != 0)
    remark = launchWithQuantizes(rewriter, transform, nullptr, op, op, options,
                                 none);
  if (failed(remark)) {
    mlir::emitRemark(loc) << "per_col quantize left to the generic path: the "
                             "kernels are specialized to static, non-empty "
                             "f32 matrices";
    return failure();
  }
  mlir::emitRemark(loc) << "per_col quantize: " << *remark;
  return success();
}

LogicalResult
mlir::hot::lowerQuantizePairToGPU(RewriterBase &rewriter, QuantizeOp input,
                                  QuantizeOp output, Operation *anchor,
                                  const TransformsToGPUOptions &options,
                                  OperandTransposes &transposes) {
  auto type = cast<RankedTensorType>(output.getInput().getType());
  if (!type.hasStaticShape() || type.getNumElements() == 0)
    return failure();
  BlockTransform transform{output, output.getInput(), 0, 1, keepRowZero, type};
  Location loc = output.getLoc();
  FailureOr<std::string> remark = launchWithQuantizes(
      rewriter, transform, input, output, anchor, options, transposes);
  if (failed(remark))
    return failure();
  mlir::emitRemark(loc) << "this quantize and the one of the same data's "
                           "hadamard in one pass over it after a statistics "
                           "pass: "
                        << *remark;
  return success();
}
