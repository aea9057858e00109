//===- NVVMToSimulator.cpp - NVVM kernels as calls of the simulator -------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// Rewrites LLVM-dialect kernels with NVVM ops into host code: every NVVM op
// becomes a call of libhot_simulator_runtime.so (hot/Runtime/SimulatorABI.h),
// shared memory becomes the block's window, and each kernel gets a launch
// function that unpacks cuLaunchKernel's parameter array.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/Passes.h"
#include "hot/Runtime/SimulatorABI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Regex.h"

namespace mlir::hot {
#define GEN_PASS_DEF_CONVERTNVVMTOSIMULATORPASS
#include "hot/Conversion/Passes.h.inc"
} // namespace mlir::hot

using namespace mlir;
namespace sim = ::hot::simulator;

namespace {

/// The NVPTX address space of shared memory.
constexpr unsigned kSharedAddressSpace = 3;

/// Builds the runtime calls that replace the NVVM ops of one symbol table.
class Rewriter {
public:
  explicit Rewriter(Operation *symbolTable)
      : symbolTable(symbolTable), b(symbolTable->getContext()),
        i32(b.getI32Type()), ptr(LLVM::LLVMPointerType::get(b.getContext())) {}

  /// Rewrites `op` if it is an NVVM op; returns failure (with an error at
  /// `op`) for NVVM ops and inline assembly the simulator does not run.
  LogicalResult rewrite(Operation *op);

private:
  Value call(Location loc, StringRef name, Type result, ValueRange args);
  Value constant(Location loc, int64_t value);
  /// A stack slot of `count` i32 registers in the entry block of `op`'s
  /// function.
  Value slot(Operation *op, int64_t count);
  /// Stores `values` into a new slot; returns it.
  Value spill(Operation *op, ValueRange values);
  /// The `count` registers of a slot: one i32, or a struct of them.
  Value reload(Location loc, Value slot, Type resultType, int64_t count);
  /// `p` in the generic address space.
  Value generic(Location loc, Value p);

  LogicalResult rewriteShuffle(NVVM::ShflOp op);
  LogicalResult rewriteLdMatrix(NVVM::LdMatrixOp op);
  LogicalResult rewriteMma(NVVM::MmaOp op);
  LogicalResult rewriteWgmma(NVVM::WgmmaMmaAsyncOp op);
  LogicalResult rewriteInlineWgmma(LLVM::InlineAsmOp op);
  /// An NVVM intrinsic called through llvm.call_intrinsic, as host LLVM
  /// intrinsics with the PTX instruction's semantics.
  LogicalResult rewriteNVVMIntrinsic(LLVM::CallIntrinsicOp op);
  /// The call of __hotsim_wgmma replacing `op` (m64n`n`k32 s8).
  void emitWgmma(Operation *op, int64_t n, bool satfinite, Value scaleD,
                 Value descA, Value descB, ValueRange accumulators);

