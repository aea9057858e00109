//===- NVVMToSimulator.h - NVVM kernels run on the host ---------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_CONVERSION_NVVMTOSIMULATOR_H
#define HOT_CONVERSION_NVVMTOSIMULATOR_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir::hot {

/// Rewrites the LLVM-dialect kernels with NVVM ops in `symbolTable` (a
/// gpu.module body or a builtin.module) into host code that calls
/// libhot_simulator_runtime.so (hot/Runtime/SimulatorABI.h). Emits an error at
/// every op the simulator cannot run and fails; see convert-nvvm-to-simulator.
LogicalResult convertNVVMToSimulator(Operation *symbolTable);

/// Attaches gpu::TargetAttrInterface to #hot.simulator: its objects are host
/// shared objects built with clang from convertNVVMToSimulator's output.
void registerSimulatorTargetInterfaceExternalModels(DialectRegistry &registry);

} // namespace mlir::hot

#endif // HOT_CONVERSION_NVVMTOSIMULATOR_H
