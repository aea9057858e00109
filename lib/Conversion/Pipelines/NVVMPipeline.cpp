//===- NVVMPipeline.cpp - The hot-lower-to-nvvm pipeline ------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Bufferize.h"
#include "hot/Conversion/Passes.h"
#include "hot/Conversion/Pipelines.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

std::string mlir::hot::getDefaultPTXFeatures(StringRef chip) {
  // LLVM's NVPTX default (PTX 6.0) cannot express sm_80 code; use each chip's
  // first PTX ISA, and PTX 7.8 for anything newer than the listed chips.
  return llvm::StringSwitch<std::string>(chip)
      .Case("sm_80", "+ptx70")
      .Case("sm_86", "+ptx71")
      .Case("sm_87", "+ptx74")
      .Cases({"sm_89", "sm_90"}, "+ptx78")
      .Case("sm_90a", "+ptx80")
      .Default("+ptx78");
}

void mlir::hot::buildHotLowerToNVVMPipeline(
    OpPassManager &pm, const HotLowerToNVVMOptions &options) {
  // The integer products become tensor-core kernels first, on tensors.
  ConvertHotToGPUPassOptions kernels;
  kernels.chip = options.chip;
  kernels.tileM = options.tileM;
  kernels.tileN = options.tileN;
  kernels.smCount = options.smCount;
  kernels.splitK = options.splitK;
  kernels.tileK = options.tileK;
  kernels.warpM = options.warpM;
  kernels.warpN = options.warpN;
  kernels.stages = options.stages;
  kernels.int4 = options.int4;
  kernels.wgmma = options.wgmma;
  kernels.hadamardQuantize = options.hadamardQuantize;
  kernels.lowRank = options.lowRank;
  kernels.shareStatistics = options.shareStatistics;
  kernels.fuseTransposes = options.fuseTransposes;
  pm.addPass(createConvertHotToGPUPass(kernels));

  // Everything else: linalg on tensors, buffers, parallel loops mapped to
  // blocks and threads (correct, not fast).
  // Results into out-params: the copies into them become kernels below.
  addLinalgBufferizePasses(pm, options.resultsToOutParams);
  // Before gpu-to-llvm declares the mgpu* functions: only the module's own
  // functions get a wrapper.
  if (options.cInterface)
    pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  // Host buffers in managed memory and copies as linalg ops, so that the
  // kernels can use every buffer.
  pm.addNestedPass<func::FuncOp>(createAllocateManagedMemoryPass());
  // Reductions inside the kernels, not host loops of launches.
  pm.addNestedPass<func::FuncOp>(createParallelDimsOutermostPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // Iterations in tiles of 256 threads, not one-thread blocks.
  pm.addNestedPass<func::FuncOp>(createTileParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createCanonicalizerPass());
  // Buffers that only kernels touch in device memory, not managed memory.
  pm.addNestedPass<func::FuncOp>(createGpuDeviceBuffersPass());
  // The kernels back to back on one stream, one host synchronization after
  // them, instead of one per launch.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncLaunchesPass());

  // For the simulator, outline every kernel first so that each gpu.module
  // gets #hot.simulator before nvvm-attach-target appends #nvvm.target.
  if (options.simulator) {
    pm.addPass(createGpuKernelOutliningPass());
    AttachSimulatorTargetPassOptions simulator;
    simulator.chip = options.chip;
    pm.addPass(createAttachSimulatorTargetPass(simulator));
  }

  // Upstream's sink: kernel outlining, nvgpu/gpu to NVVM, host code through
  // gpu-to-llvm, kernels serialized.
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features.empty()
                           ? getDefaultPTXFeatures(options.chip)
                           : std::string(options.features);
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = options.optLevel;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void mlir::hot::registerHotLowerToNVVMPipeline() {
  PassPipelineRegistration<HotLowerToNVVMOptions>(
      "hot-lower-to-nvvm",
      "Lower a module with hot ops to NVVM kernels and LLVM host code: "
      "hot.int_matmul (+ hot.rescale) as tensor-core kernels "
      "(convert-hot-to-gpu), the rest through linalg and parallel loops, "
      "kernels serialized to PTX (format=isa) or a binary (bin, fatbin)",
      buildHotLowerToNVVMPipeline);
}
