//===- HotToGPU.cpp - The convert-hot-to-gpu pass -------------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/Chips.h"
#include "hot/Conversion/Passes.h"
#include "hot/Conversion/TransformKernels.h"
#include "hot/Dialect/Hot/HotOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::hot {
#define GEN_PASS_DEF_CONVERTHOTTOGPUPASS
#include "hot/Conversion/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;
using namespace mlir::hot;

namespace {
/// Remembers the producers of the operands of every op the lowering erases:
/// once the kernels read through them (the element-type casts and reshapes
/// of bf16/f16 graphs), they may be dead. Those, and no other op of the
/// module, are erased at the end of the pass.
struct OrphanTracker : RewriterBase::Listener {
  llvm::SetVector<Operation *> candidates;

  void notifyOperationErased(Operation *op) override {
    candidates.remove(op);
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        candidates.insert(producer);
  }

  /// Erases the candidates that are dead, with their own producers that
  /// become dead in turn; only ops on tensors.
  void eraseDead(RewriterBase &rewriter) {
    while (!candidates.empty()) {
      Operation *op = candidates.pop_back_val();
      if (isOpTriviallyDead(op) &&
          llvm::all_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>))
        rewriter.eraseOp(op); // Adds its producers (notifyOperationErased).
    }
  }
};
} // namespace

namespace {

struct ConvertHotToGPUPass
    : hot::impl::ConvertHotToGPUPassBase<ConvertHotToGPUPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerLaunchFuncMemoryEffects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IntMatmulToGPUOptions options;
    options.chip = chip;
    options.allowInt4 = int4;
    options.allowWgmma = wgmma;
    // S4 kernels share S8's tiling rules.
    IntMmaKind family =
        options.useWgmma() ? IntMmaKind::WgmmaS8 : IntMmaKind::S8;
    options.tiling = IntMmaTiling::getDefault(family);
    // 0 x 0: 128 x 128, smaller for products too small to fill the chip.
    options.autoTiles = tileM == 0 && tileN == 0;
    options.smCount = smCount;
    options.splitK = splitK;
    if (tileM != 0)
      options.tiling.tileM = tileM;
    if (tileN != 0)
      options.tiling.tileN = tileN;
    options.tiling.warpM = warpM;
    options.tiling.warpN = warpN;
    if (tileK != 0)
      options.tiling.tileKBytes = tileK;
    if (stages != 0)
      options.tiling.stages = stages;

    if (getSMVersion(options.chip) < 80) {
      module.emitError() << "convert-hot-to-gpu: chip '" << options.chip
                         << "' has no integer mma.sync of the kernel's shapes "
                            "(needs sm_80 or newer)";
      return signalPassFailure();
    }
    std::string reason;
    if (failed(verifyIntMmaTiling(options.tiling, family, reason))) {
      module.emitError() << "convert-hot-to-gpu: " << reason;
      return signalPassFailure();
    }
    if (!llvm::is_contained({0, 1, 2, 4}, int64_t(quantizeChannelsPerThread))) {
      module.emitError() << "convert-hot-to-gpu: quantize-channels-per-thread "
                            "must be 1, 2 or 4 (0: the default), not "
                         << int64_t(quantizeChannelsPerThread);
      return signalPassFailure();
    }
    if (rowValuesInRegisters < 0) {
      module.emitError() << "convert-hot-to-gpu: row-values-in-registers "
                            "must be 0 or more, not "
                         << int64_t(rowValuesInRegisters);
      return signalPassFailure();
    }

    SmallVector<IntMatmulOp> matmuls;
    module.walk([&](IntMatmulOp op) { matmuls.push_back(op); });
    OrphanTracker orphans;
    IRRewriter rewriter(&getContext(), &orphans);
    bool failedAny = false;
    OperandTransposes transposes;
    for (IntMatmulOp op : matmuls)
      failedAny |=
          failed(lowerIntMatmulToGPU(rewriter, op, options, transposes));
    if (failedAny)
      return signalPassFailure();

    // The transforms after the products: a product's s4 decision reads the
    // hot.quantize that feeds it, and a quantize kernel may write a
    // product's operand K-major itself (taking its transpose out of
    // `transposes`). Ops left here go the generic path.
    TransformsToGPUOptions transforms;
    transforms.shareStatistics = shareStatistics;
    transforms.maxRowValuesInRegisters = rowValuesInRegisters;
    transforms.fuseColumnHadamard = fuseColumnHadamard;
    transforms.quantizeChannelsPerThread = quantizeChannelsPerThread;
    transforms.chip = options.chip;
    transforms.smCount = options.smCount;
    transforms.writeOperandsKMajor = fuseTransposes;
    lowerTransformsToGPU(rewriter, module, transforms, hadamardQuantize,
                         lowRank, transposes);
    emitOperandTransposeRemarks(transposes);

    // The element-type casts and reshapes that the kernels read through
    // (bf16/f16 graphs) are dead now: erase them rather than leave them to
    // a later canonicalization, so that this pass's output has no stray
    // f32 copies. Dead ops the pass did not orphan stay.
    orphans.eraseDead(rewriter);
  }
};

} // namespace
