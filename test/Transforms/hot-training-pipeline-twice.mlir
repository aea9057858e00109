// Running the pipeline on its own output changes nothing: the products it
// rewrote are not found again (integer products, or float ones marked
// hot.rewritten when a path is not quantized), the layers it left alone keep
// their names (from their #hot.layer tags) and their hot.layers records.
// RUN: hot-opt %S/../Fixtures/torch/vit_block_joint.mlir -hot-training-pipeline=remarks=false -o %t.1
// RUN: hot-opt %t.1 -hot-training-pipeline=remarks=false -o %t.2
// RUN: diff %t.1 %t.2
// RUN: hot-opt %S/../Fixtures/torch/mlp_joint.mlir -hot-training-pipeline="remarks=false gx-bits=0 gw-bits=0" -o %t.3
// RUN: hot-opt %t.3 -hot-training-pipeline="remarks=false gx-bits=0 gw-bits=0" -o %t.4
// RUN: diff %t.3 %t.4
// RUN: hot-opt %S/../Fixtures/torch/vit_block_joint.mlir -hot-training-pipeline="remarks=false gx-bits=0 gw-bits=0 hla-rank=16" -o %t.5
// RUN: hot-opt %t.5 -hot-training-pipeline="remarks=false gx-bits=0 gw-bits=0 hla-rank=16" -o %t.6
// RUN: diff %t.5 %t.6
// A second run says why it leaves the float products alone.
// RUN: hot-opt %t.3 -hot-training-pipeline="gx-bits=0 gw-bits=0" -o /dev/null 2>&1 | FileCheck %s
// CHECK: remark: not rewritten: already rewritten (the floating-point product of a path that is not quantized)
