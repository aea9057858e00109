//===- MmaKernelEmitter.cpp - Copy pipeline and epilogue of MMA kernels ---===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "MmaKernelEmitter.h"
#include "TransformMath.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::hot;
using namespace mlir::hot::detail;

MmaKernelEmitter::MmaKernelEmitter(ImplicitLocOpBuilder &b,
                                   const IntMmaKernelSpec &spec,
                                   gpu::GPUFuncOp func)
    : b(b), spec(spec), t(spec.tiling) {
  Block &entry = func.getBody().front();
  argA = entry.getArgument(0);
  argB = entry.getArgument(1);
  argC = entry.getArgument(2);
  unsigned next = 3;
  if (spec.epilogue.rescale) {
    argRowScale = entry.getArgument(next++);
    argColScale = entry.getArgument(next++);
  }
  if (spec.splitK > 1) {
    argWorkspace = entry.getArgument(next++);
    argCounters = entry.getArgument(next++);
  }
}

Value MmaKernelEmitter::andOf(Value x, Value y) {
  if (!x)
    return y;
  if (!y)
    return x;
  return arith::AndIOp::create(b, x, y);
}

void MmaKernelEmitter::emitThreadIds() {
  tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  lane = rem(tid, 32);
  warp = div(tid, 32);
  nBase = mul(gpu::BlockIdOp::create(b, gpu::Dimension::x), t.tileN);
  mBase = mul(gpu::BlockIdOp::create(b, gpu::Dimension::y), t.tileM);
}

void MmaKernelEmitter::emitKRange() {
  kTiles = spec.getKTilesPerSplit();
  if (spec.splitK == 1)
    return;
  split = gpu::BlockIdOp::create(b, gpu::Dimension::z);
  kBegin = mul(split, kTiles);
  int64_t total = spec.getNumKTiles();
  if (total % kTiles != 0)
    kCount = arith::MinUIOp::create(
        b, cst(kTiles), arith::SubIOp::create(b, cst(total), kBegin));
}

Value MmaKernelEmitter::swizzledByte(Value row, Value chunk) {
  int64_t chunksPerRow = t.tileKBytes / kChunkBytes;
  int64_t rowsPer128 = std::max<int64_t>(1, 128 / t.tileKBytes);
  int64_t phases = std::min<int64_t>(chunksPerRow, 8);
  Value phase = rem(div(row, rowsPer128), phases);
  return mul(arith::XOrIOp::create(b, chunk, phase), kChunkBytes);
}

