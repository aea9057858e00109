//===- HadamardQuantizeKernel.cpp - Fused block Hadamard + quantize -------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// Builds the gpu.funcs of hot.quantize(hot.hadamard(x, dim 1)) with maxabs
// scales. One warp owns one row at a time. A row is read in chunks of
// 32 * V elements (V = vector width): lane l holds elements
// chunk + l * V + [0, V) of it. Element j sits at position t = j mod b of
// its Hadamard block, and bit s of t is
//   - bit s of the register index e, for 2^s < V (the stage stays in
//     registers), or
//   - bit (s - log2 V) of the lane, otherwise (the partner value comes from
//     gpu.shuffle xor 2^s / V; lanes of one block are in the same warp
//     because b / V <= 32 divides 32).
// Stages run lowest bit first, and the element with bit s clear computes
// lo + hi, the other lo - hi, then every value is multiplied by c_b: the
// exact operations of docs/numerics.md, so the results equal the CPU path's.
// With `rowInRegisters` (rows short enough), each lane loads its values of
// the whole row at once and keeps them, transformed, in registers from the
// statistics to the quantize: the row is read once, and its loads are all
// in flight together. Longer rows are transformed twice, once for the
// statistics and once to quantize, so that any row length fits without
// spilling. SAWB's f64 sums take docs/numerics.md's order, which is this
// layout's: element j goes into partial j mod 128, which is value j mod V of
// lane (j / V) mod 32 in sub-chunk (j mod 128) / 32V, so each lane keeps its
// 128 / 32 partials in registers and a tree of xor shuffles and register adds
// combines them; the sums are the CPU path's bit for bit.
//
//===----------------------------------------------------------------------===//

#include "TransformMath.h"
#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/HotToLinalg.h"
#include "hot/Conversion/TransformKernels.h"
#include "hot/Dialect/Hot/Walsh.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/MathExtras.h"


using namespace mlir;
using namespace mlir::hot;

/// Registers a lane of a row-in-registers kernel needs besides the row's
/// values (addresses, the scale, the hash's temporaries), and more with bf16
/// or f16 input (extending the loaded pairs): with 32, fc1's bf16 rows spill
/// 16 bytes on sm_86 and sm_89 (row-in-registers-ptxas.mlir).
static constexpr int64_t kRowWorkingRegisters = 32;
static constexpr int64_t kNarrowRowWorkingRegisters = 40;

int64_t HadamardQuantizeKernelSpec::getLaneValues() const {
  return llvm::divideCeil(n, kWarpSize * vectorWidth) * vectorWidth;
}

std::string HadamardQuantizeKernelSpec::getKernelName() const {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << "hot_hadamard_";
  switch (stage) {
  case HadamardQuantizeStage::Row:
    os << "quantize_row_";
    break;
  case HadamardQuantizeStage::AbsMax:
    os << "absmax_";
    break;
  case HadamardQuantizeStage::Scale:
    os << "scale_";
    break;
  case HadamardQuantizeStage::Tensor:
    os << "quantize_tensor_";
    break;
  }
  os << m << "x" << n << "_b" << block;
  if (columnBlock > 1 && stage != HadamardQuantizeStage::Scale)
    os << "_c" << columnBlock;
  os << "_v" << vectorWidth << "_w" << warpsPerBlock;
  if (stage != HadamardQuantizeStage::Row)
    os << "_p" << numPartials;
  if (stage == HadamardQuantizeStage::Row ||
      stage == HadamardQuantizeStage::Tensor)
    os << "_q" << qmax << (stochastic ? "_stochastic" : "_nearest");
  if (sawb)
    os << "_sawb";
  if (rowInRegisters)
    os << "_regs";
  if (rowsPerStep > 1)
    os << "_r" << rowsPerStep;
  os << getInputTypeSuffix(inputElementType);
  return name;
}

namespace {

/// Emits the body of one kernel of the family.
class HadamardQuantizeEmitter {
public:
  HadamardQuantizeEmitter(ImplicitLocOpBuilder &b,
                          const HadamardQuantizeKernelSpec &spec,
                          gpu::GPUFuncOp func)
      : b(b), spec(spec), args(func.getArguments()) {}

