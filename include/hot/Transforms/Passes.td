//===- Passes.td - Training-graph passes of the hot project -*- tablegen -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_TRANSFORMS_PASSES_TD
#define HOT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def HotAnnotateBackwardMatmulsPass : Pass<"hot-annotate-backward-matmuls"> {
  let summary = "Find each linear layer's forward, gx and gw products and tag them";
  let description = [{
    Runs `BackwardMatmulAnalysis` (include/hot/Transforms/BackwardMatmuls.h)
    on every function nested in (or being) the operation it runs on, and
    puts `hot.layer = #hot.layer<name = "layerK", role = forward|gx|gw>` on
    the products of every linear layer it recognises: the forward product
    `y = x·Wᵀ`, the activation gradient `gx = gy·W` and the weight gradient
    `gw = gyᵀ·x`. Operands are traced through transposes, reshapes, casts
    and float extensions; attention products (batched, both operands
    activations) and anything else it does not understand are left
    untouched, with a remark that says why. Overrides already present on a
    tag (`bits`, `block`, `rank`, `granularity`) are kept.

    Which operand of the weight gradient is gy cannot be read off the
    shapes: torch's forward `x·Wᵀ` ([O, I] weights) has the form of JAX's
    activation gradient `gy·Kᵀ` ([I, O] kernels), and the weight gradient
    has its weight's layout in both. The graph decides, in this order: gy
    is computed from x (a joint graph: y feeds the loss); gy is computed
    from no argument (a loss linear in y); gy alone meets a weight (a
    backward graph without its forward). A layer none of these decide (the
    first layer of a backward graph: no gx) follows the layout of the
    function's other weight gradients (gy's dim first as in torch, or x's
    as in JAX); only where no layer is decided (hand-written graphs with gy,
    x and W all arguments) does torch's convention decide, and the gw
    remark says so. Products over tokens that cannot be weight gradients
    are left alone: Gram matrices (a value against itself) and products
    whose result another product contracts (attention's gradients).

    A frozen layer (its weight receives no gradient: LoRA's base weights, a
    frozen layer above trained ones) has no gw, yet the layers below it
    need its gx. A product of a parameter with a gradient is taken for one:
    its activation is computed from the forward of the same weight (which
    contracts the weight's other dim), or is another layer's gy or computed
    from one, or, in a backward graph without its forward, is computed from
    the gradients the graph receives (the arguments the layers' gy are
    computed from and their x are not). Its gx is rewritten like any
    other, and its record (`hot.layers`) has no `gw`.

    Example: on a torch-mlir MLP step

    ```mlir
    %gw = linalg.matmul ins(%gyT, %x : ...) outs(%zero : tensor<64x32xf32>)
    ```

    becomes

    ```mlir
    %gw = linalg.matmul {hot.layer = #hot.layer<name = "layer0", role = gw>}
        ins(%gyT, %x : ...) outs(%zero : tensor<64x32xf32>)
    ```

    with the remark `layer0: gw = gyᵀ·x over 8 tokens (O = 64, I = 32)`.
  }];
  let options = [
    Option<"emitRemarks", "remarks", "bool", /*default=*/"true",
           "Emit a remark for every recognised and every skipped product">,
  ];
  let dependentDialects = ["mlir::hot::HotDialect"];
}