void MmaKernelEmitter::copyTile(Value global, Value shared, int64_t rows,
                                int64_t tileRows, Value rowBase, Value stage,
                                Value kTile, Value tileValid,
                                SmallVectorImpl<Value> &tokens) {
  int64_t chunksPerRow = t.tileKBytes / kChunkBytes;
  int64_t threads = t.numThreads(spec.kind);
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

Value MmaKernelEmitter::loadStage(Value stage, Value local, Value tileValid) {
  Value kTile = kBegin ? add(kBegin, local) : local;
  SmallVector<Value> tokens;
  copyTile(argA, sharedA, spec.m, t.tileM, mBase, stage, kTile, tileValid,
           tokens);
  copyTile(argB, sharedB, spec.n, t.tileN, nBase, stage, kTile, tileValid,
           tokens);
  return nvgpu::DeviceAsyncCreateGroupOp::create(
      b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

Value MmaKernelEmitter::loadPrologue(int64_t count) {
  Value lastGroup;
  for (int64_t s = 0; s < count; ++s) {
    if (s < kTiles)
      lastGroup =
          loadStage(cst(s), cst(s), kCount ? kTileExists(cst(s)) : Value());
    else
      emptyGroup();
  }
  return lastGroup;
}

void MmaKernelEmitter::emptyGroup() {
  // nvvm's commit, not an nvgpu.device_async_create_group of no copies: the
  // latter's assembly form has nothing after its (empty) operand list, so
  // that its printed IR does not parse back. The waits count groups; their
  // token operand is the last real group's.
  NVVM::CpAsyncCommitGroupOp::create(b);
}

void MmaKernelEmitter::storeResults(ValueRange accs, Value warpRow,
                                    Value warpCol, int64_t warpM,
                                    int64_t warpN) {
  const IntMmaEpilogue &epi = spec.epilogue;
  Type f32 = b.getF32Type();
  int64_t numM = warpM / 16, numN = warpN / 8;
  Value laneRow = div(lane, 4), laneCol = mul(rem(lane, 4), 2);
  Value rowBase = add(add(mBase, mul(warpRow, warpM)), laneRow);
  Value colBase = add(add(nBase, mul(warpCol, warpN)), laneCol);

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
  // A lane's two values of a fragment row are adjacent columns 2t, 2t + 1:
  // with N even they are stored as one vector (aligned, and in bounds
  // exactly when the first is).
  bool pairs = spec.n % 2 == 0;
  for (int64_t mi = 0; mi < numM; ++mi)
    for (int64_t h = 0; h < 2; ++h) {
      Value row = add(rowBase, mi * 16 + h * 8);
      Value rowValid = guardRows ? lessThan(row, spec.m) : Value();
      Value rowScale = uniformRowScale;
      if (epi.rescale && !rowScale)
        rowScale = loadScale(argRowScale, 1, row, spec.m);
      for (int64_t ni = 0; ni < numN; ++ni) {
        SmallVector<Value, 2> values;
        for (int64_t e = 0; e < 2; ++e) {
          Value col = add(colBase, ni * 8 + e);
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
          values.push_back(value);
        }
        Value col = add(colBase, ni * 8);
        if (pairs) {
          Value colValid = guardCols ? lessThan(col, spec.n) : Value();
          Value pair = vector::FromElementsOp::create(
              b, VectorType::get({2}, epi.resultElementType), values);
          emitIfThen(b, andOf(rowValid, colValid), [&] {
            auto store =
                vector::StoreOp::create(b, pair, argC, ValueRange{row, col});
            store.setAlignment(
                uint64_t(2 * epi.resultElementType.getIntOrFloatBitWidth() /
                         8));
          });
          continue;
        }
        for (int64_t e = 0; e < 2; ++e) {
          Value colE = add(col, e);
          Value colValid = guardCols ? lessThan(colE, spec.n) : Value();
          emitIfThen(b, andOf(rowValid, colValid), [&] {
            memref::StoreOp::create(b, values[e], argC, ValueRange{row, colE});
          });
        }
      }
    }
}

void MmaKernelEmitter::emitSplitKEpilogue(
    ValueRange accs, function_ref<void(ValueRange)> store) {
  if (spec.splitK == 1)
    return store(accs);
  // Slot (tile, split) of the workspace: fragment f of thread t at vector
  // (slot * fragments + f) * threads + t, so a warp's stores and loads of
  // one fragment are 512 contiguous bytes.
  int64_t threads = t.numThreads(spec.kind);
  int64_t fragments = accs.size();
  Value tile = add(mul(gpu::BlockIdOp::create(b, gpu::Dimension::y),
                       llvm::divideCeil(spec.n, t.tileN)),
                   gpu::BlockIdOp::create(b, gpu::Dimension::x));
  auto vectorIndex = [&](Value slotSplit, int64_t f) {
    Value slot = add(mul(tile, spec.splitK), slotSplit);
    return mul(add(mul(add(mul(slot, fragments), f), threads), tid), 4);
  };
  auto wordsType = VectorType::get({4}, b.getI32Type());
  auto fragmentType = cast<VectorType>(accs.front().getType());
  // Fragments as vector<4xi32> (their two rows joined) and back, with
  // shuffles: the canonical n-D vector.shape_cast has no lowering here.
  auto toWords = [&](Value fragment) {
    Value row0 = vector::ExtractOp::create(b, fragment, ArrayRef<int64_t>{0});
    Value row1 = vector::ExtractOp::create(b, fragment, ArrayRef<int64_t>{1});
    return vector::ShuffleOp::create(b, row0, row1,
                                     ArrayRef<int64_t>{0, 1, 2, 3});
  };
  auto fromWords = [&](Value words) {
    Value fragment = arith::ConstantOp::create(
        b, DenseElementsAttr::get(fragmentType,
                                  b.getI32IntegerAttr(0).getValue()));
    for (int64_t h = 0; h < 2; ++h) {
      Value row = vector::ShuffleOp::create(
          b, words, words, ArrayRef<int64_t>{2 * h, 2 * h + 1});
      fragment =
          vector::InsertOp::create(b, row, fragment, ArrayRef<int64_t>{h});
    }
    return fragment;
  };
  for (int64_t f = 0; f < fragments; ++f) {
    auto store = vector::StoreOp::create(b, toWords(accs[f]), argWorkspace,
                                         ValueRange{vectorIndex(split, f)});
    store.setAlignment(uint64_t(16));
  }
  // Thread 0 counts the block once every thread's stores are done, and
  // releases them at GPU scope (the fence covers what the barrier ordered
  // before it); a fence after the count acquires the other blocks' stores
  // for the last one, which the reducing barrier tells every thread.
  gpu::BarrierOp::create(b);
  auto gpuScope =
      NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::GPU);
  auto count = scf::IfOp::create(
      b, TypeRange{b.getI1Type()},
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cst(0)),
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(count.thenBlock());
    NVVM::MembarOp::create(b, gpuScope);
    Value one = arith::ConstantIntOp::create(b, 1, 32);
    Value before = memref::AtomicRMWOp::create(
        b, arith::AtomicRMWKind::addi, one, argCounters, ValueRange{tile});
    NVVM::MembarOp::create(b, gpuScope);
    scf::YieldOp::create(
        b, ValueRange{arith::CmpIOp::create(
               b, arith::CmpIPredicate::eq, before,
               arith::ConstantIntOp::create(b, spec.splitK - 1, 32))});
    b.setInsertionPointToStart(count.elseBlock());
    scf::YieldOp::create(b, ValueRange{arith::ConstantIntOp::create(b, 0, 1)});
  }
  Value predicate =
      arith::ExtUIOp::create(b, b.getI32Type(), count.getResult(0));
  Value anyLast =
      NVVM::BarrierOp::create(b, b.getI32Type(), /*barrierId=*/Value(),
                              /*numberOfThreads=*/Value(),
                              NVVM::BarrierReductionAttr::get(
                                  b.getContext(), NVVM::BarrierReduction::OR),
                              predicate)
          .getRes();
  Value isLast = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, anyLast,
                                       arith::ConstantIntOp::create(b, 0, 32));
  emitIfThen(b, isLast, [&] {
    SmallVector<Value> sums;
    for (int64_t f = 0; f < fragments; ++f) {
      Value sum;
      for (int64_t s = 0; s < spec.splitK; ++s) {
        auto load = vector::LoadOp::create(b, wordsType, argWorkspace,
                                           ValueRange{vectorIndex(cst(s), f)});
        load.setAlignment(uint64_t(16));
        sum = sum ? Value(arith::AddIOp::create(b, sum, load)) : Value(load);
      }
      sums.push_back(fromWords(sum));
    }
    store(sums);
  });
}
