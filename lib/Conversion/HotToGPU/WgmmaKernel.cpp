//===- WgmmaKernel.cpp - The sm_90a warpgroup integer matmul kernel -------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// The body of the IntMmaKind::WgmmaS8 kernel: `wgmma.mma_async m64nNk32
// .s32.s8.s8` with N = tileN, one warpgroup (4 warps) per 64 rows of the block
// tile, both operands read from shared memory through matrix descriptors (PTX
// ISA, "Matrix Descriptor Format"):
//
//   bits  0..13  start address >> 4 (shared window)
//   bits 16..29  leading-dimension byte offset >> 4 (unused for swizzled
//                K-major tiles whose K step stays inside one swizzle row: 1)
//   bits 32..45  stride-dimension byte offset >> 4: 8 rows x tileKBytes
//   bits 49..51  base offset: 0, every stage starts on its swizzle period
//   bits 62..63  layout: 1 = 128B swizzle, 2 = 64B, 3 = 32B
//
// cp.async writes row r, 16-byte chunk c of a stage at byte
// r * tileKBytes + 16 (c ^ phase(r)), which is the hardware's swizzle of the
// plain row-major address when the stage starts on a 1 KiB boundary; the
// K step ks of a tile starts 32 ks bytes into the row. The accumulator of warp
// w of a warpgroup holds rows 16 w .. 16 w + 15 in the layout of mma.sync's
// m16n8 C fragments, one fragment per 8 columns (D register 4 j + 2 h + e is
// fragment j, element [h, e]).
//
// Pipeline: `stages` shared stages, tiles k + 1 .. k + stages - 2 in flight
// (cp.async) while wgmma reads tile k and one wgmma group (tile k - 1) may
// still run. Each iteration issues its wgmma group before the copies of
// tile k + stages - 2. A stage is refilled only after the barrier that follows every
// thread's `wgmma.wait_group 1`, which retired the wgmma that read it.
// Before that barrier, each thread fences its cp.async writes into the async
// proxy that wgmma reads through (`fence.proxy.async.shared::cta`).
//
//===----------------------------------------------------------------------===//

#include "MmaKernelEmitter.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::hot;
using namespace mlir::hot::detail;

/// Rows of C per warpgroup (wgmma's M).
static constexpr int64_t kWarpgroupRows = 64;
/// The alignment the swizzle patterns repeat on (128B swizzle: 8 x 128 bytes).
static constexpr int64_t kSwizzleAtomBytes = 1024;

namespace {

class WgmmaEmitter : public MmaKernelEmitter {
public:
  WgmmaEmitter(ImplicitLocOpBuilder &b, const IntMmaKernelSpec &spec,
               gpu::GPUFuncOp func)
      : MmaKernelEmitter(b, spec, func) {
    SmallVector<Type> regs(t.tileN / 2, b.getI32Type());
    accType = LLVM::LLVMStructType::getLiteral(b.getContext(), regs);
  }

  void emit();

private:
  /// Views of the dynamic shared memory, from its first 1 KiB boundary:
  /// A's stages, then B's. Sets sharedA, sharedB and tilesAddress.
  void emitSharedTiles();
  /// The i64 descriptor of the K-major, swizzled tile at shared address
  /// `address` (i64).
  Value descriptor(Value address);
  /// wgmma.mma_async over the K steps of `stage`, accumulating into `acc`.
  Value computeStage(Value stage, Value acc);
  /// `acc` as one vector<2x2xi32> C fragment per 8 columns.
  SmallVector<Value> toFragments(Value acc);

  Value i64(int64_t v) { return arith::ConstantIntOp::create(b, v, 64); }

  LLVM::LLVMStructType accType;
  /// Shared address (i64) of the first stage of A.
  Value tilesAddress;
};

} // namespace

void WgmmaEmitter::emitSharedTiles() {
  MLIRContext *ctx = b.getContext();
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Type i8 = b.getI8Type();
  auto bytesType = MemRefType::get({ShapedType::kDynamic}, i8,
                                   MemRefLayoutAttrInterface(), workgroup);
  Value bytes = gpu::DynamicSharedMemoryOp::create(b, bytesType);
  Value start = memref::ExtractAlignedPointerAsIndexOp::create(b, bytes);
  // (-start) mod 1024: the launch reserves 1 KiB for this.
  Value shift = rem(arith::SubIOp::create(b, cst(kSwizzleAtomBytes),
                                          rem(start, kSwizzleAtomBytes)),
                    kSwizzleAtomBytes);
  auto stagesOf = [&](int64_t rows) {
    return MemRefType::get({t.stages, rows, t.tileKBytes}, i8,
                           MemRefLayoutAttrInterface(), workgroup);
  };
  sharedA = memref::ViewOp::create(b, stagesOf(t.tileM), bytes, shift,
                                   ValueRange{});
  sharedB = memref::ViewOp::create(
      b, stagesOf(t.tileN), bytes,
      add(shift, t.stages * t.tileM * t.tileKBytes), ValueRange{});
  tilesAddress =
      arith::IndexCastUIOp::create(b, b.getI64Type(), add(start, shift));
}

