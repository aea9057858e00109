//===- LowRankKernel.cpp - Block transforms along a middle dim ------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// Builds the gpu.func of hot.lowrank (and of a hot.hadamard that is not
// fused into a quantize kernel) on a [outer, n, inner] f32 buffer along its
// middle dim. Thread f of block (bx, by) owns channels [V * f', V * f' + V)
// with f' = bx * threads + f, and loops over the (sample s, token block c)
// items by, by + gridY, ...: it loads the block's `block` tokens (V floats
// per token, coalesced across the threads of a warp), runs the butterfly of
// docs/numerics.md along the tokens in registers in its exact order, and
// stores the kept coefficients times c_b. The code is straight-line, so LLVM
// drops the butterfly branches that feed no kept coefficient; what remains
// computes every kept value with the CPU path's operations, bit for bit.
// Items with c == n / block (only when there is a tail) copy the tail tokens
// unchanged.
//
// Statistics: max|y| (over all of y, or per channel) and max|hadamard(x)|
// along the channels (the rows of the [outer * n, inner] view), whose
// butterfly runs across the V registers and the neighbouring lanes that hold
// a block's channels. Per-tensor maxima are reduced over the thread block's
// warps through shared memory into one partial per block; per-channel ones
// are stored per block row. The Quantize stage reduces a Statistics
// kernel's partials to the scales and quantizes with the CPU path's
// rounding, hash indices included.
//
//===----------------------------------------------------------------------===//

#include "TransformMath.h"
#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/HotToLinalg.h"
#include "hot/Conversion/TransformKernels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace mlir;
using namespace mlir::hot;

int64_t LowRankKernelSpec::gridX() const {
  return llvm::divideCeil(inner / vectorWidth, threads);
}

/// Whether the spec keeps every row of full blocks in order (a Hadamard
/// transform rather than a projection).
static bool keepsAllRows(const LowRankKernelSpec &spec) {
  if (int64_t(spec.rows.size()) != spec.block || spec.tail() != 0)
    return false;
  for (auto [k, row] : llvm::enumerate(spec.rows))
    if (row != int64_t(k))
      return false;
  return true;
}

static StringRef getOutputMaxName(OutputMax max) {
  switch (max) {
  case OutputMax::None:
    return "";
  case OutputMax::Tensor:
    return "tensor";
  case OutputMax::Column:
    return "col";
  }
  llvm_unreachable("unknown OutputMax");
}

std::string LowRankKernelSpec::getKernelName() const {
  std::string name;
  llvm::raw_string_ostream os(name);
  bool hadamard = keepsAllRows(*this);
  if (block == 1)
    os << "hot_matrix_" << outer * n << "x" << inner;
  else
    os << (hadamard ? "hot_block_hadamard_" : "hot_lowrank_") << outer << "x"
       << n << "x" << inner << "_b" << block;
  if (!hadamard) {
    os << "_k";
    for (int64_t row : rows)
      os << "_" << row;
  }
  os << "_v" << vectorWidth << "_t" << threads;
  if (itemBlocks > 1)
    os << "_i" << itemBlocks;
  auto rounding = [&](const LowRankQuantization &q) {
    os << "_q" << q.qmax << (q.stochastic ? "s" : "n");
  };
  switch (stage) {
  case LowRankStage::Project:
    break;
  case LowRankStage::Statistics:
    os << "_stats";
    break;
  case LowRankStage::Scales:
    os << "_scales_q" << outputQuantization.qmax << "_g" << statisticsGridY;
    return name;
  case LowRankStage::Quantize:
    os << "_quantize";
    if (inputMaxBlock > 0) {
      os << "_in" << inputMaxBlock;
      rounding(inputQuantization);
    }
    os << "_out_" << getOutputMaxName(outputMax);
    rounding(outputQuantization);
    os << "_g";
    if (statisticsGridX != gridX())
      os << statisticsGridX << "x";
    os << statisticsGridY;
    if (outputKBytes > 0)
      os << "_kmajor" << outputKBytes << outputKOrder.getSuffix();
    os << getInputTypeSuffix(inputElementType);
    return name;
  }
  if (inputMaxBlock > 0)
    os << "_inmax" << inputMaxBlock;
  if (outputMax != OutputMax::None)
    os << "_outmax" << (outputMax == OutputMax::Column ? "col" : "");
  if (hasStatistics())
    os << "_p" << numPartials();
  os << getInputTypeSuffix(inputElementType);
  return name;
}

