//===- ColumnQuantizeKernel.cpp - Hadamard along dim 0 + quantize ---------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// Builds the two gpu.funcs of a per-tensor hot.quantize(hot.hadamard(x,
// dim 0)), W's transform on the gx path (see ColumnQuantizeKernelSpec).
// Thread t of the thread block of rows [r0, r0 + B) owns column
// c = t + 128 s at step s: it loads x[r0 .. r0 + B)[c], runs the butterfly of
// docs/numerics.md over those B values in registers and has output rows
// r0 .. r0 + B of column c. That column is partial t of each row's SAWB sums
// (element j of a row goes into partial j mod 128), and the steps visit a
// partial's elements in increasing j, so the thread's sums are the partials'
// sequential chains, bit for bit; the tree over the 128 partials runs in
// shared memory, a level at a time. Columns past n (the last step of rows
// whose length is not a multiple of 128) load nothing and hold zeros, which
// leave the maxima and the sums unchanged.
//
//===----------------------------------------------------------------------===//

#include "TransformMath.h"
#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/HotToLinalg.h"
#include "hot/Conversion/TransformKernels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::hot;

static_assert(kColumnQuantizeThreads == kSawbRowPartials,
              "a thread per partial of a row's SAWB sums");

/// Sum trees per pass through shared memory: 32 x 128 f64, 32 KiB.
static constexpr int64_t kTreesPerPass = 32;

std::string ColumnQuantizeKernelSpec::getKernelName() const {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << "hot_column_"
     << (stage == ColumnQuantizeStage::Statistics ? "stats_" : "quantize_") << m
     << "x" << n << "_c" << block << "_a" << columnsAhead;
  if (stage == ColumnQuantizeStage::Quantize) {
    os << "_q" << qmax << (stochastic ? "_stochastic" : "_nearest");
    if (kBytes > 0)
      os << "_kmajor" << kBytes << (packS4 ? "s4" : "");
  }
  if (sawb)
    os << "_sawb";
  os << getInputTypeSuffix(inputElementType);
  return name;
}

namespace {

/// Emits the body of one kernel of the family.
class ColumnQuantizeEmitter {
public:
  ColumnQuantizeEmitter(ImplicitLocOpBuilder &b,
                        const ColumnQuantizeKernelSpec &spec,
                        gpu::GPUFuncOp func)
      : b(b), spec(spec), func(func),
        args(func.getArguments().take_front(
            func.getFunctionType().getNumInputs())) {}

  void emit();

private:
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(float(v)));
  }
  Value equals(Value x, int64_t y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, cst(y));
  }

  /// A column of the block's rows: its index, whether it exists (null: it
  /// always does) and its B values.
  struct Column {
    Value col, active;
    SmallVector<Value> values;
  };
  /// Loads the columns of steps first, first + 1, ... first + count - 1.
  SmallVector<Column> loadColumns(Value first, int64_t count);
  /// Runs `body` on the columns of every step in order, threading `inits`
  /// through, columnsAhead steps' loads at a time. With `preloaded`, the
  /// first group's columns have been loaded (before the caller's work).
  SmallVector<Value>
  foldColumns(ValueRange inits, SmallVector<Column> preloaded,
              function_ref<SmallVector<Value>(Column &, ValueRange)> body);
  /// The first group of steps (what foldColumns' `preloaded` holds).
  int64_t firstGroup() const {
    return std::min(spec.columnsAhead, spec.numColumnSteps());
  }

  /// Statistics: the block's max|y| per warp and, with sawb, its rows' sums.
  void emitStatistics();
  /// Stores the tree sums of `sums` (2B per thread: |y| then y^2 of each
  /// row) as the block's rows' sums.
  void storeRowSums(ArrayRef<Value> sums);
  /// Quantize: the scale, then q.
  void emitQuantize();
  /// The per-tensor scale from the Statistics kernel's results, computed by
  /// the first warp and shared through `shared`; block 0 stores it.
  Value tensorScale(Value shared);
  /// Quantizes one column's values and stores them.
  void storeColumn(Column &column, Value inverse);

  ImplicitLocOpBuilder &b;
  const ColumnQuantizeKernelSpec &spec;
  gpu::GPUFuncOp func;
  ArrayRef<BlockArgument> args;
  Value tid, lane, warp, blockId, firstRow, key;
};

} // namespace