  void emit();

private:
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(float(v)));
  }
  Value add(Value x, int64_t y) {
    if (y == 0)
      return x;
    // Constant offsets stay constants: a row in registers finds its chunks
    // by them.
    if (std::optional<int64_t> c = getConstantIntValue(x))
      return cst(*c + y);
    return arith::AddIOp::create(b, x, cst(y));
  }
  Value mul(Value x, int64_t y) {
    return y == 1 ? x : arith::MulIOp::create(b, x, cst(y));
  }
  Value lessThan(Value x, int64_t y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, cst(y));
  }
  int64_t chunkElements() const { return kWarpSize * spec.vectorWidth; }
  int64_t numChunks() const {
    return llvm::divideCeil(spec.n, chunkElements());
  }
  /// Whether the last chunk of a row has lanes past its end.
  bool partialChunk() const { return spec.n % chunkElements() != 0; }

  /// The V transformed values of this lane in chunk `chunk` of `row`, and
  /// (when `masked`: the chunk can reach past the row) whether the lane's
  /// elements exist. With the row in registers, `chunk` is a constant and
  /// the values are loadRow's.
  SmallVector<Value> transformChunk(Value row, Value chunk, Value &active,
                                    bool masked, bool normalize = true);
  /// Whether rowStats' maxima are of the butterfly's values before the
  /// normalization (emitBlockButterfly), which normalizedMax applies once to
  /// the max: kernels that transform a chunk for the max alone.
  bool rawMax() const {
    bool keptToQuantize =
        spec.rowInRegisters && spec.stage != HadamardQuantizeStage::AbsMax;
    return !keptToQuantize && !spec.sawb && spec.columnBlock == 1;
  }
  Value normalizedMax(Value max) {
    return rawMax() ? emitNormalize(b, max, spec.block) : max;
  }
  /// The values of chunk `chunk` as loaded (transformed along the rows with
  /// spec.columnBlock, else not yet along the row); see transformChunk.
  SmallVector<Value> loadChunk(Value row, Value chunk, Value &active,
                               bool masked);
  /// Loads this lane's values of every chunk of `row` and keeps them for
  /// transformRow.
  void loadRow(Value row);
  /// Runs the butterflies along the row on loadRow's values (normalized
  /// unless rawMax()), which transformChunk then returns.
  void transformRow();
  /// Folds `body` over the offsets 0, step, 2 step, ... < n of a row,
  /// threading `inits` through: one scf.for, or with the row in registers
  /// one copy of `body` per offset (a constant).
  SmallVector<Value> foldRow(
      int64_t step, ValueRange inits,
      function_ref<SmallVector<Value>(Value offset, ValueRange state)> body);
  /// The lane's values at `col` (already clamped; 0 where `active` is
  /// false) of row `row` of the block Hadamard along the rows
  /// (spec.columnBlock).
  SmallVector<Value> transformColumns(Value row, Value col, Value active);
  /// The statistics of one row: max(acc, |y|) over the lane's elements of
  /// every chunk of `row` (of the unnormalized |y| with rawMax()) and, with
  /// sawb, the f64 sums of |y| and y^2 over the whole row in
  /// docs/numerics.md's order (the same in every lane).
  struct RowStats {
    Value max, sum, sumOfSquares;
  };
  RowStats rowStats(Value row, Value acc);
  /// docs/numerics.md's tree over a row's 128 partial sums, held as slots
  /// (rowStats), in every lane of the warp.
  Value treeSum(ArrayRef<Value> slots);
  /// maximumf of the AbsMax kernel's `partials`, in every lane of the warp.
  Value partialsMax(Value partials);
  /// Quantizes every chunk of `row` with the reciprocal scale `inverse` and
  /// stores q.
  void quantizeRow(Value row, Value inverse, Value q);
  /// Quantizes chunk `chunk` of `row` and stores its q.
  void quantizeChunk(Value row, Value chunk, Value inverse, Value q);

  ImplicitLocOpBuilder &b;
  const HadamardQuantizeKernelSpec &spec;
  ArrayRef<BlockArgument> args;
  Value lane, warp, key;
  /// With the row in registers: loadRow's values and lane masks per chunk.
  SmallVector<SmallVector<Value>> rowValues;
  SmallVector<Value> rowActive;
};

} // namespace

