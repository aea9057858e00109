//===- IntMmaKernel.cpp - The tensor-core integer matmul kernel -----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// The int_matmul kernels: their names, tilings and gpu.func (for every
// IntMmaKind), and the body of the mma.sync kinds (S8, S4), built with nvgpu
// ops; WgmmaKernel.cpp builds the wgmma body, MmaKernelEmitter.cpp what both
// share. Fragment layouts (PTX ISA, "mma.m16n8k32" for s8; m16n8k64 for s4 is the
// same in bytes): for lane l, g = l / 4 and t = l % 4,
//   A (16 x 32 bytes, row): reg i holds row g + 8 (i % 2), bytes 4t + 16 (i / 2)
//   B (32 bytes x 8, col):  reg i holds column g, bytes 4t + 16 i
//   C (16 x 8 i32):         elem [h, e] is row g + 8 h, column 2t + e
// ldmatrix (b16 view) gives register j of lane l the 4 bytes 4t of row g of
// matrix j, whose 8 row addresses come from lanes 8j .. 8j + 7: so A's
// fragment is ldmatrix.x4 with lane l addressing row l % 16, byte 16 (l / 16)
// and B's (stored [N][K]) is ldmatrix.x2 with lane l addressing row l % 8,
// byte 16 ((l / 8) % 2).
//
//===----------------------------------------------------------------------===//

#include "MmaKernelEmitter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace mlir::hot;
using namespace mlir::hot::detail;

/// Static shared memory available without an opt-in.
static constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;
/// Dynamic shared memory one block may opt into on sm_90 (227 KiB).
static constexpr int64_t kMaxDynamicSharedBytes = 227 * 1024;
/// The period of the 128-byte swizzle: wgmma stages start on it.
static constexpr int64_t kSwizzleAtomBytes = 1024;

static bool isWgmma(IntMmaKind kind) { return kind == IntMmaKind::WgmmaS8; }

IntMmaTiling IntMmaTiling::getDefault(IntMmaKind kind) {
  IntMmaTiling tiling;
  if (isWgmma(kind)) {
    tiling.tileKBytes = 128;
    tiling.stages = 4;
  }
  return tiling;
}

int64_t IntMmaTiling::numThreads(IntMmaKind kind) const {
  if (isWgmma(kind))
    return 128 * (tileM / 64);
  return 32 * (tileM / warpM) * (tileN / warpN);
}

int64_t IntMmaTiling::sharedBytes(IntMmaKind kind) const {
  int64_t tiles = stages * (tileM + tileN) * tileKBytes;
  return isWgmma(kind) ? tiles + kSwizzleAtomBytes : tiles;
}

int64_t mlir::hot::getIntMmaDynamicSharedBytes(const IntMmaKernelSpec &spec) {
  return isWgmma(spec.kind) ? spec.tiling.sharedBytes(spec.kind) : 0;
}

int64_t IntMmaKernelSpec::getNumKTiles() const {
  return llvm::divideCeil(kBytes, tiling.tileKBytes);
}

int64_t IntMmaKernelSpec::getKTilesPerSplit() const {
  return llvm::divideCeil(getNumKTiles(), splitK);
}

int64_t IntMmaKernelSpec::getNumTiles() const {
  return llvm::divideCeil(m, tiling.tileM) * llvm::divideCeil(n, tiling.tileN);
}

int64_t IntMmaKernelSpec::getWorkspaceWords() const {
  return splitK > 1 ? splitK * getNumTiles() * tiling.tileM * tiling.tileN : 0;
}