SmallVector<ColumnQuantizeEmitter::Column>
ColumnQuantizeEmitter::loadColumns(Value first, int64_t count) {
  bool masked = spec.n % kColumnQuantizeThreads != 0;
  SmallVector<Column> columns;
  for (int64_t s = 0; s < count; ++s) {
    Column column;
    Value step = arith::AddIOp::create(b, first, cst(s));
    column.col = arith::AddIOp::create(
        b, tid, arith::MulIOp::create(b, step, cst(kColumnQuantizeThreads)));
    Value col = column.col;
    if (masked) {
      column.active = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                            column.col, cst(spec.n));
      col = arith::SelectOp::create(b, column.active, column.col, cst(0));
    }
    for (int64_t r = 0; r < spec.block; ++r) {
      Value row = arith::AddIOp::create(b, firstRow, cst(r));
      column.values.push_back(emitLoadAsF32(b, args[0], ValueRange{row, col},
                                            /*width=*/1, column.active)[0]);
    }
    columns.push_back(std::move(column));
  }
  return columns;
}

SmallVector<Value> ColumnQuantizeEmitter::foldColumns(
    ValueRange inits, SmallVector<Column> preloaded,
    function_ref<SmallVector<Value>(Column &, ValueRange)> body) {
  auto fold = [&](MutableArrayRef<Column> columns, ValueRange from) {
    SmallVector<Value> state(from);
    for (Column &column : columns)
      state = body(column, state);
    return state;
  };
  SmallVector<Value> state = fold(preloaded, inits);
  int64_t ahead = spec.columnsAhead, total = spec.numColumnSteps();
  int64_t done = preloaded.size();
  if (int64_t groups = (total - done) / ahead; groups > 0) {
    auto loop = scf::ForOp::create(
        b, cst(0), cst(groups), cst(1), state,
        [&](OpBuilder &nested, Location, Value group, ValueRange from) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          Value first = arith::AddIOp::create(
              b, cst(done), arith::MulIOp::create(b, group, cst(ahead)));
          SmallVector<Column> columns = loadColumns(first, ahead);
          scf::YieldOp::create(b, fold(columns, from));
        });
    state = loop.getResults();
    done += groups * ahead;
  }
  if (done < total) {
    SmallVector<Column> rest = loadColumns(cst(done), total - done);
    state = fold(rest, state);
  }
  return state;
}

void ColumnQuantizeEmitter::emit() {
  tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  blockId = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  lane = arith::RemUIOp::create(b, tid, cst(kWarpSize));
  warp = arith::DivUIOp::create(b, tid, cst(kWarpSize));
  firstRow = arith::MulIOp::create(b, blockId, cst(spec.block));
  if (spec.stage == ColumnQuantizeStage::Statistics)
    emitStatistics();
  else
    emitQuantize();
  gpu::ReturnOp::create(b);
}

void ColumnQuantizeEmitter::emitStatistics() {
  // With maxabs scales the max is taken before the normalization, which is
  // applied once to it: rounding is monotonic, so max|c y| = c max|y|.
  bool normalize = spec.sawb;
  int64_t rows = spec.block;
  SmallVector<Value> inits{f32(0)};
  if (spec.sawb)
    inits.append(2 * rows, arith::ConstantOp::create(b, b.getF64FloatAttr(0)));
  SmallVector<Value> state = foldColumns(
      inits, loadColumns(cst(0), firstGroup()),
      [&](Column &column, ValueRange from) {
        SmallVector<Value> y = column.values;
        emitBlockButterfly(b, y, rows, lane, normalize);
        SmallVector<Value> next(from);
        next[0] = emitAbsMax(b, y, from[0]);
        if (!spec.sawb)
          return next;
        for (int64_t r = 0; r < rows; ++r) {
          Value y64 = arith::ExtFOp::create(b, b.getF64Type(), y[r]);
          next[1 + r] = arith::AddFOp::create(b, from[1 + r],
                                              math::AbsFOp::create(b, y64));
          next[1 + rows + r] = arith::AddFOp::create(
              b, from[1 + rows + r], arith::MulFOp::create(b, y64, y64));
        }
        return next;
      });
  Value max = emitWarpMax(b, state[0]);
  if (!normalize)
    max = emitNormalize(b, max, spec.block);
  emitIfThen(b, equals(lane, 0), [&] {
    Value partial = arith::AddIOp::create(
        b,
        arith::MulIOp::create(b, blockId,
                              cst(kColumnQuantizeThreads / kWarpSize)),
        warp);
    memref::StoreOp::create(b, max, args[1], ValueRange{partial});
  });
  if (spec.sawb)
    storeRowSums(ArrayRef(state).drop_front());
}