namespace {

/// The kernel's arguments: their types and the position of each (-1:
/// absent).
struct LowRankArgs {
  SmallVector<Type> types;
  int y = -1, inPartials = -1, outPartials = -1, qIn = -1, scaleIn = -1,
      qOut = -1, scaleOut = -1, seedIn = -1, seedOut = -1;

  explicit LowRankArgs(OpBuilder &b, const LowRankKernelSpec &spec) {
    Type f32 = b.getF32Type(), i8 = b.getI8Type();
    SmallVector<int64_t> inShape{spec.outer, spec.n, spec.inner};
    SmallVector<int64_t> outShape{spec.outer, spec.projectedSize(), spec.inner};
    auto add = [&](int &position, Type type) {
      position = types.size();
      types.push_back(type);
    };
    bool quantizes = spec.stage == LowRankStage::Quantize;
    // Partials of the Statistics kernel (Quantize, Scales) or of this one.
    int64_t rows = spec.stage == LowRankStage::Project ||
                           spec.stage == LowRankStage::Statistics
                       ? spec.gridY
                       : spec.statisticsGridY;
    auto columnPartials = MemRefType::get({rows, spec.inner}, f32);
    auto columnScales = MemRefType::get({spec.inner}, f32);
    if (spec.stage == LowRankStage::Scales) {
      add(outPartials, columnPartials);
      add(scaleOut, columnScales);
      return;
    }
    int x;
    add(x, MemRefType::get(inShape, spec.inputElementType
                                        ? spec.inputElementType
                                        : f32));
    if (spec.stage == LowRankStage::Project)
      add(y, MemRefType::get(outShape, f32));
    auto tensorPartials = MemRefType::get({spec.tensorPartials()}, f32);
    if (spec.inputMaxBlock > 0) {
      add(inPartials, tensorPartials);
      if (quantizes) {
        add(qIn, MemRefType::get(inShape, i8));
        add(scaleIn, MemRefType::get({}, f32));
      }
    }
    if (spec.outputMax != OutputMax::None) {
      bool column = spec.outputMax == OutputMax::Column;
      // Quantize per channel reads the Scales kernel's scales instead.
      if (!(quantizes && column))
        add(outPartials, column ? columnPartials : tensorPartials);
      if (quantizes) {
        add(qOut, spec.outputKBytes > 0
                      ? MemRefType::get({spec.inner, spec.outputKBytes}, i8)
                      : MemRefType::get(outShape, i8));
        add(scaleOut, column ? columnScales : MemRefType::get({}, f32));
      }
    }
    if (quantizes && spec.inputMaxBlock > 0 &&
        spec.inputQuantization.stochastic)
      add(seedIn, b.getI64Type());
    if (quantizes && spec.outputQuantization.stochastic)
      add(seedOut, b.getI64Type());
  }
};

/// A token row of one item: its index along the tokens (n, or n' for the
/// output), and the thread's V values.
struct TokenRow {
  Value index;
  SmallVector<Value> values;
};

/// The running statistics of a thread: max|hadamard(x)| before its
/// normalization (or null; storePartials normalizes it), and
/// max|y| (one value, one per channel, or none).
struct Statistics {
  Value in;
  SmallVector<Value> out;

  SmallVector<Value> flatten() const {
    SmallVector<Value> all;
    if (in)
      all.push_back(in);
    llvm::append_range(all, out);
    return all;
  }
  void assign(const Statistics &shape, ValueRange values) {
    size_t next = 0;
    in = shape.in ? values[next++] : Value();
    out.assign(values.begin() + next, values.begin() + next + shape.out.size());
  }
};

/// Emits the body of one kernel.
class LowRankEmitter {
public:
  LowRankEmitter(ImplicitLocOpBuilder &b, const LowRankKernelSpec &spec,
                 gpu::GPUFuncOp func, const LowRankArgs &args)
      : b(b), spec(spec), func(func), args(args) {}

