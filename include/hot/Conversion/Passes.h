//===- Passes.h - Conversion passes of the hot project ----------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_CONVERSION_PASSES_H
#define HOT_CONVERSION_PASSES_H

#include "hot/Conversion/HotToGPU.h"
#include "hot/Conversion/HotToLinalg.h"
#include "hot/Conversion/NVVMToSimulator.h"
#include "mlir/Pass/Pass.h"

namespace mlir::hot {

#define GEN_PASS_DECL
#include "hot/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "hot/Conversion/Passes.h.inc"

} // namespace mlir::hot

#endif // HOT_CONVERSION_PASSES_H