  Operation *symbolTable;
  OpBuilder b;
  Type i32;
  Type ptr;
};

/// Whether `op` calls an NVVM intrinsic by name (llvm.call_intrinsic).
bool isNVVMIntrinsic(Operation *op) {
  auto call = dyn_cast<LLVM::CallIntrinsicOp>(op);
  return call && call.getIntrin().starts_with("llvm.nvvm.");
}

/// The runtime's register number of a special-register op.
std::optional<int> getSpecialRegister(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<int>>(op)
      .Case([](NVVM::ThreadIdXOp) { return sim::TidX; })
      .Case([](NVVM::ThreadIdYOp) { return sim::TidY; })
      .Case([](NVVM::ThreadIdZOp) { return sim::TidZ; })
      .Case([](NVVM::BlockDimXOp) { return sim::NtidX; })
      .Case([](NVVM::BlockDimYOp) { return sim::NtidY; })
      .Case([](NVVM::BlockDimZOp) { return sim::NtidZ; })
      .Case([](NVVM::BlockIdXOp) { return sim::CtaidX; })
      .Case([](NVVM::BlockIdYOp) { return sim::CtaidY; })
      .Case([](NVVM::BlockIdZOp) { return sim::CtaidZ; })
      .Case([](NVVM::GridDimXOp) { return sim::NctaidX; })
      .Case([](NVVM::GridDimYOp) { return sim::NctaidY; })
      .Case([](NVVM::GridDimZOp) { return sim::NctaidZ; })
      .Case([](NVVM::LaneIdOp) { return sim::LaneId; })
      .Case([](NVVM::WarpIdOp) { return sim::WarpId; })
      .Default(std::optional<int>());
}

Value Rewriter::call(Location loc, StringRef name, Type result,
                     ValueRange args) {
  // lookupOrCreateFn declares at the start of the symbol table, keeping `b`'s
  // insertion point.
  auto fn = LLVM::lookupOrCreateFn(
      b, symbolTable, name, llvm::to_vector(args.getTypes()),
      result ? result : LLVM::LLVMVoidType::get(b.getContext()));
  assert(succeeded(fn) && "runtime function declared with another type");
  auto op = LLVM::CallOp::create(b, loc, *fn, args);
  return op.getNumResults() ? op.getResult() : Value();
}

Value Rewriter::constant(Location loc, int64_t value) {
  return LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(value));
}

Value Rewriter::slot(Operation *op, int64_t count) {
  OpBuilder::InsertionGuard guard(b);
  auto fn = op->getParentOfType<LLVM::LLVMFuncOp>();
  b.setInsertionPointToStart(&fn.getBody().front());
  Value one = LLVM::ConstantOp::create(b, op->getLoc(), b.getI64Type(),
                                       b.getI64IntegerAttr(1));
  return LLVM::AllocaOp::create(b, op->getLoc(), ptr,
                                LLVM::LLVMArrayType::get(i32, count), one,
                                /*alignment=*/16);
}

Value Rewriter::spill(Operation *op, ValueRange values) {
  Value base = slot(op, values.size());
  for (auto [i, value] : llvm::enumerate(values)) {
    Value at = LLVM::GEPOp::create(b, op->getLoc(), ptr, i32, base,
                                   ArrayRef<LLVM::GEPArg>{int32_t(i)});
    LLVM::StoreOp::create(b, op->getLoc(), value, at);
  }
  return base;
}

Value Rewriter::reload(Location loc, Value slot, Type resultType,
                       int64_t count) {
  if (!isa<LLVM::LLVMStructType>(resultType))
    return LLVM::LoadOp::create(b, loc, i32, slot);
  Value result = LLVM::PoisonOp::create(b, loc, resultType);
  for (int64_t i = 0; i < count; ++i) {
    Value at = LLVM::GEPOp::create(b, loc, ptr, i32, slot,
                                   ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value value = LLVM::LoadOp::create(b, loc, i32, at);
    result = LLVM::InsertValueOp::create(b, loc, result, value,
                                         ArrayRef<int64_t>{i});
  }
  return result;
}

Value Rewriter::generic(Location loc, Value p) {
  if (cast<LLVM::LLVMPointerType>(p.getType()).getAddressSpace() == 0)
    return p;
  return LLVM::AddrSpaceCastOp::create(b, loc, ptr, p);
}

LogicalResult Rewriter::rewriteShuffle(NVVM::ShflOp op) {
  Location loc = op.getLoc();
  Type valueType = op.getVal().getType();
  Value value = op.getVal();
  if (valueType.isF32())
    value = LLVM::BitcastOp::create(b, loc, i32, value);
  bool withValid = op.getReturnValueAndIsValid().has_value();
  Value valid =
      withValid ? slot(op, 1) : LLVM::ZeroOp::create(b, loc, ptr).getResult();
  Value result =
      call(loc, "__hotsim_shfl", i32,
           {constant(loc, static_cast<int>(op.getKind())), op.getThreadMask(),
            value, op.getOffset(), op.getMaskAndClamp(), valid});
  if (valueType.isF32())
    result = LLVM::BitcastOp::create(b, loc, valueType, result);
  if (withValid) {
    Value flag = LLVM::LoadOp::create(b, loc, i32, valid);
    Value inRange = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, flag,
                                         constant(loc, 0));
    Value pair = LLVM::PoisonOp::create(b, loc, op.getType());
    pair =
        LLVM::InsertValueOp::create(b, loc, pair, result, ArrayRef<int64_t>{0});
    result = LLVM::InsertValueOp::create(b, loc, pair, inRange,
                                         ArrayRef<int64_t>{1});
  }
  op.getResult().replaceAllUsesWith(result);
  op.erase();
  return success();
}

