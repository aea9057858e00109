//===- IntMatmulToGPU.cpp - Launch the tensor-core kernel for int_matmul --===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "KernelLaunch.h"
#include "hot/Conversion/HotToGPU.h"
#include "hot/Dialect/Hot/HotOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/FormatVariadic.h"

#include <tuple>

using namespace mlir;
using namespace mlir::hot;

/// Whether `value` is the q result of a hot.quantize on a grid of at most 4
/// bits (|q| <= 7, so it fits an s4 nibble).
static bool isOn4BitGrid(Value value) {
  auto quantize = value.getDefiningOp<QuantizeOp>();
  return quantize && quantize.getQ() == value && quantize.getBits() <= 4;
}

/// The `hot.rescale` to fuse: the product's only user, reading it as `acc`.
static RescaleOp getFusableRescale(IntMatmulOp op) {
  if (!op->hasOneUse())
    return nullptr;
  auto rescale = dyn_cast<RescaleOp>(*op->user_begin());
  if (!rescale || rescale.getAcc() != op.getResult())
    return nullptr;
  return rescale;
}

/// The tails-last K order of `operand` ([K][rows], K-major) when it is the q
/// of a hot.quantize of a token projection with a tail (a hot.lowrank,
/// through reshapes): K = samples x projected rows, rows = the channels.
/// The natural order otherwise.
static OperandKOrder getProjectionOrder(Value operand) {
  auto quantize = operand.getDefiningOp<QuantizeOp>();
  if (!quantize || quantize.getQ() != operand)
    return {};
  auto lowRank = stripReshapes(quantize.getInput()).getDefiningOp<LowRankOp>();
  if (!lowRank)
    return {};
  auto inType = cast<RankedTensorType>(lowRank.getInput().getType());
  auto outType = cast<RankedTensorType>(lowRank.getType());
  if (!inType.hasStaticShape())
    return {};
  int64_t dim = lowRank.getDim();
  OperandKOrder order;
  order.samples = ShapedType::getNumElements(outType.getShape().take_front(dim));
  order.rowsPerSample = outType.getDimSize(dim);
  order.fullRows =
      order.rowsPerSample - inType.getDimSize(dim) % lowRank.getBlock();
  int64_t channels =
      ShapedType::getNumElements(outType.getShape().drop_front(dim + 1));
  auto type = cast<RankedTensorType>(operand.getType());
  // Without a tail, or without a full block, the orders are the same.
  if (order.tailRows() == 0 || order.fullRows == 0 ||
      type.getDimSize(0) != order.samples * order.rowsPerSample ||
      type.getDimSize(1) != channels)
    return {};
  order.tailsLast = true;
  return order;
}

