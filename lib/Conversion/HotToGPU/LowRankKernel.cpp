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
// Fused statistics: the max|y| of the output, and the max|hadamard(x)| of
// the input along its channels (the rows of the [outer * n, inner] view),
// whose butterfly runs across the V registers and the neighbouring lanes
// that hold a block's channels. Each thread block reduces them over its
// warps through shared memory and stores one partial of each, which a
// per-tensor quantize kernel then reduces to its scale.
//
//===----------------------------------------------------------------------===//

#include "TransformMath.h"
#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/HotToLinalg.h"
#include "hot/Conversion/TransformKernels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/MathExtras.h"

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

std::string LowRankKernelSpec::getKernelName() const {
  std::string name;
  llvm::raw_string_ostream os(name);
  bool hadamard = keepsAllRows(*this);
  os << (hadamard ? "hot_block_hadamard_" : "hot_lowrank_") << outer << "x"
     << n << "x" << inner << "_b" << block;
  if (!hadamard) {
    os << "_k";
    for (int64_t row : rows)
      os << "_" << row;
  }
  os << "_v" << vectorWidth << "_t" << threads;
  switch (stage) {
  case LowRankStage::Project:
    break;
  case LowRankStage::Statistics:
    os << "_stats";
    break;
  case LowRankStage::Quantize:
    os << "_quantize_in" << inputMaxBlock << "_q" << inputQuantization.qmax
       << (inputQuantization.stochastic ? "s" : "n") << "_out_q"
       << outputQuantization.qmax
       << (outputQuantization.stochastic ? "s" : "n") << "_p"
       << statisticsPartials;
    return name;
  }
  if (inputMaxBlock > 0)
    os << "_inmax" << inputMaxBlock;
  if (outputMax)
    os << "_outmax";
  if (hasStatistics())
    os << "_p" << numPartials();
  return name;
}

namespace {

/// A token row of one item: its index along the tokens (n, or n' for the
/// output), and the thread's V values.
struct TokenRow {
  Value index;
  SmallVector<Value> values;
};

/// Emits the body of one kernel.
class LowRankEmitter {
public:
  LowRankEmitter(ImplicitLocOpBuilder &b, const LowRankKernelSpec &spec,
                 gpu::GPUFuncOp func)
      : b(b), spec(spec), func(func) {}

  void emit();

private:
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(float(v)));
  }
  /// The thread's V values of `token` of sample `s` (zeros where the
  /// thread's channels are past `inner`).
  SmallVector<Value> load(Value s, Value token);
  /// Stores `values` (f32 or i8) at `buffer`[s, row, channels], guarded by
  /// the channel bound.
  void store(ArrayRef<Value> values, Value buffer, Value s, Value row);
  /// One item: token block `c` of sample `s` (the tail when `tail`). Takes
  /// and returns the running statistics.
  SmallVector<Value> emitItem(bool tail, Value s, Value c,
                              SmallVector<Value> stats);
  /// The Quantize stage's i8 values of `row` of sample `s` of an
  /// [outer, rows, inner] tensor, with `scale`.
  SmallVector<Value> quantize(const TokenRow &row, Value s, int64_t rows,
                              Value scale, int64_t qmax, Value key);
  /// Reduces each statistic over the thread block and stores its partial.
  void storePartials(ArrayRef<Value> stats);
  /// The Quantize stage's scales from the partials (thread 0 of block 0
  /// stores them) and stochastic keys.
  void loadScales();

  ImplicitLocOpBuilder &b;
  const LowRankKernelSpec &spec;
  gpu::GPUFuncOp func;
  Value tid, lane, channel, active;
  Value inputScale, outputScale, inputKey, outputKey;
};

} // namespace

SmallVector<Value> LowRankEmitter::load(Value s, Value token) {
  int64_t width = spec.vectorWidth;
  auto load = vector::LoadOp::create(b, VectorType::get({width}, b.getF32Type()),
                                     func.getArgument(0),
                                     ValueRange{s, token, channel});
  load.setAlignment(uint64_t(4 * width));
  SmallVector<Value> v;
  for (int64_t e = 0; e < width; ++e) {
    Value x = vector::ExtractOp::create(b, load, ArrayRef<int64_t>{e});
    if (active)
      x = arith::SelectOp::create(b, active, x, f32(0));
    v.push_back(x);
  }
  return v;
}

void LowRankEmitter::store(ArrayRef<Value> values, Value buffer, Value s,
                           Value row) {
  auto emitStore = [&] {
    Type type = values[0].getType();
    Value packed = vector::FromElementsOp::create(
        b, VectorType::get({spec.vectorWidth}, type), values);
    auto op = vector::StoreOp::create(b, packed, buffer,
                                      ValueRange{s, row, channel});
    op.setAlignment(
        uint64_t(spec.vectorWidth * type.getIntOrFloatBitWidth() / 8));
  };
  if (!active)
    return emitStore();
  auto guard = scf::IfOp::create(b, active, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard insertion(b);
  b.setInsertionPointToStart(guard.thenBlock());
  emitStore();
}

SmallVector<Value> LowRankEmitter::quantize(const TokenRow &row, Value s,
                                            int64_t rows, Value scale,
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
    qs.push_back(emitQuantizeValue(b, y, scale, qmax, key, index));
  }
  return qs;
}