LogicalResult Rewriter::rewriteLdMatrix(NVVM::LdMatrixOp op) {
  int64_t num = op.getNum();
  if (op.getShape().getM() != 8 || op.getShape().getN() != 8 ||
      op.getEltType() != NVVM::LdStMatrixEltType::B16 ||
      !llvm::is_contained({1, 2, 4}, num))
    return op.emitError("the simulator runs ldmatrix .m8n8 .b16 .x1/.x2/.x4 "
                        "only");
  Location loc = op.getLoc();
  Value out = slot(op, num);
  bool trans = op.getLayout() == NVVM::MMALayout::col;
  call(loc, "__hotsim_ldmatrix", Type(),
       {generic(loc, op.getPtr()), constant(loc, num), constant(loc, trans),
        out});
  op.getResult().replaceAllUsesWith(reload(loc, out, op.getType(), num));
  op.erase();
  return success();
}

LogicalResult Rewriter::rewriteMma(NVVM::MmaOp op) {
  NVVM::MMAShapeAttr shape = op.getShape();
  auto typeA = op.getMultiplicandAPtxType();
  auto typeB = op.getMultiplicandBPtxType();
  std::optional<int> kind;
  if (shape.getM() == 16 && shape.getN() == 8 && typeA == typeB &&
      op.getLayoutA() == NVVM::MMALayout::row &&
      op.getLayoutB() == NVVM::MMALayout::col && op.getOperandA().size() == 4 &&
      op.getOperandB().size() == 2 && op.getOperandC().size() == 4) {
    if (typeA == NVVM::MMATypes::s8 && shape.getK() == 32)
      kind = sim::S8M16N8K32;
    else if (typeA == NVVM::MMATypes::s4 && shape.getK() == 64)
      kind = sim::S4M16N8K64;
  }
  if (!kind)
    return op.emitError("the simulator runs mma.sync .row.col s8 m16n8k32 and "
                        "s4 m16n8k64 with s32 accumulators only");
  Location loc = op.getLoc();
  bool satfinite =
      op.getIntOverflowBehavior() == NVVM::MMAIntOverflow::satfinite;
  Value a = spill(op, op.getOperandA());
  Value bSlot = spill(op, op.getOperandB());
  Value c = spill(op, op.getOperandC());
  Value d = slot(op, 4);
  call(loc, "__hotsim_mma", Type(),
       {constant(loc, *kind), constant(loc, satfinite), a, bSlot, c, d});
  op.getResult().replaceAllUsesWith(reload(loc, d, op.getType(), 4));
  op.erase();
  return success();
}

void Rewriter::emitWgmma(Operation *op, int64_t n, bool satfinite, Value scaleD,
                         Value descA, Value descB, ValueRange accumulators) {
  Location loc = op->getLoc();
  Value in = spill(op, accumulators);
  Value out = slot(op, n / 2);
  call(loc, "__hotsim_wgmma", Type(),
       {constant(loc, n), constant(loc, satfinite), scaleD, descA, descB, in,
        out});
  op->getResult(0).replaceAllUsesWith(
      reload(loc, out, op->getResult(0).getType(), n / 2));
  op->erase();
}