SmallVector<Value>
HadamardQuantizeEmitter::transformChunk(Value row, Value chunk, Value &active,
                                        bool masked, bool normalize) {
  if (spec.rowInRegisters) {
    // SAWB's steps can cover chunks past the row: zeros, which add nothing.
    int64_t index = *getConstantIntValue(chunk) / chunkElements();
    if (index >= int64_t(rowValues.size())) {
      active = Value();
      return SmallVector<Value>(spec.vectorWidth, f32(0));
    }
    active = rowActive[index];
    return rowValues[index];
  }
  SmallVector<Value> v = loadChunk(row, chunk, active, masked);
  if (spec.columnBlock == 1)
    emitBlockButterfly(b, v, spec.block, lane, normalize);
  return v;
}

SmallVector<Value> HadamardQuantizeEmitter::loadChunk(Value row, Value chunk,
                                                      Value &active,
                                                      bool masked) {
  int64_t width = spec.vectorWidth;
  Value col = arith::AddIOp::create(b, chunk, mul(lane, width));
  active = masked ? lessThan(col, spec.n) : Value();
  // Lanes past the row read its first vector and transform zeros instead.
  Value loadCol =
      active ? Value(arith::SelectOp::create(b, active, col, cst(0))) : col;
  if (spec.columnBlock > 1)
    return transformColumns(row, loadCol, active);
  return emitLoadAsF32(b, args[0], ValueRange{row, loadCol}, width, active);
}

void HadamardQuantizeEmitter::loadRow(Value row) {
  rowValues.clear();
  rowActive.clear();
  for (int64_t index = 0; index < numChunks(); ++index) {
    Value active;
    bool masked = (index + 1) * chunkElements() > spec.n;
    rowValues.push_back(
        loadChunk(row, cst(index * chunkElements()), active, masked));
    rowActive.push_back(active);
  }
}

void HadamardQuantizeEmitter::transformRow() {
  if (spec.columnBlock == 1)
    for (SmallVector<Value> &v : rowValues)
      emitBlockButterfly(b, v, spec.block, lane, !rawMax());
}

SmallVector<Value> HadamardQuantizeEmitter::foldRow(
    int64_t step, ValueRange inits,
    function_ref<SmallVector<Value>(Value offset, ValueRange state)> body) {
  if (spec.rowInRegisters) {
    SmallVector<Value> state(inits);
    for (int64_t offset = 0; offset < spec.n; offset += step)
      state = body(cst(offset), state);
    return state;
  }
  auto loop = scf::ForOp::create(
      b, cst(0), cst(spec.n), cst(step), inits,
      [&](OpBuilder &nested, Location, Value offset, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        scf::YieldOp::create(b, body(offset, state));
      });
  return loop.getResults();
}

