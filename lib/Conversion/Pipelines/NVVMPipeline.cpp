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

#include <optional>

using namespace mlir;

namespace {
/// The chips the pipeline lowers to and the first PTX ISA version (x10) LLVM
/// 22's NVPTX backend accepts for each: what `llc -mcpu=<chip> -mattr=+ptx60`
/// names as the minimum
/// (test/Conversion/Pipelines/hot-lower-to-nvvm-options.mlir compiles sm_100
/// and sm_120 with it).
constexpr std::pair<llvm::StringLiteral, int> kChipPTX[] = {
    {"sm_80", 70},   {"sm_86", 71},   {"sm_87", 74},   {"sm_88", 90},
    {"sm_89", 78},   {"sm_90", 78},   {"sm_90a", 80},  {"sm_100", 86},
    {"sm_100a", 86}, {"sm_100f", 88}, {"sm_101", 86},  {"sm_101a", 86},
    {"sm_101f", 88}, {"sm_103", 88},  {"sm_103a", 88}, {"sm_103f", 88},
    {"sm_110", 90},  {"sm_110a", 90}, {"sm_110f", 90}, {"sm_120", 87},
    {"sm_120a", 87}, {"sm_120f", 88}, {"sm_121", 88},  {"sm_121a", 88},
    {"sm_121f", 88}};

std::optional<int> getMinimumPTX(StringRef chip) {
  for (auto [name, ptx] : kChipPTX)
    if (name == chip)
      return ptx;
  return std::nullopt;
}
} // namespace

std::string mlir::hot::getDefaultPTXFeatures(StringRef chip) {
  std::optional<int> ptx = getMinimumPTX(chip);
  return ptx ? "+ptx" + std::to_string(*ptx) : std::string();
}

LogicalResult mlir::hot::verifyHotLowerToNVVMOptions(
    const HotLowerToNVVMOptions &options,
    function_ref<LogicalResult(const Twine &)> error) {
  StringRef chip = options.chip;
  std::optional<int> minimum = getMinimumPTX(chip);
  if (!minimum) {
    std::string known;
    for (auto [name, ptx] : kChipPTX)
      known += (known.empty() ? "" : ", ") + name.str();
    return error("hot-lower-to-nvvm: unknown chip '" + chip +
                 "' (the kernels need sm_80 or newer; known: " + known + ")");
  }
  // The last +ptxNN of the features is the one LLVM uses.
  SmallVector<StringRef> features;
  StringRef(options.features).split(features, ',', -1, false);
  for (StringRef feature : llvm::reverse(features)) {
    int ptx = 0;
    StringRef version = feature.trim();
    if (!version.consume_front("+ptx") || version.getAsInteger(10, ptx))
      continue;
    if (ptx < *minimum)
      return error("hot-lower-to-nvvm: features '" + options.features +
                   "' ask for PTX " + Twine(ptx / 10) + "." + Twine(ptx % 10) +
                   ", older than the " + Twine(*minimum / 10) + "." +
                   Twine(*minimum % 10) + " that " + chip + " needs");
    break;
  }
  if (!llvm::is_contained({"isa", "assembly", "bin", "binary", "fatbin",
                           "fatbinary", "llvm", "offloading"},
                          StringRef(options.format)))
    return error("hot-lower-to-nvvm: format must be isa, bin, fatbin, llvm "
                 "or offloading, got '" +
                 options.format + "'");
  return success();
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
  kernels.rowValuesInRegisters = options.rowValuesInRegisters;
  kernels.fuseColumnHadamard = options.fuseColumnHadamard;
  kernels.quantizeChannelsPerThread = options.quantizeChannelsPerThread;
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
  // Kernel ops LLVM's NVPTX backend would abort on: located errors instead.
  CheckKernelOpsPassOptions check;
  check.chip = options.chip;
  pm.addPass(createCheckKernelOpsPass(check));
  // Buffers that only kernels touch in device memory, not managed memory.
  pm.addNestedPass<func::FuncOp>(createGpuDeviceBuffersPass());
  // The kernels back to back on one stream, one host synchronization after
  // them, instead of one per launch.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncLaunchesPass());

  // The launches' kernels in one gpu.module, not one module each: one LLVM
  // (and ptxas) run and one module load for them all. Upstream's outlining
  // below then finds nothing left to outline. For the simulator, every
  // gpu.module gets #hot.simulator before nvvm-attach-target appends
  // #nvvm.target.
  pm.addPass(createOutlineKernelsPass());
  if (options.simulator) {
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
  // PassPipelineRegistration, with the options checked before the pipeline
  // is built.
  registerPassPipeline(
      "hot-lower-to-nvvm",
      "Lower a module with hot ops to NVVM kernels and LLVM host code: "
      "hot.int_matmul (+ hot.rescale) as tensor-core kernels "
      "(convert-hot-to-gpu), the rest through linalg and parallel loops, "
      "kernels serialized to PTX (format=isa) or a binary (bin, fatbin)",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> error) {
        HotLowerToNVVMOptions options;
        if (failed(options.parseFromString(text)) ||
            failed(verifyHotLowerToNVVMOptions(options, error)))
          return failure();
        buildHotLowerToNVVMPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const ::mlir::detail::PassOptions &)> handler) {
        handler(HotLowerToNVVMOptions());
      });
}
