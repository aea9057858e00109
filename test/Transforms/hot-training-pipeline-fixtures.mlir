// The pipeline with its remarks on, over real torch-mlir graphs (joint and
// split backward): every product found, rewritten or left alone with a reason.
// RUN: hot-opt %S/../Fixtures/torch/vit_block_joint.mlir -hot-training-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=VIT
// RUN: hot-opt %S/../Fixtures/torch/llama_block_bw.mlir -hot-training-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=LLAMA
// RUN: hot-opt %S/../Fixtures/linalg/tokens_stablehlo_generic.mlir -hot-training-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=JAX
// RUN: hot-opt %S/../Fixtures/torch/llama_lora_joint.mlir -hot-training-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=LORA
// RUN: hot-opt %S/../Fixtures/torch/llama_lora_bw.mlir -hot-training-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=LORA-BW

// VIT-COUNT-4: remark: layer{{[0-3]}}: forward y = x·Wᵀ
// VIT-COUNT-6: remark: not rewritten: a batched product
// VIT-DAG: remark: layer0: gw rewritten: HLA block 16 rank 8, INT8 grids
// VIT-DAG: remark: layer3: gx rewritten: Hadamard block 16, INT4 grids

// LLAMA-DAG: remark: not rewritten: a batched product
// LLAMA-DAG: remark: layer0: gx = gy·W over O (O = 32, I = 64), W laid out [I, O]
// LLAMA-DAG: remark: layer6: gw rewritten: HLA block 16 rank 8, INT8 grids
// LLAMA-NOT: layer7

// JAX-DAG: remark: layer0: gw = gyᵀ·x over 32 tokens [2x16] (O = 64, I = 32); gy and x told apart by gy being computed from x
// JAX-DAG: remark: layer0: forward y = x·Wᵀ (O = 64, I = 32), W laid out [I, O]
// JAX-DAG: remark: layer1: gx rewritten: Hadamard block 16, INT4 grids
// JAX-DAG: remark: layer1: gw rewritten: HLA block 16 rank 8, INT8 grids

// LoRA on q and v of two Llama blocks, everything else frozen: 8 trained
// layers (lora_A, lora_B), and 11 frozen layers whose gx the backward needs
// (o, gate, up, down of both blocks; q, k, v of the upper one). The three
// left are the lower block's frozen q, k and v forwards: nothing below
// needs their gx.
// LORA-COUNT-11: W is frozen (no gw), gy told by gy being computed from the layer's forward
// LORA-NOT: W is frozen
// LORA-COUNT-3: not rewritten: not part of a linear layer
// LORA-NOT: not part of a linear layer
// LORA-COUNT-8: remark: layer{{[0-9]+}}: gw rewritten
// LORA-NOT: remark: layer{{[0-9]+}}: gw rewritten
// The split backward: the same 11 frozen gx, no product left over.
// LORA-BW-COUNT-11: W is frozen (no gw), gy told by gy being computed from the gradients of a backward graph without its forward
// LORA-BW-NOT: W is frozen
// LORA-BW-NOT: not part of a linear layer

// q, k and v read the same x: one compressed copy, counted once.
// RUN: hot-opt %S/../Fixtures/torch/llama_block_joint.mlir -hot-training-pipeline="remarks=false" | hot-opt -hot-report="format=table" -o /dev/null | FileCheck %s --check-prefix=SHARED
// SHARED: layer0 32 32 32 H16 INT4 HLA16/8 INT8 4.0 KiB 516 B
// SHARED-NEXT: layer1 32 32 32 H16 INT4 HLA16/8 INT8 x of layer0 shared
// SHARED-NEXT: layer2 32 32 32 H16 INT4 HLA16/8 INT8 x of layer0 shared
// SHARED: saved activations: 87.4% less
