//===- hot-opt.cpp - The hot optimizer driver -----------------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// An mlir-opt with every upstream dialect, pass, extension and LLVM-IR
// translation registered, plus the hot dialect, passes and pipelines.
//
//===----------------------------------------------------------------------===//

#include "hot/InitAllHot.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::hot::registerAllHotPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::hot::registerAllHotDialects(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "hot optimizer driver\n", registry));
}