std::string IntMmaKernelSpec::getKernelName() const {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << "hot_int_mma_";
  switch (kind) {
  case IntMmaKind::S8:
    os << "s8";
    break;
  case IntMmaKind::S4:
    os << "s4";
    break;
  case IntMmaKind::WgmmaS8:
    os << "wgmma_s8";
    break;
  }
  os << "_" << m << "x" << n << "x" << kBytes << "_t" << tiling.tileM << "x"
     << tiling.tileN << "x" << tiling.tileKBytes;
  if (!isWgmma(kind))
    os << "_w" << tiling.warpM << "x" << tiling.warpN;
  os << "_s" << tiling.stages << "_";
  if (splitK > 1)
    os << "split" << splitK << "_";
  if (epilogue.rescale)
    os << "rescale" << epilogue.rowScaleRank << epilogue.colScaleRank << "_";
  os << epilogue.resultElementType;
  return name;
}

/// The N extents of `wgmma.mma_async .s32.s8.s8` (PTX ISA): 8, 16, 24 and
/// the multiples of 16 from 32 to 256.
static bool isWgmmaS8N(int64_t n) {
  return n == 8 || n == 24 || (n % 16 == 0 && n >= 16 && n <= 256);
}

LogicalResult mlir::hot::verifyIntMmaTiling(const IntMmaTiling &t,
                                            IntMmaKind kind,
                                            std::string &reason) {
  auto fail = [&](const Twine &why) {
    reason = why.str();
    return failure();
  };
  if (isWgmma(kind)) {
    if (t.tileM <= 0 || t.tileM % 64 != 0)
      return fail("wgmma: tile-m must be a positive multiple of 64 (one "
                  "warpgroup per 64 rows)");
    if (!isWgmmaS8N(t.tileN))
      return fail("wgmma: tile-n must be an N of wgmma m64nNk32 on s8: 8, "
                  "16, 24, or a multiple of 16 up to 256");
    if (t.stages < 3)
      return fail("wgmma: the pipeline needs at least 3 stages (one tile "
                  "being read by wgmma, one awaited, one being copied)");
  } else {
    if (t.warpM <= 0 || t.warpM % 16 != 0)
      return fail("warp-m must be a positive multiple of 16 (the MMA's M)");
    if (t.warpN <= 0 || t.warpN % 8 != 0)
      return fail("warp-n must be a positive multiple of 8 (the MMA's N)");
    if (t.tileM <= 0 || t.tileM % t.warpM != 0 || t.tileN <= 0 ||
        t.tileN % t.warpN != 0)
      return fail("tile-m and tile-n must be positive multiples of warp-m "
                  "and warp-n");
    if (t.stages < 2)
      return fail("the cp.async pipeline needs at least 2 stages");
  }
  if (t.tileKBytes != 32 && t.tileKBytes != 64 && t.tileKBytes != 128)
    return fail("tile-k must be 32, 64 or 128 bytes");
  int64_t threads = t.numThreads(kind);
  if (threads > 1024)
    return fail("the tiling needs " + Twine(threads) +
                " threads per block, more than 1024");
  int64_t chunksPerRow = t.tileKBytes / kChunkBytes;
  if ((t.tileM * chunksPerRow) % threads != 0 ||
      (t.tileN * chunksPerRow) % threads != 0)
    return fail("every thread must copy the same number of 16-byte chunks "
                "of each tile (tile-m and tile-n times tile-k / 16 must be "
                "multiples of the thread count)");
  int64_t bytes = t.sharedBytes(kind);
  if (!isWgmma(kind) && bytes > kMaxStaticSharedBytes)
    return fail("the staged tiles need " + Twine(bytes) +
                " bytes of shared memory, more than the 48 KiB of static "
                "shared memory: use fewer stages or smaller tiles");
  if (isWgmma(kind) && bytes > kMaxDynamicSharedBytes)
    return fail("wgmma: the staged tiles need " + Twine(bytes) +
                " bytes of shared memory, more than the 227 KiB a block may "
                "use: use fewer stages or smaller tiles");
  return success();
}

