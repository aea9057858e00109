//===- Passes.td - Conversion passes of the hot project ----*- tablegen -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_CONVERSION_PASSES_TD
#define HOT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertHotToLinalgPass
    : Pass<"convert-hot-to-linalg"> {
  let summary = "Lower every hot op to linalg, arith, math and tensor ops on tensors";
  let description = [{
    Expands each `hot` operation into structured operations on tensors with
    exactly the numerics of `docs/numerics.md`, so that any module with hot
    ops bufferizes and runs on the CPU (and maps to GPUs through upstream's
    linalg paths):

    - `hot.hadamard`: an `expand_shape` of the blocked dimension into
      `log2(block)` dimensions of size 2, one `linalg.generic` per butterfly
      stage (the last one also applies `1/sqrt(block)`), a `collapse_shape`.
    - `hot.lowrank`: the same butterfly on the full blocks, a gather of the
      kept Walsh rows (a `linalg.generic` reading a constant row table) and
      the pass-through tail inserted after them.
    - `hot.quantize`: one reduction `linalg.generic` (max |x|; sums in f64 for
      `sawb`), one that forms the scales, and an elementwise one that divides,
      rounds (`math.round`, or `math.floor` of `v + u` with `u` from the
      counter-based hash of the seed and the element index), clamps and
      converts to i8.
    - `hot.dequantize` and `hot.rescale`: elementwise `linalg.generic`s.
    - `hot.int_matmul`: `linalg.matmul` on i8 operands into a zero-filled i32
      accumulator, transposes expressed in its `indexing_maps`.

    Example:

    ```mlir
    %y = hot.hadamard %x along 1 block 2 : tensor<4x6xf32>
    ```

    becomes

    ```mlir
    %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 3, 2]
        : tensor<4x6xf32> into tensor<4x3x2xf32>
    %s = linalg.generic {indexing_maps = [
            affine_map<(d0, d1, d2) -> (d0, d1, 0)>,
            affine_map<(d0, d1, d2) -> (d0, d1, 1)>,
            affine_map<(d0, d1, d2) -> (d0, d1, d2)>], ...}
        ins(%e, %e : ...) outs(%init : tensor<4x3x2xf32>) {
      // d2 == 0 ? (a + b) * 0.707106769 : (a - b) * 0.707106769
    }
    %y = tensor.collapse_shape %s [[0], [1, 2]]
        : tensor<4x3x2xf32> into tensor<4x6xf32>
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::tensor::TensorDialect",
  ];
}

#endif // HOT_CONVERSION_PASSES_TD