SmallVector<Value> LowRankEmitter::emitItem(bool tail, Value s, Value c,
                                            SmallVector<Value> stats) {
  int64_t rank = spec.rows.size();
  // The input's token rows, and the output's (the kept coefficients, or the
  // tail copied).
  SmallVector<TokenRow> in, out;
  if (tail) {
    for (int64_t t = 0; t < spec.tail(); ++t) {
      Value token = cst(spec.numBlocks() * spec.block + t);
      in.push_back({token, load(s, token)});
      out.push_back({cst(spec.numBlocks() * rank + t), in.back().values});
    }
  } else {
    Value firstToken = arith::MulIOp::create(b, c, cst(spec.block));
    for (int64_t t = 0; t < spec.block; ++t) {
      Value token = arith::AddIOp::create(b, firstToken, cst(t));
      in.push_back({token, load(s, token)});
    }
    Value firstOut = arith::MulIOp::create(b, c, cst(rank));
    for (int64_t k = 0; k < rank; ++k)
      out.push_back({arith::AddIOp::create(b, firstOut, cst(k)),
                     SmallVector<Value>(spec.vectorWidth)});
    for (int64_t e = 0; e < spec.vectorWidth; ++e) {
      SmallVector<Value> column;
      for (const TokenRow &row : in)
        column.push_back(row.values[e]);
      // All of the block is in this thread's registers.
      emitBlockButterfly(b, column, spec.block, /*lane=*/Value());
      for (auto [k, row] : llvm::enumerate(spec.rows))
        out[k].values[e] = column[row];
    }
  }

  bool quantizes = spec.stage == LowRankStage::Quantize;
  int64_t next = 0;
  if (spec.inputMaxBlock > 0) {
    // hadamard(x) along the channels, one token row at a time.
    for (const TokenRow &row : in) {
      TokenRow transformed = row;
      emitBlockButterfly(b, transformed.values, spec.inputMaxBlock, lane);
      if (quantizes)
        store(quantize(transformed, s, spec.n, inputScale,
                       spec.inputQuantization.qmax, inputKey),
              func.getArgument(3), s, row.index);
      else
        stats[next] = emitAbsMax(b, transformed.values, stats[next]);
    }
    ++next;
  }
  for (const TokenRow &row : out) {
    if (quantizes) {
      store(quantize(row, s, spec.projectedSize(), outputScale,
                     spec.outputQuantization.qmax, outputKey),
            func.getArgument(5), s, row.index);
      continue;
    }
    if (spec.outputMax)
      stats[next] = emitAbsMax(b, row.values, stats[next]);
    if (spec.stage == LowRankStage::Project)
      store(row.values, func.getArgument(1), s, row.index);
  }
  return stats;
}

void LowRankEmitter::loadScales() {
  inputScale = arith::DivFOp::create(
      b,
      emitPartialsMax(b, func.getArgument(1), spec.statisticsPartials, lane),
      f32(double(spec.inputQuantization.qmax)));
  outputScale = arith::DivFOp::create(
      b,
      emitPartialsMax(b, func.getArgument(2), spec.statisticsPartials, lane),
      f32(double(spec.outputQuantization.qmax)));
  auto isZero = [&](Value v) -> Value {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, v, cst(0));
  };
  Value first = arith::AndIOp::create(
      b,
      arith::AndIOp::create(
          b, isZero(tid),
          isZero(gpu::BlockIdOp::create(b, gpu::Dimension::x))),
      isZero(gpu::BlockIdOp::create(b, gpu::Dimension::y)));
  auto op = scf::IfOp::create(b, first, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(op.thenBlock());
    memref::StoreOp::create(b, inputScale, func.getArgument(4), ValueRange{});
    memref::StoreOp::create(b, outputScale, func.getArgument(6), ValueRange{});
  }
  unsigned seed = 7;
  if (spec.inputQuantization.stochastic)
    inputKey = buildStochasticKey(b, b.getLoc(), func.getArgument(seed++));
  if (spec.outputQuantization.stochastic)
    outputKey = buildStochasticKey(b, b.getLoc(), func.getArgument(seed++));
}

