//===- TrainingPipeline.cpp - The hot-training-pipeline -------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/Pipelines.h"
#include "hot/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::hot::buildHotTrainingPipeline(
    OpPassManager &pm, const HotTrainingPipelineOptions &options) {
  HotAnnotateBackwardMatmulsPassOptions annotate;
  annotate.emitRemarks = options.remarks;
  pm.addPass(createHotAnnotateBackwardMatmulsPass(annotate));
  if (!options.lqsDecisions.empty()) {
    HotLqsApplyPassOptions lqs;
    lqs.decisions = options.lqsDecisions;
    lqs.emitRemarks = options.remarks;
    pm.addPass(createHotLqsApplyPass(lqs));
  }

  HotRewriteBackwardMatmulsPassOptions rewrite;
  rewrite.gxBits = options.gxBits;
  rewrite.gwBits = options.gwBits;
  rewrite.gxBlock = options.gxBlock;
  rewrite.hlaBlock = options.hlaBlock;
  rewrite.hlaRank = options.hlaRank;
  rewrite.hlaSelection = options.hlaSelection;
  rewrite.hlaBatch = options.hlaBatch;
  rewrite.rounding = options.rounding;
  rewrite.weightScale = options.weightScale;
  rewrite.gxGranularity = options.gxGranularity;
  rewrite.gwGranularity = options.gwGranularity;
  rewrite.seedArg = options.seedArg;
  rewrite.frozenGx = options.frozenGx;
  rewrite.emitRemarks = options.remarks;
  pm.addPass(createHotRewriteBackwardMatmulsPass(rewrite));

  if (options.compressActivations) {
    HotCompressActivationsPassOptions compress;
    compress.emitRemarks = options.remarks;
    compress.forwardName = options.forward;
    compress.backwardName = options.backward;
    pm.addPass(createHotCompressActivationsPass(compress));
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::hot::registerHotTrainingPipeline() {
  PassPipelineRegistration<HotTrainingPipelineOptions>(
      "hot-training-pipeline",
      "Rewrite the backward products of every linear layer the HOT way "
      "(annotate, rewrite, compress saved activations, clean up)",
      buildHotTrainingPipeline);
}
