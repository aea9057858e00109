//===- HotOps.td - Operations of the hot dialect -----------*- tablegen -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_DIALECT_HOT_HOTOPS_TD
#define HOT_DIALECT_HOT_HOTOPS_TD

include "hot/Dialect/Hot/HotDialect.td"
include "hot/Dialect/Hot/HotAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"

def Hot_FloatTensor : RankedTensorOf<[AnyFloat]>;
def Hot_F32Tensor : RankedTensorOf<[F32]>;
def Hot_I8Tensor : RankedTensorOf<[I8]>;
def Hot_I32Tensor : RankedTensorOf<[I32]>;

//===----------------------------------------------------------------------===//
// hot.hadamard
//===----------------------------------------------------------------------===//

def Hot_HadamardOp : Hot_Op<"hadamard",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "orthonormal block Hadamard transform along one dimension";
  let description = [{
    Splits dimension `dim` of `input` into consecutive blocks of `block`
    elements and multiplies each block by the orthonormal Sylvester Hadamard
    matrix `Ĥ_b = H_b / sqrt(b)`, `H_b[i][j] = (-1)^popcount(i & j)`:

    ```
    result[..., c*b + i, ...] = sum_j Ĥ_b[i][j] * input[..., c*b + j, ...]
    ```

    `block` must be a power of two that divides the size of `dim`; a block of
    1 is the identity. `Ĥ_b` is symmetric and orthogonal, so the transform is
    an involution and cancels inside a contraction over `dim`:
    `(A·Ĥ)(Ĥ·B) = A·B`. It is computed by a fast Walsh-Hadamard butterfly
    whose exact order of floating-point operations is fixed in
    `docs/numerics.md`.

    Example:

    ```mlir
    %y = hot.hadamard %gy along 1 block 16 : tensor<197x768xf32>
    ```
  }];
  let arguments = (ins Hot_FloatTensor:$input, I64Attr:$dim, I64Attr:$block);
  let results = (outs Hot_FloatTensor:$result);
  let assemblyFormat = [{
    $input `along` $dim `block` $block attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// hot.lowrank
//===----------------------------------------------------------------------===//

def Hot_LowRankOp : Hot_Op<"lowrank", [Pure, AllElementTypesMatch<["input", "result"]>]> {
  let summary = "Walsh low-rank projection (HLA) along one dimension";
  let description = [{
    Hadamard low-rank approximation: splits dimension `dim` (size `n`) into
    `floor(n / block)` blocks, transforms each with `Ĥ_block` exactly as
    `hot.hadamard` does, and keeps `rank` of the `block` coefficients, the
    Walsh components of lowest sequency (number of sign changes):

    ```
    result[c*rank + k] = (Ĥ_block · input[c*block : (c+1)*block])[K[k]]
    ```

    With `selection = prefix` (the default), `K[k]` is the Sylvester row with
    exactly `k` sign changes. With `selection = triangle`, `block = s*s` and
    the kept rows are the 2-D Walsh functions `w_p ⊗ w_q` with `p + q < s`
    (the authors' 2-D low-pass set), so `rank = s*(s+1)/2`.

    The dimension shrinks from `n` to `(n / block) * rank`. With
    `allow_tail`, the last `n mod block` elements are appended unchanged;
    without it `block` must divide `n`. Two operands projected the same way
    satisfy `lowrank(A)ᵀ·lowrank(B) = Aᵀ·P·B`, with `P` the orthogonal
    projector onto the kept components (exactly `Aᵀ·B` when
    `rank == block`).

    Example (ViT's 197 tokens become 12 * 8 + 5 = 101 rows):

    ```mlir
    %xl = hot.lowrank %x along 0 block 16 rank 8 allow_tail
        : tensor<197x768xf32> -> tensor<101x768xf32>
    ```
  }];
  let arguments = (ins Hot_FloatTensor:$input, I64Attr:$dim, I64Attr:$block,
                   I64Attr:$rank,
                   DefaultValuedAttr<Hot_SelectionAttr,
                                     "::mlir::hot::Selection::Prefix">:$selection,
                   UnitAttr:$allow_tail);
  let results = (outs Hot_FloatTensor:$result);
  let assemblyFormat = [{
    $input `along` $dim `block` $block `rank` $rank (`selection` `` $selection^)?
    (`allow_tail` $allow_tail^)? attr-dict `:` type($input) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The size that dimension `dim` has after the projection.
    static int64_t getProjectedSize(int64_t size, int64_t block, int64_t rank);
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// hot.quantize
//===----------------------------------------------------------------------===//

def Hot_QuantizeOp : Hot_Op<"quantize", [Pure]> {
  let summary = "symmetric quantization to a signed grid of 2..8 bits";
  let description = [{
    Quantizes a rank-2 `[M, N]` tensor to the symmetric grid
    `{-qmax, ..., qmax}`, `qmax = 2^(bits-1) - 1` (no zero point; `-2^(bits-1)`
    is never produced), stored in `i8`, and returns the scales:

    ```
    scale = a / qmax          per group (tensor, row or column)
    q     = clamp(round(x * (1 / scale)), -qmax, qmax)
    ```

    `granularity` picks the groups and the shape of `scale`: `per_tensor`
    (`tensor<f32>`), `per_row` (`tensor<Mxf32>`) or `per_col`
    (`tensor<Nxf32>`). `scale_mode = maxabs` uses `a = max|x|`; `sawb` uses
    the clip `a = 12.1·sqrt(mean(x²)) - 12.2·mean(|x|)` when positive and
    falls back to `max|x|` otherwise. `rounding = nearest` rounds half away
    from zero; `stochastic` computes `floor(x * (1 / scale) + u)` with `u` uniform in
    [0, 1) drawn from a counter-based hash of (`seed`, row-major element
    index), so the same seed gives the same bits on every target and
    `E[q] = x * (1 / scale)`. The `seed` operand is required with stochastic
    rounding and forbidden otherwise.

    An all-zero group gets scale 0 and `q = 0`. A NaN or Inf in a group makes
    its scale non-finite (so the dequantized group is non-finite too), and
    its `q` is 0 wherever `x * (1 / scale)` is NaN. The reciprocal is one
    division per group, so each element costs a multiply; the exact order of
    operations is fixed in `docs/numerics.md`. The input must not be empty (an empty
    group has no scale), and with stochastic rounding it has fewer than
    2^32 elements (the hash takes 32-bit indices).

    Example:

    ```mlir
    %q, %s = hot.quantize %gy bits 4 granularity per_row scale maxabs
        rounding stochastic seed %seed
        : tensor<197x768xf32> -> tensor<197x768xi8>, tensor<197xf32>
    ```
  }];
  let arguments = (ins Hot_F32Tensor:$input, Optional<I64>:$seed,
                   I64Attr:$bits, Hot_GranularityAttr:$granularity,
                   Hot_ScaleModeAttr:$scale_mode, Hot_RoundingAttr:$rounding);
  let results = (outs Hot_I8Tensor:$q, Hot_F32Tensor:$scale);
  let assemblyFormat = [{
    $input `bits` $bits `granularity` `` $granularity `scale` `` $scale_mode
    `rounding` `` $rounding (`seed` $seed^)? attr-dict
    `:` type($input) `->` type($q) `,` type($scale)
  }];
  let extraClassDeclaration = [{
    /// The largest magnitude on the grid: 2^(bits-1) - 1.
    int64_t getQMax() { return (int64_t(1) << (getBits() - 1)) - 1; }
    /// The exclusive bound on the elements of a stochastically rounded
    /// input: the hash takes 32-bit element indices.
    static constexpr int64_t kMaxStochasticElements = int64_t(1) << 32;
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// hot.dequantize
//===----------------------------------------------------------------------===//

def Hot_DequantizeOp : Hot_Op<"dequantize", [Pure]> {
  let summary = "multiply quantized values by their scales";
  let description = [{
    The inverse map of `hot.quantize` on the grid: `result[i, j] =
    f32(q[i, j]) * scale_g` with `scale_g` the scale of the element's group
    under `granularity` (`tensor<f32>`, `tensor<Mxf32>` or `tensor<Nxf32>`).

    Example:

    ```mlir
    %x = hot.dequantize %q, %s granularity per_row
        : tensor<4x8xi8>, tensor<4xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Hot_I8Tensor:$q, Hot_F32Tensor:$scale,
                   Hot_GranularityAttr:$granularity);
  let results = (outs Hot_FloatTensor:$result);
  let assemblyFormat = [{
    $q `,` $scale `granularity` `` $granularity attr-dict
    `:` type($q) `,` type($scale) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// hot.int_matmul
//===----------------------------------------------------------------------===//

def Hot_IntMatmulOp : Hot_Op<"int_matmul", [Pure]> {
  let summary = "exact i8 x i8 -> i32 matrix product";
  let description = [{
    `result[m, n] = sum_k i32(A[m, k]) * i32(B[k, n])` with `A = lhs` (or
    `lhsᵀ` when `lhs` is marked `transposed`) and likewise `B`. The verifier
    requires `K < 2^17`, which keeps the i32 accumulation exact for every i8
    input (`K · 128 · 128 < 2^31`).

    Example (the weight gradient `gw = gyᵀ·x` on quantized operands):

    ```mlir
    %acc = hot.int_matmul %qgy transposed, %qx
        : tensor<101x768xi8>, tensor<101x3072xi8> -> tensor<768x3072xi32>
    ```
  }];
  let arguments = (ins Hot_I8Tensor:$lhs, Hot_I8Tensor:$rhs,
                   UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Hot_I32Tensor:$result);
  let assemblyFormat = [{
    $lhs (`transposed` $transpose_lhs^)? `,` $rhs
    (`transposed` $transpose_rhs^)? attr-dict
    `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The exclusive bound on the contraction size that keeps i32 exact.
    static constexpr int64_t kMaxContractionSize = int64_t(1) << 17;
    /// The size of the contracted dimension K.
    int64_t getContractionSize();
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// hot.rescale
//===----------------------------------------------------------------------===//

def Hot_RescaleOp : Hot_Op<"rescale", [Pure]> {
  let summary = "scale an integer product back to floating point";
  let description = [{
    `result[m, n] = (f32(acc[m, n]) * row_scale[m]) * col_scale[n]`, computed
    in f32 left to right and converted to the result's float type. Each scale
    is either a rank-0 tensor (one scale for all rows or columns) or has one
    entry per row (`M`) or column (`N`) of `acc`.

    Scales can only sit on the free dimensions of the product: a scale along
    the contracted dimension does not factor out of the integer sum. When
    `acc` comes from `hot.int_matmul` and a scale from the `hot.quantize` of
    its operand, the verifier checks that the quantization groups run along
    the product's rows or columns (e.g. per-token scales are legal for
    `gx = gy·W` but not for `gw = gyᵀ·x`, where tokens are contracted).

    Example:

    ```mlir
    %gx = hot.rescale %acc, %sg, %sw
        : tensor<197x768xi32>, tensor<197xf32>, tensor<f32> -> tensor<197x768xf32>
    ```
  }];
  let arguments = (ins Hot_I32Tensor:$acc, Hot_F32Tensor:$row_scale,
                   Hot_F32Tensor:$col_scale);
  let results = (outs Hot_FloatTensor:$result);
  let assemblyFormat = [{
    $acc `,` $row_scale `,` $col_scale attr-dict
    `:` type($acc) `,` type($row_scale) `,` type($col_scale) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // HOT_DIALECT_HOT_HOTOPS_TD