  void emit();

private:
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(float(v)));
  }
  Value arg(int position) { return func.getArgument(position); }
  /// The thread's V values of `token` of sample `s` (zeros where the
  /// thread's channels are past `inner`).
  SmallVector<Value> load(Value s, Value token);
  /// Stores `values` (f32 or i8) at `buffer`[indices..., channels], guarded
  /// by the channel bound.
  void store(ArrayRef<Value> values, Value buffer, ValueRange indices);
  /// One item: token block `c` of sample `s` (the tail when `tail`).
  Statistics emitItem(bool tail, Value s, Value c, Statistics stats);
  /// The Quantize stage's i8 values of `row` of sample `s` of an
  /// [outer, rows, inner] tensor, with the reciprocal scales `inverses` (one,
  /// or one per value).
  SmallVector<Value> quantize(const TokenRow &row, Value s, int64_t rows,
                              ArrayRef<Value> inverses, int64_t qmax,
                              Value key);
  /// Stores the i8 values `rows` (V per row) as the consecutive K positions
  /// from `start` of the thread's channels' rows of the K-major q, in
  /// vectors as wide as `alignment` (a power of two that divides `start`)
  /// allows.
  void storeKMajor(ArrayRef<SmallVector<Value>> rows, Value start,
                   int64_t alignment);
  /// Zeros in the K-major q's padding (the thread's channels).
  void zeroKPadding();
  /// Stores the block's partials of `stats`.
  void storePartials(const Statistics &stats);
  /// The Quantize stage's scales (per tensor from the partials: thread 0 of
  /// block (0, 0) stores them; per channel from the Scales kernel), their
  /// reciprocals and the keys.
  void loadScales();
  /// The Scales stage: the thread's channels' maxima over the partials'
  /// rows, over qmax.
  void emitScales();

  ImplicitLocOpBuilder &b;
  const LowRankKernelSpec &spec;
  gpu::GPUFuncOp func;
  const LowRankArgs &args;
  Value tid, lane, channel, active;
  /// The reciprocals of the scales (what quantize multiplies by).
  Value inInverse, inKey, outKey;
  SmallVector<Value> outInverses;
};

} // namespace

SmallVector<Value> LowRankEmitter::load(Value s, Value token) {
  return emitLoadAsF32(b, arg(0), ValueRange{s, token, channel},
                       spec.vectorWidth, active);
}

void LowRankEmitter::store(ArrayRef<Value> values, Value buffer,
                           ValueRange indices) {
  auto emitStore = [&] {
    Type type = values[0].getType();
    Value packed = vector::FromElementsOp::create(
        b, VectorType::get({spec.vectorWidth}, type), values);
    SmallVector<Value> at(indices);
    at.push_back(channel);
    auto op = vector::StoreOp::create(b, packed, buffer, at);
    op.setAlignment(
        uint64_t(spec.vectorWidth * type.getIntOrFloatBitWidth() / 8));
  };
  emitIfThen(b, active, emitStore);
}

SmallVector<Value> LowRankEmitter::quantize(const TokenRow &row, Value s,
                                            int64_t rows,
                                            ArrayRef<Value> inverses,
                                            int64_t qmax, Value key) {
  Value linear;
  if (key) {
    // The element's index in the [outer * rows, inner] tensor that the
    // quantize reads, truncated to 32 bits (numerics.md).
    Value flatRow = arith::AddIOp::create(
        b, arith::MulIOp::create(b, s, cst(rows)), row.index);
    Value index = arith::AddIOp::create(
        b, arith::MulIOp::create(b, flatRow, cst(spec.inner)), channel);
    linear = arith::IndexCastUIOp::create(b, b.getI32Type(), index);
  }
  SmallVector<Value> qs;
  for (auto [e, y] : llvm::enumerate(row.values)) {
    Value index;
    if (key)
      index = arith::AddIOp::create(
          b, linear,
          arith::ConstantOp::create(b, b.getI32IntegerAttr(int32_t(e))));
    Value inverse = inverses.size() == 1 ? inverses[0] : inverses[e];
    qs.push_back(emitQuantizeValue(b, y, inverse, qmax, key, index));
  }
  return qs;
}

/// The largest power of two up to 16 that divides every nonzero term.
static int64_t getAlignment(ArrayRef<int64_t> terms) {
  uint64_t common = 0;
  for (int64_t term : terms)
    common = std::gcd(common, uint64_t(term));
  if (common == 0)
    return 16;
  return std::min<int64_t>(16, int64_t(common & -common));
}

