//===- IntMmaKernel.cpp - The tensor-core integer matmul kernel -----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// Builds a gpu.func computing C = A·B on integer tensor cores with nvgpu ops.
// Fragment layouts (PTX ISA, "mma.m16n8k32" for s8; m16n8k64 for s4 is the
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

#include "hot/Conversion/HotToGPU.h"
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

/// Bytes of one cp.async and of one ldmatrix row.
static constexpr int64_t kChunkBytes = 16;
/// Bytes of K consumed by one mma.sync (32 s8 or 64 s4 values).
static constexpr int64_t kMmaKBytes = 32;
/// Static shared memory available without an opt-in.
static constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

std::string IntMmaKernelSpec::getKernelName() const {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << "hot_int_mma_" << (kind == IntMmaKind::S4 ? "s4" : "s8") << "_" << m
     << "x" << n << "x" << kBytes << "_t" << tiling.tileM << "x"
     << tiling.tileN << "x" << tiling.tileKBytes << "_w" << tiling.warpM
     << "x" << tiling.warpN << "_s" << tiling.stages << "_";
  if (epilogue.rescale)
    os << "rescale" << epilogue.rowScaleRank << epilogue.colScaleRank << "_";
  os << epilogue.resultElementType;
  return name;
}

LogicalResult mlir::hot::verifyIntMmaTiling(const IntMmaTiling &t,
                                            std::string &reason) {
  auto fail = [&](const Twine &why) {
    reason = why.str();
    return failure();
  };
  if (t.warpM <= 0 || t.warpM % 16 != 0)
    return fail("warp-m must be a positive multiple of 16 (the MMA's M)");
  if (t.warpN <= 0 || t.warpN % 8 != 0)
    return fail("warp-n must be a positive multiple of 8 (the MMA's N)");
  if (t.tileM <= 0 || t.tileM % t.warpM != 0 || t.tileN <= 0 ||
      t.tileN % t.warpN != 0)
    return fail("tile-m and tile-n must be positive multiples of warp-m and "
                "warp-n");
  if (t.tileKBytes != 32 && t.tileKBytes != 64 && t.tileKBytes != 128)
    return fail("tile-k must be 32, 64 or 128 bytes");
  if (t.stages < 2)
    return fail("the cp.async pipeline needs at least 2 stages");
  if (t.numThreads() > 1024)
    return fail("the tiling needs more than 1024 threads per block");
  int64_t chunksPerRow = t.tileKBytes / kChunkBytes;
  if ((t.tileM * chunksPerRow) % t.numThreads() != 0 ||
      (t.tileN * chunksPerRow) % t.numThreads() != 0)
    return fail("every thread must copy the same number of 16-byte chunks "
                "of each tile (tile-m and tile-n times tile-k / 16 must be "
                "multiples of the thread count)");
  if (t.sharedBytes() > kMaxStaticSharedBytes)
    return fail("the staged tiles need " + Twine(t.sharedBytes()) +
                " bytes of shared memory, more than the 48 KiB of static "
                "shared memory: use fewer stages or smaller tiles");
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
  return types;
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

/// Emits the body of one kernel. Index arithmetic is plain arith on `index`;
/// LLVM folds the constant parts.
class KernelEmitter {
public:
  KernelEmitter(ImplicitLocOpBuilder &b, const IntMmaKernelSpec &spec,
                gpu::GPUFuncOp func)
      : b(b), spec(spec), t(spec.tiling) {
    Block &entry = func.getBody().front();
    argA = entry.getArgument(0);
    argB = entry.getArgument(1);
    argC = entry.getArgument(2);
    if (spec.epilogue.rescale) {
      argRowScale = entry.getArgument(3);
      argColScale = entry.getArgument(4);
    }
    sharedA = func.getWorkgroupAttributions()[0];
    sharedB = func.getWorkgroupAttributions()[1];
  }

  void emit();

private:
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value add(Value x, int64_t y) { return y == 0 ? x : add(x, cst(y)); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, x, cst(y)); }
  Value div(Value x, int64_t y) {
    return arith::DivUIOp::create(b, x, cst(y));
  }
  Value rem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, x, cst(y));
  }
  Value lessThan(Value x, int64_t y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, cst(y));
  }
  Value andOf(Value x, Value y) {
    if (!x)
      return y;
    if (!y)
      return x;
    return arith::AndIOp::create(b, x, y);
  }

  /// Byte offset of 16-byte chunk `chunk` of tile row `row` in shared memory:
  /// chunks are XOR-swizzled so that the 8 rows one ldmatrix reads (and the
  /// rows cp.async writes) fall in distinct bank groups.
  Value swizzledByte(Value row, Value chunk);

  /// Issues the async copies of K tile `kTile` into `stage` for one operand
  /// (`rows` rows in global memory, `tileRows` per block starting at
  /// `rowBase`); `tileValid` (or null) says whether the tile exists at all.
  void copyTile(Value global, Value shared, int64_t rows, int64_t tileRows,
                Value rowBase, Value stage, Value kTile, Value tileValid,
                SmallVectorImpl<Value> &tokens);
  /// Issues both operands' copies of `kTile` and commits them as one group.
  Value loadStage(Value stage, Value kTile, Value tileValid);
  /// One K tile of MMAs on the fragments of `stage`.
  void computeStage(Value stage, SmallVectorImpl<Value> &accs);
  /// Reinterprets an i8 fragment (one vector<4xi8> per register) as s4, one
  /// register at a time: n-D vector.bitcast has no direct LLVM lowering.
  Value bitcastToI4(Value fragment);
  /// Guarded stores of the accumulators (with the fused rescale).
  void storeResults(ValueRange accs);

  ImplicitLocOpBuilder &b;
  const IntMmaKernelSpec &spec;
  const IntMmaTiling &t;
  Value argA, argB, argC, argRowScale, argColScale, sharedA, sharedB;
  Value tid, lane, warpRow, warpCol, mBase, nBase;
};

} // namespace

