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
    rewritten by a transpose kernel (`@hot_transpose_*`: 64 x 64-byte tiles
    through shared memory, zero padding of K to a multiple of 16 bytes, s4
    packing); a remark says so. An operand that is K-contiguous but needs
    padding or s4 packing gets one elementwise `linalg.generic`, which maps
    onto the GPU like any other linalg op. When the product's only user is
    `hot.rescale`, the kernel's epilogue computes
    `(f32(acc) * row_scale) * col_scale` (docs/numerics.md) and writes the
    rescale's float type; otherwise it writes i32.

    The MMA type is a lowering choice by chip: s8 `m16n8k32` everywhere; when
    both operands come from a `hot.quantize` with `bits <= 4` and the chip has
    INT4 tensor cores (sm_80, sm_86, sm_87, sm_89), s4 `m16n8k64` on packed
    operands. Hopper (sm_90) has no INT4 tensor cores, so 4-bit operands use
    s8 there. A remark on each product states the choice and why.

    On `chip=sm_90a` (Hopper's architecture-specific target; with `wgmma`,
    the default) the kernel uses warpgroup MMA instead: `nvvm.wgmma.mma_async`
    s8 `m64nNk32` with N = `tile-n`, one warpgroup (128 threads) per 64 rows
    of the block tile (`warp-m` and `warp-n` do not apply), both operands read
    from shared memory through matrix descriptors. The tiles (`tile-k` bytes
    wide, 128 by default) live in dynamic shared memory aligned to 1 KiB and
    are written by cp.async in the XOR swizzle that is the hardware's 128-,
    64- or 32-byte swizzle; each thread fences its copies into the async
    proxy (`nvvm.fence.proxy`) before the barrier, and one wgmma group stays
    in flight while the next tile is awaited (`stages` >= 3, 4 by default:
    129 KiB for 128x128 tiles). Plain `sm_90` keeps mma.sync: ptxas accepts
    wgmma only for sm_90a.

    A product with few output tiles and a long K (gw = gy^T x: K is the
    tokens) would leave most SMs idle, or run a second, nearly empty wave of
    blocks. The lowering models the kernel's time on `sm-count` SMs (waves
    of blocks, each a K loop plus a fixed latency) and picks, of the tiles
    (with `tile-m` and `tile-n` left at 0: 128x128, its halvings down to
    64 and, for wgmma, 128x256) and K splits (with `split-k=0`, the default: up to 16 blocks per
    output tile, along grid.z) it may use, the fastest. A split K works so:
    each block stores its i32 accumulators to
    a workspace and counts itself in its tile's counter (zeroed by a small
    kernel launched first; an atomic add after a GPU-scope fence), and the
    tile's last block adds every split's accumulators and runs the epilogue.
    Integer sums do not depend on the order, so the result is the same bit
    for bit. The remark on the product gives the tiles and the split.

    With `hadamard-quantize` (default), a `per_row` or `per_tensor`
    `hot.quantize` (of a `hot.hadamard`, fused, or of any f32 matrix)
    becomes warp-per-row kernels: a hadamard along dim 1 by the block
    butterfly in registers and `gpu.shuffle xor` in docs/numerics.md's
    order; one along dim 0 (W's; block <= 32) by each lane loading its
    values of the block's rows and running the butterfly stages that lead to
    its row in registers (per row), or, per tensor, by two column-block
    kernels: a thread block per block of rows, thread t owning columns t,
    t + 128, ... of it with the whole butterfly in registers (the input read
    once per kernel; SAWB's partial t of each row is thread t's, the tree in
    shared memory), whose quantize kernel folds the statistics to the scale
    and writes the gx product's K-contiguous operand itself (no transpose
    kernel) with `fuse-transposes`; the row's max|y| by a
    shuffle reduction (per tensor: a first kernel of per-warp partial maxima),
    nearest or stochastic rounding with the CPU path's hash. A per-row kernel
    keeps its row in registers from the max to the quantize, reading it
    once, when each lane holds at most `row-values-in-registers` values of
    it (96 by default: rows of up to 3072 f32), and transforms it twice
    otherwise. SAWB scales add
    each row's f64 sums in docs/numerics.md's 128 interleaved partials (each
    lane keeps 4 in registers) and a tree of xor shuffles; per tensor, the row sums are stored and
    one warp combines them as docs/numerics.md defines (each lane's
    interleaved partial, then a shuffle tree). With
    `lowrank` (default), an f32 `hot.lowrank` becomes a kernel in which each
    thread owns up to 4 consecutive channels (vector accesses) of one token
    block at a time, runs the butterfly along the tokens in registers and
    stores the kept rows; thread blocks loop over (sample, token block)
    items. A `hot.hadamard` that no quantize kernel fuses (one with other
    users, or wider than a warp) becomes the same kernel with every row
    kept. All are
    bit-identical to convert-hot-to-linalg.

    With `share-statistics` (default), a per-tensor maxabs quantize gets no
    pass of its own over its data when a lowrank reads or writes that data:
    in a linear layer's backward, the gx path's `quantize(hadamard(gy))` and
    the gw path's `quantize(lowrank(gy))` both read gy. The lowrank kernel
    then also computes max|hadamard(x)| along the channels (the butterfly
    across registers and neighbouring lanes) and max|y|, one partial per
    thread block, and the quantize kernels reduce those partials instead of
    running absmax kernels. When nothing but its quantize reads the
    lowrank's result, two kernels replace the lowrank and both quantizes: a
    statistics kernel, then one that quantizes hadamard(x) and y with the
    CPU path's stochastic-rounding indices, so y never reaches memory. That
    quantize kernel's blocks loop over the items too; with one channel per
    thread it carries an occupancy hint (nvvm.minctasm), and its grid is the
    fewest block rows that finish in the fewest rounds of the blocks
    `sm-count` SMs hold at once, times items per block (a grid one round and
    a fraction long runs a second round as long as the first). The
    lowrank (and the reshapes and seeds it needs) moves before the first of
    the quantizes when it comes later in the block. Two quantizes of one
    matrix without a lowrank (a 2-D layer's gy: per tensor after a hadamard
    for gx, per tensor or per column for gw) share the two passes the same
    way.

    A product operand stored K-major (gw = gy^T x: both) is rewritten
    K-contiguous by a transpose kernel before the product, unless its
    producer writes it so itself: with `fuse-transposes` (default), the
    quantize kernel of a lowrank's result stores each thread's q values of a
    token block straight into the operand's [channels][K] rows, zeros in the
    padding. When both operands are such projections of one shape with a
    tail, K is taken in tails-last order (every sample's full blocks, then
    every sample's tail rows; the same for both operands, so the integer sums
    are the same), in which each block's kept rows are one aligned vector
    store. The remaining transposes get a remark.

    A `per_col` maxabs quantize (LQS's per-output-channel scales on the gw
    path) runs the same way: a statistics kernel of per-channel maxima (each
    thread's channels over its rows, a row of partials per block row), a
    kernel of the per-channel scales, then the quantize kernel; on the
    lowrank that produces its input when nothing else reads that, else on
    the matrix itself as a block-1 transform.

    `per_col` SAWB quantizes and lowranks with blocks over 32 stay for the
    generic path; a remark says why in each case.

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
    %w = bufferization.to_buffer %qw read_only : ... to memref<64x32xi8>
    %wt = memref.alloc() {alignment = 64 : i64} : memref<32x64xi8>  // [N][K]
    gpu.launch_func @hot_kernels::@hot_transpose_s8_64x32_to_32x64 ...
        args(%w : memref<64x32xi8>, %wt : memref<32x64xi8>)
    %rhs = bufferization.to_tensor %wt restrict writable : ...
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
    Option<"tileM", "tile-m", "int64_t", /*default=*/"0",
           "Rows of C per thread block (0: 128; with tile-n 0 too, halved "
           "down to 64, or tile-n doubled for wgmma, where the model of the "
           "kernel's time prefers it)">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"0",
           "Columns of C per thread block (0: 128, see tile-m)">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"0",
           "SMs that automatic tiles and split K, and the grids of the "
           "lowrank quantize kernels, aim to fill (0: a typical part of the "
           "chip: A100 108, H100/H200 132, ...)">,
    Option<"splitK", "split-k", "int64_t", /*default=*/"0",
           "Thread blocks along K per output tile, their partial products "
           "added by the tile's last block (0: chosen for the chip's SMs, "
           "see sm-count; 1: never split)">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"0",
           "Bytes of K per pipeline stage (32, 64 or 128; 0: 64 for "
           "mma.sync, 128 for wgmma)">,
    Option<"warpM", "warp-m", "int64_t", /*default=*/"64",
           "Rows of C per warp (multiple of 16)">,
    Option<"warpN", "warp-n", "int64_t", /*default=*/"32",
           "Columns of C per warp (multiple of 8)">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Shared-memory stages of the cp.async pipeline (>= 2 for "
           "mma.sync, >= 3 for wgmma; 0: 3 for mma.sync, 4 for wgmma)">,
    Option<"int4", "int4", "bool", /*default=*/"true",
           "Use s4 m16n8k64 MMA for operands on a 4-bit grid where the chip "
           "has INT4 tensor cores">,
    Option<"wgmma", "wgmma", "bool", /*default=*/"true",
           "Use wgmma.mma_async (s8, m64nNk32, N = tile-n) where the chip has "
           "it (sm_90a); warp-m and warp-n do not apply to it">,
    Option<"hadamardQuantize", "hadamard-quantize", "bool",
           /*default=*/"true",
           "Lower per_row / per_tensor hot.quantize (fused with a "
           "hot.hadamard along dim 1 feeding it) to warp-shuffle kernels, "
           "and per_col maxabs ones to per-channel kernels">,
    Option<"lowRank", "lowrank", "bool", /*default=*/"true",
           "Lower f32 hot.lowrank and unfused hot.hadamard (block <= 32) to "
           "a register-butterfly kernel">,
    Option<"fuseTransposes", "fuse-transposes", "bool", /*default=*/"true",
           "Let the quantize kernel of a lowrank's result write a product's "
           "K-major operand K-contiguous itself, instead of a transpose "
           "kernel after it">,
    Option<"shareStatistics", "share-statistics", "bool",
           /*default=*/"true",
           "Let a lowrank kernel compute the maxima of the per-tensor "
           "quantizes that read its input (through a hadamard) or its "
           "result, and quantize both itself when nothing else reads its "
           "result (with hadamard-quantize and lowrank)">,
    Option<"fuseColumnHadamard", "fuse-column-hadamard", "bool",
           /*default=*/"true",
           "Let the quantize kernels compute a hot.hadamard along dim 0 "
           "(W's on the gx path) as they load the rows, instead of a "
           "block-transform kernel writing it first">,
    Option<"quantizeChannelsPerThread", "quantize-channels-per-thread",
           "int64_t", /*default=*/"0",
           "Channels per thread of the kernels that quantize a lowrank's "
           "input and result: 1, 2 or 4 where it divides the channels (0: 1 "
           "with per-tensor scales, the vector width with per-channel "
           "ones)">,
    Option<"rowValuesInRegisters", "row-values-in-registers", "int64_t",
           /*default=*/"96",
           "Most values per lane of a row that a per_row hadamard + quantize "
           "kernel keeps in registers from its statistics to its quantize, "
           "reading the row once (longer rows are transformed twice; 0: "
           "always)">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::bufferization::BufferizationDialect",
    "mlir::gpu::GPUDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::memref::MemRefDialect",
    "mlir::nvgpu::NVGPUDialect",
    "mlir::NVVM::NVVMDialect",
    "mlir::LLVM::LLVMDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
    "mlir::vector::VectorDialect",
  ];
}

