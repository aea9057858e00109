// RUN: hot-opt %s -split-input-file -verify-diagnostics

func.func @hadamard_dynamic(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'hot.hadamard' op requires a statically shaped input, got 'tensor<?x16xf32>'}}
  %y = hot.hadamard %x along 1 block 16 : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @hadamard_dim(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'hot.hadamard' op dim 2 is out of range for a rank-2 tensor}}
  %y = hot.hadamard %x along 2 block 16 : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @hadamard_block_not_pow2(%x: tensor<4x24xf32>) -> tensor<4x24xf32> {
  // expected-error @+1 {{'hot.hadamard' op block must be a power of two, got 12}}
  %y = hot.hadamard %x along 1 block 12 : tensor<4x24xf32>
  return %y : tensor<4x24xf32>
}

// -----

func.func @hadamard_block_not_dividing(%x: tensor<197x16xf32>) -> tensor<197x16xf32> {
  // expected-error @+1 {{'hot.hadamard' op block 16 does not divide the size 197 of dimension 0}}
  %y = hot.hadamard %x along 0 block 16 : tensor<197x16xf32>
  return %y : tensor<197x16xf32>
}

// -----

func.func @hadamard_integer(%x: tensor<4x16xi32>) -> tensor<4x16xi32> {
  // expected-error @+1 {{'hot.hadamard' op operand #0 must be ranked tensor of floating-point values}}
  %y = hot.hadamard %x along 1 block 16 : tensor<4x16xi32>
  return %y : tensor<4x16xi32>
}

// -----

func.func @lowrank_dynamic(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'hot.lowrank' op requires a statically shaped input, got 'tensor<?x16xf32>'}}
  %y = hot.lowrank %x along 1 block 16 rank 16 : tensor<?x16xf32> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @lowrank_block(%x: tensor<4x48xf32>) -> tensor<4x24xf32> {
  // expected-error @+1 {{'hot.lowrank' op block must be a power of two, got 6}}
  %y = hot.lowrank %x along 1 block 6 rank 3 : tensor<4x48xf32> -> tensor<4x24xf32>
  return %y : tensor<4x24xf32>
}

// -----

func.func @lowrank_rank_zero(%x: tensor<4x16xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'hot.lowrank' op rank must be in [1, 16], got 0}}
  %y = hot.lowrank %x along 1 block 16 rank 0 : tensor<4x16xf32> -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

func.func @lowrank_rank_above_block(%x: tensor<4x16xf32>) -> tensor<4x17xf32> {
  // expected-error @+1 {{'hot.lowrank' op rank must be in [1, 16], got 17}}
  %y = hot.lowrank %x along 1 block 16 rank 17 : tensor<4x16xf32> -> tensor<4x17xf32>
  return %y : tensor<4x17xf32>
}

// -----

func.func @lowrank_dim(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'hot.lowrank' op dim -1 is out of range for a rank-2 tensor}}
  %y = hot.lowrank %x along -1 block 16 rank 8 : tensor<4x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @lowrank_triangle_block(%x: tensor<4x32xf32>) -> tensor<4x10xf32> {
  // expected-error @+1 {{'hot.lowrank' op triangle selection needs a block that is the square of a power of two, got 32}}
  %y = hot.lowrank %x along 1 block 32 rank 10 selection triangle : tensor<4x32xf32> -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

func.func @lowrank_triangle_rank(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'hot.lowrank' op triangle selection on a 4x4 grid keeps rank 10, got 8}}
  %y = hot.lowrank %x along 1 block 16 rank 8 selection triangle : tensor<4x16xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @lowrank_tail(%x: tensor<197x4xf32>) -> tensor<101x4xf32> {
  // expected-error @+1 {{'hot.lowrank' op block 16 does not divide the size 197 of dimension 0; add 'allow_tail' to pass the 5 trailing elements through}}
  %y = hot.lowrank %x along 0 block 16 rank 8 : tensor<197x4xf32> -> tensor<101x4xf32>
  return %y : tensor<101x4xf32>
}

// -----