Value KernelEmitter::swizzledByte(Value row, Value chunk) {
  int64_t chunksPerRow = t.tileKBytes / kChunkBytes;
  int64_t rowsPer128 = std::max<int64_t>(1, 128 / t.tileKBytes);
  int64_t phases = std::min<int64_t>(chunksPerRow, 8);
  Value phase = rem(div(row, rowsPer128), phases);
  return mul(arith::XOrIOp::create(b, chunk, phase), kChunkBytes);
}

void KernelEmitter::copyTile(Value global, Value shared, int64_t rows,
                             int64_t tileRows, Value rowBase, Value stage,
                             Value kTile, Value tileValid,
                             SmallVectorImpl<Value> &tokens) {
  int64_t chunksPerRow = t.tileKBytes / kChunkBytes;
  int64_t threads = t.numThreads();
  int64_t copies = tileRows * chunksPerRow / threads;
  Value chunk = rem(tid, chunksPerRow);
  Value firstRow = div(tid, chunksPerRow);
  Value globalK = add(mul(kTile, t.tileKBytes), mul(chunk, kChunkBytes));
  // Chunks are whole: kBytes is a multiple of 16.
  Value kValid = spec.kBytes % t.tileKBytes != 0
                     ? lessThan(globalK, spec.kBytes)
                     : Value();
  Value zero = cst(0);
  for (int64_t i = 0; i < copies; ++i) {
    Value row = add(firstRow, i * (threads / chunksPerRow));
    Value globalRow = add(rowBase, row);
    Value rowValid =
        rows % tileRows != 0 ? lessThan(globalRow, rows) : Value();
    Value valid = andOf(andOf(tileValid, kValid), rowValid);
    Value srcRow = globalRow, srcK = globalK, srcElements;
    if (valid) {
      // Out-of-bounds chunks read nothing (zero fill) from a valid address.
      srcRow = arith::SelectOp::create(b, valid, globalRow, zero);
      srcK = arith::SelectOp::create(b, valid, globalK, zero);
      srcElements =
          arith::SelectOp::create(b, valid, cst(kChunkBytes), zero);
    }
    auto copy = nvgpu::DeviceAsyncCopyOp::create(
        b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), shared,
        ValueRange{stage, row, swizzledByte(row, chunk)}, global,
        ValueRange{srcRow, srcK}, b.getIndexAttr(kChunkBytes), srcElements,
        /*bypassL1=*/b.getUnitAttr());
    tokens.push_back(copy.getAsyncToken());
  }
}

