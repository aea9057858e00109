//===- TensorMap.cpp - TMA descriptors (unsupported) ----------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Support.h"
#include "hot/Runtime/SimulatorRuntime.h"

using namespace hot::simulator;

extern "C" void *
mgpuTensorMapEncodeTiledMemref(int64_t /*tensorRank*/, void * /*descriptor*/,
                               int64_t /*dataType*/, int64_t /*interleave*/,
                               int64_t /*swizzle*/, int64_t /*l2Promotion*/,
                               int64_t /*oobFill*/, int64_t * /*boxDims*/) {
  reportError(__func__, "TMA descriptors are not supported by the simulator");
  return nullptr;
}