SmallVector<Value> HadamardQuantizeEmitter::transformColumns(Value row,
                                                             Value col,
                                                             Value active) {
  // The butterfly's output r of a block of B rows, stage s pairing rows
  // that differ in bit s: the pairs that lead to r keep lo + hi where r's
  // bit s is clear and lo - hi where it is set. Held compactly: after stage
  // s, entry j is the row whose bits above s are j's and whose low bits are
  // r's, so stage s + 1 pairs entries 2i and 2i + 1.
  int64_t blockRows = spec.columnBlock;
  Value within = arith::RemUIOp::create(b, row, cst(blockRows));
  Value first = arith::SubIOp::create(b, row, within);
  SmallVector<SmallVector<Value>> loaded;
  for (int64_t k = 0; k < blockRows; ++k)
    loaded.push_back(emitLoadAsF32(b, args[0], ValueRange{add(first, k), col},
                                   spec.vectorWidth, active));
  // lo + hi or lo - hi is fma(sign, hi, lo) with sign = -1 where the row's
  // bit is set, +1 where it is clear: the product is exact, so the fma
  // rounds as the add or subtract does, in one instruction.
  SmallVector<Value> signs;
  for (int64_t s = 0; (int64_t(1) << s) < blockRows; ++s) {
    Value set = arith::CmpIOp::create(
        b, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, within, cst(int64_t(1) << s)), cst(0));
    signs.push_back(arith::SelectOp::create(b, set, f32(-1), f32(1)));
  }
  Value scale = f32(getHadamardNormalization(blockRows));
  SmallVector<Value> result;
  for (int64_t e = 0; e < spec.vectorWidth; ++e) {
    SmallVector<Value> level;
    for (int64_t k = 0; k < blockRows; ++k)
      level.push_back(loaded[k][e]);
    for (Value sign : signs) {
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2)
        next.push_back(math::FmaOp::create(b, sign, level[i + 1], level[i]));
      level = std::move(next);
    }
    result.push_back(arith::MulFOp::create(b, level.front(), scale));
  }
  return result;
}

HadamardQuantizeEmitter::RowStats
HadamardQuantizeEmitter::rowStats(Value row, Value acc) {
  // With sawb, one step of the loop covers docs/numerics.md's 128 partials:
  // value e of this lane in sub-chunk s is element s * 32V + lane * V + e of
  // the step, so partial p = s * 32V + lane * V + e, kept in slot s * V + e.
  int64_t width = spec.vectorWidth;
  int64_t subChunks = spec.sawb ? kSawbRowPartials / chunkElements() : 1;
  int64_t stepElements = subChunks * chunkElements();
  int64_t slots = spec.sawb ? subChunks * width : 0;
  Value zero64 = arith::ConstantOp::create(b, b.getF64FloatAttr(0));
  SmallVector<Value> inits{acc};
  inits.append(2 * slots, zero64);
  auto step = [&](Value offset, ValueRange state) {
    Value m = state[0];
    SmallVector<Value> sums(state.drop_front());
    for (int64_t sub = 0; sub < subChunks; ++sub) {
      Value active;
      // Lanes past the row hold zeros: adding +0 leaves the sums unchanged.
      SmallVector<Value> ys =
          transformChunk(row, add(offset, sub * chunkElements()), active,
                         spec.n % stepElements != 0, !rawMax());
      m = emitAbsMax(b, ys, m);
      if (!spec.sawb)
        continue;
      for (auto [e, y] : llvm::enumerate(ys)) {
        Value y64 = arith::ExtFOp::create(b, b.getF64Type(), y);
        int64_t slot = sub * width + int64_t(e);
        sums[slot] =
            arith::AddFOp::create(b, sums[slot], math::AbsFOp::create(b, y64));
        sums[slots + slot] = arith::AddFOp::create(
            b, sums[slots + slot], arith::MulFOp::create(b, y64, y64));
      }
    }
    SmallVector<Value> results{m};
    results.append(sums);
    return results;
  };
  SmallVector<Value> results = foldRow(stepElements, inits, step);
  RowStats stats{results[0], Value(), Value()};
  if (spec.sawb) {
    ArrayRef<Value> sums = ArrayRef(results).drop_front();
    stats.sum = treeSum(sums.take_front(slots));
    stats.sumOfSquares = treeSum(sums.drop_front(slots));
  }
  return stats;
}

Value HadamardQuantizeEmitter::treeSum(ArrayRef<Value> slotValues) {
  // P[p] = P[p] + P[p + h] for h = 64, ..., 1 (docs/numerics.md), p's bits
  // being (high to low) the sub-chunk's, the lane's and the value's: steps
  // on a sub-chunk or value bit add slots, steps on a lane bit add the
  // partner lane's (xor shuffle). A lane with the bit set adds the same two
  // partials the other way round, which gives the same sum, so every lane
  // ends with P[0].
  SmallVector<Value> slots(slotValues);
  int64_t valueBits = llvm::Log2_64(spec.vectorWidth);
  constexpr int64_t laneBits = 5;
  for (int64_t bit = llvm::Log2_64(kSawbRowPartials) - 1; bit >= 0; --bit) {
    if (bit >= valueBits && bit < valueBits + laneBits) {
      for (int64_t slot = 0; slot < spec.vectorWidth; ++slot)
        slots[slot] = emitAddFromLaneXor(b, slots[slot], lane,
                                         int64_t(1) << (bit - valueBits));
      continue;
    }
    // A value bit, or a sub-chunk bit (slot bit `bit - laneBits`).
    int64_t half = int64_t(1) << (bit < valueBits ? bit : bit - laneBits);
    for (int64_t slot = 0; slot < half; ++slot)
      slots[slot] = arith::AddFOp::create(b, slots[slot], slots[slot + half]);
  }
  return slots[0];
}