void LowRankEmitter::storeKMajor(ArrayRef<SmallVector<Value>> rows, Value start,
                                 int64_t alignment) {
  int64_t count = rows.size();
  int64_t width = std::min(alignment, getAlignment({count}));
  emitIfThen(b, active, [&] {
    for (int64_t e = 0; e < spec.vectorWidth; ++e) {
      Value channelRow = arith::AddIOp::create(b, channel, cst(e));
      for (int64_t first = 0; first < count; first += width) {
        SmallVector<Value> bytes;
        for (int64_t r = first; r < first + width; ++r)
          bytes.push_back(rows[r][e]);
        Value packed = vector::FromElementsOp::create(
            b, VectorType::get({width}, b.getI8Type()), bytes);
        Value at = arith::AddIOp::create(b, start, cst(first));
        auto op = vector::StoreOp::create(b, packed, arg(args.qOut),
                                          ValueRange{channelRow, at});
        op.setAlignment(uint64_t(width));
      }
    }
  });
}

void LowRankEmitter::zeroKPadding() {
  int64_t k = spec.outer * spec.projectedSize();
  if (spec.outputKBytes <= k)
    return;
  Value firstRow = arith::CmpIOp::create(
      b, arith::CmpIPredicate::eq, gpu::BlockIdOp::create(b, gpu::Dimension::y),
      cst(0));
  Value zero = arith::ConstantIntOp::create(b, b.getI8Type(), 0);
  emitIfThen(b, active ? arith::AndIOp::create(b, firstRow, active) : firstRow,
             [&] {
               for (int64_t e = 0; e < spec.vectorWidth; ++e) {
                 Value channelRow = arith::AddIOp::create(b, channel, cst(e));
                 for (int64_t at = k; at < spec.outputKBytes; ++at)
                   memref::StoreOp::create(b, zero, arg(args.qOut),
                                           ValueRange{channelRow, cst(at)});
               }
             });
}

