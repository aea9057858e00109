// RUN: hot-opt %s -hot-training-pipeline="remarks=false" | FileCheck %s
// RUN: hot-opt %s -hot-training-pipeline="remarks=false" | hot-opt -hot-training-pipeline="remarks=false" | FileCheck %s --check-prefix=TWICE
// RUN: hot-opt %s -hot-training-pipeline="remarks=false" | hot-opt -hot-report -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: hot-opt %s -hot-training-pipeline="remarks=false" | hot-opt -hot-report="format=table" -o /dev/null | FileCheck %s --check-prefix=TABLE
// RUN: hot-opt %s -hot-training-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARKS

// x is produced in the graph (a ReLU), so ABC computes its HLA'd INT8 codes
// right there, before the forward product; the backward reads only them.
// CHECK-LABEL: func.func @layer
// CHECK: %[[X3:.*]] = linalg.generic
// CHECK: } -> tensor<2x17x16xf32>
// CHECK-NEXT: hot.lowrank %[[X3]] along 1 block 16 rank 8 allow_tail {{.*}}hot.saved_activation
// CHECK: hot.quantize {{.*}}rounding nearest {hot.compressed, hot.layer = #hot.layer<name = "layer0", role = gw>, hot.saved_activation}
// CHECK: linalg.matmul {hot.layer = #hot.layer<name = "layer0", role = forward>}
// CHECK: hot.int_matmul
// CHECK: hot.int_matmul

// Running the pipeline again changes nothing.
// TWICE-COUNT-2: hot.int_matmul
// TWICE-NOT: hot.int_matmul

// Figures by hand: N = 2 x 17 tokens, O = 32, I = 16, f32 x:
// saved 34 * 16 * 4 = 2176 B before, 18 * 16 (HLA 17 -> 9 tokens per
// sample, i8) + 4 (scale) = 292 B after; BOPs before 2 * 34*32*16 * 1024.
// JSON: "I": 16,
// JSON: "N": 34,
// JSON: "O": 32,
// JSON: "backward_bops_after": 21315584,
// JSON: "backward_bops_before": 35651584,
// JSON: "gw": "HLA16/8 INT8",
// JSON: "gx": "H16 INT4",
// JSON: "saved_bytes_after": 292,
// JSON: "saved_bytes_before": 2176,
// JSON: "peak_live_bytes_after":
// JSON: "peak_live_bytes_before":

// TABLE: hot-report: @layer
// TABLE: layer0 34 32 16 H16 INT4 HLA16/8 INT8 2.1 KiB 292 B 0.04 0.02
// TABLE: saved activations: 86.6% less

// REMARKS-DAG: remark: layer0: forward y = x·Wᵀ (O = 32, I = 16)
// REMARKS-DAG: remark: layer0: gx rewritten: Hadamard block 16, INT4 grids, per_tensor gy scales
// REMARKS-DAG: remark: layer0: gw rewritten: HLA block 16 rank 8, INT8 grids, per_tensor gy scales
func.func @layer(%a3: tensor<2x17x16xf32>, %w: tensor<32x16xf32>, %gy3: tensor<2x17x32xf32>)
    -> (tensor<34x32xf32>, tensor<34x16xf32>, tensor<32x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<2x17x16xf32>
  %x3 = linalg.generic {indexing_maps = [affine_map<(b, t, d) -> (b, t, d)>, affine_map<(b, t, d) -> (b, t, d)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a3 : tensor<2x17x16xf32>) outs(%ex : tensor<2x17x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %cst : f32
    linalg.yield %r : f32
  } -> tensor<2x17x16xf32>
  %x = tensor.collapse_shape %x3 [[0, 1], [2]] : tensor<2x17x16xf32> into tensor<34x16xf32>
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]] : tensor<2x17x32xf32> into tensor<34x32xf32>
  %e0 = tensor.empty() : tensor<16x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x16xf32>) outs(%e0 : tensor<16x32xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<34x32xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<34x32xf32>) -> tensor<34x32xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<34x16xf32>, tensor<16x32xf32>) outs(%z1 : tensor<34x32xf32>) -> tensor<34x32xf32>
  %e2 = tensor.empty() : tensor<34x16xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<34x16xf32>) -> tensor<34x16xf32>
  %gx = linalg.matmul ins(%gy, %w : tensor<34x32xf32>, tensor<32x16xf32>) outs(%z2 : tensor<34x16xf32>) -> tensor<34x16xf32>
  %e3 = tensor.empty() : tensor<32x34xf32>
  %gyt = linalg.transpose ins(%gy : tensor<34x32xf32>) outs(%e3 : tensor<32x34xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<32x16xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<32x34xf32>, tensor<34x16xf32>) outs(%z4 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %y, %gx, %gw : tensor<34x32xf32>, tensor<34x16xf32>, tensor<32x16xf32>
}