func.func @lowrank_result(%x: tensor<197x4xf32>) -> tensor<96x4xf32> {
  // expected-error @+1 {{'hot.lowrank' op expects result type 'tensor<101x4xf32>', got 'tensor<96x4xf32>'}}
  %y = hot.lowrank %x along 0 block 16 rank 8 allow_tail : tensor<197x4xf32> -> tensor<96x4xf32>
  return %y : tensor<96x4xf32>
}

// -----

func.func @quantize_dynamic(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'hot.quantize' op requires a statically shaped input, got 'tensor<?x8xf32>'}}
  %q, %s = hot.quantize %x bits 8 granularity per_tensor scale maxabs rounding nearest : tensor<?x8xf32> -> tensor<?x8xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_rank(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'hot.quantize' op expects a rank-2 input, got 'tensor<2x4x8xf32>'}}
  %q, %s = hot.quantize %x bits 8 granularity per_tensor scale maxabs rounding nearest : tensor<2x4x8xf32> -> tensor<2x4x8xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_bits_low(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'hot.quantize' op bits must be in [2, 8] (values are stored in i8), got 1}}
  %q, %s = hot.quantize %x bits 1 granularity per_tensor scale maxabs rounding nearest : tensor<4x8xf32> -> tensor<4x8xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_bits_high(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'hot.quantize' op bits must be in [2, 8] (values are stored in i8), got 16}}
  %q, %s = hot.quantize %x bits 16 granularity per_tensor scale maxabs rounding nearest : tensor<4x8xf32> -> tensor<4x8xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_no_seed(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'hot.quantize' op stochastic rounding requires a seed operand}}
  %q, %s = hot.quantize %x bits 4 granularity per_tensor scale maxabs rounding stochastic : tensor<4x8xf32> -> tensor<4x8xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_useless_seed(%x: tensor<4x8xf32>, %seed: i64) {
  // expected-error @+1 {{'hot.quantize' op a seed is only meaningful with stochastic rounding}}
  %q, %s = hot.quantize %x bits 4 granularity per_tensor scale maxabs rounding nearest seed %seed : tensor<4x8xf32> -> tensor<4x8xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_too_many_elements(%x: tensor<65536x65536xf32>, %seed: i64) {
  // expected-error @+1 {{'hot.quantize' op stochastic rounding hashes 32-bit element indices; the input has 4294967296 elements}}
  %q, %s = hot.quantize %x bits 4 granularity per_tensor scale maxabs rounding stochastic seed %seed : tensor<65536x65536xf32> -> tensor<65536x65536xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_q_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'hot.quantize' op expects the quantized result to have the shape of the input, got 'tensor<8x4xi8>'}}
  %q, %s = hot.quantize %x bits 4 granularity per_tensor scale maxabs rounding nearest : tensor<4x8xf32> -> tensor<8x4xi8>, tensor<f32>
  return
}

// -----

func.func @quantize_scale_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'hot.quantize' op expects a per_row scale of type 'tensor<4xf32>' for an operand of type 'tensor<4x8xf32>', got 'tensor<8xf32>'}}
  %q, %s = hot.quantize %x bits 4 granularity per_row scale maxabs rounding nearest : tensor<4x8xf32> -> tensor<4x8xi8>, tensor<8xf32>
  return
}

// -----

func.func @quantize_per_tensor_scale_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'hot.quantize' op expects a per_tensor scale of type 'tensor<f32>' for an operand of type 'tensor<4x8xf32>', got 'tensor<1xf32>'}}
  %q, %s = hot.quantize %x bits 4 granularity per_tensor scale maxabs rounding nearest : tensor<4x8xf32> -> tensor<4x8xi8>, tensor<1xf32>
  return
}

// -----

func.func @quantize_f16(%x: tensor<4x8xf16>) {
  // expected-error @+1 {{'hot.quantize' op operand #0 must be ranked tensor of 32-bit float values}}
  %q, %s = hot.quantize %x bits 4 granularity per_tensor scale maxabs rounding nearest : tensor<4x8xf16> -> tensor<4x8xi8>, tensor<f32>
  return
}

// -----