Statistics LowRankEmitter::emitItem(bool tail, Value s, Value c,
                                    Statistics stats) {
  int64_t rank = spec.rows.size();
  // The input's token rows, and the output's (the kept coefficients, or the
  // tail copied).
  SmallVector<TokenRow> in, out;
  // Token block `index`: its tokens, and its kept coefficients.
  auto addBlock = [&](Value index) {
    Value firstToken = arith::MulIOp::create(b, index, cst(spec.block));
    size_t first = in.size();
    for (int64_t t = 0; t < spec.block; ++t) {
      Value token = arith::AddIOp::create(b, firstToken, cst(t));
      in.push_back({token, load(s, token)});
    }
    Value firstOut = arith::MulIOp::create(b, index, cst(rank));
    size_t firstKept = out.size();
    for (int64_t k = 0; k < rank; ++k)
      out.push_back({arith::AddIOp::create(b, firstOut, cst(k)),
                     SmallVector<Value>(spec.vectorWidth)});
    for (int64_t e = 0; e < spec.vectorWidth; ++e) {
      SmallVector<Value> column;
      for (int64_t t = 0; t < spec.block; ++t)
        column.push_back(in[first + t].values[e]);
      // All of the block is in this thread's registers.
      emitBlockButterfly(b, column, spec.block, /*lane=*/Value());
      for (auto [k, row] : llvm::enumerate(spec.rows))
        out[firstKept + k].values[e] = column[row];
    }
  };
  if (tail) {
    // The full blocks of the last item, then the tail tokens.
    for (int64_t k = spec.fullItems() * spec.itemBlocks; k < spec.numBlocks();
         ++k)
      addBlock(cst(k));
    for (int64_t t = 0; t < spec.tail(); ++t) {
      Value token = cst(spec.numBlocks() * spec.block + t);
      in.push_back({token, load(s, token)});
      out.push_back({cst(spec.numBlocks() * rank + t), in.back().values});
    }
  } else {
    Value firstBlock = arith::MulIOp::create(b, c, cst(spec.itemBlocks));
    for (int64_t k = 0; k < spec.itemBlocks; ++k)
      addBlock(arith::AddIOp::create(b, firstBlock, cst(k)));
  }

  bool quantizes = spec.stage == LowRankStage::Quantize;
  if (spec.inputMaxBlock > 0) {
    // hadamard(x) along the channels, one token row at a time. For the max
    // alone, unnormalized: storePartials normalizes the max.
    for (const TokenRow &row : in) {
      TokenRow transformed = row;
      emitBlockButterfly(b, transformed.values, spec.inputMaxBlock, lane,
                         /*normalize=*/quantizes);
      if (quantizes)
        store(quantize(transformed, s, spec.n, inInverse,
                       spec.inputQuantization.qmax, inKey),
              arg(args.qIn), {s, row.index});
      else
        stats.in = emitAbsMax(b, transformed.values, stats.in);
    }
  }
  if (quantizes && spec.outputKBytes > 0) {
    // K-major: the item's full blocks are consecutive K positions, and so
    // are its tail rows.
    const OperandKOrder &order = spec.outputKOrder;
    int64_t blockRows = out.size() - (tail ? spec.tail() : 0);
    // What the runs' positions are multiples of: the sample's stride, and
    // the item's first block row (a multiple of this for a full item, this
    // for the tail item).
    int64_t firstBlockRow = tail ? spec.fullItems() * spec.itemBlocks * rank
                                 : spec.itemBlocks * rank;
    SmallVector<SmallVector<Value>> qs;
    for (const TokenRow &row : out)
      qs.push_back(quantize(row, s, spec.projectedSize(), outInverses,
                            spec.outputQuantization.qmax, outKey));
    ArrayRef<SmallVector<Value>> all(qs);
    if (blockRows > 0)
      storeKMajor(all.take_front(blockRows),
                  order.emitPosition(b, b.getLoc(), s, out.front().index,
                                     /*tail=*/false),
                  getAlignment({order.getSampleStride(/*tail=*/false),
                                firstBlockRow}));
    if (blockRows < int64_t(out.size()))
      storeKMajor(all.drop_front(blockRows),
                  order.emitPosition(b, b.getLoc(), s, cst(order.fullRows),
                                     /*tail=*/true),
                  getAlignment({order.getSampleStride(/*tail=*/true),
                                order.getFirstPosition(/*tail=*/true)}));
    return stats;
  }
  for (const TokenRow &row : out) {
    if (quantizes) {
      store(quantize(row, s, spec.projectedSize(), outInverses,
                     spec.outputQuantization.qmax, outKey),
            arg(args.qOut), {s, row.index});
      continue;
    }
    if (spec.outputMax == OutputMax::Tensor)
      stats.out[0] = emitAbsMax(b, row.values, stats.out[0]);
    if (spec.outputMax == OutputMax::Column)
      for (auto [e, value] : llvm::enumerate(row.values))
        stats.out[e] = emitAbsMax(b, value, stats.out[e]);
    if (spec.stage == LowRankStage::Project)
      store(row.values, arg(args.y), {s, row.index});
  }
  return stats;
}

void LowRankEmitter::loadScales() {
  auto isZero = [&](Value v) -> Value {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, v, cst(0));
  };
  Value first = arith::AndIOp::create(
      b,
      arith::AndIOp::create(
          b, isZero(tid), isZero(gpu::BlockIdOp::create(b, gpu::Dimension::x))),
      isZero(gpu::BlockIdOp::create(b, gpu::Dimension::y)));
  int64_t tensorPartials = spec.tensorPartials();
  Value inScale;
  SmallVector<Value> outScales;
  auto tensorScale = [&](int position, int64_t qmax) -> Value {
    return arith::DivFOp::create(
        b, emitPartialsMax(b, arg(position), tensorPartials, lane),
        f32(double(qmax)));
  };
  if (spec.inputMaxBlock > 0)
    inScale = tensorScale(args.inPartials, spec.inputQuantization.qmax);
  int64_t outQmax = spec.outputQuantization.qmax;
  if (spec.outputMax == OutputMax::Tensor) {
    outScales = {tensorScale(args.outPartials, outQmax)};
  } else {
    // Computed by the Scales kernel.
    auto scales = vector::LoadOp::create(
        b, VectorType::get({spec.vectorWidth}, b.getF32Type()),
        arg(args.scaleOut), ValueRange{channel});
    scales.setAlignment(uint64_t(4 * spec.vectorWidth));
    for (int64_t e = 0; e < spec.vectorWidth; ++e)
      outScales.push_back(
          vector::ExtractOp::create(b, scales, ArrayRef<int64_t>{e}));
  }
  emitIfThen(b, first, [&] {
    if (inScale)
      memref::StoreOp::create(b, inScale, arg(args.scaleIn), ValueRange{});
    if (spec.outputMax == OutputMax::Tensor)
      memref::StoreOp::create(b, outScales[0], arg(args.scaleOut),
                              ValueRange{});
  });
  if (inScale)
    inInverse = emitReciprocal(b, inScale);
  for (Value scale : outScales)
    outInverses.push_back(emitReciprocal(b, scale));
  if (args.seedIn >= 0)
    inKey = buildStochasticKey(b, b.getLoc(), arg(args.seedIn));
  if (args.seedOut >= 0)
    outKey = buildStochasticKey(b, b.getLoc(), arg(args.seedOut));
}