def HotRewriteBackwardMatmulsPass : Pass<"hot-rewrite-backward-matmuls"> {
  let summary = "Rewrite the gx and gw products of linear layers the HOT way";
  let description = [{
    For every linear layer found by `BackwardMatmulAnalysis` (or tagged by
    `hot-annotate-backward-matmuls`, whose `#hot.layer` overrides win over
    the options), replaces

    - `gx = gy·W` by a block Hadamard transform along O of gy and W
      (block `min(gx-block, largest power of two dividing O)`), `gx-bits`
      quantization (gy: maxabs, stochastic rounding, `gx-granularity`; W:
      `weight-scale`, nearest), `hot.int_matmul` and `hot.rescale`;
    - `gw = gyᵀ·x` by a Walsh low-rank projection (HLA, `hla-block`,
      `hla-rank`, `hla-selection`) of gy and x along each sample's tokens
      (tails pass through), `gw-bits` quantization (gy: maxabs, stochastic,
      `gw-granularity`; x: maxabs, nearest), `hot.int_matmul` and
      `hot.rescale`. Without a token dim inside samples (2-D activations)
      there is no HLA unless `hla-batch` is set.

    `gx-bits=0` / `gw-bits=0` keep the transforms and compute the product in
    f32 (with full-rank HLA this reproduces the original gradients up to
    rounding). Everything else in the graph (the forward product, bias
    gradients, normalisations, attention) is left as it was.

    Stochastic rounding needs a fresh seed every training step: it comes from
    the function argument that carries the `hot.seed` argument attribute
    (an i64). If there is none, the argument `seed-arg` names one (and it is
    tagged), or, by default, the pass appends an `i64 {hot.seed}` argument to
    the function. Each quantization derives its own seed as
    `seed + (k << 32)`, `k` numbering the rewritten products.

    Example (gx of a layer with O = 64):

    ```mlir
    %gx = linalg.matmul {hot.layer = #hot.layer<name = "layer1", role = gx>}
        ins(%gy, %w : tensor<8x64xf32>, tensor<64x32xf32>) outs(%z : tensor<8x32xf32>)
    ```

    becomes

    ```mlir
    %gyh = hot.hadamard %gy along 1 block 16 : tensor<8x64xf32>
    %wh = hot.hadamard %w along 0 block 16 : tensor<64x32xf32>
    %qg, %sg = hot.quantize %gyh bits 4 granularity per_tensor scale maxabs
        rounding stochastic seed %s : tensor<8x64xf32> -> tensor<8x64xi8>, tensor<f32>
    %qw, %sw = hot.quantize %wh bits 4 granularity per_tensor scale sawb
        rounding nearest : tensor<64x32xf32> -> tensor<64x32xi8>, tensor<f32>
    %acc = hot.int_matmul %qg, %qw : tensor<8x64xi8>, tensor<64x32xi8> -> tensor<8x32xi32>
    %gx = hot.rescale %acc, %sg, %sw : tensor<8x32xi32>, tensor<f32>, tensor<f32> -> tensor<8x32xf32>
    ```
  }];
  let options = [
    Option<"gxBits", "gx-bits", "int64_t", /*default=*/"4",
           "Grid bits on the gx path (2..8; 0 disables quantization)">,
    Option<"gwBits", "gw-bits", "int64_t", /*default=*/"8",
           "Grid bits on the gw path (2..8; 0 disables quantization)">,
    Option<"gxBlock", "gx-block", "int64_t", /*default=*/"16",
           "Largest Hadamard block along O on the gx path (a power of two)">,
    Option<"hlaBlock", "hla-block", "int64_t", /*default=*/"16",
           "HLA block along the tokens of each sample (a power of two)">,
    Option<"hlaRank", "hla-rank", "int64_t", /*default=*/"0",
           "Walsh components kept per HLA block (0: hla-block / 2)">,
    Option<"hlaSelection", "hla-selection", "::mlir::hot::Selection",
           /*default=*/"::mlir::hot::Selection::Prefix",
           "Which Walsh components HLA keeps", [{::llvm::cl::values(
             clEnumValN(::mlir::hot::Selection::Prefix, "prefix",
                        "the hla-rank lowest sequencies (1-D)"),
             clEnumValN(::mlir::hot::Selection::Triangle, "triangle",
                        "the 2-D low-pass set a + b < s of an s x s block"))}]>,
    Option<"hlaBatch", "hla-batch", "bool", /*default=*/"false",
           "Apply HLA across a batch of independent samples (2-D activations)">,
    Option<"rounding", "rounding", "::mlir::hot::Rounding",
           /*default=*/"::mlir::hot::Rounding::Stochastic",
           "Rounding of the output gradients", [{::llvm::cl::values(
             clEnumValN(::mlir::hot::Rounding::Stochastic, "stochastic",
                        "unbiased, from the step's seed"),
             clEnumValN(::mlir::hot::Rounding::Nearest, "nearest",
                        "half away from zero"))}]>,
    Option<"weightScale", "weight-scale", "::mlir::hot::ScaleMode",
           /*default=*/"::mlir::hot::ScaleMode::Sawb",
           "Scale of W on the gx path", [{::llvm::cl::values(
             clEnumValN(::mlir::hot::ScaleMode::Sawb, "sawb",
                        "statistics-aware weight binning"),
             clEnumValN(::mlir::hot::ScaleMode::MaxAbs, "maxabs",
                        "the largest magnitude"))}]>,
    Option<"gxGranularity", "gx-granularity", "::mlir::hot::Granularity",
           /*default=*/"::mlir::hot::Granularity::PerTensor",
           "Scales of gy on the gx path", [{::llvm::cl::values(
             clEnumValN(::mlir::hot::Granularity::PerTensor, "per_tensor",
                        "one scale"),
             clEnumValN(::mlir::hot::Granularity::PerRow, "per_row",
                        "one scale per token"))}]>,
    Option<"gwGranularity", "gw-granularity", "::mlir::hot::Granularity",
           /*default=*/"::mlir::hot::Granularity::PerTensor",
           "Scales of gy on the gw path", [{::llvm::cl::values(
             clEnumValN(::mlir::hot::Granularity::PerTensor, "per_tensor",
                        "one scale"),
             clEnumValN(::mlir::hot::Granularity::PerCol, "per_col",
                        "one scale per output channel"))}]>,
    Option<"seedArg", "seed-arg", "int64_t", /*default=*/"-1",
           "Index of the i64 argument that carries the per-step seed (-1: "
           "the one tagged hot.seed, else a new last argument)">,
    Option<"frozenGx", "frozen-gx", "bool", /*default=*/"true",
           "Rewrite the gx of frozen layers (no gw: LoRA's base weights) "
           "too; false keeps it in floating point">,
    Option<"emitRemarks", "remarks", "bool", /*default=*/"true",
           "Emit a remark for every rewritten and every skipped product">,
  ];
  let dependentDialects = [
    "mlir::hot::HotDialect",
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::tensor::TensorDialect",
  ];
}

