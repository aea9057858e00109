//===- MmaKernelEmitter.h - What the tensor-core kernels share --*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// The parts of the int_matmul kernels that do not depend on the MMA
// instruction: the cp.async pipeline that stages A and B tiles global ->
// shared (XOR-swizzled), and the epilogue that stores an accumulator laid out
// as mma.sync m16n8 C fragments (which is also wgmma's D layout, per warp).
// IntMmaKernel.cpp (mma.sync) and WgmmaKernel.cpp (wgmma) derive from it.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_LIB_CONVERSION_HOTTOGPU_MMAKERNELEMITTER_H
#define HOT_LIB_CONVERSION_HOTTOGPU_MMAKERNELEMITTER_H

#include "hot/Conversion/HotToGPU.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::hot::detail {

/// Bytes of one cp.async and of one ldmatrix row.
inline constexpr int64_t kChunkBytes = 16;
/// Bytes of K consumed by one mma.sync or wgmma (32 s8 or 64 s4 values).
inline constexpr int64_t kMmaKBytes = 32;

/// Emits kernel code into `func`'s entry block through `b`. Index arithmetic
/// is plain arith on `index`; LLVM folds the constant parts. Derived classes
/// set sharedA / sharedB (memref<stages x rows x tileKBytes x i8> in
/// workgroup memory) before issuing copies.
class MmaKernelEmitter {
protected:
  MmaKernelEmitter(ImplicitLocOpBuilder &b, const IntMmaKernelSpec &spec,
                   gpu::GPUFuncOp func);

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
  /// x && y, where a null value is "true".
  Value andOf(Value x, Value y);

  /// Sets tid, lane, warp, mBase and nBase (block (x, y) = (N, M) tile).
  void emitThreadIds();

  /// Byte offset of 16-byte chunk `chunk` of tile row `row` in shared memory:
  /// chunk ^ ((row / max(1, 128 / tileKBytes)) % min(8, tileKBytes / 16)).
  /// The 8 rows one ldmatrix reads (and the rows cp.async writes) fall in
  /// distinct bank groups; for tiles 128, 64 or 32 bytes wide this is exactly
  /// the hardware's 128B, 64B or 32B swizzle (address bits [4, 7) XOR bits
  /// [7, 10)) as long as each stage starts on a 1 KiB boundary.
  Value swizzledByte(Value row, Value chunk);

  /// The K tiles of this block: `kTiles` from K tile `kBegin` (null: 0), or
  /// in the last split of an uneven split K (IntMmaKernelSpec) `kCount`
  /// (else null) of them. With split K, `split` is the block's (grid.z).
  void emitKRange();
  /// The upper bound of a loop over this block's K tiles.
  Value kTileBound() { return kCount ? kCount : cst(kTiles); }
  /// Whether this block's K tile `local` exists: local < kTileBound().
  Value kTileExists(Value local) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, local,
                                 kTileBound());
  }

  /// Issues both operands' async copies of this block's K tile `local` into
  /// `stage` and commits them as one group; `tileValid` (or null) says
  /// whether the tile exists at all (if not, the copies zero-fill from a
  /// valid address).
  Value loadStage(Value stage, Value local, Value tileValid);
  /// The prologue's copies of this block's K tiles 0 .. count-1, one group
  /// each (empty groups past its last tile keep the group count uniform);
  /// returns the last group.
  Value loadPrologue(int64_t count);
  /// Commits an empty group (keeps the number of groups uniform).
  void emptyGroup();

  /// Guarded stores of accumulators laid out as m16n8 C fragments: the warp
  /// at (`warpRow`, `warpCol`) of a grid of `warpM` x `warpN` warp tiles
  /// holds (warpM / 16) x (warpN / 8) vector<2x2xi32> `accs`, row-major; with
  /// a fused rescale, `(f32(acc) * row_scale) * col_scale`.
  void storeResults(ValueRange accs, Value warpRow, Value warpCol,
                    int64_t warpM, int64_t warpN);

  /// Calls `store` with the block's accumulators `accs` (vector<2x2xi32>
  /// fragments): directly, or with split K, in the output tile's last block
  /// only, with every split's accumulators added (IntMmaKernelSpec).
  void emitSplitKEpilogue(ValueRange accs,
                          function_ref<void(ValueRange)> store);

  ImplicitLocOpBuilder &b;
  const IntMmaKernelSpec &spec;
  const IntMmaTiling &t;
  Value argA, argB, argC, argRowScale, argColScale, argWorkspace, argCounters;
  Value sharedA, sharedB;
  Value tid, lane, warp, mBase, nBase;
  int64_t kTiles = 0;
  Value split, kBegin, kCount;

private:
  void copyTile(Value global, Value shared, int64_t rows, int64_t tileRows,
                Value rowBase, Value stage, Value kTile, Value tileValid,
                SmallVectorImpl<Value> &tokens);
};

/// Emits the body of the mma.sync kernel (IntMmaKind::S8 and S4).
void emitMmaSyncKernel(ImplicitLocOpBuilder &b, const IntMmaKernelSpec &spec,
                       gpu::GPUFuncOp func);
/// Emits the body of the wgmma kernel (IntMmaKind::WgmmaS8).
void emitWgmmaKernel(ImplicitLocOpBuilder &b, const IntMmaKernelSpec &spec,
                     gpu::GPUFuncOp func);

} // namespace mlir::hot::detail

#endif // HOT_LIB_CONVERSION_HOTTOGPU_MMAKERNELEMITTER_H