SmallVector<Type>
mlir::hot::getIntMmaKernelArgumentTypes(MLIRContext *ctx,
                                        const IntMmaKernelSpec &spec) {
  Type i8 = IntegerType::get(ctx, 8);
  Type f32 = Float32Type::get(ctx);
  SmallVector<Type> types{
      MemRefType::get({spec.m, spec.kBytes}, i8),
      MemRefType::get({spec.n, spec.kBytes}, i8),
      MemRefType::get({spec.m, spec.n}, spec.epilogue.resultElementType)};
  if (spec.epilogue.rescale) {
    auto scale = [&](int64_t rank, int64_t size) {
      return rank == 0 ? MemRefType::get({}, f32) : MemRefType::get({size}, f32);
    };
    types.push_back(scale(spec.epilogue.rowScaleRank, spec.m));
    types.push_back(scale(spec.epilogue.colScaleRank, spec.n));
  }
  if (spec.splitK > 1) {
    Type i32 = IntegerType::get(ctx, 32);
    types.push_back(MemRefType::get({spec.getWorkspaceWords()}, i32));
    types.push_back(MemRefType::get({spec.getNumTiles()}, i32));
  }
  return types;
}

gpu::GPUFuncOp mlir::hot::createKernelFunc(OpBuilder &builder, Location loc,
                                           gpu::GPUModuleOp module,
                                           StringRef name, TypeRange argTypes,
                                           TypeRange workgroup,
                                           int64_t threads) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(
      builder, loc, name,
      FunctionType::get(builder.getContext(), argTypes, {}), workgroup);
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  func.setKnownBlockSizeAttr(
      builder.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  return func;
}

gpu::GPUModuleOp mlir::hot::getOrCreateGPUModule(OpBuilder &builder,
                                                 ModuleOp module,
                                                 StringRef name) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(name))
    return existing;
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  builder.getUnitAttr());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  return gpu::GPUModuleOp::create(builder, module.getLoc(), name);
}

namespace {

/// The mma.sync kernel: warps load fragments with ldmatrix.
class MmaSyncEmitter : public MmaKernelEmitter {
public:
  MmaSyncEmitter(ImplicitLocOpBuilder &b, const IntMmaKernelSpec &spec,
                 gpu::GPUFuncOp func)
      : MmaKernelEmitter(b, spec, func) {
    sharedA = func.getWorkgroupAttributions()[0];
    sharedB = func.getWorkgroupAttributions()[1];
  }

  void emit();

private:
  /// One K tile of MMAs on the fragments of `stage`.
  void computeStage(Value stage, SmallVectorImpl<Value> &accs);
  /// Reinterprets an i8 fragment (one vector<4xi8> per register) as s4, one
  /// register at a time: n-D vector.bitcast has no direct LLVM lowering.
  Value bitcastToI4(Value fragment);

  Value warpRow, warpCol;
};

} // namespace

Value MmaSyncEmitter::bitcastToI4(Value fragment) {
  auto type = cast<VectorType>(fragment.getType());
  int64_t regs = type.getDimSize(0), bytes = type.getDimSize(1);
  Type i4 = b.getIntegerType(4);
  auto rowType = VectorType::get({2 * bytes}, i4);
  Value result = arith::ConstantOp::create(
      b, DenseElementsAttr::get(VectorType::get({regs, 2 * bytes}, i4),
                                b.getIntegerAttr(i4, 0).getValue()));
  for (int64_t r = 0; r < regs; ++r) {
    Value row = vector::ExtractOp::create(b, fragment, ArrayRef<int64_t>{r});
    Value cast = vector::BitCastOp::create(b, rowType, row);
    result = vector::InsertOp::create(b, cast, result, ArrayRef<int64_t>{r});
  }
  return result;
}