Value HadamardQuantizeEmitter::partialsMax(Value partials) {
  return emitPartialsMax(b, partials, spec.numPartials, lane);
}

void HadamardQuantizeEmitter::quantizeRow(Value row, Value inverse, Value q) {
  foldRow(chunkElements(), ValueRange(),
          [&](Value chunk, ValueRange) -> SmallVector<Value> {
            quantizeChunk(row, chunk, inverse, q);
            return {};
          });
}

void HadamardQuantizeEmitter::quantizeChunk(Value row, Value chunk,
                                            Value inverse, Value q) {
  Value active;
  SmallVector<Value> ys = transformChunk(row, chunk, active, partialChunk());
  Value col = arith::AddIOp::create(b, chunk, mul(lane, spec.vectorWidth));
  Value linear;
  if (key) {
    // The element index i * n + j, truncated to 32 bits (numerics.md).
    Value index = arith::AddIOp::create(b, mul(row, spec.n), col);
    linear = arith::IndexCastUIOp::create(b, b.getI32Type(), index);
  }
  SmallVector<Value> qs;
  for (auto [e, y] : llvm::enumerate(ys)) {
    Value index =
        key ? Value(arith::AddIOp::create(
                  b, linear,
                  arith::ConstantOp::create(b, b.getI32IntegerAttr(int32_t(e)))))
            : Value();
    qs.push_back(emitQuantizeValue(b, y, inverse, spec.qmax, key, index));
  }
  auto qType = VectorType::get({spec.vectorWidth}, b.getI8Type());
  Value packed = vector::FromElementsOp::create(b, qType, qs);
  auto store = [&] {
    auto op = vector::StoreOp::create(b, packed, q, ValueRange{row, col});
    op.setAlignment(uint64_t(spec.vectorWidth));
  };
  emitIfThen(b, active, store);
}

