//===- HotPlugin.cpp - The hot dialect and passes as an MLIR plugin -------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// The entry points that upstream `mlir-opt --load-dialect-plugin=` and
// `--load-pass-plugin=` look up with dlsym. The library links the shared
// libMLIR.so that mlir-opt itself uses, so the dialect, its TypeIDs and the
// pass registry are the host's, not a second copy.
//
//===----------------------------------------------------------------------===//

#include "hot/InitAllHot.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

using namespace mlir;

/// Adds the hot dialect to the registry of the loading tool. Passes are not
/// registered here: they come with `--load-pass-plugin`, and registering a
/// pipeline twice is an error in assertion-enabled builds of MLIR.
extern "C" LLVM_ATTRIBUTE_WEAK LLVM_ATTRIBUTE_VISIBILITY_DEFAULT
    DialectPluginLibraryInfo
    mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "HotDialect", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            hot::registerAllHotDialects(*registry);
          }};
}

/// Registers every pass and pipeline of the project with the global registry
/// of the loading tool.
extern "C" LLVM_ATTRIBUTE_WEAK LLVM_ATTRIBUTE_VISIBILITY_DEFAULT
    PassPluginLibraryInfo
    mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "HotPasses", LLVM_VERSION_STRING,
          []() { hot::registerAllHotPasses(); }};
}
