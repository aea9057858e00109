//===- HadamardQuantizeToGPU.cpp - Launch the fused hadamard+quantize -----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "TransformMath.h"
#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/TransformKernels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::hot;

/// Rows (warps) per thread block.
static constexpr int64_t kWarpsPerBlock = 8;
/// Rows per thread block of a per-row kernel that keeps its rows in
/// registers: with 128 to 168 registers per thread, 4 or 3 blocks of 4 warps
/// share an SM where blocks of 8 would fit twice or once.
static constexpr int64_t kRowInRegistersWarpsPerBlock = 4;
/// Most warps of the per-tensor maxabs max kernel, one partial each (every
/// warp of the quantize kernel reads them all, so they are kept few), and
/// its warps per block: 4, so that those warps spread over 128 SMs (blocks
/// of 8 left half of an H200's 132 SMs idle).
static constexpr int64_t kMaxAbsMaxPartials = 512;
static constexpr int64_t kAbsMaxWarpsPerBlock = 4;

static Value toBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

static Value toTensor(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get(type.getShape(), type.getElementType()),
      buffer, /*restrict=*/true, /*writable=*/true);
}

static Value allocate(OpBuilder &b, Location loc, MemRefType type) {
  return memref::AllocOp::create(b, loc, type, b.getI64IntegerAttr(64));
}

QuantizeSource
mlir::hot::getQuantizeSource(QuantizeOp op,
                             const TransformsToGPUOptions &options,
                             bool columns) {
  QuantizeSource result;
  result.source = op.getInput();
  auto hadamard = op.getInput().getDefiningOp<HadamardOp>();
  if (!hadamard || hadamard.getBlock() == 1)
    return result;
  if (hadamard.getDim() != 1) {
    int64_t block = hadamard.getBlock();
    if (!columns || !options.fuseColumnHadamard ||
        block > options.maxLowRankBlock) {
      if (!columns)
        result.notFused = "hadamard along dim 0 (across rows) does not map "
                          "onto lanes of one row: not fused, the kernel "
                          "quantizes its result";
      else if (!options.fuseColumnHadamard)
        result.notFused = "hadamard along dim 0 not fused "
                          "(fuse-column-hadamard=false): the kernel quantizes "
                          "its result";
      else
        result.notFused = "hadamard along dim 0 with block " +
                          std::to_string(block) + " (more rows than the " +
                          std::to_string(options.maxLowRankBlock) +
                          " a thread holds): not fused, the kernel quantizes "
                          "its result";
      return result;
    }
    result.source = hadamard.getInput();
    result.columnBlock = block;
    result.hadamard = hadamard;
    return result;
  }
  int64_t n = cast<RankedTensorType>(op.getInput().getType()).getDimSize(1);
  int64_t maxBlock =
      std::min<int64_t>(32 * getVectorWidth(n), options.maxHadamardBlock);
  if (int64_t(hadamard.getBlock()) > maxBlock) {
    result.notFused = ("hadamard block " + Twine(hadamard.getBlock()) +
                       " spans more than one warp (at most " + Twine(maxBlock) +
                       " for rows of " + Twine(n) +
                       "): not fused, the kernel quantizes its result")
                          .str();
    return result;
  }
  result.source = hadamard.getInput();
  result.block = hadamard.getBlock();
  result.hadamard = hadamard;
  return result;
}