Value WgmmaEmitter::descriptor(Value address) {
  int64_t layout = t.tileKBytes == 128 ? 1 : t.tileKBytes == 64 ? 2 : 3;
  int64_t strideBytes = 8 * t.tileKBytes;
  int64_t fixed = (int64_t{1} << 16) | ((strideBytes >> 4) << 32) |
                  (layout << 62);
  Value start = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, address, i64(4)), i64(0x3FFF));
  return arith::OrIOp::create(b, start, i64(fixed));
}

Value WgmmaEmitter::computeStage(Value stage, Value acc) {
  MLIRContext *ctx = b.getContext();
  Value stageIndex = arith::IndexCastUIOp::create(b, b.getI64Type(), stage);
  auto offset = [&](Value base, int64_t stageBytes, int64_t extra) {
    Value stageOffset = arith::MulIOp::create(b, stageIndex, i64(stageBytes));
    return arith::AddIOp::create(
        b, arith::AddIOp::create(b, base, stageOffset), i64(extra));
  };
  // This warpgroup's 64 rows of A; all tileN rows of B.
  Value warpgroupRows = arith::IndexCastUIOp::create(
      b, b.getI64Type(), mul(div(warp, 4), kWarpgroupRows * t.tileKBytes));
  Value aBase = arith::AddIOp::create(b, tilesAddress, warpgroupRows);
  Value bBase = arith::AddIOp::create(
      b, tilesAddress, i64(t.stages * t.tileM * t.tileKBytes));

  auto shape = NVVM::MMAShapeAttr::get(ctx, kWarpgroupRows, t.tileN,
                                       kMmaKBytes);
  auto overflow =
      NVVM::MMAIntOverflowAttr::get(ctx, NVVM::MMAIntOverflow::satfinite);
  NVVM::WgmmaFenceAlignedOp::create(b);
  for (int64_t ks = 0; ks < t.tileKBytes / kMmaKBytes; ++ks) {
    Value descA =
        descriptor(offset(aBase, t.tileM * t.tileKBytes, ks * kMmaKBytes));
    Value descB =
        descriptor(offset(bBase, t.tileN * t.tileKBytes, ks * kMmaKBytes));
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, accType, acc, descA, descB, shape, NVVM::WGMMATypes::s8,
        NVVM::WGMMATypes::s8, NVVM::WGMMATypes::s32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        NVVM::MMALayout::row, NVVM::MMALayout::col, overflow);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  return acc;
}

SmallVector<Value> WgmmaEmitter::toFragments(Value acc) {
  auto fragmentType = VectorType::get({2, 2}, b.getI32Type());
  SmallVector<Value> fragments;
  for (int64_t j = 0; j < t.tileN / 8; ++j) {
    SmallVector<Value> elements;
    for (int64_t r = 0; r < 4; ++r)
      elements.push_back(LLVM::ExtractValueOp::create(b, acc, 4 * j + r));
    fragments.push_back(
        vector::FromElementsOp::create(b, fragmentType, elements));
  }
  return fragments;
}

void WgmmaEmitter::emit() {
  emitThreadIds();
  emitSharedTiles();

  emitKRange();
  int64_t stages = t.stages;
  int64_t ahead = stages - 2;
  // Prologue: tiles 0 .. ahead-1 in flight.
  Value lastGroup = loadPrologue(ahead);

  Value zero = LLVM::ZeroOp::create(b, accType);
  auto loop =
      scf::ForOp::create(b, cst(0), kTileBound(), cst(1), ValueRange{zero});
  {
    OpBuilder::InsertionGuard insertion(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kTile = loop.getInductionVar();
    // Tile kTile has landed once at most ahead-1 younger groups are pending.
    nvgpu::DeviceAsyncWaitOp::create(b, lastGroup,
                                     b.getI32IntegerAttr(ahead - 1));
    NVVM::FenceProxyOp::create(
        b, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    // Also: every warpgroup's wgmma on tile kTile - 2 has completed.
    gpu::BarrierOp::create(b);
    // The MMAs first, so that the tensor cores start while the copies of a
    // later tile (into the stage of tile kTile - 2) are issued.
    Value acc =
        computeStage(rem(kTile, stages), loop.getRegionIterArgs().front());
    Value next = add(kTile, ahead);
    loadStage(rem(next, stages), next, kTileExists(next));
    NVVM::WgmmaWaitGroupSyncOp::create(b, 1);
    scf::YieldOp::create(b, acc);
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  // Only zero-fill copies can still be pending; retire them before exit.
  nvgpu::DeviceAsyncWaitOp::create(b, lastGroup, b.getI32IntegerAttr(0));
  emitSplitKEpilogue(toFragments(loop.getResult(0)), [&](ValueRange accs) {
    storeResults(accs, /*warpRow=*/warp, /*warpCol=*/cst(0), /*warpM=*/16,
                 /*warpN=*/t.tileN);
  });
  gpu::ReturnOp::create(b);
}

void mlir::hot::detail::emitWgmmaKernel(ImplicitLocOpBuilder &b,
                                        const IntMmaKernelSpec &spec,
                                        gpu::GPUFuncOp func) {
  WgmmaEmitter(b, spec, func).emit();
}
