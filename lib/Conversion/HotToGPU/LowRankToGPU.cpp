//===- LowRankToGPU.cpp - Launch the HLA kernel for hot.lowrank -----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/TransformKernels.h"
#include "hot/Dialect/Hot/Walsh.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::hot;

/// CUDA's bound on grid.y and grid.z.
static constexpr int64_t kMaxGridYZ = 65535;

/// Reshapes `value` (rank r, static) to [outer, size(dim), inner] or back
/// (`toThreeD` false, `shape` the rank-r shape): a collapse of the dims
/// before and after `dim`, then an expand that adds the missing unit dims.
static Value reshapeAroundDim(OpBuilder &b, Location loc, Value value,
                              int64_t dim, ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> threeD, bool toThreeD) {
  int64_t rank = shape.size();
  auto elementType = cast<ShapedType>(value.getType()).getElementType();
  // Groups of the rank-r shape: [0, dim), {dim}, (dim, rank).
  SmallVector<ReassociationIndices> present;
  if (dim > 0)
    present.push_back(llvm::to_vector(llvm::seq<int64_t>(0, dim)));
  present.push_back({dim});
  if (dim + 1 < rank)
    present.push_back(llvm::to_vector(llvm::seq<int64_t>(dim + 1, rank)));
  // Groups of the rank-3 shape over those: the unit dims that do not exist
  // in the rank-r shape join the group of `dim`.
  bool hasOuter = dim > 0, hasInner = dim + 1 < rank;
  SmallVector<ReassociationIndices> padded;
  if (hasOuter)
    padded.push_back({0});
  ReassociationIndices tokens;
  if (!hasOuter)
    tokens.push_back(0);
  tokens.push_back(1);
  if (!hasInner)
    tokens.push_back(2);
  padded.push_back(tokens);
  if (hasInner)
    padded.push_back({2});
  SmallVector<int64_t> middle;
  for (const ReassociationIndices &group : present) {
    int64_t size = 1;
    for (int64_t d : group)
      size *= shape[d];
    middle.push_back(size);
  }
  auto middleType = RankedTensorType::get(middle, elementType);
  auto threeDType = RankedTensorType::get(threeD, elementType);
  auto shapeType = RankedTensorType::get(shape, elementType);
  auto via = [&](Value v, RankedTensorType to,
                 ArrayRef<ReassociationIndices> groups, bool collapse) {
    if (cast<RankedTensorType>(v.getType()) == to)
      return v;
    if (collapse)
      return Value(tensor::CollapseShapeOp::create(b, loc, to, v, groups));
    return Value(tensor::ExpandShapeOp::create(b, loc, to, v, groups));
  };
  if (toThreeD) {
    Value collapsed = via(value, middleType, present, /*collapse=*/true);
    return via(collapsed, threeDType, padded, /*collapse=*/false);
  }
  Value collapsed = via(value, middleType, padded, /*collapse=*/true);
  return via(collapsed, shapeType, present, /*collapse=*/false);
}

LogicalResult
mlir::hot::lowerLowRankToGPU(RewriterBase &rewriter, LowRankOp op,
                             const TransformsToGPUOptions &options) {
  auto leave = [&](const Twine &why) {
    op.emitRemark() << "lowrank left to the generic path: " << why;
    return rewriter.notifyMatchFailure(op, why);
  };
  auto type = cast<RankedTensorType>(op.getInput().getType());
  auto resultType = cast<RankedTensorType>(op.getType());
  if (!type.getElementType().isF32())
    return leave("the kernel computes in f32 only");
  if (!type.hasStaticShape() || type.getNumElements() == 0)
    return leave("the kernel is specialized to static, non-empty shapes");
  int64_t dim = op.getDim(), block = op.getBlock();
  if (block > options.maxLowRankBlock)
    return leave("block " + Twine(block) + " is larger than the " +
                 Twine(options.maxLowRankBlock) +
                 " values one thread keeps in registers");
  LowRankKernelSpec spec;
  spec.n = type.getDimSize(dim);
  spec.block = block;
  if (spec.numBlocks() == 0)
    return leave("no full block: the projection is the identity");
  for (int64_t d = 0; d < dim; ++d)
    spec.outer *= type.getDimSize(d);
  for (int64_t d = dim + 1; d < type.getRank(); ++d)
    spec.inner *= type.getDimSize(d);
  spec.rows = getKeptWalshRows(block, op.getRank(), op.getSelection());
  spec.threads = std::min<int64_t>(256, llvm::alignTo(spec.inner, 32));
  int64_t blockRows = spec.numBlocks() + (spec.tail() ? 1 : 0);
  if (blockRows > kMaxGridYZ || spec.outer > kMaxGridYZ)
    return leave("the grid would exceed 65535 blocks along y or z");

  ModuleOp module = op->getParentOfType<ModuleOp>();
  if (!module)
    return leave("no enclosing builtin.module for the kernel");
  Location loc = op.getLoc();
  gpu::GPUModuleOp gpuModule =
      getOrCreateGPUModule(rewriter, module, options.gpuModuleName);
  gpu::GPUFuncOp kernel = buildLowRankKernel(rewriter, loc, gpuModule, spec);

  rewriter.setInsertionPoint(op);
  SmallVector<int64_t> inShape{spec.outer, spec.n, spec.inner};
  SmallVector<int64_t> outShape{spec.outer, spec.projectedSize(), spec.inner};
  Value input = reshapeAroundDim(rewriter, loc, op.getInput(), dim,
                                 type.getShape(), inShape, /*toThreeD=*/true);
  Type f32 = rewriter.getF32Type();
  Value x = bufferization::ToBufferOp::create(
      rewriter, loc, MemRefType::get(inShape, f32), input, /*read_only=*/true);
  auto yType = MemRefType::get(outShape, f32);
  Value y = memref::AllocOp::create(rewriter, loc, yType,
                                    rewriter.getI64IntegerAttr(64));
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  gpu::LaunchFuncOp::create(
      rewriter, loc, kernel,
      gpu::KernelDim3{index(llvm::divideCeil(spec.inner, spec.threads)),
                      index(blockRows), index(spec.outer)},
      gpu::KernelDim3{index(spec.threads), index(1), index(1)},
      /*dynamicSharedMemorySize=*/Value(), ValueRange{x, y});
  Value result = bufferization::ToTensorOp::create(
      rewriter, loc, RankedTensorType::get(outShape, f32), y,
      /*restrict=*/true, /*writable=*/true);
  result = reshapeAroundDim(rewriter, loc, result, dim, resultType.getShape(),
                            outShape, /*toThreeD=*/false);
  op.emitRemark() << "lowrank kernel @" << kernel.getName() << ": one thread "
                  << "per channel and block of " << block << " tokens ("
                  << spec.threads << " channels per thread block, grid "
                  << llvm::divideCeil(spec.inner, spec.threads) << "x"
                  << blockRows << "x" << spec.outer
                  << "), butterfly in registers in the CPU path's order, "
                  << spec.rows.size() << " kept rows"
                  << (spec.tail() ? ", tail copied by the last block row" : "");
  rewriter.replaceOp(op, result);
  return success();
}