func.func @dequantize_dynamic(%q: tensor<?x8xi8>, %s: tensor<f32>) {
  // expected-error @+1 {{'hot.dequantize' op requires a statically shaped operand, got 'tensor<?x8xi8>'}}
  %x = hot.dequantize %q, %s granularity per_tensor : tensor<?x8xi8>, tensor<f32> -> tensor<?x8xf32>
  return
}

// -----

func.func @dequantize_rank(%q: tensor<8xi8>, %s: tensor<f32>) {
  // expected-error @+1 {{'hot.dequantize' op expects a rank-2 operand, got 'tensor<8xi8>'}}
  %x = hot.dequantize %q, %s granularity per_tensor : tensor<8xi8>, tensor<f32> -> tensor<8xf32>
  return
}

// -----

func.func @dequantize_result(%q: tensor<4x8xi8>, %s: tensor<f32>) {
  // expected-error @+1 {{'hot.dequantize' op expects the result to have the shape of the operand, got 'tensor<8x4xf32>'}}
  %x = hot.dequantize %q, %s granularity per_tensor : tensor<4x8xi8>, tensor<f32> -> tensor<8x4xf32>
  return
}

// -----

func.func @dequantize_scale(%q: tensor<4x8xi8>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'hot.dequantize' op expects a per_col scale of type 'tensor<8xf32>' for an operand of type 'tensor<4x8xi8>', got 'tensor<4xf32>'}}
  %x = hot.dequantize %q, %s granularity per_col : tensor<4x8xi8>, tensor<4xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @int_matmul_dynamic(%a: tensor<?x8xi8>, %b: tensor<8x4xi8>) {
  // expected-error @+1 {{'hot.int_matmul' op requires a statically shaped lhs, got 'tensor<?x8xi8>'}}
  %c = hot.int_matmul %a, %b : tensor<?x8xi8>, tensor<8x4xi8> -> tensor<?x4xi32>
  return
}

// -----

func.func @int_matmul_rank(%a: tensor<2x4x8xi8>, %b: tensor<8x4xi8>) {
  // expected-error @+1 {{'hot.int_matmul' op expects a rank-2 lhs, got 'tensor<2x4x8xi8>'}}
  %c = hot.int_matmul %a, %b : tensor<2x4x8xi8>, tensor<8x4xi8> -> tensor<4x4xi32>
  return
}

// -----

func.func @int_matmul_k(%a: tensor<4x8xi8>, %b: tensor<4x8xi8>) {
  // expected-error @+1 {{'hot.int_matmul' op contracts a lhs with K = 8 against a rhs with K = 4}}
  %c = hot.int_matmul %a, %b : tensor<4x8xi8>, tensor<4x8xi8> -> tensor<4x8xi32>
  return
}

// -----

func.func @int_matmul_result(%a: tensor<4x8xi8>, %b: tensor<4x8xi8>) {
  // expected-error @+1 {{'hot.int_matmul' op expects result type 'tensor<4x4xi32>', got 'tensor<4x8xi32>'}}
  %c = hot.int_matmul %a, %b transposed : tensor<4x8xi8>, tensor<4x8xi8> -> tensor<4x8xi32>
  return
}

// -----

func.func @int_matmul_overflow(%a: tensor<4x131072xi8>, %b: tensor<131072x4xi8>) {
  // expected-error @+1 {{'hot.int_matmul' op contraction size K = 131072 can overflow the i32 accumulator; K must be below 131072 (split the product)}}
  %c = hot.int_matmul %a, %b : tensor<4x131072xi8>, tensor<131072x4xi8> -> tensor<4x4xi32>
  return
}

// -----

func.func @int_matmul_i4(%a: tensor<4x8xi4>, %b: tensor<8x4xi8>) {
  // expected-error @+1 {{'hot.int_matmul' op operand #0 must be ranked tensor of 8-bit signless integer values}}
  %c = hot.int_matmul %a, %b : tensor<4x8xi4>, tensor<8x4xi8> -> tensor<4x4xi32>
  return
}

// -----