LogicalResult Rewriter::rewriteWgmma(NVVM::WgmmaMmaAsyncOp op) {
  NVVM::MMAShapeAttr shape = op.getShape();
  int64_t n = shape.getN();
  auto accType = dyn_cast<LLVM::LLVMStructType>(op.getInouts().getType());
  if (op.getTypeA() != NVVM::WGMMATypes::s8 ||
      op.getTypeB() != NVVM::WGMMATypes::s8 ||
      op.getTypeD() != NVVM::WGMMATypes::s32 ||
      op.getLayoutA() != NVVM::MMALayout::row ||
      op.getLayoutB() != NVVM::MMALayout::col ||
      op.getScaleA() != NVVM::WGMMAScaleIn::one ||
      op.getScaleB() != NVVM::WGMMAScaleIn::one || shape.getM() != 64 ||
      shape.getK() != 32 || n % 8 != 0 || n > 256 || !accType ||
      accType.getBody().size() != static_cast<size_t>(n / 2))
    return op.emitError("the simulator runs wgmma.mma_async m64nNk32 "
                        ".s32.s8.s8 with K-major operands only");
  SmallVector<Value> accumulators;
  for (int64_t i = 0; i < n / 2; ++i)
    accumulators.push_back(LLVM::ExtractValueOp::create(
        b, op.getLoc(), op.getInouts(), ArrayRef<int64_t>{i}));
  bool satfinite = op.getSatfinite() == NVVM::MMAIntOverflow::satfinite;
  Value scaleD =
      constant(op.getLoc(), op.getScaleD() == NVVM::WGMMAScaleOut::one);
  emitWgmma(op, n, satfinite, scaleD, op.getDescriptorA(), op.getDescriptorB(),
            accumulators);
  return success();
}

/// convert-nvvm-to-llvm turns nvvm.wgmma.mma_async into inline PTX: n/2
/// accumulators (tied outputs), the two descriptors, then the scale-d flag,
/// which `setp.ne.b32 p, $k, 0` tests. That form, for s8, is the one inline
/// assembly the simulator runs.
LogicalResult Rewriter::rewriteInlineWgmma(LLVM::InlineAsmOp op) {
  static const llvm::Regex form(
      "wgmma\\.mma_async\\.sync\\.aligned\\.m64n([0-9]+)k32\\.s32\\.s8\\.s8"
      "(\\.satfinite)? ");
  SmallVector<StringRef> match;
  int64_t n = 0;
  if (!form.match(op.getAsmString(), &match) || match[1].getAsInteger(10, n) ||
      op.getNumResults() != 1 ||
      op.getNumOperands() != static_cast<unsigned>(n / 2 + 3) ||
      !op.getAsmString().contains("setp.ne.b32 p, $" + std::to_string(n + 2) +
                                  ", 0;"))
    return op.emitError("the simulator cannot run inline assembly");
  ValueRange operands = op.getOperands();
  emitWgmma(
      op, n, !match[2].empty(),
      LLVM::ZExtOp::create(
          b, op.getLoc(), i32,
          LLVM::ICmpOp::create(b, op.getLoc(), LLVM::ICmpPredicate::ne,
                               operands.back(), constant(op.getLoc(), 0))),
      operands[n / 2], operands[n / 2 + 1], operands.take_front(n / 2));
  return success();
}

LogicalResult Rewriter::rewriteNVVMIntrinsic(LLVM::CallIntrinsicOp op) {
  Location loc = op.getLoc();
  bool floor = op.getIntrin() == "llvm.nvvm.f2i.rm";
  if ((floor || op.getIntrin() == "llvm.nvvm.f2i.rz") &&
      op.getArgs().size() == 1 && op.getArgs()[0].getType().isF32() &&
      op.getNumResults() == 1 && op.getResult(0).getType().isInteger(32)) {
    // cvt.rmi.s32.f32 and cvt.rzi.s32.f32: floor or truncation, saturated
    // to the i32 range, NaN to 0, which is llvm.fptosi.sat of the floor or
    // of the truncation.
    Value rounded =
        floor ? Value(LLVM::FFloorOp::create(b, loc, op.getArgs()[0]))
              : Value(LLVM::FTruncOp::create(b, loc, op.getArgs()[0]));
    auto converted = LLVM::CallIntrinsicOp::create(
        b, loc, i32, b.getStringAttr("llvm.fptosi.sat.i32.f32"), rounded);
    op.getResult(0).replaceAllUsesWith(converted.getResult(0));
    op.erase();
    return success();
  }
  return op.emitError("the simulator does not run ") << op.getIntrin();
}