void LowRankEmitter::emitScales() {
  int64_t width = spec.vectorWidth;
  auto loop = scf::ForOp::create(b, cst(0), cst(spec.statisticsGridY), cst(1),
                                 SmallVector<Value>(width, f32(0)));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    auto partial = vector::LoadOp::create(
        b, VectorType::get({width}, b.getF32Type()), arg(args.outPartials),
        ValueRange{loop.getInductionVar(), channel});
    partial.setAlignment(uint64_t(4 * width));
    SmallVector<Value> maxima;
    for (int64_t e = 0; e < width; ++e)
      maxima.push_back(arith::MaximumFOp::create(
          b, loop.getRegionIterArgs()[e],
          vector::ExtractOp::create(b, partial, ArrayRef<int64_t>{e})));
    scf::YieldOp::create(b, maxima);
  }
  SmallVector<Value> scales;
  for (Value max : loop.getResults())
    scales.push_back(arith::DivFOp::create(
        b, max, f32(double(spec.outputQuantization.qmax))));
  store(scales, arg(args.scaleOut), {});
}

void LowRankEmitter::storePartials(const Statistics &stats) {
  Value blockX = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value blockY = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  // Per channel: the thread's own row of partials.
  if (spec.outputMax == OutputMax::Column)
    store(stats.out, arg(args.outPartials), {blockY});

  // Per tensor: reduced over the block's warps.
  SmallVector<std::pair<Value, int>> reduced;
  if (stats.in)
    reduced.push_back(
        {emitNormalize(b, stats.in, spec.inputMaxBlock), args.inPartials});
  if (spec.outputMax == OutputMax::Tensor)
    reduced.push_back({stats.out[0], args.outPartials});
  if (reduced.empty())
    return;
  Value warp = arith::DivUIOp::create(b, tid, cst(kWarpSize));
  Value shared = func.getWorkgroupAttributions()[0];
  SmallVector<Value> warpMaxes;
  for (auto [stat, position] : reduced)
    warpMaxes.push_back(emitWarpMax(b, stat));
  emitIfThen(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, cst(0)), [&] {
        for (auto [i, m] : llvm::enumerate(warpMaxes))
          memref::StoreOp::create(b, m, shared, ValueRange{cst(i), warp});
      });
  gpu::BarrierOp::create(b);
  emitIfThen(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cst(0)), [&] {
        Value partial = arith::AddIOp::create(
            b, arith::MulIOp::create(b, blockY, cst(spec.gridX())), blockX);
        for (auto [i, entry] : llvm::enumerate(reduced)) {
          Value m =
              memref::LoadOp::create(b, shared, ValueRange{cst(i), cst(0)});
          for (int64_t w = 1; w < spec.threads / kWarpSize; ++w)
            m = arith::MaximumFOp::create(
                b, m,
                memref::LoadOp::create(b, shared, ValueRange{cst(i), cst(w)}));
          memref::StoreOp::create(b, m, arg(entry.second), ValueRange{partial});
        }
      });
}