func.func @rescale_dynamic(%acc: tensor<?x4xi32>, %s: tensor<f32>) {
  // expected-error @+1 {{'hot.rescale' op requires a statically shaped accumulator, got 'tensor<?x4xi32>'}}
  %y = hot.rescale %acc, %s, %s : tensor<?x4xi32>, tensor<f32>, tensor<f32> -> tensor<?x4xf32>
  return
}

// -----

func.func @rescale_rank(%acc: tensor<4xi32>, %s: tensor<f32>) {
  // expected-error @+1 {{'hot.rescale' op expects a rank-2 accumulator, got 'tensor<4xi32>'}}
  %y = hot.rescale %acc, %s, %s : tensor<4xi32>, tensor<f32>, tensor<f32> -> tensor<4xf32>
  return
}

// -----

func.func @rescale_result(%acc: tensor<4x8xi32>, %s: tensor<f32>) {
  // expected-error @+1 {{'hot.rescale' op expects the result to have the shape of the accumulator, got 'tensor<8x4xf32>'}}
  %y = hot.rescale %acc, %s, %s : tensor<4x8xi32>, tensor<f32>, tensor<f32> -> tensor<8x4xf32>
  return
}

// -----

func.func @rescale_row_scale(%acc: tensor<4x8xi32>, %r: tensor<8xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'hot.rescale' op expects the row scale to be rank-0 or to have 4 elements, got 'tensor<8xf32>'}}
  %y = hot.rescale %acc, %r, %s : tensor<4x8xi32>, tensor<8xf32>, tensor<f32> -> tensor<4x8xf32>
  return
}

// -----

func.func @rescale_col_scale(%acc: tensor<4x8xi32>, %c: tensor<2x4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'hot.rescale' op expects the column scale to be rank-0 or to have 8 elements, got 'tensor<2x4xf32>'}}
  %y = hot.rescale %acc, %s, %c : tensor<4x8xi32>, tensor<f32>, tensor<2x4xf32> -> tensor<4x8xf32>
  return
}

// -----

// gw = gyᵀ·x contracts the tokens: a per-token (per_row of the stored gy)
// scale lies along K and cannot be factored out.
func.func @rescale_scale_on_k(%gy: tensor<16x16xf32>, %x: tensor<16x16xf32>, %seed: i64) -> tensor<16x16xf32> {
  %qg, %sg = hot.quantize %gy bits 8 granularity per_row scale maxabs rounding stochastic seed %seed : tensor<16x16xf32> -> tensor<16x16xi8>, tensor<16xf32>
  %qx, %sx = hot.quantize %x bits 8 granularity per_tensor scale maxabs rounding nearest : tensor<16x16xf32> -> tensor<16x16xi8>, tensor<f32>
  %acc = hot.int_matmul %qg transposed, %qx : tensor<16x16xi8>, tensor<16x16xi8> -> tensor<16x16xi32>
  // expected-error @+1 {{'hot.rescale' op the row scale comes from per_row quantization of the lhs of the product, whose groups run along the contracted dimension K; only per_tensor or per_col scales factor out of the integer sum}}
  %gw = hot.rescale %acc, %sg, %sx : tensor<16x16xi32>, tensor<16xf32>, tensor<f32> -> tensor<16x16xf32>
  return %gw : tensor<16x16xf32>
}

// -----

func.func @rescale_col_scale_on_k(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %qa, %sa = hot.quantize %a bits 4 granularity per_tensor scale maxabs rounding nearest : tensor<8x8xf32> -> tensor<8x8xi8>, tensor<f32>
  %qb, %sb = hot.quantize %b bits 4 granularity per_row scale maxabs rounding nearest : tensor<8x8xf32> -> tensor<8x8xi8>, tensor<8xf32>
  %acc = hot.int_matmul %qa, %qb : tensor<8x8xi8>, tensor<8x8xi8> -> tensor<8x8xi32>
  // expected-error @+1 {{'hot.rescale' op the column scale comes from per_row quantization of the rhs of the product, whose groups run along the contracted dimension K; only per_tensor or per_col scales factor out of the integer sum}}
  %y = hot.rescale %acc, %sa, %sb : tensor<8x8xi32>, tensor<f32>, tensor<8xf32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