LogicalResult Rewriter::rewrite(Operation *op) {
  if (auto inlineAsm = dyn_cast<LLVM::InlineAsmOp>(op)) {
    b.setInsertionPoint(op);
    return rewriteInlineWgmma(inlineAsm);
  }
  if (auto intrinsic = dyn_cast<LLVM::CallIntrinsicOp>(op)) {
    b.setInsertionPoint(op);
    return rewriteNVVMIntrinsic(intrinsic);
  }
  if (!isa<NVVM::NVVMDialect>(op->getDialect()))
    return success();
  b.setInsertionPoint(op);
  Location loc = op->getLoc();
  if (std::optional<int> id = getSpecialRegister(op)) {
    op->getResult(0).replaceAllUsesWith(
        call(loc, "__hotsim_sreg", i32, {constant(loc, *id)}));
    op->erase();
    return success();
  }
  if (isa<NVVM::WarpSizeOp>(op)) {
    op->getResult(0).replaceAllUsesWith(constant(loc, 32));
    op->erase();
    return success();
  }
  // A whole-block barrier: barrier0, or nvvm.barrier without an id, a thread
  // count or a reduction.
  if (isa<NVVM::Barrier0Op>(op) ||
      (isa<NVVM::BarrierOp>(op) && op->getNumOperands() == 0 &&
       op->getNumResults() == 0)) {
    call(loc, "__hotsim_barrier", Type(), {});
    op->erase();
    return success();
  }
  // bar.red: the block barrier that reduces a predicate.
  if (auto barrier = dyn_cast<NVVM::BarrierOp>(op);
      barrier && barrier.getReductionOp() && !barrier.getBarrierId() &&
      !barrier.getNumberOfThreads()) {
    Value kind = constant(loc, static_cast<int64_t>(*barrier.getReductionOp()));
    Value result = call(loc, "__hotsim_barrier_red", i32,
                        {kind, barrier.getReductionPredicate()});
    barrier.getRes().replaceAllUsesWith(result);
    op->erase();
    return success();
  }
  // Blocks run one at a time, and every global memory access is done when
  // the thread makes it: GPU-scope fences order nothing more.
  if (auto membar = dyn_cast<NVVM::MembarOp>(op);
      membar && membar.getScope() != NVVM::MemScopeKind::SYS) {
    op->erase();
    return success();
  }
  if (auto copy = dyn_cast<NVVM::CpAsyncOp>(op)) {
    Value size = constant(loc, copy.getSize());
    Value source = copy.getCpSize() ? copy.getCpSize() : size;
    call(loc, "__hotsim_cp_async", Type(),
         {generic(loc, copy.getDst()), generic(loc, copy.getSrc()), size,
          source});
    op->erase();
    return success();
  }
  if (isa<NVVM::CpAsyncCommitGroupOp>(op)) {
    call(loc, "__hotsim_cp_async_commit", Type(), {});
    op->erase();
    return success();
  }
  if (auto wait = dyn_cast<NVVM::CpAsyncWaitGroupOp>(op)) {
    call(loc, "__hotsim_cp_async_wait", Type(), {constant(loc, wait.getN())});
    op->erase();
    return success();
  }
  // Orderings of registers and of the generic and async proxies: the
  // simulator computes each wgmma when the warpgroup issues it.
  if (isa<NVVM::WgmmaFenceAlignedOp>(op) ||
      (isa<NVVM::FenceProxyOp>(op) && cast<NVVM::FenceProxyOp>(op).getKind() ==
                                          NVVM::ProxyKind::async_shared)) {
    op->erase();
    return success();
  }
  if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op)) {
    call(loc, "__hotsim_wgmma_commit", Type(), {});
    op->erase();
    return success();
  }
  if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
    call(loc, "__hotsim_wgmma_wait", Type(),
         {constant(loc, static_cast<int64_t>(wait.getGroup()))});
    op->erase();
    return success();
  }
  if (auto wgmma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op))
    return rewriteWgmma(wgmma);
  if (auto shuffle = dyn_cast<NVVM::ShflOp>(op))
    return rewriteShuffle(shuffle);
  if (auto load = dyn_cast<NVVM::LdMatrixOp>(op))
    return rewriteLdMatrix(load);
  if (auto mma = dyn_cast<NVVM::MmaOp>(op))
    return rewriteMma(mma);
  return op->emitError("the simulator does not implement '")
         << op->getName() << "'";
}