void LowRankEmitter::storePartials(ArrayRef<Value> stats) {
  Value warp = arith::DivUIOp::create(b, tid, cst(kWarpSize));
  Value shared = func.getWorkgroupAttributions()[0];
  auto ifThen = [&](Value cond, function_ref<void()> body) {
    auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(op.thenBlock());
    body();
  };
  SmallVector<Value> warpMaxes;
  for (Value stat : stats)
    warpMaxes.push_back(emitWarpMax(b, stat));
  Value laneZero =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, cst(0));
  ifThen(laneZero, [&] {
    for (auto [i, m] : llvm::enumerate(warpMaxes))
      memref::StoreOp::create(b, m, shared, ValueRange{cst(i), warp});
  });
  gpu::BarrierOp::create(b);
  Value threadZero =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cst(0));
  ifThen(threadZero, [&] {
    Value partial = arith::AddIOp::create(
        b,
        arith::MulIOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::y),
                              cst(spec.gridX())),
        gpu::BlockIdOp::create(b, gpu::Dimension::x));
    for (int64_t i = 0; i < int64_t(stats.size()); ++i) {
      Value m = memref::LoadOp::create(b, shared, ValueRange{cst(i), cst(0)});
      for (int64_t w = 1; w < spec.threads / kWarpSize; ++w)
        m = arith::MaximumFOp::create(
            b, m, memref::LoadOp::create(b, shared, ValueRange{cst(i), cst(w)}));
      unsigned first = spec.stage == LowRankStage::Project ? 2 : 1;
      memref::StoreOp::create(b, m, func.getArgument(first + i),
                              ValueRange{partial});
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

  if (spec.stage == LowRankStage::Quantize)
    loadScales();
  SmallVector<Value> inits(spec.numStatistics(), f32(0));
  auto loop = scf::ForOp::create(
      b, gpu::BlockIdOp::create(b, gpu::Dimension::y), cst(spec.numItems()),
      gpu::GridDimOp::create(b, gpu::Dimension::y), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value item = loop.getInductionVar();
    Value s = arith::DivUIOp::create(b, item, cst(spec.blockRows()));
    Value c = arith::RemUIOp::create(b, item, cst(spec.blockRows()));
    SmallVector<Value> stats(loop.getRegionIterArgs());
    if (spec.tail() == 0) {
      stats = emitItem(/*tail=*/false, s, c, stats);
    } else {
      // Uniform per thread block: a full token block, or the tail.
      Value isBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, c,
                                            cst(spec.numBlocks()));
      auto branch = scf::IfOp::create(b, TypeRange(ValueRange(stats)),
                                      isBlock, /*withElseRegion=*/true);
      for (bool tail : {false, true}) {
        OpBuilder::InsertionGuard inner(b);
        Block *block = tail ? branch.elseBlock() : branch.thenBlock();
        b.setInsertionPointToEnd(block);
        if (!block->empty())
          b.setInsertionPoint(block->getTerminator());
        SmallVector<Value> results = emitItem(tail, s, c, stats);
        if (!results.empty())
          scf::YieldOp::create(b, results);
      }
      stats = SmallVector<Value>(branch.getResults());
    }
    if (!stats.empty())
      scf::YieldOp::create(b, stats);
  }
  if (spec.hasStatistics())
    storePartials(SmallVector<Value>(loop.getResults()));
  gpu::ReturnOp::create(b);
}

gpu::GPUFuncOp mlir::hot::buildLowRankKernel(OpBuilder &builder, Location loc,
                                             gpu::GPUModuleOp module,
                                             const LowRankKernelSpec &spec) {
  std::string name = spec.getKernelName();
  if (auto existing = module.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing;

  Type f32 = builder.getF32Type(), i8 = builder.getI8Type();
  SmallVector<int64_t> inShape{spec.outer, spec.n, spec.inner};
  SmallVector<int64_t> outShape{spec.outer, spec.projectedSize(), spec.inner};
  SmallVector<Type> argTypes{MemRefType::get(inShape, f32)};
  if (spec.stage == LowRankStage::Project)
    argTypes.push_back(MemRefType::get(outShape, f32));
  int64_t statistics = spec.numStatistics();
  argTypes.append(statistics, MemRefType::get({spec.numPartials()}, f32));
  if (spec.stage == LowRankStage::Quantize) {
    auto scale = MemRefType::get({}, f32);
    argTypes.append(2, MemRefType::get({spec.statisticsPartials}, f32));
    argTypes.append({MemRefType::get(inShape, i8), scale,
                     MemRefType::get(outShape, i8), scale});
    for (const LowRankQuantization &q :
         {spec.inputQuantization, spec.outputQuantization})
      if (q.stochastic)
        argTypes.push_back(builder.getI64Type());
  }
  SmallVector<Type> workgroup;
  if (statistics > 0) {
    auto space = gpu::AddressSpaceAttr::get(builder.getContext(),
                                            gpu::AddressSpace::Workgroup);
    workgroup.push_back(
        MemRefType::get({statistics, spec.threads / kWarpSize}, f32,
                        MemRefLayoutAttrInterface(), space));
  }
  auto func = createKernelFunc(builder, loc, module, name, argTypes, workgroup,
                               spec.threads);
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  LowRankEmitter(b, spec, func).emit();
  return func;
}
