//===- LaunchFuncEffects.cpp - Memory effects of gpu.launch_func ----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// gpu.launch_func declares no memory effects, and ownership-based buffer
// deallocation rejects ops with memref operands and unknown effects. The
// kernels launched by convert-hot-to-gpu are created before bufferization, so
// their launches must pass through it: this external model declares that a
// launch may read and write every memref it is given (the kernel's accesses
// are not visible at the launch), which is what deallocation needs to keep
// buffers alive across it, and that it may read and write any memory: after
// gpu-to-llvm its operands are plain pointers, and a launch without effects
// would be erased as dead.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/HotToGPU.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

struct LaunchFuncMemoryEffects
    : public MemoryEffectOpInterface::ExternalModel<LaunchFuncMemoryEffects,
                                                    gpu::LaunchFuncOp> {
  void getEffects(Operation *op,
                  SmallVectorImpl<SideEffects::EffectInstance<
                      MemoryEffects::Effect>> &effects) const {
    effects.emplace_back(MemoryEffects::Read::get(),
                         SideEffects::DefaultResource::get());
    effects.emplace_back(MemoryEffects::Write::get(),
                         SideEffects::DefaultResource::get());
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<BaseMemRefType>(operand.get().getType()))
        continue;
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    }
  }
};

} // namespace

void mlir::hot::registerLaunchFuncMemoryEffects(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, gpu::GPUDialect *) {
    gpu::LaunchFuncOp::attachInterface<LaunchFuncMemoryEffects>(*ctx);
  });
}