/// Whether `fn` is a kernel.
bool isKernel(LLVM::LLVMFuncOp fn) {
  return fn->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()) ||
         fn->hasAttr(gpu::GPUDialect::getKernelFuncAttrName());
}

/// Places the shared memory globals `statics` one after the other from
/// offset 0, at their alignments, and `dynamics` after them; returns the
/// static size (where dynamic memory starts).
uint64_t placeWindow(ArrayRef<LLVM::GlobalOp> statics,
                     ArrayRef<LLVM::GlobalOp> dynamics,
                     const DataLayout &layout,
                     llvm::DenseMap<StringAttr, uint64_t> &offsets) {
  auto alignment = [](LLVM::GlobalOp global) {
    return std::max<uint64_t>(16, global.getAlignment().value_or(16));
  };
  uint64_t end = 0;
  for (LLVM::GlobalOp global : statics) {
    uint64_t offset = llvm::alignTo(end, alignment(global));
    offsets[global.getSymNameAttr()] = offset;
    end = offset + layout.getTypeSize(global.getType());
  }
  uint64_t dynamicAlignment = 16;
  for (LLVM::GlobalOp global : dynamics)
    dynamicAlignment = std::max(dynamicAlignment, alignment(global));
  uint64_t staticBytes = llvm::alignTo(end, dynamicAlignment);
  for (LLVM::GlobalOp global : dynamics)
    offsets[global.getSymNameAttr()] = staticBytes;
  return staticBytes;
}

