// One linear layer's backward, y = x·Wᵀ with x: [B=2, T=197, I=64] and
// W: [O=96, I=64], written with hot ops the way HOT computes it
// (shared/docs/hot-method.md section 3):
//   gx = gy·W   through a block Hadamard transform along O and 4-bit grids,
//   gw = gyᵀ·x  through a Walsh low-rank projection (HLA) along each
//               sample's tokens (197 = 12 blocks of 16 + a tail of 5) and
//               8-bit grids.
// `make demo` compiles it with hot-opt --hot-lower-to-cpu, runs it, and
// compares it with the numpy reference and with the exact float64 products.

func.func @linear_backward(%gy: tensor<2x197x96xf32>, %x: tensor<2x197x64xf32>,
                           %w: tensor<96x64xf32>, %seed: i64)
    -> (tensor<394x64xf32>, tensor<96x64xf32>,
        tensor<394x96xi8>, tensor<394xf32>, tensor<202x96xi8>, tensor<96xf32>) {
  // gx = gy·W: Ĥ along O on both operands cancels inside the product.
  %gy2 = tensor.collapse_shape %gy [[0, 1], [2]]
      : tensor<2x197x96xf32> into tensor<394x96xf32>
  %gyh = hot.hadamard %gy2 along 1 block 16 : tensor<394x96xf32>
  %wh = hot.hadamard %w along 0 block 16 : tensor<96x64xf32>
  %qg, %sg = hot.quantize %gyh bits 4 granularity per_row scale maxabs
      rounding stochastic seed %seed
      : tensor<394x96xf32> -> tensor<394x96xi8>, tensor<394xf32>
  %qw, %sw = hot.quantize %wh bits 4 granularity per_tensor scale sawb
      rounding nearest : tensor<96x64xf32> -> tensor<96x64xi8>, tensor<f32>
  %accx = hot.int_matmul %qg, %qw
      : tensor<394x96xi8>, tensor<96x64xi8> -> tensor<394x64xi32>
  %gx = hot.rescale %accx, %sg, %sw
      : tensor<394x64xi32>, tensor<394xf32>, tensor<f32> -> tensor<394x64xf32>

  // gw = gyᵀ·x: HLA along the tokens of each sample, then 8-bit grids with
  // one scale per output channel for gy (tokens are contracted).
  %gyl = hot.lowrank %gy along 1 block 16 rank 8 allow_tail
      : tensor<2x197x96xf32> -> tensor<2x101x96xf32>
  %xl = hot.lowrank %x along 1 block 16 rank 8 allow_tail
      : tensor<2x197x64xf32> -> tensor<2x101x64xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]]
      : tensor<2x101x96xf32> into tensor<202x96xf32>
  %xl2 = tensor.collapse_shape %xl [[0, 1], [2]]
      : tensor<2x101x64xf32> into tensor<202x64xf32>
  %one = arith.constant 1 : i64
  %seed2 = arith.addi %seed, %one : i64
  %qgy, %sgy = hot.quantize %gyl2 bits 8 granularity per_col scale maxabs
      rounding stochastic seed %seed2
      : tensor<202x96xf32> -> tensor<202x96xi8>, tensor<96xf32>
  %qx, %sx = hot.quantize %xl2 bits 8 granularity per_tensor scale maxabs
      rounding nearest : tensor<202x64xf32> -> tensor<202x64xi8>, tensor<f32>
  %accw = hot.int_matmul %qgy transposed, %qx
      : tensor<202x96xi8>, tensor<202x64xi8> -> tensor<96x64xi32>
  %gw = hot.rescale %accw, %sgy, %sx
      : tensor<96x64xi32>, tensor<96xf32>, tensor<f32> -> tensor<96x64xf32>

  return %gx, %gw, %qg, %sg, %qgy, %sgy
      : tensor<394x64xf32>, tensor<96x64xf32>, tensor<394x96xi8>,
        tensor<394xf32>, tensor<202x96xi8>, tensor<96xf32>
}
