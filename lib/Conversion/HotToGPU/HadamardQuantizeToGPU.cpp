//===- HadamardQuantizeToGPU.cpp - Launch the fused hadamard+quantize -----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/TransformKernels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::hot;

/// Rows (warps) per thread block.
static constexpr int64_t kWarpsPerBlock = 8;
/// Most thread blocks of the per-tensor max kernel (its partials are read by
/// every warp of the quantize kernel, so they are kept few).
static constexpr int64_t kMaxAbsMaxBlocks = 64;

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

LogicalResult
mlir::hot::lowerHadamardQuantizeToGPU(RewriterBase &rewriter, QuantizeOp op,
                                      const TransformsToGPUOptions &options) {
  auto leave = [&](const Twine &why) {
    op.emitRemark() << "quantize left to the generic path: " << why;
    return rewriter.notifyMatchFailure(op, why);
  };
  Granularity granularity = op.getGranularity();
  if (granularity == Granularity::PerCol)
    return leave("per_col scales reduce across rows, and the fused kernel "
                 "gives each warp whole rows");
  auto type = cast<RankedTensorType>(op.getInput().getType());
  if (!type.hasStaticShape() || type.getNumElements() == 0)
    return leave("the kernel is specialized to static, non-empty shapes");

  // The Hadamard transform to fuse: along the rows' contiguous dim only.
  // Another one stays a separate op (the generic path) and the kernel
  // quantizes its result.
  Value source = op.getInput();
  int64_t block = 1;
  auto hadamard = source.getDefiningOp<HadamardOp>();
  if (hadamard && hadamard.getBlock() > 1 && hadamard.getDim() != 1) {
    op.emitRemark() << "hadamard along dim 0 (across rows) does not map onto "
                       "lanes of one row: not fused, the kernel quantizes "
                       "its result";
    hadamard = nullptr;
  }
  if (hadamard && hadamard.getBlock() > 1) {
    source = hadamard.getInput();
    block = hadamard.getBlock();
  }
  int64_t m = type.getDimSize(0), n = type.getDimSize(1);

  HadamardQuantizeKernelSpec spec;
  spec.m = m;
  spec.n = n;
  spec.block = block;
  spec.qmax = op.getQMax();
  spec.stochastic = op.getRounding() == Rounding::Stochastic;
  spec.sawb = op.getScaleMode() == ScaleMode::Sawb;
  spec.vectorWidth = n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1;
  spec.warpsPerBlock = kWarpsPerBlock;
  int64_t maxBlock =
      std::min<int64_t>(32 * spec.vectorWidth, options.maxHadamardBlock);
  if (block > maxBlock) {
    op.emitRemark() << "hadamard block " << block
                    << " spans more than one warp (at most " << maxBlock
                    << " for rows of " << n
                    << "): not fused, the kernel quantizes its result";
    hadamard = nullptr;
    source = op.getInput();
    spec.block = block = 1;
  }
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
  Value x = toBuffer(rewriter, loc, source);
  auto qType = MemRefType::get({m, n}, rewriter.getI8Type());
  Value q = allocate(rewriter, loc, qType);
  auto scaleTensorType = cast<RankedTensorType>(op.getScale().getType());
  Value scale = allocate(
      rewriter, loc,
      MemRefType::get(scaleTensorType.getShape(), rewriter.getF32Type()));
  Value seed = op.getSeed();
  std::string transform =
      block > 1 ? "hadamard (block " + std::to_string(block) + ") + " : "";
  std::string lanes = block > spec.vectorWidth
                          ? "butterfly stages below " +
                                std::to_string(spec.vectorWidth) +
                                " in registers, the others by gpu.shuffle xor; "
                          : "";
  if (granularity == Granularity::PerRow) {
    spec.stage = HadamardQuantizeStage::Row;
    gpu::GPUFuncOp kernel =
        buildHadamardQuantizeKernel(rewriter, loc, gpuModule, spec);
    SmallVector<Value> args{x, q, scale};
    if (seed)
      args.push_back(seed);
    launch(kernel, rowBlocks, args);
    op.emitRemark() << "fused " << transform << "per_row quantize"
                    << (spec.sawb ? " (sawb)" : "") << " kernel @"
                    << kernel.getName()
                    << ": one warp per row, " << kWarpsPerBlock
                    << " rows per block; " << lanes
                    << "row max|y| by a warp shuffle reduction"
                    << (spec.sawb ? ", its f64 sums in element order by "
                                    "gpu.shuffle idx"
                                  : "")
                    << ", the row transformed again to quantize";
  } else {
    // Statistics, [SAWB: the scale,] then the quantize kernel. SAWB's row
    // sums have long chains: one row per warp for them; a maxabs scale
    // needs few partials, every quantize warp reduces them.
    spec.absMaxBlocks =
        spec.sawb ? rowBlocks : std::min(rowBlocks, kMaxAbsMaxBlocks);
    auto build = [&](HadamardQuantizeStage stage) {
      spec.stage = stage;
      return buildHadamardQuantizeKernel(rewriter, loc, gpuModule, spec);
    };
    gpu::GPUFuncOp stats = build(HadamardQuantizeStage::AbsMax);
    gpu::GPUFuncOp scaleKernel =
        spec.sawb ? build(HadamardQuantizeStage::Scale) : nullptr;
    gpu::GPUFuncOp quantize = build(HadamardQuantizeStage::Tensor);
    Value partials =
        allocate(rewriter, loc,
                 MemRefType::get({spec.numPartials()}, rewriter.getF32Type()));
    SmallVector<Value> args{x, partials};
    if (spec.sawb) {
      Value rowSums = allocate(
          rewriter, loc, MemRefType::get({2, m}, rewriter.getF64Type()));
      launch(stats, spec.absMaxBlocks, ValueRange{x, partials, rowSums});
      launch(scaleKernel, 1, ValueRange{partials, rowSums, scale},
             /*warps=*/1);
      args = {x};
    } else {
      launch(stats, spec.absMaxBlocks, args);
    }
    args.append({q, scale});
    if (seed)
      args.push_back(seed);
    launch(quantize, rowBlocks, args);
    InFlightDiagnostic remark = op.emitRemark();
    if (spec.sawb)
      remark << "fused " << transform << "per_tensor sawb quantize: three "
             << "kernels, @" << stats.getName()
             << " (one warp per row: its max|y| and its f64 sums in element "
                "order), @"
             << scaleKernel.getName()
             << " (one warp: the max, and the row sums added in row order, "
                "to the scale) and @"
             << quantize.getName() << " (quantizes one row per warp); "
             << lanes << "the transform is computed in the first and the last";
    else
      remark << "fused " << transform << "per_tensor quantize: two kernels, @"
             << stats.getName() << " (one partial max|y| per warp over a "
             << "grid-stride of rows, " << spec.numPartials()
             << " partials) then @" << quantize.getName()
             << " (every warp reduces the partials to the scale, then "
                "quantizes one row); "
             << lanes << "the transform is computed in both kernels";
  }
  rewriter.replaceOp(
      op, {toTensor(rewriter, loc, q), toTensor(rewriter, loc, scale)});
  if (hadamard && hadamard->use_empty())
    rewriter.eraseOp(hadamard);
  return success();
}
