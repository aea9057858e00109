//===- LowRankKernel.cpp - The Walsh low-rank projection (HLA) kernel -----===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// Builds the gpu.func of hot.lowrank on a [outer, n, inner] f32 buffer along
// its middle dim (the tokens of a sample; inner = channels). Thread f of
// block (bx, c, s) owns channel bx * threads + f of token block c of sample
// s: it loads the block's `block` tokens (coalesced across the threads of a
// warp, which read consecutive channels), runs the butterfly of
// docs/numerics.md in registers in its exact order, and stores the kept
// coefficients times c_b. The code is straight-line, so LLVM drops the
// butterfly branches that feed no kept coefficient; what remains computes
// every kept value with the CPU path's operations, bit for bit. Blocks with
// c == n / block (only when there is a tail) copy the tail tokens unchanged.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/TransformKernels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::hot;

std::string LowRankKernelSpec::getKernelName() const {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << "hot_lowrank_" << outer << "x" << n << "x" << inner << "_b" << block
     << "_k";
  for (int64_t row : rows)
    os << "_" << row;
  os << "_t" << threads;
  return name;
}

/// Emits the projection of token block `c` (an index value) of sample `s`
/// at channel `f`.
static void emitBlock(ImplicitLocOpBuilder &b, const LowRankKernelSpec &spec,
                      Value x, Value y, Value s, Value c, Value f) {
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  Value firstToken = arith::MulIOp::create(b, c, cst(spec.block)).getResult();
  SmallVector<Value> v;
  for (int64_t t = 0; t < spec.block; ++t) {
    Value token = arith::AddIOp::create(b, firstToken, cst(t));
    v.push_back(memref::LoadOp::create(b, x, ValueRange{s, token, f}));
  }
  unsigned bits = llvm::Log2_64(spec.block);
  for (unsigned stage = 0; stage < bits; ++stage) {
    int64_t span = int64_t(1) << stage;
    for (int64_t t = 0; t < spec.block; ++t) {
      if (t & span)
        continue;
      Value lo = v[t], hi = v[t + span];
      v[t] = arith::AddFOp::create(b, lo, hi);
      v[t + span] = arith::SubFOp::create(b, lo, hi);
    }
  }
  double normalization =
      std::ldexp(bits % 2 ? std::sqrt(0.5) : 1.0, -int(bits / 2));
  Value scale =
      arith::ConstantOp::create(b, b.getF32FloatAttr(float(normalization)));
  int64_t rank = spec.rows.size();
  Value firstOut = arith::MulIOp::create(b, c, cst(rank)).getResult();
  for (auto [k, row] : llvm::enumerate(spec.rows)) {
    Value value = v[row];
    if (spec.block > 1)
      value = arith::MulFOp::create(b, value, scale);
    Value out = arith::AddIOp::create(b, firstOut, cst(k));
    memref::StoreOp::create(b, value, y, ValueRange{s, out, f});
  }
}

/// Emits the copy of the tail tokens of sample `s` at channel `f`.
static void emitTail(ImplicitLocOpBuilder &b, const LowRankKernelSpec &spec,
                     Value x, Value y, Value s, Value f) {
  int64_t in = spec.numBlocks() * spec.block;
  int64_t out = spec.numBlocks() * int64_t(spec.rows.size());
  for (int64_t t = 0; t < spec.tail(); ++t) {
    Value value = memref::LoadOp::create(
        b, x, ValueRange{s, arith::ConstantIndexOp::create(b, in + t), f});
    memref::StoreOp::create(
        b, value, y,
        ValueRange{s, arith::ConstantIndexOp::create(b, out + t), f});
  }
}

gpu::GPUFuncOp mlir::hot::buildLowRankKernel(OpBuilder &builder, Location loc,
                                             gpu::GPUModuleOp module,
                                             const LowRankKernelSpec &spec) {
  std::string name = spec.getKernelName();
  if (auto existing = module.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing;

  Type f32 = builder.getF32Type();
  auto xType = MemRefType::get({spec.outer, spec.n, spec.inner}, f32);
  auto yType =
      MemRefType::get({spec.outer, spec.projectedSize(), spec.inner}, f32);
  auto func = createKernelFunc(builder, loc, module, name, {xType, yType},
                               TypeRange(), spec.threads);

  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  Value x = func.getArgument(0), y = func.getArgument(1);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value f = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::x),
                            arith::ConstantIndexOp::create(b, spec.threads)),
      tid);
  Value c = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  Value s = gpu::BlockIdOp::create(b, gpu::Dimension::z);

  auto body = [&] {
    if (spec.tail() == 0) {
      emitBlock(b, spec, x, y, s, c, f);
      return;
    }
    // Uniform per thread block: full blocks, or the tail row of blocks.
    Value isBlock = arith::CmpIOp::create(
        b, arith::CmpIPredicate::ult, c,
        arith::ConstantIndexOp::create(b, spec.numBlocks()));
    auto branch = scf::IfOp::create(b, isBlock, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard insertion(b);
    b.setInsertionPointToStart(branch.thenBlock());
    emitBlock(b, spec, x, y, s, c, f);
    b.setInsertionPointToStart(branch.elseBlock());
    emitTail(b, spec, x, y, s, f);
  };
  if (spec.inner % spec.threads != 0) {
    Value inside =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, f,
                              arith::ConstantIndexOp::create(b, spec.inner));
    auto guardOp = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard insertion(b);
    b.setInsertionPointToStart(guardOp.thenBlock());
    body();
  } else {
    body();
  }
  gpu::ReturnOp::create(b);
  return func;
}
