//===- main.cpp - A downstream user of the installed hot package ----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// Parses a module with a hot op, runs convert-hot-to-linalg through the
// public headers (registerAllHotPasses and the textual pipeline) and prints
// the result, which test/Package/consumer.cmake FileChecks against the lines
// below.
//
// CHECK-LABEL: func.func @hadamard
// CHECK-SAME: %[[X:.*]]: tensor<2x4xf32>
// CHECK: tensor.expand_shape %[[X]]
// CHECK-COUNT-2: linalg.generic
// CHECK: tensor.collapse_shape
//
//===----------------------------------------------------------------------===//

#include "hot/InitAllHot.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

static const char *const kModule = R"mlir(
func.func @hadamard(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = hot.hadamard %x along 1 block 4 : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
)mlir";

int main() {
  mlir::hot::registerAllHotPasses();

  mlir::DialectRegistry registry;
  mlir::hot::registerAllHotDialects(registry);
  registry.insert<mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kModule, &context);
  if (!module)
    return 1;

  // The pass manager is anchored on the module: the pipeline names what
  // nests inside it.
  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::parsePassPipeline("func.func(convert-hot-to-linalg)",
                                           pm, llvm::errs())))
    return 1;
  if (mlir::failed(pm.run(*module)))
    return 1;

  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}
