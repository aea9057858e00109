//===- HotDialect.td - The hot dialect ---------------------*- tablegen -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_DIALECT_HOT_HOTDIALECT_TD
#define HOT_DIALECT_HOT_HOTDIALECT_TD

include "mlir/IR/OpBase.td"

def Hot_Dialect : Dialect {
  let name = "hot";
  let cppNamespace = "::mlir::hot";
  let summary = "Building blocks of Hadamard-based optimized training";
  let description = [{
    The `hot` dialect holds the operations that HOT (Hadamard-based Optimized
    Training, Kim et al., CVPR 2025) composes into low-bit backward passes of
    linear layers: a block Hadamard transform, a Walsh low-rank projection
    (HLA), symmetric quantization with per-tensor, per-row or per-column
    scales, an exact i8 x i8 -> i32 matrix product and the rescale of its
    result back to floating point.

    All operations work on statically shaped ranked tensors. Their numerics
    are defined to the bit (see `docs/numerics.md`), so that the CPU lowering
    (`convert-hot-to-linalg`), the GPU kernels and the numpy reference in
    `python/hot/reference.py` agree exactly, stochastic rounding included.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["arith::ArithDialect"];
}

class Hot_Op<string mnemonic, list<Trait> traits = []>
    : Op<Hot_Dialect, mnemonic, traits>;

#endif // HOT_DIALECT_HOT_HOTDIALECT_TD