void ColumnQuantizeEmitter::storeRowSums(ArrayRef<Value> sums) {
  // Tree j of a pass sums its 128 partials in row j of `shared`: level h
  // adds P[p + h] into P[p] for p < h (h = 64, ..., 1), the items of all
  // trees spread over the threads, a barrier between levels.
  Value shared = func.getWorkgroupAttributions()[0];
  int64_t trees = int64_t(sums.size());
  int64_t perPass = std::min(trees, kTreesPerPass);
  for (int64_t pass = 0; pass * perPass < trees; ++pass) {
    if (pass > 0) // The previous pass's sums have been read.
      gpu::BarrierOp::create(b);
    for (int64_t j = 0; j < perPass; ++j)
      memref::StoreOp::create(b, sums[pass * perPass + j], shared,
                              ValueRange{cst(j), tid});
    gpu::BarrierOp::create(b);
    for (int64_t h = kSawbRowPartials / 2; h >= 1; h /= 2) {
      int64_t items = perPass * h;
      for (int64_t first = 0; first < items; first += kColumnQuantizeThreads) {
        Value item = arith::AddIOp::create(b, tid, cst(first));
        auto addPartner = [&] {
          Value tree = arith::DivUIOp::create(b, item, cst(h));
          Value p = arith::RemUIOp::create(b, item, cst(h));
          Value partner = arith::AddIOp::create(b, p, cst(h));
          Value sum = arith::AddFOp::create(
              b, memref::LoadOp::create(b, shared, ValueRange{tree, p}),
              memref::LoadOp::create(b, shared, ValueRange{tree, partner}));
          memref::StoreOp::create(b, sum, shared, ValueRange{tree, p});
        };
        if (first + kColumnQuantizeThreads <= items)
          addPartner();
        else
          emitIfThen(b,
                     arith::CmpIOp::create(b, arith::CmpIPredicate::ult, item,
                                           cst(items)),
                     addPartner);
      }
      gpu::BarrierOp::create(b);
    }
    // Thread j stores tree j's sum: |y| (s1) of row j, then y^2 (s2).
    emitIfThen(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid, cst(perPass)),
        [&] {
          Value tree = arith::AddIOp::create(b, tid, cst(pass * perPass));
          Value which = arith::DivUIOp::create(b, tree, cst(spec.block));
          Value row = arith::AddIOp::create(
              b, firstRow, arith::RemUIOp::create(b, tree, cst(spec.block)));
          Value sum =
              memref::LoadOp::create(b, shared, ValueRange{tid, cst(0)});
          memref::StoreOp::create(b, sum, args[2], ValueRange{which, row});
        });
  }
}

Value ColumnQuantizeEmitter::tensorScale(Value shared) {
  emitIfThen(b, equals(warp, 0), [&] {
    Value max = emitPartialsMax(b, args[1], spec.numPartials(), lane);
    Value scale;
    if (spec.sawb) {
      auto [sum, sumOfSquares] = emitSumRowSums(b, lane, args[2], spec.m);
      scale =
          emitSawbScale(b, max, sum, sumOfSquares, spec.m * spec.n, spec.qmax);
    } else {
      scale = arith::DivFOp::create(b, max, f32(double(spec.qmax)));
    }
    emitIfThen(b, equals(lane, 0), [&] {
      memref::StoreOp::create(b, scale, shared, ValueRange{cst(0)});
      emitIfThen(b, equals(blockId, 0), [&] {
        memref::StoreOp::create(b, scale, args[spec.sawb ? 4 : 3],
                                ValueRange{});
      });
    });
  });
  gpu::BarrierOp::create(b);
  return memref::LoadOp::create(b, shared, ValueRange{cst(0)});
}