//===----------------------------------------------------------------------===//
// hot-parallel-dims-outermost
//===----------------------------------------------------------------------===//

def ParallelDimsOutermostPass
    : Pass<"hot-parallel-dims-outermost", "mlir::func::FuncOp"> {
  let summary = "Put every linalg op's reduction loops inside its parallel "
                "ones";
  let description = [{
    `convert-linalg-to-parallel-loops` keeps a linalg op's loop order: a
    reduction dim before a parallel one (a bias gradient summing `[tokens,
    channels]` over the tokens, `linalg.reduce` over dim 0, ...) becomes a
    sequential `scf.for` around the `scf.parallel`, which the GPU mapping
    leaves on the host, so every reduction step is a kernel launch of its
    own, followed by a host synchronization. This pass interchanges the
    loops of such ops (generalizing named ones) so that the parallel dims
    come first, each group in its own order. Each element then accumulates
    over the reduction dims in the same order as before, so the results are
    the same bit for bit, and the mapping makes one kernel in which each
    thread runs its reduction.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// hot-outline-loop-nests
//===----------------------------------------------------------------------===//

def OutlineLoopNestsPass
    : Pass<"hot-outline-loop-nests", "mlir::ModuleOp"> {
  let summary = "Give each top-level loop nest of a function a function of "
                "its own, never inlined";
  let description = [{
    After `convert-linalg-to-loops`, a training step is one function holding
    a loop nest per linalg op: for the LoRA ViT of `hot.train`, one LLVM
    function of 6.5 MB of IR, on which LLVM's loop passes take minutes
    (IndVarSimplify alone 45 s at -O2) because their cost grows with the
    function, not with the loop. This pass moves each outermost `scf.for`,
    `scf.parallel` and `scf.while` of a function (one not inside another
    loop) into a private function `<function>_loop<N>` that takes the values
    it uses from outside and returns the loop's results. The functions are
    internal and marked `noinline` (LLVM's `passthrough`), so that LLVM
    compiles them one at a time; the loops' operations and their order are
    unchanged, so the results are the same bit for bit.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// hot-check-kernel-ops
//===----------------------------------------------------------------------===//

def CheckKernelOpsPass : Pass<"hot-check-kernel-ops", "mlir::ModuleOp"> {
  let summary = "Reject kernel ops that LLVM's NVPTX backend aborts on";
  let description = [{
    Once the GPU mapping has made kernels of a module's loops, any op of the
    input may run on the device. A few forms that the rest of the pipeline
    accepts make LLVM's NVPTX backend abort the process while it serializes
    the kernels ("unsupported library call operation"), far from the op and
    without a location. This pass reports them at the op, as errors, before
    that happens:

    - values of f80 or f128 (NVPTX has no such arithmetic);
    - on chips before sm_90, `arith.truncf` with an explicit rounding mode
      to bf16 or from f64 (LLVM 22 lowers it to a constrained truncation
      that these chips cannot select; a plain `arith.truncf` is fine).

    It checks the bodies of `gpu.launch` and the functions of `gpu.module`s.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "The chip the kernels are compiled for">,
  ];
}

//===----------------------------------------------------------------------===//
// hot-outline-kernels
//===----------------------------------------------------------------------===//

def OutlineKernelsPass : Pass<"hot-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Outline every gpu.launch into one gpu.module of kernels";
  let description = [{
    Upstream's `gpu-kernel-outlining` gives each `gpu.launch` a `gpu.module`
    of its own. A lowered training step then has hundreds: the bundled ViT
    step has 393, and each is compiled by its own LLVM NVPTX run (and ptxas,
    for a cubin), embedded as its own binary and loaded by its own
    `cuModuleLoadData`; the SIMT simulator runs a clang per module.

    This pass runs `gpu-kernel-outlining`, then moves the kernels it made
    into one `gpu.module` named `module-name` (uniqued if the name is
    taken). Each kernel takes the name of the module it was outlined into,
    which is unique where the kernels' own names are not (outlining names
    every kernel of a function `<function>_kernel`), and every
    `gpu.launch_func` is updated. What outlining copied into several modules
    (the functions and globals that kernels use) is kept once.
    `gpu.module`s that existed before, such as convert-hot-to-gpu's
    `@hot_kernels`, are left as they are.

    Example: two launches in `@step` become

    ```mlir
    gpu.module @linalg_kernels {
      gpu.func @step_kernel(...) kernel { ... }
      gpu.func @step_kernel_0(...) kernel { ... }
    }
    gpu.launch_func @linalg_kernels::@step_kernel ...
    gpu.launch_func @linalg_kernels::@step_kernel_0 ...
    ```

    instead of `gpu.launch_func @step_kernel::@step_kernel` and
    `@step_kernel_0::@step_kernel`.
  }];
  let options = [
    Option<"moduleName", "module-name", "std::string",
           /*default=*/"\"linalg_kernels\"",
           "The gpu.module the outlined kernels go to">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::DLTIDialect"];
}

//===----------------------------------------------------------------------===//
// hot-tile-parallel-loops
//===----------------------------------------------------------------------===//

def TileParallelLoopsPass
    : Pass<"hot-tile-parallel-loops", "mlir::func::FuncOp"> {
  let summary = "Tile scf.parallel loops so that gpu-map-parallel-loops maps "
                "their tiles to threads";
  let description = [{
    `gpu-map-parallel-loops` maps the dims of an outermost `scf.parallel` to
    the grid and those of a nested one to the threads of a block. The loops
    that `convert-linalg-to-parallel-loops` makes are not nested, so each
    iteration would become a block of one thread; and it maps three dims at
    most, running the others sequentially. This pass first collapses the
    dims of a loop with more than two into two (the innermost, contiguous
    dim kept apart), then tiles every
    outermost `scf.parallel` that holds no other and has no reductions
    (`scf::tileParallelLoop`,
    inner bounds fixed, iterations past the end skipped by a guard) with tiles
    of `threads` iterations, given out from the innermost (contiguous) dim:
    each dim takes the smallest power of two that covers its trip count, at
    most what is left; so a `[3072, 768]` loop gets `1 x 256` tiles and a
    `[64, 16]` one `16 x 16`.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"256",
           "Iterations per tile (threads per block; a power of two)">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::scf::SCFDialect",
  ];
}

//===----------------------------------------------------------------------===//
// hot-allocate-managed-memory
//===----------------------------------------------------------------------===//

def AllocateManagedMemoryPass
    : Pass<"hot-allocate-managed-memory", "mlir::func::FuncOp"> {
  let summary = "Allocate the buffers of host functions in CUDA managed memory "
                "so that GPU kernels can read and write them";
  let description = [{
    After bufferization and the mapping of loops to `gpu.launch`, the buffers
    of a host function are plain `memref.alloc`s: host memory that a kernel
    cannot touch. This pass makes every such buffer device-accessible:

    - `memref.alloc` (identity layout, default memory space) becomes
      `gpu.alloc host_shared`, managed memory (`cuMemAllocManaged`) that both
      the host code and the kernels use;
    - `memref.dealloc` of such a buffer becomes a `gpu.dealloc` chained
      between `gpu.wait`s, the only form upstream's `gpu-to-llvm` lowers (a
      `host_shared` allocation, on the contrary, must not be async);
    - `memref.copy` becomes `linalg.copy`, so that the pipeline's mapping of
      linalg ops to parallel loops and kernels runs it on the device (a host
      copy would migrate managed pages, and a strided one would call the
      runner utils' `memrefCopy`);
    - `memref.get_global` of a constant global (a bufferized constant tensor
      lives in host memory) is replaced by a managed copy made at function
      entry with a host `memref.copy` (a memcpy once lowered) and freed
      before each `func.return`, one copy per global and function; a
      returned copy belongs to the caller. A mutable global stays in host
      memory, with a remark: a copy would lose its writes.

    The pipeline runs it right after bufferization, before any loop becomes a
    kernel; ops inside `gpu.launch` bodies and `gpu.module`s are left alone.
    The rewrite is one walk: the rest of the function is not folded.

    The caller's contract: function arguments must be device-accessible
    (managed memory, or host memory registered with `mgpuMemHostRegister`),
    and returned memrefs are managed memory, freed with `mgpuMemFree`.
    Once the kernels are formed, `hot-gpu-device-buffers` moves the buffers
    that only kernels touch to device memory.

    Example:

    ```mlir
    %a = memref.alloc() {alignment = 64 : i64} : memref<64x32xi8>
    ...
    memref.dealloc %a : memref<64x32xi8>
    ```

    becomes

    ```mlir
    %a = gpu.alloc host_shared () : memref<64x32xi8>
    ...
    %t0 = gpu.wait async
    %t1 = gpu.dealloc async [%t0] %a : memref<64x32xi8>
    gpu.wait [%t1]
    ```
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// hot-gpu-device-buffers
//===----------------------------------------------------------------------===//

def GpuDeviceBuffersPass
    : Pass<"hot-gpu-device-buffers", "mlir::func::FuncOp"> {
  let summary = "Move the buffers that only kernels touch from managed memory "
                "to device memory";
  let description = [{
    `hot-allocate-managed-memory` puts every buffer of a host function in
    CUDA managed memory, before anything is known of which ops become
    kernels. Once the kernels are formed, most buffers (a training step's
    temporaries) are touched by kernels alone. Managed memory costs them
    page faults and migrations where the GPU first touches a page, and can
    oversubscribe the device; plain device memory (`cuMemAlloc`) has neither
    cost. This pass gives a `gpu.alloc host_shared` of host code plain device
    memory when every use of the buffer, and of every view of it
    (`ViewLikeOpInterface`, `memref.extract_strided_metadata`), is

    - inside a `gpu.launch` body or an operand of `gpu.launch_func`,
    - `gpu.dealloc`, `gpu.memcpy`, `gpu.memset`, or `memref.dim`.

    Any other use (`func.return`, a call, a host load or store, an op it does
    not know) keeps the buffer managed; with `remarks`, a remark on the
    allocation names that use. Upstream's `gpu-to-llvm` lowers a device
    allocation only in its async form, so the allocation becomes the same
    stand-alone chain as the frees of `hot-allocate-managed-memory`, which
    `hot-gpu-async-launches` then joins to its stream:

    ```mlir
    %m = gpu.alloc host_shared () : memref<64x32xi8>
    ```

    becomes

    ```mlir
    %t0 = gpu.wait async
    %m, %t1 = gpu.alloc async [%t0] () : memref<64x32xi8>
    gpu.wait [%t1]
    ```
  }];
  let options = [
    Option<"emitRemarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for each buffer that stays in managed memory">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

//===----------------------------------------------------------------------===//
// hot-gpu-async-launches
//===----------------------------------------------------------------------===//

def GpuAsyncLaunchesPass
    : Pass<"hot-gpu-async-launches", "mlir::func::FuncOp"> {
  let summary = "Launch a host function's kernels back to back on one stream, "
                "with one host synchronization after them";
  let description = [{
    A synchronous `gpu.launch` or `gpu.launch_func` becomes, in upstream's
    `gpu-to-llvm`, a stream of its own that the host waits for: a lowered
    training step pays a host round trip per kernel. This pass makes the
    kernels of each block one chain: the first launch of a run depends on a
    `gpu.wait async` (a stream), each next launch on the one before (the same
    stream, kernels in order as before), and a blocking `gpu.wait` ends the
    run before the first op that may touch memory on the host (a load, a
    call, a return) or the block's terminator. Ops without memory effects
    (views, casts, constants) do not end a run. The frees that
    `hot-allocate-managed-memory` makes after a run (each a `gpu.wait async`,
    a `gpu.dealloc async` and a blocking `gpu.wait`) join it: freed in stream
    order after the kernels, without a stream and a host wait of their own.
    So do the device allocations of `hot-gpu-device-buffers` (the same form
    with a `gpu.alloc async`), before or among the launches: the first one
    starts the run.

    The host-shared allocations of a block (`gpu.alloc host_shared` of a
    static shape, which cannot be async) are moved first to before the
    block's first launch, so that they do not cut it into runs of one
    kernel; their buffers already live until the block's deallocations.
    Launches that are already async are left alone, and end a run.

    Example:

    ```mlir
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
    %b = gpu.alloc host_shared () : memref<16xf32>
    gpu.launch_func @k::@b blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%b : memref<16xf32>)
    %v = memref.load %b[%c0] : memref<16xf32>
    ```

    becomes

    ```mlir
    %b = gpu.alloc host_shared () : memref<16xf32>
    %t0 = gpu.wait async
    %t1 = gpu.launch_func async [%t0] @k::@a blocks in ...
    %t2 = gpu.launch_func async [%t1] @k::@b blocks in ... args(%b : memref<16xf32>)
    gpu.wait [%t2]
    %v = memref.load %b[%c0] : memref<16xf32>
    ```

    A lowered layer step (`bench/gpu/export.py`'s `layer_fc1_bf16`) makes one
    host synchronization instead of 26: its allocations, launches and frees
    on one stream.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

//===----------------------------------------------------------------------===//
// convert-nvvm-to-simulator, hot-attach-simulator-target
//===----------------------------------------------------------------------===//

def ConvertNVVMToSimulatorPass : Pass<"convert-nvvm-to-simulator"> {
  let summary = "Turn NVVM kernels into host code for the SIMT simulator";
  let description = [{
    Rewrites a symbol table of LLVM-dialect kernels with NVVM ops (the body of
    a `gpu.module` after `convert-gpu-to-nvvm`) into plain host code that
    libhot_simulator_runtime.so runs on the CPU, one fiber per GPU thread
    (`include/hot/Runtime/SimulatorABI.h`):

    - special registers (`nvvm.read.ptx.sreg.*`), `nvvm.barrier0`,
      `nvvm.shfl.sync`, `nvvm.cp.async.*` (queued until the thread's
      `wait.group`, as on the hardware), `nvvm.ldmatrix` (m8n8 b16) and
      integer `nvvm.mma.sync` (s8 m16n8k32, s4 m16n8k64) become calls of the
      runtime; operands and results that are registers of a warp-wide
      operation go through stack slots;
    - shared memory globals (`addr_space = 3`) become offsets into the
      block's shared window (`__hotsim_shared()`), so that the host compiler
      cannot keep them private to a thread; dynamic shared memory starts
      after the static globals, whose size the module exports as
      `__hotsim_static_shared_bytes`;
    - every kernel gets an exported `__hotsim_launch_<name>(ptr params)` that
      unpacks cuLaunchKernel's parameter array, and loses its NVVM/GPU
      attributes.

    Any other NVVM op, inline PTX, or an external function the runtime does
    not define (`__nv_*` math beyond HOT_SIMULATOR_NV_MATH) is an error at
    its location: the simulator never runs a kernel it does not understand.
    The `#hot.simulator` GPU target runs this pass on a copy of each
    `gpu.module` before compiling it for the host.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def AttachSimulatorTargetPass
    : Pass<"hot-attach-simulator-target", "ModuleOp"> {
  let summary = "Make the SIMT simulator the first target of every gpu.module";
  let description = [{
    Puts `#hot.simulator<chip = ..., O = ...>` first in the `targets` of every
    `gpu.module`, so that `gpu-module-to-binary` compiles each one for the
    host as well and `gpu.select_object` (the default) embeds that object:
    the lowered program then runs on libhot_simulator_runtime.so instead of
    the CUDA driver. `hot-lower-to-nvvm{simulator=true}` runs it after
    outlining the kernels.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "The chip the kernels were generated for">,
    Option<"optLevel", "O", "unsigned", /*default=*/"2",
           "Optimization level of the host compiler">,
  ];
  // #hot.simulator lives in the hot dialect, which a pipeline of upstream
  // passes does not load.
  let dependentDialects = ["mlir::hot::HotDialect"];
}

#endif // HOT_CONVERSION_PASSES_TD