def HotCompressActivationsPass : Pass<"hot-compress-activations"> {
  let summary = "Compute the HLA'd INT8 saved activations where they are produced (ABC)";
  let description = [{
    Activation buffer compression: the weight-gradient path rewritten by
    `hot-rewrite-backward-matmuls` projects and quantizes the saved
    activation x (`hot.lowrank`, `hot.quantize` tagged with the layer). This
    pass moves that chain to right after the definition of x (the function
    entry if x is an argument), so that the forward pass produces the INT8
    codes and their scales, and the backward reads only them: x itself dies
    after its last forward use.

    Example: before, the chain sits next to the backward product

    ```mlir
    %x = ...                      // forward
    ...                           // forward, loss, backward
    %xl = hot.lowrank %x ...      // backward
    %qx, %sx = hot.quantize %xl ...
    ```

    after, it follows `%x` at once, and `%x` is dead after its forward uses.
    An x that is a function argument of a joint graph (an input batch) is
    left alone with a remark: its owner is the caller.

    Split graphs (AOTAutograd: `forward` returns its outputs, then the
    tensors it saves; `backward` takes the saved tensors, then the tangents):
    with `forward=<name> backward=<name>`, a chain rooted at a saved-tensor
    argument of the backward is moved into the forward, right after the
    saved tensor is produced. The forward then also returns the INT8 codes
    and their scale (appended after the saved tensors), the backward takes
    them (inserted after its saved-tensor arguments, tagged
    `hot.compressed_activation = "<layer>"`), and x is no longer returned
    nor taken when the backward has no other use for it. How many of the
    forward's results are outputs is inferred from the types (tangents match
    outputs, saved arguments match the rest), or given as `forward-outputs`.
  }];
  let options = [
    Option<"emitRemarks", "remarks", "bool", /*default=*/"true",
           "Emit a remark for every saved activation left uncompressed">,
    Option<"forwardName", "forward", "std::string", /*default=*/"\"\"",
           "Split graphs: the forward function">,
    Option<"backwardName", "backward", "std::string", /*default=*/"\"\"",
           "Split graphs: the backward function">,
    Option<"forwardOutputs", "forward-outputs", "int64_t", /*default=*/"-1",
           "Split graphs: how many forward results are outputs (-1: infer)">,
  ];
  let dependentDialects = ["mlir::hot::HotDialect"];
}

