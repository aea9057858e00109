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

def ConvertHotToGPUPass : Pass<"convert-hot-to-gpu", "ModuleOp"> {
  let summary = "Lower hot.int_matmul (with its hot.rescale) to tensor-core "
                "GPU kernels built from nvgpu ops";
  let description = [{
    Replaces every `hot.int_matmul` by a launch of a `gpu.func` kernel in the
    module's `gpu.module @hot_kernels` (the module becomes a
    `gpu.container_module`). The kernel is specialized to the product's
    static shapes and computes `C[M, N] = A[M, K] · B[K, N]` exactly in i32
    on integer tensor cores:

    - a grid of `ceil(N / tile-n) x ceil(M / tile-m)` thread blocks of
      `(tile-m / warp-m) · (tile-n / warp-n)` warps, each warp computing a
      `warp-m x warp-n` tile with `nvgpu.mma.sync` (`mmaShape = [16, 8, 32]`
      on s8, `[16, 8, 64]` on s4);
    - A and B staged global -> shared by 16-byte `nvgpu.device_async_copy`
      (cp.async, zero-filled past M, N and K) through a `stages`-deep
      pipeline of `nvgpu.device_async_create_group` /
      `nvgpu.device_async_wait`, into XOR-swizzled shared tiles (conflict-free
      `nvgpu.ldmatrix` fragment loads);
    - stores guarded by the matrix bounds, so every M and N (1 included) is
      handled.

    Both operands must be K-contiguous for `ldmatrix` (A as `[M][K]`, B as
    `[N][K]`): an operand stored the other way (`transposed` lhs, plain rhs:
    `gx = qg·qw` has `qw : [O, I]`, `gw = qgyᵀ·qx` has both) is first
    rewritten by one `linalg.generic` (transpose, zero padding of K to a
    multiple of 16 bytes, s4 packing), which maps onto the GPU like any other
    linalg op; a remark says so. When the product's only user is
    `hot.rescale`, the kernel's epilogue computes
    `(f32(acc) * row_scale) * col_scale` (docs/numerics.md) and writes the
    rescale's float type; otherwise it writes i32.

    The MMA type is a lowering choice by chip: s8 `m16n8k32` everywhere; when
    both operands come from a `hot.quantize` with `bits <= 4` and the chip has
    INT4 tensor cores (sm_80, sm_86, sm_87, sm_89), s4 `m16n8k64` on packed
    operands. Hopper (sm_90) has no INT4 tensor cores, so 4-bit operands use
    s8 there. A remark on each product states the choice and why.

    Host side, operands become `bufferization.to_buffer`s, the result a
    `memref.alloc` read back with `bufferization.to_tensor restrict writable`,
    so the module still bufferizes with one-shot-bufferize. Dynamic shapes
    are an error (the kernel is specialized to static shapes).

    Example:

    ```mlir
    %acc = hot.int_matmul %qg, %qw : tensor<197x64xi8>, tensor<64x32xi8>
        -> tensor<197x32xi32>
    %y = hot.rescale %acc, %sg, %sw
        : tensor<197x32xi32>, tensor<197xf32>, tensor<f32> -> tensor<197x32xf32>
    ```

    becomes

    ```mlir
    %rhs = linalg.generic ... outs(%e : tensor<32x64xi8>) { ... }  // [N][K]
    %a = bufferization.to_buffer %qg read_only : ... to memref<197x64xi8>
    %b = bufferization.to_buffer %rhs read_only : ... to memref<32x64xi8>
    %c = memref.alloc() {alignment = 64 : i64} : memref<197x32xf32>
    %rs = bufferization.to_buffer %sg read_only : ... to memref<197xf32>
    %cs = bufferization.to_buffer %sw read_only : ... to memref<f32>
    gpu.launch_func @hot_kernels::@hot_int_mma_s8_197x32x64_...
        blocks in (%c1, %c2, %c1) threads in (%c256, %c1, %c1)
        args(%a : memref<197x64xi8>, %b : memref<32x64xi8>,
             %c : memref<197x32xf32>, %rs : memref<197xf32>, %cs : memref<f32>)
    %y = bufferization.to_tensor %c restrict writable : ...
    ...
    gpu.module @hot_kernels {
      gpu.func @hot_int_mma_s8_197x32x64_... (...) workgroup(...) kernel {
        ... nvgpu.device_async_copy ... nvgpu.ldmatrix ... nvgpu.mma.sync ...
      }
    }
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "Target chip (sm_80, sm_86, sm_89, sm_90, ...): decides s4 vs s8 "
           "MMA for 4-bit operands">,
    Option<"tileM", "tile-m", "int64_t", /*default=*/"128",
           "Rows of C per thread block">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"128",
           "Columns of C per thread block">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"64",
           "Bytes of K per pipeline stage (32, 64 or 128)">,
    Option<"warpM", "warp-m", "int64_t", /*default=*/"64",
           "Rows of C per warp (multiple of 16)">,
    Option<"warpN", "warp-n", "int64_t", /*default=*/"32",
           "Columns of C per warp (multiple of 8)">,
    Option<"stages", "stages", "int64_t", /*default=*/"3",
           "Shared-memory stages of the cp.async pipeline (>= 2)">,
    Option<"int4", "int4", "bool", /*default=*/"true",
           "Use s4 m16n8k64 MMA for operands on a 4-bit grid where the chip "
           "has INT4 tensor cores">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::bufferization::BufferizationDialect",
    "mlir::gpu::GPUDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::memref::MemRefDialect",
    "mlir::nvgpu::NVGPUDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
    "mlir::vector::VectorDialect",
  ];
}

#endif // HOT_CONVERSION_PASSES_TD