void MmaSyncEmitter::computeStage(Value stage, SmallVectorImpl<Value> &accs) {
  Type i8 = b.getI8Type();
  bool s4 = spec.kind == IntMmaKind::S4;
  auto aType = VectorType::get({4, 4}, i8);
  auto bType = VectorType::get({2, 4}, i8);
  SmallVector<int64_t> mmaShape{16, 8, s4 ? 64 : 32};
  int64_t numM = t.warpM / 16, numN = t.warpN / 8;

  Value aLaneRow = rem(lane, 16), aLaneChunk = div(lane, 16);
  Value bLaneRow = rem(lane, 8), bLaneChunk = rem(div(lane, 8), 2);
  Value aWarpRow = mul(warpRow, t.warpM), bWarpRow = mul(warpCol, t.warpN);
  // `count` fragments of `rows` rows each (16 for A with ldmatrix.x4, 8 for B
  // with .x2), starting at `warpRow` of the stage, K chunk `chunkBase`.
  auto loadFragments = [&](Value shared, Type type, Value warpRow,
                           Value laneRow, Value laneChunk, int64_t count,
                           int64_t rows, int64_t numTiles, int64_t chunkBase) {
    SmallVector<Value> frags;
    for (int64_t i = 0; i < count; ++i) {
      Value row = add(add(warpRow, i * rows), laneRow);
      Value byte = swizzledByte(row, add(laneChunk, chunkBase));
      Value frag = nvgpu::LdMatrixOp::create(b, type, shared,
                                             ValueRange{stage, row, byte},
                                             /*transpose=*/false, numTiles);
      frags.push_back(s4 ? bitcastToI4(frag) : frag);
    }
    return frags;
  };
  for (int64_t ks = 0; ks < t.tileKBytes / kMmaKBytes; ++ks) {
    int64_t chunkBase = ks * (kMmaKBytes / kChunkBytes);
    SmallVector<Value> aFrags =
        loadFragments(sharedA, aType, aWarpRow, aLaneRow, aLaneChunk, numM,
                      /*rows=*/16, /*numTiles=*/4, chunkBase);
    SmallVector<Value> bFrags =
        loadFragments(sharedB, bType, bWarpRow, bLaneRow, bLaneChunk, numN,
                      /*rows=*/8, /*numTiles=*/2, chunkBase);
    for (int64_t mi = 0; mi < numM; ++mi)
      for (int64_t ni = 0; ni < numN; ++ni) {
        Value &acc = accs[mi * numN + ni];
        acc = nvgpu::MmaSyncOp::create(b, aFrags[mi], bFrags[ni], acc,
                                       mmaShape);
      }
  }
}