def HotLqsInstrumentPass : Pass<"hot-lqs-instrument"> {
  let summary = "Make a rewritten training step also return the errors LQS compares";
  let description = [{
    Layer-wise quantizer selection, step 1 (profile-guided, like PGO): for
    every quantization of an output gradient that `hot-rewrite-backward-matmuls`
    created (the transformed gy of a gx or gw path), the function also returns
    two f32 scalars: the Frobenius norms of `v - dequantize(quantize(v))` with
    one scale per tensor and with the finer granularity of that path (per
    token on gx, per output channel on gw), both with the path's bits and
    nearest rounding. The function attribute `hot.lqs_results` lists, in
    result order after the original results, one `"<layer>.<gx|gw>"` per
    pair. `python -m hot.calibrate` runs the instrumented step on a
    calibration batch and writes the decisions file that `hot-lqs-apply`
    reads.

    Example: a function returning `(%gx, %gw)` becomes one returning
    `(%gx, %gw, %e0_tensor, %e0_row, %e1_tensor, %e1_col)` with
    `hot.lqs_results = ["layer0.gx", "layer0.gw"]`.
  }];
  let dependentDialects = [
    "mlir::hot::HotDialect",
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::tensor::TensorDialect",
  ];
}

def HotLqsApplyPass : Pass<"hot-lqs-apply"> {
  let summary = "Set per-layer scale granularities from an LQS decisions file";
  let description = [{
    Layer-wise quantizer selection, step 2: reads the JSON decisions file
    written by `python -m hot.calibrate`,

    ```json
    {"threshold": 0.5,
     "layers": {"layer0": {"gx": "per_row", "gw": "per_tensor"}, ...}}
    ```

    and sets the `granularity` override of the `#hot.layer` tag on each
    recognised gx and gw product (run it after
    `hot-annotate-backward-matmuls`, before the rewrite; the pipeline does
    with `lqs-decisions=<file>`). Layers the file does not name are left as
    they are, with a remark. A file of another shape is an error (the JSON
    path says where); decisions for layers the module does not have are a
    warning.
  }];
  let options = [
    Option<"decisions", "decisions", "std::string", /*default=*/"\"\"",
           "Path of the decisions file (JSON)">,
    Option<"emitRemarks", "remarks", "bool", /*default=*/"true",
           "Emit a remark for every product the file has no decision for">,
  ];
}

def HotReportPass : Pass<"hot-report", "mlir::ModuleOp"> {
  let summary = "Report per layer what was rewritten and what it saves";
  let description = [{
    Prints, for every function with recognised linear layers, one record per
    layer: shapes (N, O, I, token shape), what each path does (bits, blocks,
    rank, granularity), saved-activation bytes before and after activation
    compression, and bit operations (BOPs, a b1 x b2-bit multiply-add
    counting b1·b2) of the backward before and after; plus totals and the
    function's peak live tensor bytes (liveness in program order) before
    (recorded by `hot-annotate-backward-matmuls`) and after.
    The format is JSON by default, a text table with `format=table`; the
    report goes to `output` (a file path; `-` is stdout).
  }];
  let options = [
    Option<"format", "format", "::mlir::hot::ReportFormat",
           /*default=*/"::mlir::hot::ReportFormat::Json",
           "What the report is written as", [{::llvm::cl::values(
             clEnumValN(::mlir::hot::ReportFormat::Json, "json",
                        "one object per function, for tools"),
             clEnumValN(::mlir::hot::ReportFormat::Table, "table",
                        "a text table per function, for people"))}]>,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the report (- for stdout)">,
  ];
}

#endif // HOT_TRANSFORMS_PASSES_TD
