//===- Liveness.cpp - Peak live tensor bytes of a function ----------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Transforms/Liveness.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::hot;

int64_t mlir::hot::getTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  int64_t bits = tensor.getElementTypeBitWidth();
  return tensor.getNumElements() * std::max<int64_t>(1, bits / 8);
}

int64_t mlir::hot::computePeakLiveTensorBytes(Operation *function) {
  auto func = cast<FunctionOpInterface>(function);
  Block &body = func.getFunctionBody().front();
  // Position of each top-level op; values die after their last use.
  DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = i + 1;
  auto lastUse = [&](Value value) {
    int64_t last = 0;
    for (Operation *user : value.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top)
        last = std::max(last, position[top]);
    }
    return last;
  };
  // delta[p]: bytes that become live at p (positive) or die after p.
  SmallVector<int64_t> born(body.getOperations().size() + 2, 0);
  SmallVector<int64_t> dies(body.getOperations().size() + 2, 0);
  for (BlockArgument arg : body.getArguments()) {
    born[0] += getTensorBytes(arg.getType());
    dies[lastUse(arg)] += getTensorBytes(arg.getType());
  }
  for (Operation &op : body)
    for (Value result : op.getResults()) {
      int64_t bytes = getTensorBytes(result.getType());
      born[position[&op]] += bytes;
      dies[std::max(position[&op], lastUse(result))] += bytes;
    }
  int64_t live = 0, peak = 0;
  for (size_t p = 0; p < born.size(); ++p) {
    live += born[p];
    peak = std::max(peak, live);
    live -= dies[p];
  }
  return peak;
}