void LowRankEmitter::emit() {
  tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  lane = arith::RemUIOp::create(b, tid, cst(kWarpSize));
  Value group = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::x),
                            cst(spec.threads)),
      tid);
  channel = arith::MulIOp::create(b, group, cst(spec.vectorWidth));
  int64_t groups = spec.inner / spec.vectorWidth;
  if (groups % spec.threads != 0) {
    // Threads past the channels read channel 0 and compute on zeros.
    active =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, group, cst(groups));
    channel = arith::SelectOp::create(b, active, channel, cst(0));
  }

  if (spec.stage == LowRankStage::Scales) {
    emitScales();
    gpu::ReturnOp::create(b);
    return;
  }
  if (spec.stage == LowRankStage::Quantize) {
    loadScales();
    zeroKPadding();
  }
  // The running statistics start at +0 (|values| are never below).
  Statistics init;
  if (spec.hasStatistics()) {
    if (spec.inputMaxBlock > 0)
      init.in = f32(0);
    if (spec.outputMax == OutputMax::Tensor)
      init.out = {f32(0)};
    if (spec.outputMax == OutputMax::Column)
      init.out.assign(spec.vectorWidth, f32(0));
  }
  auto loop = scf::ForOp::create(
      b, gpu::BlockIdOp::create(b, gpu::Dimension::y), cst(spec.numItems()),
      gpu::GridDimOp::create(b, gpu::Dimension::y), init.flatten());
  Statistics stats;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value item = loop.getInductionVar();
    Value s = arith::DivUIOp::create(b, item, cst(spec.blockRows()));
    Value c = arith::RemUIOp::create(b, item, cst(spec.blockRows()));
    Statistics carried;
    carried.assign(init, loop.getRegionIterArgs());
    SmallVector<Value> results;
    if (spec.fullItems() == spec.blockRows()) {
      results = emitItem(/*tail=*/false, s, c, carried).flatten();
    } else if (spec.fullItems() == 0) {
      results = emitItem(/*tail=*/true, s, c, carried).flatten();
    } else {
      // Uniform per thread block: a full item, or the last one.
      Value isBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, c,
                                            cst(spec.fullItems()));
      SmallVector<Value> types = carried.flatten();
      auto branch = scf::IfOp::create(b, TypeRange(ValueRange(types)), isBlock,
                                      /*withElseRegion=*/true);
      for (bool tail : {false, true}) {
        OpBuilder::InsertionGuard inner(b);
        Block *block = tail ? branch.elseBlock() : branch.thenBlock();
        b.setInsertionPointToEnd(block);
        if (!block->empty())
          b.setInsertionPoint(block->getTerminator());
        SmallVector<Value> yielded = emitItem(tail, s, c, carried).flatten();
        if (!yielded.empty())
          scf::YieldOp::create(b, yielded);
      }
      results = SmallVector<Value>(branch.getResults());
    }
    if (!results.empty())
      scf::YieldOp::create(b, results);
  }
  stats.assign(init, loop.getResults());
  if (spec.hasStatistics())
    storePartials(stats);
  gpu::ReturnOp::create(b);
}

gpu::GPUFuncOp mlir::hot::buildLowRankKernel(OpBuilder &builder, Location loc,
                                             gpu::GPUModuleOp module,
                                             const LowRankKernelSpec &spec) {
  std::string name = spec.getKernelName();
  if (auto existing = module.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing;

  LowRankArgs args(builder, spec);
  // Shared memory for the per-tensor maxima reduced over the warps.
  int64_t reduced = spec.hasStatistics()
                        ? (spec.inputMaxBlock > 0 ? 1 : 0) +
                              (spec.outputMax == OutputMax::Tensor ? 1 : 0)
                        : 0;
  SmallVector<Type> workgroup;
  if (reduced > 0) {
    auto space = gpu::AddressSpaceAttr::get(builder.getContext(),
                                            gpu::AddressSpace::Workgroup);
    workgroup.push_back(MemRefType::get({reduced, spec.threads / kWarpSize},
                                        builder.getF32Type(),
                                        MemRefLayoutAttrInterface(), space));
  }
  auto func = createKernelFunc(builder, loc, module, name, args.types,
                               workgroup, spec.threads);
  if (spec.minBlocksPerSM > 0)
    func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  builder.getI32IntegerAttr(int32_t(spec.minBlocksPerSM)));
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  LowRankEmitter(b, spec, func, args).emit();
  return func;
}
