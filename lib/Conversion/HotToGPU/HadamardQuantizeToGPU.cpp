//===- HadamardQuantizeToGPU.cpp - Launch the fused hadamard+quantize -----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "KernelLaunch.h"
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

/// Columns per thread of the column-block kernels whose loads go out
/// together: 64 values of W's blocks of 16 rows.
static constexpr int64_t kColumnValuesAhead = 64;

/// Replaces `op`, a per-tensor quantize of `fused`, a hadamard along dim 0,
/// by the column-block kernels (ColumnQuantizeKernelSpec). When q's only
/// reader is the transpose of a product's operand in `transposes`, the
/// quantize kernel writes that operand instead.
static void lowerColumnQuantize(RewriterBase &rewriter, QuantizeOp op,
                                const QuantizeSource &fused,
                                gpu::GPUModuleOp gpuModule,
                                OperandTransposes *transposes) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  ColumnQuantizeKernelSpec spec;
  spec.m = type.getDimSize(0);
  spec.n = type.getDimSize(1);
  spec.block = fused.columnBlock;
  spec.qmax = op.getQMax();
  spec.stochastic = op.getRounding() == Rounding::Stochastic;
  spec.sawb = op.getScaleMode() == ScaleMode::Sawb;
  spec.columnsAhead = std::max<int64_t>(1, kColumnValuesAhead / spec.block);
  spec.inputElementType = getKernelSourceElementType(fused.source);

  // The product's operand written K-contiguous: exactly the column's m
  // values (or m / 2 bytes, packed s4) per row, in the natural K order.
  OperandTransposeLaunch *transpose =
      transposes ? findTransposeOf(*transposes, op.getQ(), op) : nullptr;
  if (transpose) {
    const OperandTransposeSpec &layout = transpose->spec;
    if (layout.k != spec.m || layout.rows != spec.n ||
        !layout.order.isNatural() ||
        layout.kBytes != (layout.packS4 ? spec.m / 2 : spec.m))
      transpose = nullptr;
  }
  ColumnQuantizeKernelSpec stats = spec;
  spec.stage = ColumnQuantizeStage::Quantize;
  std::string transposeName;
  if (transpose) {
    spec.kBytes = transpose->spec.kBytes;
    spec.packS4 = transpose->spec.packS4;
    transposeName = transpose->spec.getKernelName();
  }
  Location loc = op.getLoc();
  gpu::GPUFuncOp statsKernel =
      buildColumnQuantizeKernel(rewriter, loc, gpuModule, stats);
  gpu::GPUFuncOp quantizeKernel =
      buildColumnQuantizeKernel(rewriter, loc, gpuModule, spec);

  rewriter.setInsertionPoint(op);
  Value x = getKernelInput(rewriter, loc,
                           getKernelSource(rewriter, loc, fused.source));
  SmallVector<Value> args{
      x, allocateKernelOutput(
             rewriter, loc,
             MemRefType::get({spec.numPartials()}, rewriter.getF32Type()))};
  if (spec.sawb)
    args.push_back(allocateKernelOutput(
        rewriter, loc, MemRefType::get({2, spec.m}, rewriter.getF64Type())));
  launchKernel(rewriter, loc, statsKernel, {spec.numBlocks()},
               kColumnQuantizeThreads, args);
  Value q = transpose
                ? takeOverTranspose(rewriter, *transposes, transpose, op)
                : allocateKernelOutput(
                      rewriter, loc,
                      MemRefType::get({spec.m, spec.n}, rewriter.getI8Type()));
  Value scale = allocateKernelOutput(
      rewriter, loc, MemRefType::get({}, rewriter.getF32Type()));
  args.append({q, scale});
  if (Value seed = op.getSeed())
    args.push_back(seed);
  launchKernel(rewriter, loc, quantizeKernel, {spec.numBlocks()},
               kColumnQuantizeThreads, args);

  InFlightDiagnostic remark = op.emitRemark();
  remark << "fused hadamard along dim 0 (block " << spec.block << ") + "
         << "per_tensor " << (spec.sawb ? "sawb " : "")
         << "quantize: two kernels of " << spec.numBlocks()
         << " blocks, one per block of rows, thread t owning columns t, t + "
         << kColumnQuantizeThreads
         << ", ... and running their butterflies in registers (the input "
            "read once by each), @"
         << statsKernel.getName() << " (max|y| per warp"
         << (spec.sawb ? "; each row's f64 sums, partial t in thread t, the "
                         "tree in shared memory"
                       : "")
         << ") then @" << quantizeKernel.getName()
         << " (its first warp reduces them to the scale while the first "
         << spec.columnsAhead << " columns' loads are in flight)";
  if (!transposeName.empty())
    remark << "; it writes q as the product's K-contiguous operand [" << spec.n
           << "][" << spec.kBytes << "] i8"
           << (spec.packS4 ? " (s4, two per byte)" : "") << ", in place of @"
           << transposeName;

  Value scaleTensor = getKernelResult(rewriter, loc, scale);
  if (!transposeName.empty()) { // q is read by nothing now.
    rewriter.replaceAllUsesWith(op.getScale(), scaleTensor);
    rewriter.eraseOp(op);
  } else {
    rewriter.replaceOp(op, {getKernelResult(rewriter, loc, q), scaleTensor});
  }
  if (fused.hadamard->use_empty())
    rewriter.eraseOp(fused.hadamard);
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
                                      const PartialMaxima *absMax,
                                      OperandTransposes *transposes) {
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
  Location loc = op.getLoc();
  ModuleOp module = op->getParentOfType<ModuleOp>();
  if (!module)
    return leave("no enclosing builtin.module for the kernels");
  gpu::GPUModuleOp gpuModule =
      getOrCreateGPUModule(rewriter, module, options.gpuModuleName);
  if (granularity == Granularity::PerTensor && fused.columnBlock > 1 &&
      !absMax) {
    lowerColumnQuantize(rewriter, op, fused, gpuModule,
                        options.writeOperandsKMajor ? transposes : nullptr);
    return success();
  }

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

  rewriter.setInsertionPoint(op);
  auto launchWarps = [&](gpu::GPUFuncOp kernel, int64_t blocks, ValueRange args,
                         int64_t warps = kWarpsPerBlock) {
    launchKernel(rewriter, loc, kernel, {blocks}, kWarpSize * warps, args);
  };
  Value x =
      getKernelInput(rewriter, loc, getKernelSource(rewriter, loc, source));
  auto qType = MemRefType::get({m, n}, rewriter.getI8Type());
  Value q = allocateKernelOutput(rewriter, loc, qType);
  auto scaleTensorType = cast<RankedTensorType>(op.getScale().getType());
  Value scale = allocateKernelOutput(
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
  // fit. (Per tensor, a hadamard along dim 0 has the column-block kernels.)
  assert(granularity == Granularity::PerRow || spec.columnBlock == 1);
  auto keepRowInRegisters = [&](HadamardQuantizeKernelSpec &s) {
    s.rowInRegisters = s.getLaneValues() <= options.maxRowValuesInRegisters;
    if (s.rowInRegisters)
      s.warpsPerBlock = kRowInRegistersWarpsPerBlock;
  };
  // The max kernel loads as many consecutive rows per step as fit that
  // budget (a power of two dividing m), all before transforming any.
  auto loadRowsAhead = [&](HadamardQuantizeKernelSpec &s) {
    int64_t laneValues = s.getLaneValues();
    if (laneValues > options.maxRowValuesInRegisters)
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
    launchWarps(kernel, llvm::divideCeil(m, spec.warpsPerBlock), args,
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
    launchWarps(quantize, llvm::divideCeil(m, spec.warpsPerBlock), args,
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
    Value partials = allocateKernelOutput(
        rewriter, loc,
        MemRefType::get({spec.numPartials}, rewriter.getF32Type()));
    SmallVector<Value> args{x, partials};
    if (spec.sawb) {
      Value rowSums = allocateKernelOutput(
          rewriter, loc, MemRefType::get({2, m}, rewriter.getF64Type()));
      launchWarps(stats, absMaxBlocks, ValueRange{x, partials, rowSums});
      launchWarps(scaleKernel, 1, ValueRange{partials, rowSums, scale},
                  /*warps=*/1);
      args = {x};
    } else {
      launchWarps(stats, absMaxBlocks, args, absMaxSpec.warpsPerBlock);
    }
    args.append({q, scale});
    if (seed)
      args.push_back(seed);
    launchWarps(quantize, llvm::divideCeil(m, spec.warpsPerBlock), args,
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
  rewriter.replaceOp(op, {getKernelResult(rewriter, loc, q),
                          getKernelResult(rewriter, loc, scale)});
  if (hadamard && hadamard->use_empty())
    rewriter.eraseOp(hadamard);
  return success();
}
