// RUN: hot-opt %s -hot-training-pipeline="remarks=false" -hot-lqs-instrument | FileCheck %s --check-prefix=INSTRUMENT
// RUN: echo '{"threshold": 0.5, "layers": {"layer0": {"gx": "per_row", "gw": "per_col"}}}' > %t.json
// RUN: hot-opt %s -hot-annotate-backward-matmuls="remarks=false" -hot-lqs-apply="decisions=%t.json" | FileCheck %s --check-prefix=APPLY
// RUN: hot-opt %s -hot-training-pipeline="lqs-decisions=%t.json remarks=false" | FileCheck %s --check-prefix=PIPELINE
// RUN: echo '{"layers": {"layer0": {"gx": "per_col"}}}' > %t.bad.json
// RUN: not hot-opt %s -hot-annotate-backward-matmuls="remarks=false" -hot-lqs-apply="decisions=%t.bad.json" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not hot-opt %s -hot-lqs-apply="decisions=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// A decisions file of the wrong shape is an error; decisions for layers the
// module does not have (a file for another graph) are a warning; a file
// nested past 64 levels is refused before parsing (the parser recurses).
// RUN: echo '{"layers": {"layer0": {"gx": 5}}}' > %t.number.json
// RUN: not hot-opt %s -hot-annotate-backward-matmuls="remarks=false" -hot-lqs-apply="decisions=%t.number.json" 2>&1 | FileCheck %s --check-prefix=NUMBER
// RUN: echo '{"layers": {"layer0": {"gz": "per_row"}}}' > %t.path.json
// RUN: not hot-opt %s -hot-annotate-backward-matmuls="remarks=false" -hot-lqs-apply="decisions=%t.path.json" 2>&1 | FileCheck %s --check-prefix=PATH
// RUN: echo '{"layers": {"layer0": {"gx": "per_row"}, "nope": {"gw": "per_col"}}}' > %t.other.json
// RUN: hot-opt %s -hot-annotate-backward-matmuls="remarks=false" -hot-lqs-apply="decisions=%t.other.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: hot-opt %s -hot-annotate-backward-matmuls="remarks=false" -hot-lqs-apply="decisions=%t.other.json remarks=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET
// RUN: %python -c "print('[' * 100 + ']' * 100)" > %t.deep.json
// RUN: not hot-opt %s -hot-lqs-apply="decisions=%t.deep.json" 2>&1 | FileCheck %s --check-prefix=DEEP

// The instrumented step returns, after its own results, the per-tensor and
// finer-granularity errors of each quantized output gradient.
// INSTRUMENT-LABEL: func.func @layer
// INSTRUMENT-SAME: -> (tensor<8x64xf32>, tensor<16x64xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>)
// INSTRUMENT-SAME: hot.lqs_results = ["layer0.gx", "layer0.gw"]
// INSTRUMENT-DAG: hot.quantize %{{.*}} bits 4 granularity per_tensor scale maxabs rounding nearest
// INSTRUMENT-DAG: hot.quantize %{{.*}} bits 4 granularity per_row scale maxabs rounding nearest
// INSTRUMENT-DAG: hot.quantize %{{.*}} bits 8 granularity per_col scale maxabs rounding nearest
// INSTRUMENT-DAG: hot.dequantize %{{.*}}, %{{.*}} granularity per_col
// INSTRUMENT-DAG: math.sqrt %{{.*}} : f64

// APPLY: hot.layer = #hot.layer<name = "layer0", role = gx, granularity = per_row>
// APPLY: hot.layer = #hot.layer<name = "layer0", role = gw, granularity = per_col>

// PIPELINE: hot.quantize %{{.*}} bits 4 granularity per_row scale maxabs rounding stochastic
// PIPELINE: hot.quantize %{{.*}} bits 8 granularity per_col scale maxabs rounding stochastic

// BAD: error: hot-lqs-apply: layer0.gx must be per_tensor or per_row, got 'per_col'
// MISSING: error: hot-lqs-apply: cannot read decisions file '{{.*}}missing.json'
// NUMBER: error: hot-lqs-apply: '{{.*}}number.json': layers.layer0.gx is not a string (per_tensor, per_row or per_col)
// PATH: error: hot-lqs-apply: '{{.*}}path.json': layers.layer0 has 'gz'; a layer's decisions are "gx" and "gw"
// OTHER: remark: layer0: no LQS decision for gw; granularity left as it is
// OTHER: warning: hot-lqs-apply: '{{.*}}other.json' decides for 1 layer(s) this module does not have: 'nope'
// QUIET-NOT: remark
// QUIET: warning: hot-lqs-apply: '{{.*}}other.json' decides for 1 layer(s)
// DEEP: error: hot-lqs-apply: '{{.*}}deep.json' nests deeper than 64 levels
func.func @layer(%x: tensor<8x64xf32>, %w: tensor<16x64xf32>, %gy: tensor<8x16xf32>)
    -> (tensor<8x64xf32>, tensor<16x64xf32>) {
  %cst = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x64xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %gx = linalg.matmul ins(%gy, %w : tensor<8x16xf32>, tensor<16x64xf32>) outs(%z2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %e3 = tensor.empty() : tensor<16x8xf32>
  %gyt = linalg.transpose ins(%gy : tensor<8x16xf32>) outs(%e3 : tensor<16x8xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<16x64xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<16x8xf32>, tensor<8x64xf32>) outs(%z4 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %gx, %gw : tensor<8x64xf32>, tensor<16x64xf32>
}