/// Replaces the shared memory globals of `symbolTable` by offsets into the
/// block's window; returns each kernel's static size (where its dynamic
/// memory starts). As on a GPU, a kernel's window holds the globals that the
/// kernel references, so that a module of many kernels fits where each of
/// them would. Where a function that is not a kernel references one, one
/// window holds them all, for every kernel.
llvm::StringMap<uint64_t> placeSharedMemory(Operation *symbolTable) {
  OpBuilder b(symbolTable->getContext());
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  DataLayout layout = DataLayout::closest(symbolTable);
  Block &body = symbolTable->getRegion(0).front();
  SmallVector<LLVM::GlobalOp> statics, dynamics;
  for (auto global : body.getOps<LLVM::GlobalOp>()) {
    if (global.getAddrSpace() != kSharedAddressSpace)
      continue;
    auto array = dyn_cast<LLVM::LLVMArrayType>(global.getType());
    (array && array.getNumElements() == 0 ? dynamics : statics)
        .push_back(global);
  }
  llvm::DenseSet<StringAttr> shared;
  for (LLVM::GlobalOp global : llvm::concat<LLVM::GlobalOp>(statics, dynamics))
    shared.insert(global.getSymNameAttr());

  // The shared globals' addresses, by the function that takes them.
  llvm::MapVector<Operation *, SmallVector<LLVM::AddressOfOp>> addresses;
  bool outsideKernels = false;
  symbolTable->walk([&](LLVM::AddressOfOp address) {
    if (!shared.contains(address.getGlobalNameAttr().getAttr()))
      return;
    auto fn = address->getParentOfType<LLVM::LLVMFuncOp>();
    outsideKernels |= !fn || !isKernel(fn);
    addresses[fn].push_back(address);
  });

  llvm::StringMap<uint64_t> sizes;
  llvm::DenseMap<Operation *, llvm::DenseMap<StringAttr, uint64_t>> offsets;
  SmallVector<LLVM::LLVMFuncOp> kernels =
      llvm::filter_to_vector(body.getOps<LLVM::LLVMFuncOp>(), isKernel);
  if (outsideKernels) {
    llvm::DenseMap<StringAttr, uint64_t> all;
    uint64_t bytes = placeWindow(statics, dynamics, layout, all);
    for (auto &entry : addresses)
      offsets[entry.first] = all;
    for (LLVM::LLVMFuncOp kernel : kernels)
      sizes[kernel.getSymName()] = bytes;
  } else {
    for (LLVM::LLVMFuncOp kernel : kernels) {
      llvm::DenseSet<StringAttr> used;
      for (LLVM::AddressOfOp address : addresses.lookup(kernel))
        used.insert(address.getGlobalNameAttr().getAttr());
      auto isUsed = [&](LLVM::GlobalOp global) {
        return used.contains(global.getSymNameAttr());
      };
      sizes[kernel.getSymName()] = placeWindow(
          llvm::filter_to_vector(statics, isUsed),
          llvm::filter_to_vector(dynamics, isUsed), layout, offsets[kernel]);
    }
  }

  for (auto &[fn, uses] : addresses) {
    const llvm::DenseMap<StringAttr, uint64_t> &placed = offsets[fn];
    for (LLVM::AddressOfOp address : uses) {
      b.setInsertionPoint(address);
      Location loc = address.getLoc();
      auto callee =
          LLVM::lookupOrCreateFn(b, symbolTable, "__hotsim_shared", {}, ptr);
      Value base =
          LLVM::CallOp::create(b, loc, *callee, ValueRange()).getResult();
      Value at = LLVM::GEPOp::create(
          b, loc, ptr, b.getI8Type(), base,
          ArrayRef<LLVM::GEPArg>{
              int64_t(placed.lookup(address.getGlobalNameAttr().getAttr()))});
      address.replaceAllUsesWith(
          LLVM::AddrSpaceCastOp::create(b, loc, address.getType(), at)
              .getResult());
      address.erase();
    }
  }
  for (LLVM::GlobalOp global : llvm::concat<LLVM::GlobalOp>(statics, dynamics))
    global.erase();
  return sizes;
}