/// A `bufferization.to_buffer` of `tensor` with the identity layout.
FailureOr<gpu::LaunchFuncOp>
mlir::hot::lowerIntMatmulToGPU(RewriterBase &rewriter, IntMatmulOp op,
                               const IntMatmulToGPUOptions &options,
                               OperandTransposes &transposes) {
  auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
  auto resultType = cast<RankedTensorType>(op.getType());
  if (!lhsType.hasStaticShape() || !rhsType.hasStaticShape())
    return op.emitError("cannot lower to a tensor-core kernel: the kernel is "
                        "specialized to static shapes, and this product has "
                        "dynamic ones");
  bool transposeLhs = op.getTransposeLhs(), transposeRhs = op.getTransposeRhs();
  int64_t m = resultType.getDimSize(0), n = resultType.getDimSize(1);
  int64_t k = op.getContractionSize();
  if (m == 0 || n == 0 || k == 0)
    return op.emitError("cannot lower to a tensor-core kernel: the product "
                        "has an empty dimension");
  if (llvm::divideCeil(m, options.tiling.tileM) > kMaxGridY)
    return op.emitError() << "cannot lower to a tensor-core kernel: " << m
                          << " rows need more than " << kMaxGridY
                          << " thread blocks of " << options.tiling.tileM
                          << " rows (grid.y limit)";
  if (llvm::divideCeil(n, options.tiling.tileN) > kMaxGridX)
    return op.emitError() << "cannot lower to a tensor-core kernel: " << n
                          << " columns need more than " << kMaxGridX
                          << " thread blocks of " << options.tiling.tileN
                          << " columns (grid.x limit)";
  // A K-major operand goes through a transpose kernel, whose grid.y covers
  // its rows.
  for (auto [kMajor, rows, what] : {std::tuple(transposeLhs, m, "lhs"),
                                    std::tuple(!transposeRhs, n, "rhs")}) {
    OperandTransposeSpec layout;
    layout.rows = rows;
    if (kMajor && layout.getGridY() > kMaxGridY)
      return op.emitError()
             << "cannot lower to a tensor-core kernel: the " << what
             << " is K-major, and its " << rows << " rows need more than "
             << kMaxGridY << " thread blocks of the transpose kernel "
             << "(grid.y limit)";
  }
  ModuleOp module = op->getParentOfType<ModuleOp>();
  if (!module)
    return op.emitError("cannot lower to a tensor-core kernel outside of a "
                        "builtin.module");

  // The MMA: wgmma where the chip has it, else s4 for two 4-bit grids where
  // the chip has INT4 tensor cores, else s8 mma.sync.
  bool int4Grid = isOn4BitGrid(op.getLhs()) && isOn4BitGrid(op.getRhs());
  bool nativeInt4 = hasNativeInt4TensorCores(options.chip);
  IntMmaKind kind = IntMmaKind::S8;
  if (options.useWgmma())
    kind = IntMmaKind::WgmmaS8;
  else if (int4Grid && nativeInt4 && options.allowInt4)
    kind = IntMmaKind::S4;
  int64_t kBytes = getPaddedKBytes(k, kind);

  IntMmaKernelSpec spec;
  spec.m = m;
  spec.n = n;
  spec.kBytes = kBytes;
  spec.kind = kind;
  // Tiles and K split: what fills the chip's SMs best (chooseIntMmaLaunch).
  int64_t sms = getSMCount(options.smCount, options.chip);
  spec.tiling = options.tiling;
  IntMmaKernelSpec plain = spec;
  chooseIntMmaLaunch(options, spec, sms);
  bool retiled = spec.tiling.tileM != options.tiling.tileM ||
                 spec.tiling.tileN != options.tiling.tileN;
  RescaleOp rescale = getFusableRescale(op);
  // A bf16/f16 graph truncates the rescaled product: the epilogue stores
  // the truncated values (the same arith.truncf, half the bytes).
  Operation *truncation =
      rescale ? getFusableTruncation(rescale.getResult()) : nullptr;
  spec.epilogue.rescale = static_cast<bool>(rescale);
  spec.epilogue.resultElementType = resultType.getElementType();
  if (rescale) {
    spec.epilogue.resultElementType = getElementTypeOrSelf(
        truncation ? truncation->getResult(0) : Value(rescale.getResult()));
    spec.epilogue.rowScaleRank =
        cast<RankedTensorType>(rescale.getRowScale().getType()).getRank();
    spec.epilogue.colScaleRank =
        cast<RankedTensorType>(rescale.getColScale().getType()).getRank();
  }

  // The kernel, in the module's gpu.module.
  Location loc = op.getLoc();
  gpu::GPUModuleOp gpuModule =
      getOrCreateGPUModule(rewriter, module, options.gpuModuleName);
  FailureOr<gpu::GPUFuncOp> kernel =
      buildIntMmaKernel(rewriter, loc, gpuModule, spec);
  if (failed(kernel))
    return failure();

  std::string mma, why;
  if (kind == IntMmaKind::WgmmaS8) {
    mma = "s8 wgmma.mma_async m64n" + std::to_string(spec.tiling.tileN) + "k32";
    why = options.chip + " has warpgroup MMA";
    if (int4Grid)
      why += " and no INT4 tensor cores: 4-bit operands computed with s8";
  } else if (kind == IntMmaKind::S4) {
    mma = "s4 mma.sync m16n8k64";
    why = "both operands are on a 4-bit grid and " + options.chip +
          " has INT4 tensor cores; operands packed two per byte";
  } else {
    mma = "s8 mma.sync m16n8k32";
    if (int4Grid && !nativeInt4)
      why = options.chip + " has no INT4 tensor cores: 4-bit operands "
                           "computed with s8";
    else if (int4Grid)
      why = "s4 MMA disabled by option: 4-bit operands computed with s8";
    else
      why = "operands on an 8-bit grid";
    if (hasWarpgroupMma(options.chip))
      why += "; wgmma disabled by option";
    else if (StringRef(options.chip).starts_with("sm_90"))
      why += "; wgmma needs sm_90a";
  }
  {
    InFlightDiagnostic remark = op.emitRemark();
    remark << "tensor-core kernel @" << kernel->getName() << ": " << mma
           << " (" << why << ")"
           << (rescale ? ", hot.rescale fused into the epilogue" : "");
    if (truncation)
      remark << " with its truncation to " << spec.epilogue.resultElementType;
    if (retiled)
      remark << "; " << spec.tiling.tileM << "x" << spec.tiling.tileN
             << " tiles";
    if (spec.splitK > 1)
      remark << "; K split in " << spec.splitK << " (" << spec.getNumTiles()
             << (spec.getNumTiles() == 1 ? " tile" : " tiles") << " of "
             << spec.getNumKTiles()
             << " K steps): the last block of each tile adds the "
             << spec.splitK << " partial products";
    if (retiled || (spec.splitK > 1 && options.splitK == 0))
      remark << " (the model of the kernel's time on " << sms << " SMs: "
             << llvm::formatv("{0:F1}",
                              modelIntMmaTime(spec, sms, options.chip))
                    .str()
             << " against "
             << llvm::formatv("{0:F1}",
                              modelIntMmaTime(plain, sms, options.chip))
                    .str()
             << " for " << options.tiling.tileM << "x" << options.tiling.tileN
             << " tiles unsplit)";
  }

  // Everything after the last operand: with a fused rescale its scales too.
  rewriter.setInsertionPoint(rescale ? rescale.getOperation()
                                     : op.getOperation());

  // Both operands K-contiguous, K padded to whole 16-byte chunks, packed for
  // s4: a K-major operand goes through the shared-memory transpose kernel
  // (unless its producer takes that over: OperandTransposes); one that only
  // needs padding or packing through an elementwise linalg.generic (mapped
  // like every other linalg op). Two K-major token projections of one shape
  // (gw = gy^T x with HLA) share the tails-last K order, in which their
  // producers can store each block's rows as one vector.
  OperandKOrder order;
  if (transposeLhs && !transposeRhs) {
    OperandKOrder lhsOrder = getProjectionOrder(op.getLhs());
    if (!lhsOrder.isNatural() && lhsOrder == getProjectionOrder(op.getRhs()))
      order = lhsOrder;
  }
  auto prepare = [&](Value operand, bool kMajor, int64_t rows, StringRef what) {
    bool packOrPad = kind == IntMmaKind::S4 || kBytes != k;
    if (!kMajor && !packOrPad)
      return operand;
    if (!kMajor)
      return buildKContiguousOperand(rewriter, loc, operand, kMajor, kBytes,
                                     kind);
    OperandTransposeSpec layout;
    layout.k = k;
    layout.rows = rows;
    layout.kBytes = kBytes;
    layout.packS4 = kind == IntMmaKind::S4;
    layout.order = order;
    gpu::GPUFuncOp transpose =
        buildOperandTransposeKernel(rewriter, loc, gpuModule, layout);
    Value in = getKernelInput(rewriter, loc, operand);
    Value out = allocateKernelOutput(
        rewriter, loc, MemRefType::get({rows, kBytes}, rewriter.getI8Type()));
    auto launch = launchKernel(
        rewriter, loc, transpose, {layout.getGridX(), layout.getGridY()},
        OperandTransposeSpec::getNumThreads(), ValueRange{in, out});
    transposes.push_back({launch, layout, operand, out, loc, what.str()});
    return getKernelResult(rewriter, loc, out);
  };
  Value lhs = prepare(op.getLhs(), transposeLhs, m, "lhs");
  Value rhs = prepare(op.getRhs(), !transposeRhs, n, "rhs");

  SmallVector<Type> argTypes =
      getIntMmaKernelArgumentTypes(rewriter.getContext(), spec);
  auto outType = cast<MemRefType>(argTypes[2]);
  SmallVector<Value> args{getKernelInput(rewriter, loc, lhs),
                          getKernelInput(rewriter, loc, rhs)};
  Value out = allocateKernelOutput(rewriter, loc, outType);
  args.push_back(out);
  if (rescale) {
    args.push_back(getKernelInput(rewriter, loc, rescale.getRowScale()));
    args.push_back(getKernelInput(rewriter, loc, rescale.getColScale()));
  }
  if (spec.splitK > 1) {
    // The workspace, and the tile counters, zeroed by a kernel of their own.
    for (unsigned i : {argTypes.size() - 2, argTypes.size() - 1})
      args.push_back(
          allocateKernelOutput(rewriter, loc, cast<MemRefType>(argTypes[i])));
    int64_t tiles = spec.getNumTiles();
    gpu::GPUFuncOp zero = buildZeroKernel(rewriter, loc, gpuModule, tiles);
    int64_t threads = getZeroKernelThreads();
    launchKernel(rewriter, loc, zero, {llvm::divideCeilSigned(tiles, threads)},
                 threads, ValueRange{args.back()});
  }

  const IntMmaTiling &t = spec.tiling;
  auto launch =
      launchKernel(rewriter, loc, *kernel,
                   {llvm::divideCeilSigned(n, t.tileN),
                    llvm::divideCeilSigned(m, t.tileM), spec.splitK},
                   t.numThreads(kind), args, getIntMmaDynamicSharedBytes(spec));
  Value result = getKernelResult(rewriter, loc, out);
  if (rescale) {
    if (truncation) {
      rewriter.replaceOp(truncation, result);
      rewriter.eraseOp(rescale);
    } else {
      rewriter.replaceOp(rescale, result);
    }
    rewriter.eraseOp(op);
  } else {
    rewriter.replaceOp(op, result);
  }
  return launch;
}