void HadamardQuantizeEmitter::emit() {
  assert((!spec.rowInRegisters || spec.stage != HadamardQuantizeStage::Scale) &&
         "the Scale kernel reads no rows");
  assert((!spec.rowInRegisters || spec.stage != HadamardQuantizeStage::AbsMax ||
          (!spec.sawb && spec.columnBlock == 1 &&
           spec.m % spec.rowsPerStep == 0)) &&
         "AbsMax loads whole steps of rows with maxabs scales only");
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value blockId = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  lane = arith::RemUIOp::create(b, tid, cst(kWarpSize));
  warp = arith::DivUIOp::create(b, tid, cst(kWarpSize));
  Value firstRow =
      arith::AddIOp::create(b, mul(blockId, spec.warpsPerBlock), warp);
  Value zero = f32(0);
  Value laneZero =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, cst(0));

  if (spec.stage == HadamardQuantizeStage::AbsMax) {
    // A grid stride of steps of rowsPerStep consecutive rows per warp, then
    // one partial per warp. Every warp runs the same number of steps, a
    // constant: the shuffles stay in uniform control flow, where ptxas
    // needs no collective fallback around each of them (a loop bounded by
    // the warp's first row cost a WARPSYNC, an ENDCOLLECTIVE and a MOV per
    // shuffle). A step past the last row computes on row 0 and keeps
    // nothing. With the row in registers, a step loads all of its rows
    // before it transforms any.
    int64_t rows = spec.rowsPerStep;
    int64_t stride = spec.numPartials * rows;
    int64_t steps = llvm::divideCeil(spec.m, stride);
    auto loop =
        scf::ForOp::create(b, cst(0), cst(steps), cst(1), ValueRange{zero});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value first = arith::AddIOp::create(b, mul(firstRow, rows),
                                          mul(loop.getInductionVar(), stride));
      Value valid = lessThan(first, spec.m);
      // m is a multiple of rowsPerStep: a valid step's rows all exist.
      Value base = arith::SelectOp::create(b, valid, first, cst(0));
      SmallVector<SmallVector<SmallVector<Value>>> loaded(rows);
      SmallVector<SmallVector<Value>> active(rows);
      if (spec.rowInRegisters)
        for (int64_t r = 0; r < rows; ++r) {
          loadRow(add(base, r));
          loaded[r] = std::move(rowValues);
          active[r] = std::move(rowActive);
        }
      Value m = loop.getRegionIterArgs()[0];
      for (int64_t r = 0; r < rows; ++r) {
        if (spec.rowInRegisters) {
          rowValues = std::move(loaded[r]);
          rowActive = std::move(active[r]);
          transformRow();
        }
        Value row = add(base, r);
        RowStats stats = rowStats(row, m);
        m = stats.max;
        if (spec.sawb)
          emitIfThen(b, arith::AndIOp::create(b, laneZero, valid), [&] {
            memref::StoreOp::create(b, stats.sum, args[2],
                                    ValueRange{cst(0), row});
            memref::StoreOp::create(b, stats.sumOfSquares, args[2],
                                    ValueRange{cst(1), row});
          });
      }
      scf::YieldOp::create(b, ValueRange{arith::SelectOp::create(
                                  b, valid, m, loop.getRegionIterArgs()[0])});
    }
    Value m = normalizedMax(emitWarpMax(b, loop.getResult(0)));
    emitIfThen(b, laneZero, [&] {
      memref::StoreOp::create(b, m, args[1], ValueRange{firstRow});
    });
    gpu::ReturnOp::create(b);
    return;
  }

  Value qmax = f32(double(spec.qmax));
  if (spec.stage == HadamardQuantizeStage::Scale) {
    // One warp: the max of the partials, the row sums in partials and a
    // tree.
    Value max = partialsMax(args[0]);
    auto [sum, sumOfSquares] = emitSumRowSums(b, lane, args[1], spec.m);
    Value scale =
        emitSawbScale(b, max, sum, sumOfSquares, spec.m * spec.n, spec.qmax);
    emitIfThen(b, laneZero,
           [&] { memref::StoreOp::create(b, scale, args[2], ValueRange{}); });
    gpu::ReturnOp::create(b);
    return;
  }

  bool tensor = spec.stage == HadamardQuantizeStage::Tensor;
  // Tensor: x[, partials], q, scale[, seed]; Row: x, q, scale[, seed].
  unsigned qArg = tensor && !spec.sawb ? 2 : 1;
  Value q = args[qArg], scales = args[qArg + 1];
  if (spec.stochastic)
    key = buildStochasticKey(b, b.getLoc(), args[qArg + 2]);

  auto tensorScale = [&]() -> Value {
    if (spec.sawb) // Computed by the Scale kernel.
      return memref::LoadOp::create(b, scales, ValueRange{});
    // Every warp reduces the partials of the AbsMax kernel to the one
    // scale; thread 0 of block 0 (row 0) stores it.
    Value scale = arith::DivFOp::create(b, partialsMax(args[1]), qmax);
    Value first = arith::AndIOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cst(0)),
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, blockId, cst(0)));
    emitIfThen(b, first, [&] {
      memref::StoreOp::create(b, scale, scales, ValueRange{});
    });
    return scale;
  };

  auto body = [&] {
    // With the row in registers, its loads go first: a per-tensor scale's
    // partials are reduced while they are in flight.
    if (spec.rowInRegisters)
      loadRow(firstRow);
    Value rowScale = tensor ? tensorScale() : Value();
    if (spec.rowInRegisters)
      transformRow();
    if (!tensor) {
      RowStats stats = rowStats(firstRow, zero);
      Value max = normalizedMax(emitWarpMax(b, stats.max));
      rowScale = spec.sawb
                     ? emitSawbScale(b, max, stats.sum, stats.sumOfSquares,
                                     spec.n, spec.qmax)
                     : Value(arith::DivFOp::create(b, max, qmax));
      emitIfThen(b, laneZero, [&] {
        memref::StoreOp::create(b, rowScale, scales, ValueRange{firstRow});
      });
    }
    quantizeRow(firstRow, emitReciprocal(b, rowScale), q);
  };
  // The row guard is uniform across the warp, so shuffles stay converged.
  if (spec.m % spec.warpsPerBlock != 0)
    emitIfThen(b, lessThan(firstRow, spec.m), body);
  else
    body();
  gpu::ReturnOp::create(b);
}

