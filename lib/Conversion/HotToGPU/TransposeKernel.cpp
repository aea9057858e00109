//===- TransposeKernel.cpp - K-major i8 operands to K-contiguous ----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// The tensor-core kernels read both operands K-contiguous. An operand stored
// K-major (`in[K][rows]`) is rewritten by this kernel to `out[rows][kBytes]`:
// K zero-padded to kBytes, and for s4 two values per byte (the even K index in
// the low nibble), as buildKContiguousOperand defines. One thread block turns
// a tile of 64 rows x 64 output bytes (64 K values, 128 for s4) around in
// shared memory: it reads whole input rows (consecutive threads, consecutive
// bytes) and writes 16-byte vectors of output rows. With a tails-last K
// order, output byte k' holds input row emitNaturalIndex(k').
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/HotToGPU.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace mlir::hot;

/// Rows and output bytes of one tile; threads of one block.
static constexpr int64_t kTileRows = 64;
static constexpr int64_t kTileBytes = 64;
static constexpr int64_t kThreads = 256;
/// Bytes each thread stores at once.
static constexpr int64_t kVectorBytes = 16;
/// Padding of a shared-memory tile row (fewer bank conflicts on reads down
/// a column).
static constexpr int64_t kPad = 4;

std::string OperandTransposeSpec::getKernelName() const {
  return ("hot_transpose_" + std::string(packS4 ? "s4" : "s8") + "_" +
          std::to_string(k) + "x" + std::to_string(rows) + "_to_" +
          std::to_string(rows) + "x" + std::to_string(kBytes) +
          order.getSuffix());
}

int64_t OperandTransposeSpec::getGridX() const {
  return llvm::divideCeil(kBytes, kTileBytes);
}

int64_t OperandTransposeSpec::getGridY() const {
  return llvm::divideCeil(rows, kTileRows);
}

int64_t OperandTransposeSpec::getNumThreads() { return kThreads; }

gpu::GPUFuncOp mlir::hot::buildOperandTransposeKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module,
    const OperandTransposeSpec &spec) {
  std::string name = spec.getKernelName();
  if (auto existing = module.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing;

  MLIRContext *ctx = builder.getContext();
  Type i8 = builder.getI8Type();
  int64_t valuesPerByte = spec.packS4 ? 2 : 1;
  int64_t tileValues = kTileBytes * valuesPerByte;
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto tileType = MemRefType::get({tileValues, kTileRows + kPad}, i8,
                                  MemRefLayoutAttrInterface(), workgroup);
  auto inType = MemRefType::get({spec.k, spec.rows}, i8);
  auto outType = MemRefType::get({spec.rows, spec.kBytes}, i8);

  auto func = createKernelFunc(builder, loc, module, name, {inType, outType},
                               TypeRange{tileType}, kThreads);

  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  auto lessThan = [&](Value x, int64_t y) -> Value {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, cst(y));
  };
  Value in = func.getArgument(0), out = func.getArgument(1);
  Value tile = func.getWorkgroupAttributions()[0];
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value byteBase = arith::MulIOp::create(
      b, gpu::BlockIdOp::create(b, gpu::Dimension::x), cst(kTileBytes));
  Value rowBase = arith::MulIOp::create(
      b, gpu::BlockIdOp::create(b, gpu::Dimension::y), cst(kTileRows));
  Value kBase = arith::MulIOp::create(b, byteBase, cst(valuesPerByte));
  Value zero = arith::ConstantIntOp::create(b, i8, 0);

  // 1. in[kBase + kv][rowBase + r] -> tile[kv][r]; 0 past K or the rows.
  Value r = arith::RemUIOp::create(b, tid, cst(kTileRows));
  Value firstKv = arith::DivUIOp::create(b, tid, cst(kTileRows));
  Value row = arith::AddIOp::create(b, rowBase, r);
  Value rowValid = spec.rows % kTileRows ? lessThan(row, spec.rows) : Value();
  int64_t kvStep = kThreads / kTileRows;
  for (int64_t i = 0; i < tileValues / kvStep; ++i) {
    Value kv = arith::AddIOp::create(b, firstKv, cst(i * kvStep));
    Value kk = arith::AddIOp::create(b, kBase, kv);
    Value valid = lessThan(kk, spec.k);
    if (rowValid)
      valid = arith::AndIOp::create(b, valid, rowValid);
    Value safeK = arith::SelectOp::create(b, valid, kk, cst(0));
    safeK = spec.order.emitNaturalIndex(b, b.getLoc(), safeK);
    Value safeRow = rowValid ? arith::SelectOp::create(b, valid, row, cst(0))
                             : row;
    Value v = memref::LoadOp::create(b, in, ValueRange{safeK, safeRow});
    v = arith::SelectOp::create(b, valid, v, zero);
    memref::StoreOp::create(b, v, tile, ValueRange{kv, r});
  }
  gpu::BarrierOp::create(b);

  // 2. Each thread: 16 output bytes of one row, from a tile column.
  int64_t chunksPerRow = kTileBytes / kVectorBytes;
  Value outRow = arith::DivUIOp::create(b, tid, cst(chunksPerRow));
  Value chunk = arith::RemUIOp::create(b, tid, cst(chunksPerRow));
  Value firstByte = arith::MulIOp::create(b, chunk, cst(kVectorBytes));
  SmallVector<Value> bytes;
  for (int64_t e = 0; e < kVectorBytes; ++e) {
    Value byte = arith::AddIOp::create(b, firstByte, cst(e));
    auto valueAt = [&](int64_t which) -> Value {
      Value kv = spec.packS4
                     ? arith::AddIOp::create(
                           b, arith::MulIOp::create(b, byte, cst(2)),
                           cst(which))
                     : byte;
      return memref::LoadOp::create(b, tile, ValueRange{kv, outRow});
    };
    if (!spec.packS4) {
      bytes.push_back(valueAt(0));
      continue;
    }
    Value low = arith::AndIOp::create(
        b, valueAt(0), arith::ConstantIntOp::create(b, i8, 15));
    Value high = arith::ShLIOp::create(b, valueAt(1),
                                       arith::ConstantIntOp::create(b, i8, 4));
    bytes.push_back(arith::OrIOp::create(b, low, high));
  }
  Value vector = vector::FromElementsOp::create(
      b, VectorType::get({kVectorBytes}, i8), bytes);
  Value globalRow = arith::AddIOp::create(b, rowBase, outRow);
  Value globalByte = arith::AddIOp::create(b, byteBase, firstByte);
  Value valid;
  if (spec.rows % kTileRows)
    valid = lessThan(globalRow, spec.rows);
  if (spec.kBytes % kTileBytes) {
    Value inside = lessThan(globalByte, spec.kBytes);
    valid = valid ? arith::AndIOp::create(b, valid, inside) : inside;
  }
  auto store = [&] {
    // kBytes is a multiple of 16: the vector is 16-byte aligned.
    auto op = vector::StoreOp::create(b, vector, out,
                                      ValueRange{globalRow, globalByte});
    op.setAlignment(uint64_t(kVectorBytes));
  };
  if (valid) {
    auto ifOp = scf::IfOp::create(b, valid, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    store();
  } else {
    store();
  }
  gpu::ReturnOp::create(b);
  return func;
}
