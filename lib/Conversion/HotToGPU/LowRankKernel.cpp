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

#include "WarpButterfly.h"
#include "hot/Conversion/HotToGPU.h"
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
  if (inputMaxBlock > 0)
    os << "_inmax" << inputMaxBlock;
  if (outputMax)
    os << "_outmax";
  if (hasStatistics())
    os << "_p" << numPartials();
  return name;
}

namespace {

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
  int64_t numStatistics() const {
    return (spec.inputMaxBlock > 0 ? 1 : 0) + (spec.outputMax ? 1 : 0);
  }
  /// The thread's V values of `token` of sample `s` (zeros where the
  /// thread's channels are past `inner`).
  SmallVector<Value> load(Value s, Value token);
  /// Stores each of `rows` (V values) at y[s, firstOut + k, channels].
  void store(ArrayRef<SmallVector<Value>> rows, Value s, Value firstOut);
  /// One item: token block `c` of sample `s` (the tail when `tail`). Takes
  /// and returns the running statistics.
  SmallVector<Value> emitItem(bool tail, Value s, Value c,
                              SmallVector<Value> stats);
  /// Folds the statistics of one loaded token row into `stats`.
  void addInput(ArrayRef<Value> loaded, SmallVector<Value> &stats);
  /// Reduces each statistic over the thread block and stores its partial.
  void storePartials(ArrayRef<Value> stats);

  ImplicitLocOpBuilder &b;
  const LowRankKernelSpec &spec;
  gpu::GPUFuncOp func;
  Value tid, lane, channel, active;
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

void LowRankEmitter::store(ArrayRef<SmallVector<Value>> rows, Value s,
                           Value firstOut) {
  auto emitStores = [&] {
    auto type = VectorType::get({spec.vectorWidth}, b.getF32Type());
    for (auto [k, row] : llvm::enumerate(rows)) {
      Value packed = vector::FromElementsOp::create(b, type, row);
      Value out = arith::AddIOp::create(b, firstOut, cst(k));
      auto op = vector::StoreOp::create(b, packed, func.getArgument(1),
                                        ValueRange{s, out, channel});
      op.setAlignment(uint64_t(4 * spec.vectorWidth));
    }
  };
  if (!active)
    return emitStores();
  auto guard = scf::IfOp::create(b, active, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard insertion(b);
  b.setInsertionPointToStart(guard.thenBlock());
  emitStores();
}

void LowRankEmitter::addInput(ArrayRef<Value> loaded,
                              SmallVector<Value> &stats) {
  if (spec.inputMaxBlock == 0)
    return;
  SmallVector<Value> transformed(loaded);
  emitBlockButterfly(b, transformed, spec.inputMaxBlock, lane);
  stats[0] = emitAbsMax(b, transformed, stats[0]);
}

SmallVector<Value> LowRankEmitter::emitItem(bool tail, Value s, Value c,
                                            SmallVector<Value> stats) {
  int64_t rank = spec.rows.size();
  SmallVector<SmallVector<Value>> outRows;
  Value firstOut;
  if (tail) {
    // The tail tokens, copied unchanged.
    for (int64_t t = 0; t < spec.tail(); ++t) {
      outRows.push_back(load(s, cst(spec.numBlocks() * spec.block + t)));
      addInput(outRows.back(), stats);
    }
    firstOut = cst(spec.numBlocks() * rank);
  } else {
    Value firstToken = arith::MulIOp::create(b, c, cst(spec.block));
    // tokens[t][e]: token t of the block at the thread's channel e.
    SmallVector<SmallVector<Value>> tokens;
    for (int64_t t = 0; t < spec.block; ++t) {
      tokens.push_back(
          load(s, arith::AddIOp::create(b, firstToken, cst(t)).getResult()));
      addInput(tokens.back(), stats);
    }
    outRows.assign(rank, SmallVector<Value>(spec.vectorWidth));
    for (int64_t e = 0; e < spec.vectorWidth; ++e) {
      SmallVector<Value> column;
      for (int64_t t = 0; t < spec.block; ++t)
        column.push_back(tokens[t][e]);
      // All of the block is in this thread's registers.
      emitBlockButterfly(b, column, spec.block, /*lane=*/Value());
      for (auto [k, row] : llvm::enumerate(spec.rows))
        outRows[k][e] = column[row];
    }
    firstOut = arith::MulIOp::create(b, c, cst(rank));
  }
  if (spec.outputMax)
    for (ArrayRef<Value> row : outRows)
      stats.back() = emitAbsMax(b, row, stats.back());
  store(outRows, s, firstOut);
  return stats;
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
      memref::StoreOp::create(b, m, func.getArgument(2 + i),
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

  SmallVector<Value> inits(numStatistics(), f32(0));
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

  Type f32 = builder.getF32Type();
  SmallVector<Type> argTypes{
      MemRefType::get({spec.outer, spec.n, spec.inner}, f32),
      MemRefType::get({spec.outer, spec.projectedSize(), spec.inner}, f32)};
  int64_t statistics =
      (spec.inputMaxBlock > 0 ? 1 : 0) + (spec.outputMax ? 1 : 0);
  argTypes.append(statistics, MemRefType::get({spec.numPartials()}, f32));
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
