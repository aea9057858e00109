// Bad input gets a diagnostic with a location, never a crash.
// RUN: not hot-opt %s -split-input-file -hot-training-pipeline 2>&1 | FileCheck %s
// RUN: not hot-opt /dev/null -hot-training-pipeline="gw-granularity=per_row" 2>&1 | FileCheck %s --check-prefix=OPTION

// CHECK: hot-training-pipeline-errors.mlir:[[@LINE+2]]:{{[0-9]+}}: error: use of undeclared SSA value name
func.func @malformed(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  return %y : tensor<8x16xf32>
}

// -----

// CHECK: hot-training-pipeline-errors.mlir:[[@LINE+2]]:{{[0-9]+}}: error: 'linalg.matmul' op expected operand #1 rank (3) to match the result rank of indexing_map (2)
func.func @invalid_product(%x: tensor<8x16xf32>, %w: tensor<2x16x4xf32>, %i: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<2x16x4xf32>) outs(%i : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// OPTION: for the --gw-granularity option: Cannot find option named 'per_row'!