void MmaSyncEmitter::emit() {
  Type i32 = b.getI32Type();
  int64_t warpsN = t.tileN / t.warpN;
  emitThreadIds();
  warpRow = div(warp, warpsN);
  warpCol = rem(warp, warpsN);

  emitKRange();
  int64_t stages = t.stages;
  // Prologue: tiles 0 .. stages-2 in flight.
  Value lastGroup = loadPrologue(stages - 1);

  int64_t numAccs = (t.warpM / 16) * (t.warpN / 8);
  Value zeroAcc = arith::ConstantOp::create(
      b, DenseElementsAttr::get(VectorType::get({2, 2}, i32),
                                b.getI32IntegerAttr(0).getValue()));
  SmallVector<Value> inits(numAccs, zeroAcc);
  auto loop = scf::ForOp::create(b, cst(0), kTileBound(), cst(1), inits);
  {
    OpBuilder::InsertionGuard insertion(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kTile = loop.getInductionVar();
    // Tile kTile has landed once at most stages-2 younger groups are pending;
    // the barrier also retires every warp's reads of the stage reloaded next.
    nvgpu::DeviceAsyncWaitOp::create(b, lastGroup,
                                     b.getI32IntegerAttr(stages - 2));
    gpu::BarrierOp::create(b);
    Value next = add(kTile, stages - 1);
    loadStage(rem(next, stages), next, kTileExists(next));
    SmallVector<Value> accs(loop.getRegionIterArgs());
    computeStage(rem(kTile, stages), accs);
    scf::YieldOp::create(b, accs);
  }
  // Only zero-fill copies can still be pending; retire them before exit.
  nvgpu::DeviceAsyncWaitOp::create(b, lastGroup, b.getI32IntegerAttr(0));
  emitSplitKEpilogue(loop.getResults(), [&](ValueRange accs) {
    storeResults(accs, warpRow, warpCol, t.warpM, t.warpN);
  });
  gpu::ReturnOp::create(b);
}

void mlir::hot::detail::emitMmaSyncKernel(ImplicitLocOpBuilder &b,
                                          const IntMmaKernelSpec &spec,
                                          gpu::GPUFuncOp func) {
  MmaSyncEmitter(b, spec, func).emit();
}

FailureOr<gpu::GPUFuncOp>
mlir::hot::buildIntMmaKernel(OpBuilder &builder, Location loc,
                             gpu::GPUModuleOp module,
                             const IntMmaKernelSpec &spec) {
  std::string name = spec.getKernelName();
  if (auto existing = module.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing;
  std::string reason;
  if (failed(verifyIntMmaTiling(spec.tiling, spec.kind, reason)))
    return emitError(loc, reason);
  if (spec.m <= 0 || spec.n <= 0 || spec.kBytes <= 0 ||
      spec.kBytes % kChunkBytes != 0)
    return emitError(loc, "the kernel needs M, N > 0 and a K extent that is "
                          "a positive multiple of 16 bytes");
  // Every split has at least one K tile.
  if (spec.splitK < 1 ||
      int64_t(llvm::divideCeil(spec.getNumKTiles(),
                               spec.getKTilesPerSplit())) != spec.splitK)
    return emitError(loc) << "cannot split " << spec.getNumKTiles()
                          << " K tiles into " << spec.splitK
                          << " non-empty parts of equal size";

  MLIRContext *ctx = builder.getContext();
  const IntMmaTiling &t = spec.tiling;
  bool wgmma = isWgmma(spec.kind);
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Type i8 = builder.getI8Type();
  // mma.sync tiles are static workgroup attributions; wgmma's are views of
  // dynamic shared memory (more than the 48 KiB of static shared memory).
  SmallVector<Type, 2> attributions;
  if (!wgmma)
    for (int64_t rows : {t.tileM, t.tileN})
      attributions.push_back(MemRefType::get({t.stages, rows, t.tileKBytes},
                                             i8, MemRefLayoutAttrInterface(),
                                             workgroup));

  auto func = createKernelFunc(builder, loc, module, name,
                               getIntMmaKernelArgumentTypes(ctx, spec),
                               attributions, t.numThreads(spec.kind));
  // cp.async and ldmatrix need 16-byte aligned shared addresses; 128 keeps
  // the swizzle's bank mapping exact.
  for (unsigned i = 0; i < attributions.size(); ++i)
    func.setWorkgroupAttributionAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                                     builder.getI64IntegerAttr(128));

  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  if (wgmma)
    emitWgmmaKernel(b, spec, func);
  else
    emitMmaSyncKernel(b, spec, func);
  return func;
}

int64_t mlir::hot::getZeroKernelThreads() { return 256; }

gpu::GPUFuncOp mlir::hot::buildZeroKernel(OpBuilder &builder, Location loc,
                                          gpu::GPUModuleOp module,
                                          int64_t size) {
  std::string name = "hot_zero_i32_" + std::to_string(size);
  if (auto existing = module.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing;
  int64_t threads = getZeroKernelThreads();
  auto type = MemRefType::get({size}, builder.getI32Type());
  gpu::GPUFuncOp func =
      createKernelFunc(builder, loc, module, name, {type}, {}, threads);
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  Value index = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::x),
                            arith::ConstantIndexOp::create(b, threads)),
      gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, index,
                                       arith::ConstantIndexOp::create(b, size));
  auto guard = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
  b.setInsertionPointToStart(guard.thenBlock());
  memref::StoreOp::create(b, arith::ConstantIntOp::create(b, 0, 32),
                          func.getArgument(0), index);
  b.setInsertionPointAfter(guard);
  gpu::ReturnOp::create(b);
  return func;
}
