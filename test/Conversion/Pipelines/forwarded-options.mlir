// The pipelines repeat the options of the pass they wrap (Pipelines.h): each
// must reach that pass, with the pass's own default. An option added to the
// pass and not to the pipeline, or not handed on, fails here.
// RUN: %python %S/check-forwarded-options.py hot-opt hot-training-pipeline hot-rewrite-backward-matmuls \
// RUN:   hla-selection=triangle rounding=nearest weight-scale=maxabs gx-granularity=per_row gw-granularity=per_col \
// RUN:   | FileCheck %s --check-prefix=TRAIN
// RUN: %python %S/check-forwarded-options.py hot-opt hot-lower-to-nvvm convert-hot-to-gpu chip=sm_90a \
// RUN:   | FileCheck %s --check-prefix=NVVM

// TRAIN-DAG: forwarded: hot-training-pipeline{frozen-gx=false}
// TRAIN-DAG: forwarded: hot-training-pipeline{gw-bits=9}
// TRAIN-DAG: forwarded: hot-training-pipeline{hla-selection=triangle}
// TRAIN-DAG: forwarded: hot-training-pipeline{remarks=false}
// TRAIN-DAG: forwarded: hot-training-pipeline{weight-scale=maxabs}
// TRAIN-NOT: error

// NVVM-DAG: forwarded: hot-lower-to-nvvm{chip=sm_90a}
// NVVM-DAG: forwarded: hot-lower-to-nvvm{fuse-column-hadamard=false}
// NVVM-DAG: forwarded: hot-lower-to-nvvm{quantize-channels-per-thread=1}
// NVVM-DAG: forwarded: hot-lower-to-nvvm{wgmma=false}
// NVVM-NOT: error