Value KernelEmitter::loadStage(Value stage, Value kTile, Value tileValid) {
  SmallVector<Value> tokens;
  copyTile(argA, sharedA, spec.m, t.tileM, mBase, stage, kTile, tileValid,
           tokens);
  copyTile(argB, sharedB, spec.n, t.tileN, nBase, stage, kTile, tileValid,
           tokens);
  return nvgpu::DeviceAsyncCreateGroupOp::create(
      b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

Value KernelEmitter::bitcastToI4(Value fragment) {
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

void KernelEmitter::computeStage(Value stage, SmallVectorImpl<Value> &accs) {
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

void KernelEmitter::storeResults(ValueRange accs) {
  const IntMmaEpilogue &epi = spec.epilogue;
  Type f32 = b.getF32Type();
  int64_t numM = t.warpM / 16, numN = t.warpN / 8;
  Value laneRow = div(lane, 4), laneCol = mul(rem(lane, 4), 2);
  Value rowBase = add(add(mBase, mul(warpRow, t.warpM)), laneRow);
  Value colBase = add(add(nBase, mul(warpCol, t.warpN)), laneCol);

  // Scales are read at clamped indices, so the loads need no guard.
  auto loadScale = [&](Value scale, int64_t rank, Value index, int64_t size) {
    if (rank == 0)
      return Value(memref::LoadOp::create(b, scale, ValueRange{}));
    Value clamped = arith::MinUIOp::create(b, index, cst(size - 1));
    return Value(memref::LoadOp::create(b, scale, ValueRange{clamped}));
  };
  Value uniformRowScale, uniformColScale;
  if (epi.rescale && epi.rowScaleRank == 0)
    uniformRowScale = loadScale(argRowScale, 0, Value(), 0);
  if (epi.rescale && epi.colScaleRank == 0)
    uniformColScale = loadScale(argColScale, 0, Value(), 0);

  bool guardRows = spec.m % t.tileM != 0, guardCols = spec.n % t.tileN != 0;
  for (int64_t mi = 0; mi < numM; ++mi)
    for (int64_t h = 0; h < 2; ++h) {
      Value row = add(rowBase, mi * 16 + h * 8);
      Value rowValid = guardRows ? lessThan(row, spec.m) : Value();
      Value rowScale = uniformRowScale;
      if (epi.rescale && !rowScale)
        rowScale = loadScale(argRowScale, 1, row, spec.m);
      for (int64_t ni = 0; ni < numN; ++ni)
        for (int64_t e = 0; e < 2; ++e) {
          Value col = add(colBase, ni * 8 + e);
          Value colValid = guardCols ? lessThan(col, spec.n) : Value();
          Value colScale = uniformColScale;
          if (epi.rescale && !colScale)
            colScale = loadScale(argColScale, 1, col, spec.n);
          Value value = vector::ExtractOp::create(
              b, accs[mi * numN + ni], ArrayRef<int64_t>{h, e});
          if (epi.rescale) {
            // docs/numerics.md: (f32(acc) * row_scale) * col_scale.
            value = arith::SIToFPOp::create(b, f32, value);
            value = arith::MulFOp::create(b, value, rowScale);
            value = arith::MulFOp::create(b, value, colScale);
            unsigned width = epi.resultElementType.getIntOrFloatBitWidth();
            if (width < 32)
              value = arith::TruncFOp::create(b, epi.resultElementType, value);
            else if (width > 32)
              value = arith::ExtFOp::create(b, epi.resultElementType, value);
          }
          Value valid = andOf(rowValid, colValid);
          if (!valid) {
            memref::StoreOp::create(b, value, argC, ValueRange{row, col});
            continue;
          }
          auto guard = scf::IfOp::create(b, valid, /*withElseRegion=*/false);
          OpBuilder::InsertionGuard insertion(b);
          b.setInsertionPointToStart(guard.thenBlock());
          memref::StoreOp::create(b, value, argC, ValueRange{row, col});
        }
    }
}

void KernelEmitter::emit() {
  Type i32 = b.getI32Type();
  int64_t warpsN = t.tileN / t.warpN;
  tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  lane = rem(tid, 32);
  Value warp = div(tid, 32);
  warpRow = div(warp, warpsN);
  warpCol = rem(warp, warpsN);
  nBase = mul(gpu::BlockIdOp::create(b, gpu::Dimension::x), t.tileN);
  mBase = mul(gpu::BlockIdOp::create(b, gpu::Dimension::y), t.tileM);

  int64_t numKTiles = llvm::divideCeil(spec.kBytes, t.tileKBytes);
  int64_t stages = t.stages;
  // Prologue: tiles 0 .. stages-2 in flight, one group each (empty groups
  // past the last tile keep the group count uniform).
  Value lastGroup;
  for (int64_t s = 0; s + 1 < stages; ++s) {
    if (s < numKTiles) {
      lastGroup = loadStage(cst(s), cst(s), Value());
      continue;
    }
    lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(
        b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), ValueRange{});
  }

  int64_t numAccs = (t.warpM / 16) * (t.warpN / 8);
  Value zeroAcc = arith::ConstantOp::create(
      b, DenseElementsAttr::get(VectorType::get({2, 2}, i32),
                                b.getI32IntegerAttr(0).getValue()));
  SmallVector<Value> inits(numAccs, zeroAcc);
  auto loop = scf::ForOp::create(b, cst(0), cst(numKTiles), cst(1), inits);
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
    loadStage(rem(next, stages), next, lessThan(next, numKTiles));
    SmallVector<Value> accs(loop.getRegionIterArgs());
    computeStage(rem(kTile, stages), accs);
    scf::YieldOp::create(b, accs);
  }
  // Only zero-fill copies can still be pending; retire them before exit.
  nvgpu::DeviceAsyncWaitOp::create(b, lastGroup, b.getI32IntegerAttr(0));
  storeResults(loop.getResults());
  gpu::ReturnOp::create(b);
}

FailureOr<gpu::GPUFuncOp>
mlir::hot::buildIntMmaKernel(OpBuilder &builder, Location loc,
                             gpu::GPUModuleOp module,
                             const IntMmaKernelSpec &spec) {
  std::string name = spec.getKernelName();
  if (auto existing = module.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing;
  std::string reason;
  if (failed(verifyIntMmaTiling(spec.tiling, reason)))
    return emitError(loc, reason);
  if (spec.m <= 0 || spec.n <= 0 || spec.kBytes <= 0 ||
      spec.kBytes % kChunkBytes != 0)
    return emitError(loc, "the kernel needs M, N > 0 and a K extent that is "
                          "a positive multiple of 16 bytes");

  MLIRContext *ctx = builder.getContext();
  const IntMmaTiling &t = spec.tiling;
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Type i8 = builder.getI8Type();
  auto sharedA = MemRefType::get({t.stages, t.tileM, t.tileKBytes}, i8,
                                 MemRefLayoutAttrInterface(), workgroup);
  auto sharedB = MemRefType::get({t.stages, t.tileN, t.tileKBytes}, i8,
                                 MemRefLayoutAttrInterface(), workgroup);

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto funcType =
      FunctionType::get(ctx, getIntMmaKernelArgumentTypes(ctx, spec), {});
  auto func = gpu::GPUFuncOp::create(builder, loc, name, funcType,
                                     TypeRange{sharedA, sharedB});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  // cp.async and ldmatrix need 16-byte aligned shared addresses; 128 keeps
  // the swizzle's bank mapping exact.
  for (unsigned i = 0; i < 2; ++i)
    func.setWorkgroupAttributionAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                                     builder.getI64IntegerAttr(128));
  func.setKnownBlockSizeAttr(builder.getDenseI32ArrayAttr(
      {static_cast<int32_t>(t.numThreads()), 1, 1}));

  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  KernelEmitter(b, spec, func).emit();
  return func;
}