LogicalResult
mlir::hot::lowerHadamardQuantizeToGPU(RewriterBase &rewriter, QuantizeOp op,
                                      const TransformsToGPUOptions &options,
                                      const PartialMaxima *absMax) {
  auto leave = [&](const Twine &why) {
    op.emitRemark() << "quantize left to the generic path: " << why;
    return rewriter.notifyMatchFailure(op, why);
  };
  Granularity granularity = op.getGranularity();
  if (granularity == Granularity::PerCol) {
    if (op.getScaleMode() == ScaleMode::Sawb)
      return leave("per_col sawb scales have no kernel (per_col maxabs "
                   "does)");
    return lowerPerColumnQuantizeToGPU(rewriter, op, options);
  }
  auto type = cast<RankedTensorType>(op.getInput().getType());
  if (!type.hasStaticShape() || type.getNumElements() == 0)
    return leave("the kernel is specialized to static, non-empty shapes");

  // The Hadamard transform to fuse: along the rows' contiguous dim, within
  // a warp. Another one stays a separate op and the kernel quantizes its
  // result.
  QuantizeSource fused = getQuantizeSource(op, options, /*columns=*/true);
  if (!fused.notFused.empty())
    op.emitRemark() << fused.notFused;
  Value source = fused.source;
  int64_t block = fused.block;
  HadamardOp hadamard = fused.hadamard;
  int64_t m = type.getDimSize(0), n = type.getDimSize(1);

  HadamardQuantizeKernelSpec spec;
  spec.m = m;
  spec.n = n;
  spec.block = block;
  spec.columnBlock = fused.columnBlock;
  spec.qmax = op.getQMax();
  spec.stochastic = op.getRounding() == Rounding::Stochastic;
  spec.sawb = op.getScaleMode() == ScaleMode::Sawb;
  spec.vectorWidth = getVectorWidth(n);
  spec.warpsPerBlock = kWarpsPerBlock;
  spec.inputElementType = getKernelSourceElementType(source);
  int64_t rowBlocks = llvm::divideCeil(m, kWarpsPerBlock);

  Location loc = op.getLoc();
  ModuleOp module = op->getParentOfType<ModuleOp>();
  if (!module)
    return leave("no enclosing builtin.module for the kernels");
  gpu::GPUModuleOp gpuModule =
      getOrCreateGPUModule(rewriter, module, options.gpuModuleName);

  rewriter.setInsertionPoint(op);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  auto launch = [&](gpu::GPUFuncOp kernel, int64_t blocks, ValueRange args,
                    int64_t warps = kWarpsPerBlock) {
    gpu::LaunchFuncOp::create(
        rewriter, loc, kernel,
        gpu::KernelDim3{index(blocks), index(1), index(1)},
        gpu::KernelDim3{index(32 * warps), index(1), index(1)},
        /*dynamicSharedMemorySize=*/Value(), args);
  };
  Value x = toBuffer(rewriter, loc, getKernelSource(rewriter, loc, source));
  auto qType = MemRefType::get({m, n}, rewriter.getI8Type());
  Value q = allocate(rewriter, loc, qType);
  auto scaleTensorType = cast<RankedTensorType>(op.getScale().getType());
  Value scale = allocate(
      rewriter, loc,
      MemRefType::get(scaleTensorType.getShape(), rewriter.getF32Type()));
  Value seed = op.getSeed();
  std::string transform =
      block > 1 ? "hadamard (block " + std::to_string(block) + ") + " : "";
  if (spec.columnBlock > 1)
    transform = "hadamard along dim 0 (block " +
                std::to_string(spec.columnBlock) +
                ": each lane loads its values of the block's rows and runs "
                "the butterfly stages that lead to its row in registers) + ";
  std::string lanes = block > spec.vectorWidth
                          ? "butterfly stages below " +
                                std::to_string(spec.vectorWidth) +
                                " in registers, the others by gpu.shuffle xor; "
                          : "";
  // A quantize kernel keeps its row in registers where the row's values
  // fit (and W's column butterfly, 16 rows per value, does not apply).
  auto keepRowInRegisters = [&](HadamardQuantizeKernelSpec &s) {
    s.rowInRegisters =
        s.getLaneValues() <= options.maxRowValuesInRegisters &&
        (s.columnBlock == 1 || s.stage == HadamardQuantizeStage::Row);
    if (s.rowInRegisters)
      s.warpsPerBlock = kRowInRegistersWarpsPerBlock;
  };
  // The max kernel loads as many consecutive rows per step as fit that
  // budget (a power of two dividing m), all before transforming any.
  auto loadRowsAhead = [&](HadamardQuantizeKernelSpec &s) {
    int64_t laneValues = s.getLaneValues();
    if (s.columnBlock != 1 || laneValues > options.maxRowValuesInRegisters)
      return;
    s.rowInRegisters = true;
    while (2 * s.rowsPerStep * laneValues <= options.maxRowValuesInRegisters &&
           m % (2 * s.rowsPerStep) == 0)
      s.rowsPerStep *= 2;
  };
  // How a Tensor kernel gets its scale and its row, for the remarks.
  auto tensorQuantize = [&](const Twine &scaleFrom) -> std::string {
    if (!spec.rowInRegisters)
      return (scaleFrom + ", then quantizes one row").str();
    return ("one row per warp, its loads issued before " + scaleFrom).str();
  };
  if (granularity == Granularity::PerRow) {
    spec.stage = HadamardQuantizeStage::Row;
    int64_t laneValues = spec.getLaneValues();
    keepRowInRegisters(spec);
    gpu::GPUFuncOp kernel =
        buildHadamardQuantizeKernel(rewriter, loc, gpuModule, spec);
    SmallVector<Value> args{x, q, scale};
    if (seed)
      args.push_back(seed);
    launch(kernel, llvm::divideCeil(m, spec.warpsPerBlock), args,
           spec.warpsPerBlock);
    op.emitRemark() << "fused " << transform << "per_row quantize"
                    << (spec.sawb ? " (sawb)" : "") << " kernel @"
                    << kernel.getName() << ": one warp per row, "
                    << spec.warpsPerBlock << " rows per block; " << lanes
                    << "row max|y| by a warp shuffle reduction"
                    << (spec.sawb ? ", its f64 sums in 128 partials (4 per "
                                    "lane) and a shuffle tree"
                                  : "")
                    << (spec.rowInRegisters
                            ? ", the row kept in registers to quantize (" +
                                  Twine(laneValues) +
                                  " values per lane, read once)"
                            : ", the row transformed again to quantize (" +
                                  Twine(laneValues) +
                                  " values per lane; at most " +
                                  Twine(options.maxRowValuesInRegisters) +
                                  " are kept in registers)");
  } else if (absMax && !spec.sawb) {
    // The partials come from the kernel that computed them on its way.
    spec.stage = HadamardQuantizeStage::Tensor;
    spec.numPartials = absMax->count;
    keepRowInRegisters(spec);
    gpu::GPUFuncOp quantize =
        buildHadamardQuantizeKernel(rewriter, loc, gpuModule, spec);
    SmallVector<Value> args{x, absMax->partials, q, scale};
    if (seed)
      args.push_back(seed);
    launch(quantize, llvm::divideCeil(m, spec.warpsPerBlock), args,
           spec.warpsPerBlock);
    op.emitRemark() << "fused " << transform << "per_tensor quantize: one "
                    << "kernel, @" << quantize.getName() << " ("
                    << tensorQuantize("the warp reduces the " +
                                      Twine(absMax->count) +
                                      " partial max|y| that @" +
                                      absMax->producer + " stored")
                    << "); " << lanes << "no pass of its own for the max";
  } else {
    // Statistics, [SAWB: the scale,] then the quantize kernel. SAWB's row
    // sums have long chains: one row per warp for them; a maxabs scale
    // needs few partials, every quantize warp reduces them.
    HadamardQuantizeKernelSpec absMaxSpec = spec;
    absMaxSpec.stage = HadamardQuantizeStage::AbsMax;
    int64_t absMaxBlocks = rowBlocks;
    if (!spec.sawb) {
      loadRowsAhead(absMaxSpec);
      absMaxSpec.warpsPerBlock = kAbsMaxWarpsPerBlock;
      absMaxBlocks = llvm::divideCeil(
          std::min<int64_t>(llvm::divideCeil(m, absMaxSpec.rowsPerStep),
                            kMaxAbsMaxPartials),
          kAbsMaxWarpsPerBlock);
    }
    spec.numPartials = absMaxSpec.numPartials =
        absMaxBlocks * absMaxSpec.warpsPerBlock;
    gpu::GPUFuncOp stats =
        buildHadamardQuantizeKernel(rewriter, loc, gpuModule, absMaxSpec);
    spec.stage = HadamardQuantizeStage::Scale;
    gpu::GPUFuncOp scaleKernel =
        spec.sawb ? buildHadamardQuantizeKernel(rewriter, loc, gpuModule, spec)
                  : nullptr;
    spec.stage = HadamardQuantizeStage::Tensor;
    keepRowInRegisters(spec);
    gpu::GPUFuncOp quantize =
        buildHadamardQuantizeKernel(rewriter, loc, gpuModule, spec);
    Value partials =
        allocate(rewriter, loc,
                 MemRefType::get({spec.numPartials}, rewriter.getF32Type()));
    SmallVector<Value> args{x, partials};
    if (spec.sawb) {
      Value rowSums = allocate(
          rewriter, loc, MemRefType::get({2, m}, rewriter.getF64Type()));
      launch(stats, absMaxBlocks, ValueRange{x, partials, rowSums});
      launch(scaleKernel, 1, ValueRange{partials, rowSums, scale},
             /*warps=*/1);
      args = {x};
    } else {
      launch(stats, absMaxBlocks, args, absMaxSpec.warpsPerBlock);
    }
    args.append({q, scale});
    if (seed)
      args.push_back(seed);
    launch(quantize, llvm::divideCeil(m, spec.warpsPerBlock), args,
           spec.warpsPerBlock);
    InFlightDiagnostic remark = op.emitRemark();
    if (spec.sawb)
      remark << "fused " << transform << "per_tensor sawb quantize: three "
             << "kernels, @" << stats.getName()
             << " (one warp per row: its max|y| and its f64 sums in 128 "
                "partials and a shuffle tree), @"
             << scaleKernel.getName()
             << " (one warp: the max, and the row sums in 32 partials and a "
                "shuffle tree, to the scale) and @"
             << quantize.getName() << " ("
             << tensorQuantize("the warp reads the scale") << "); " << lanes
             << "the transform is computed in the first and the last";
    else
      remark << "fused " << transform << "per_tensor quantize: two kernels, @"
             << stats.getName() << " (one partial max|y| per warp over a "
             << "grid-stride of "
             << (absMaxSpec.rowsPerStep > 1
                     ? "steps of " + Twine(absMaxSpec.rowsPerStep) +
                           " rows, each step's loads issued together"
                 : absMaxSpec.rowInRegisters
                     ? Twine("rows, each row's loads issued together")
                     : Twine("rows"))
             << ", " << spec.numPartials << " partials) then @"
             << quantize.getName() << " ("
             << tensorQuantize("the warp reduces the partials to the scale")
             << "); " << lanes << "the transform is computed in both kernels";
  }
  rewriter.replaceOp(
      op, {toTensor(rewriter, loc, q), toTensor(rewriter, loc, scale)});
  if (hadamard && hadamard->use_empty())
    rewriter.eraseOp(hadamard);
  return success();
}