gpu::GPUFuncOp
mlir::hot::buildHadamardQuantizeKernel(OpBuilder &builder, Location loc,
                                       gpu::GPUModuleOp module,
                                       const HadamardQuantizeKernelSpec &spec) {
  std::string name = spec.getKernelName();
  if (auto existing = module.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing;

  Type f32 = builder.getF32Type(), i8 = builder.getI8Type();
  auto x = MemRefType::get({spec.m, spec.n}, spec.inputElementType
                                                 ? spec.inputElementType
                                                 : f32);
  auto q = MemRefType::get({spec.m, spec.n}, i8);
  auto partials = MemRefType::get({spec.numPartials}, f32);
  auto rowSums = MemRefType::get({2, spec.m}, builder.getF64Type());
  SmallVector<Type> argTypes{x};
  switch (spec.stage) {
  case HadamardQuantizeStage::Row:
    argTypes.append({q, MemRefType::get({spec.m}, f32)});
    break;
  case HadamardQuantizeStage::AbsMax:
    argTypes.push_back(partials);
    if (spec.sawb)
      argTypes.push_back(rowSums);
    break;
  case HadamardQuantizeStage::Scale:
    argTypes.assign({partials, rowSums, MemRefType::get({}, f32)});
    break;
  case HadamardQuantizeStage::Tensor:
    if (!spec.sawb)
      argTypes.push_back(partials);
    argTypes.append({q, MemRefType::get({}, f32)});
    break;
  }
  bool quantizes = spec.stage == HadamardQuantizeStage::Row ||
                   spec.stage == HadamardQuantizeStage::Tensor;
  if (quantizes && spec.stochastic)
    argTypes.push_back(builder.getI64Type());

  int64_t warps =
      spec.stage == HadamardQuantizeStage::Scale ? 1 : spec.warpsPerBlock;
  auto func = createKernelFunc(builder, loc, module, name, argTypes,
                               TypeRange(), kWarpSize * warps);
  if (spec.stage == HadamardQuantizeStage::AbsMax && !spec.sawb) {
    // A maxabs max kernel has few blocks (at most 128), at most one per SM:
    // say so, and ptxas keeps more of a row's loads in flight instead of
    // spilling to fit 8 blocks per SM (it spilled 16 bytes of the 768-wide
    // row at 32 registers on sm_90; 55 without spills with this hint).
    func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  builder.getI32IntegerAttr(1));
  } else if (spec.rowInRegisters) {
    // Ask ptxas for as many blocks per SM as the row's values and some
    // working registers allow: fc1's rows (96 values per lane) then take 128
    // registers and 4 blocks of 4 warps share an SM, where ptxas alone takes
    // 158 and fits 3. No spills (transform-kernels-ptxas.mlir).
    bool narrow = spec.inputElementType && !spec.inputElementType.isF32();
    int64_t working =
        narrow ? kNarrowRowWorkingRegisters : kRowWorkingRegisters;
    int64_t registers = llvm::alignTo(spec.getLaneValues() + working, 8);
    func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  builder.getI32IntegerAttr(
                      int32_t(getBlocksPerSM(kWarpSize * warps, registers))));
  }
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  HadamardQuantizeEmitter(b, spec, func).emit();
  return func;
}