void mlir::hot::emitOperandTransposeRemarks(
    const OperandTransposes &transposes) {
  for (const OperandTransposeLaunch &transpose : transposes) {
    const OperandTransposeSpec &spec = transpose.spec;
    InFlightDiagnostic remark = mlir::emitRemark(transpose.productLoc);
    remark << transpose.operand << " is not K-contiguous: transposed to ["
           << spec.rows << "][K] i8 by @" << spec.getKernelName()
           << " (64x64-byte tiles through shared memory) before the product";
    if (!spec.order.isNatural())
      remark << ", K in tails-last order (the full blocks' "
             << spec.order.fullRows << " rows of each of " << spec.order.samples
             << " samples, then the tails), as the "
             << "other operand";
    remark << " (no kernel that produces it writes it K-major)";
  }
}

OperandTransposeLaunch *
mlir::hot::findTransposeOf(OperandTransposes &transposes, Value q,
                           Operation *anchor) {
  auto it = llvm::find_if(transposes, [&](const OperandTransposeLaunch &t) {
    return t.source == q;
  });
  if (it == transposes.end() || !q.hasOneUse())
    return nullptr;
  auto toBuffer = dyn_cast<bufferization::ToBufferOp>(*q.user_begin());
  if (!toBuffer || !toBuffer->hasOneUse() ||
      *toBuffer->user_begin() != it->launch.getOperation())
    return nullptr;
  Operation *alloc = it->out.getDefiningOp();
  if (!isa_and_nonnull<memref::AllocOp>(alloc) ||
      alloc->getBlock() != anchor->getBlock() || alloc->getNumOperands() != 0)
    return nullptr;
  return &*it;
}

Value mlir::hot::takeOverTranspose(RewriterBase &rewriter,
                                   OperandTransposes &transposes,
                                   OperandTransposeLaunch *transpose,
                                   Operation *anchor) {
  Value out = transpose->out;
  Operation *alloc = out.getDefiningOp();
  if (anchor->isBeforeInBlock(alloc))
    rewriter.moveOpBefore(alloc, anchor);
  Operation *toBuffer = *transpose->source.user_begin();
  auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      transpose->launch, transpose->launch.getKernel());
  rewriter.eraseOp(transpose->launch);
  rewriter.eraseOp(toBuffer);
  if (kernel && SymbolTable::symbolKnownUseEmpty(
                    kernel, kernel->getParentOfType<ModuleOp>()))
    rewriter.eraseOp(kernel);
  transposes.erase(transpose);
  return out;
}
