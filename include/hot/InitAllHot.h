//===- InitAllHot.h - Register the hot dialect and passes -------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_INITALLHOT_H
#define HOT_INITALLHOT_H

#include "hot/Conversion/Passes.h"
#include "hot/Conversion/Pipelines.h"
#include "hot/Dialect/Hot/HotDialect.h"
#include "hot/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::hot {

/// Adds the hot dialect to `registry`, and the external models the project's
/// lowerings rely on.
inline void registerAllHotDialects(DialectRegistry &registry) {
  registry.insert<HotDialect>();
  registerLaunchFuncMemoryEffects(registry);
  registerSimulatorTargetInterfaceExternalModels(registry);
}

/// Registers every pass and pipeline of the project with the global registry.
inline void registerAllHotPasses() {
  registerHotConversionPasses();
  registerHotTransformsPasses();
  registerHotPipelines();
}

} // namespace mlir::hot

#endif // HOT_INITALLHOT_H