void ColumnQuantizeEmitter::storeColumn(Column &column, Value inverse) {
  int64_t rows = spec.block;
  SmallVector<Value> y = column.values;
  emitBlockButterfly(b, y, rows, lane);
  SmallVector<Value> qs;
  for (int64_t r = 0; r < rows; ++r) {
    Value index;
    if (key) {
      // The element index i * n + j, truncated to 32 bits (numerics.md).
      Value row = arith::AddIOp::create(b, firstRow, cst(r));
      index = arith::IndexCastUIOp::create(
          b, b.getI32Type(),
          arith::AddIOp::create(b, arith::MulIOp::create(b, row, cst(spec.n)),
                                column.col));
    }
    qs.push_back(emitQuantizeValue(b, y[r], inverse, spec.qmax, key, index));
  }
  Value q = args[spec.sawb ? 3 : 2];
  emitIfThen(b, column.active, [&] {
    if (spec.kBytes == 0) {
      for (int64_t r = 0; r < rows; ++r)
        memref::StoreOp::create(
            b, qs[r], q,
            ValueRange{arith::AddIOp::create(b, firstRow, cst(r)), column.col});
      return;
    }
    // The block's values of the column are consecutive K bytes of the
    // operand's row `col`: one vector store.
    Value firstByte = firstRow;
    if (spec.packS4) {
      Value low = arith::ConstantOp::create(b, b.getI8IntegerAttr(15));
      Value four = arith::ConstantOp::create(b, b.getI8IntegerAttr(4));
      SmallVector<Value> bytes;
      for (int64_t r = 0; r < rows; r += 2)
        bytes.push_back(
            arith::OrIOp::create(b, arith::AndIOp::create(b, qs[r], low),
                                 arith::ShLIOp::create(b, qs[r + 1], four)));
      qs = std::move(bytes);
      firstByte = arith::DivUIOp::create(b, firstRow, cst(2));
    }
    int64_t width = int64_t(qs.size());
    Value packed = vector::FromElementsOp::create(
        b, VectorType::get({width}, b.getI8Type()), qs);
    auto store = vector::StoreOp::create(b, packed, q,
                                         ValueRange{column.col, firstByte});
    store.setAlignment(uint64_t(std::min<int64_t>(width, 16)));
  });
}

void ColumnQuantizeEmitter::emitQuantize() {
  if (spec.stochastic)
    key = buildStochasticKey(b, b.getLoc(), args.back());
  // The first columns' loads are issued before the scale is reduced.
  SmallVector<Column> first = loadColumns(cst(0), firstGroup());
  Value inverse =
      emitReciprocal(b, tensorScale(func.getWorkgroupAttributions()[0]));
  foldColumns(ValueRange(), std::move(first),
              [&](Column &column, ValueRange) -> SmallVector<Value> {
                storeColumn(column, inverse);
                return {};
              });
}

gpu::GPUFuncOp
mlir::hot::buildColumnQuantizeKernel(OpBuilder &builder, Location loc,
                                     gpu::GPUModuleOp module,
                                     const ColumnQuantizeKernelSpec &spec) {
  std::string name = spec.getKernelName();
  if (auto existing = module.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing;
  assert(spec.m % spec.block == 0 && "whole blocks of rows");
  assert((spec.kBytes == 0 ||
          spec.kBytes == (spec.packS4 ? spec.m / 2 : spec.m)) &&
         "a K-major q holds exactly the column's values");

  MLIRContext *ctx = builder.getContext();
  Type f32 = builder.getF32Type(), f64 = builder.getF64Type(),
       i8 = builder.getI8Type();
  SmallVector<Type> argTypes{
      MemRefType::get({spec.m, spec.n},
                      spec.inputElementType ? spec.inputElementType : f32),
      MemRefType::get({spec.numPartials()}, f32)};
  if (spec.sawb)
    argTypes.push_back(MemRefType::get({2, spec.m}, f64));
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  SmallVector<Type> workgroup;
  if (spec.stage == ColumnQuantizeStage::Quantize) {
    argTypes.push_back(spec.kBytes > 0
                           ? MemRefType::get({spec.n, spec.kBytes}, i8)
                           : MemRefType::get({spec.m, spec.n}, i8));
    argTypes.push_back(MemRefType::get({}, f32));
    if (spec.stochastic)
      argTypes.push_back(builder.getI64Type());
    workgroup.push_back(
        MemRefType::get({1}, f32, MemRefLayoutAttrInterface(), space));
  } else if (spec.sawb) {
    workgroup.push_back(MemRefType::get(
        {std::min(2 * spec.block, kTreesPerPass), kSawbRowPartials}, f64,
        MemRefLayoutAttrInterface(), space));
  }
  auto func = createKernelFunc(builder, loc, module, name, argTypes, workgroup,
                               kColumnQuantizeThreads);
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  ColumnQuantizeEmitter(b, spec, func).emit();
  return func;
}