/// Adds the exported `__hotsim_launch_<name>(ptr params)` of `kernel`, its
/// `__hotsim_param_sizes_<name>` and its `__hotsim_static_shared_bytes_<name>`
/// (`sharedBytes`).
void addLaunchFunction(LLVM::LLVMFuncOp kernel, uint64_t sharedBytes) {
  OpBuilder b(kernel);
  b.setInsertionPointAfter(kernel);
  Location loc = kernel.getLoc();
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  auto launch = LLVM::LLVMFuncOp::create(
      b, loc, (sim::kLaunchPrefix + kernel.getSymName()).str(),
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr}));
  Block *entry = launch.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  SmallVector<Value> args;
  for (auto [i, type] : llvm::enumerate(kernel.getFunctionType().getParams())) {
    Value at = LLVM::GEPOp::create(b, loc, ptr, ptr, entry->getArgument(0),
                                   ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value param = LLVM::LoadOp::create(b, loc, ptr, at);
    args.push_back(LLVM::LoadOp::create(b, loc, type, param));
  }
  LLVM::CallOp::create(b, loc, kernel, args);
  LLVM::ReturnOp::create(b, loc, ValueRange());

  // The parameters' sizes: the runtime copies a launch's arguments to run it
  // later, when its stream is synchronized.
  DataLayout layout = DataLayout::closest(kernel);
  SmallVector<int64_t> sizes{int64_t(kernel.getFunctionType().getNumParams())};
  for (Type type : kernel.getFunctionType().getParams())
    sizes.push_back(int64_t(layout.getTypeSize(type)));
  b.setInsertionPointAfter(launch);
  auto sizesType =
      RankedTensorType::get({int64_t(sizes.size())}, b.getI64Type());
  LLVM::GlobalOp::create(b, loc,
                         LLVM::LLVMArrayType::get(b.getI64Type(), sizes.size()),
                         /*isConstant=*/true, LLVM::Linkage::External,
                         (sim::kParamSizesPrefix + kernel.getSymName()).str(),
                         DenseElementsAttr::get(sizesType, ArrayRef(sizes)));
  LLVM::GlobalOp::create(b, loc, b.getI64Type(), /*isConstant=*/true,
                         LLVM::Linkage::External,
                         (sim::kStaticSharedPrefix + kernel.getSymName()).str(),
                         b.getI64IntegerAttr(int64_t(sharedBytes)));
}

/// Whether `name` is defined by libhot_simulator_runtime.so.
bool isRuntimeFunction(StringRef name) {
  static const llvm::StringSet<> names = {
#define HOT_SIMULATOR_NAME(name, ...) #name,
      HOT_SIMULATOR_CALLS(HOT_SIMULATOR_NAME)
          HOT_SIMULATOR_NV_MATH(HOT_SIMULATOR_NAME)
#undef HOT_SIMULATOR_NAME
  };
  return names.contains(name);
}

struct ConvertNVVMToSimulatorPass
    : public mlir::hot::impl::ConvertNVVMToSimulatorPassBase<
          ConvertNVVMToSimulatorPass> {
  void runOnOperation() override {
    if (!getOperation()->hasTrait<OpTrait::SymbolTable>()) {
      getOperation()->emitError("convert-nvvm-to-simulator runs on a symbol "
                                "table (a gpu.module or a module)");
      return signalPassFailure();
    }
    if (failed(mlir::hot::convertNVVMToSimulator(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::hot::convertNVVMToSimulator(Operation *symbolTable) {
  Block &body = symbolTable->getRegion(0).front();
  llvm::StringMap<uint64_t> sharedBytes = placeSharedMemory(symbolTable);

  SmallVector<Operation *> ops;
  symbolTable->walk([&](Operation *op) {
    if (isa<NVVM::NVVMDialect>(op->getDialect()) ||
        isa<LLVM::InlineAsmOp>(op) || isNVVMIntrinsic(op))
      ops.push_back(op);
  });
  Rewriter rewriter(symbolTable);
  bool failed = false;
  for (Operation *op : ops)
    failed |= mlir::failed(rewriter.rewrite(op));

  // Kernels: a launch function each; no NVVM or GPU attributes anywhere.
  StringRef dialects[] = {NVVM::NVVMDialect::getDialectNamespace(),
                          gpu::GPUDialect::getDialectNamespace()};
  for (auto fn : llvm::to_vector(body.getOps<LLVM::LLVMFuncOp>())) {
    bool kernel = isKernel(fn);
    for (NamedAttribute attr : llvm::to_vector(fn->getDiscardableAttrs()))
      if (llvm::is_contained(dialects,
                             attr.getName().strref().split('.').first))
        fn->removeDiscardableAttr(attr.getName());
    if (kernel)
      addLaunchFunction(fn, sharedBytes.lookup(fn.getSymName()));
    else if (fn.isExternal() && !isRuntimeFunction(fn.getSymName()) &&
             !SymbolTable::symbolKnownUseEmpty(fn, symbolTable)) {
      fn.emitError("the simulator runtime does not define @")
          << fn.getSymName();
      failed = true;
    }
  }

  return failure(failed);
}
