//===- HotAttrs.td - Attributes and enums of the hot dialect -*- tablegen -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_DIALECT_HOT_HOTATTRS_TD
#define HOT_DIALECT_HOT_HOTATTRS_TD

include "hot/Dialect/Hot/HotDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Hot_Granularity : I32EnumAttr<"Granularity",
    "which elements share one quantization scale", [
      I32EnumAttrCase<"PerTensor", 0, "per_tensor">,
      I32EnumAttrCase<"PerRow", 1, "per_row">,
      I32EnumAttrCase<"PerCol", 2, "per_col">
    ]> {
  let cppNamespace = "::mlir::hot";
  let genSpecializedAttr = 0;
}
def Hot_GranularityAttr : EnumAttr<Hot_Dialect, Hot_Granularity, "granularity">;

def Hot_Rounding : I32EnumAttr<"Rounding", "how quantized values are rounded", [
      I32EnumAttrCase<"Nearest", 0, "nearest">,
      I32EnumAttrCase<"Stochastic", 1, "stochastic">
    ]> {
  let cppNamespace = "::mlir::hot";
  let genSpecializedAttr = 0;
}
def Hot_RoundingAttr : EnumAttr<Hot_Dialect, Hot_Rounding, "rounding">;

def Hot_ScaleMode : I32EnumAttr<"ScaleMode", "how a quantization scale is chosen", [
      I32EnumAttrCase<"MaxAbs", 0, "maxabs">,
      I32EnumAttrCase<"Sawb", 1, "sawb">
    ]> {
  let cppNamespace = "::mlir::hot";
  let genSpecializedAttr = 0;
}
def Hot_ScaleModeAttr : EnumAttr<Hot_Dialect, Hot_ScaleMode, "scale_mode">;

def Hot_Selection : I32EnumAttr<"Selection",
    "which Walsh components a low-rank projection keeps", [
      I32EnumAttrCase<"Prefix", 0, "prefix">,
      I32EnumAttrCase<"Triangle", 1, "triangle">
    ]> {
  let cppNamespace = "::mlir::hot";
  let genSpecializedAttr = 0;
}
def Hot_SelectionAttr : EnumAttr<Hot_Dialect, Hot_Selection, "selection">;

def Hot_Path : I32EnumAttr<"Path", "a backward matrix product of a linear layer", [
      I32EnumAttrCase<"Gx", 0, "gx">,
      I32EnumAttrCase<"Gw", 1, "gw">
    ]> {
  let cppNamespace = "::mlir::hot";
  let genSpecializedAttr = 0;
}
def Hot_PathAttr : EnumAttr<Hot_Dialect, Hot_Path, "path">;

def Hot_Role : I32EnumAttr<"Role",
    "which product of a linear layer y = x·Wᵀ an op computes", [
      I32EnumAttrCase<"Forward", 0, "forward">,
      I32EnumAttrCase<"Gx", 1, "gx">,
      I32EnumAttrCase<"Gw", 2, "gw">
    ]> {
  let cppNamespace = "::mlir::hot";
  let genSpecializedAttr = 0;
}
def Hot_RoleAttr : EnumAttr<Hot_Dialect, Hot_Role, "role">;

def Hot_LayerAttr : AttrDef<Hot_Dialect, "Layer"> {
  let mnemonic = "layer";
  let summary = "tags a product of a recognised linear layer, with overrides";
  let description = [{
    `hot-annotate-backward-matmuls` puts `hot.layer = #hot.layer<...>` on the
    forward product `y = x·Wᵀ`, the activation gradient `gx = gy·W` and the
    weight gradient `gw = gyᵀ·x` of every linear layer it recognises. `name`
    identifies the layer (stable across runs of the same graph), `role` the
    product.

    The optional parameters override the options of
    `hot-rewrite-backward-matmuls` for this product only: `bits` (0 disables
    quantization), `block` (Hadamard block on gx, HLA block on gw), `rank`
    (HLA rank), `granularity` of the output-gradient scales (`per_row` is per
    token on gx, `per_col` per output channel on gw). A user (or the LQS
    calibration) edits them in the IR:

    ```mlir
    %gw = linalg.matmul {hot.layer = #hot.layer<name = "layer3", role = gw,
                                                bits = 8, rank = 4>} ...
    ```
  }];
  let parameters = (ins
    "::mlir::StringAttr":$name,
    "::mlir::hot::Role":$role,
    OptionalParameter<"std::optional<int64_t>">:$bits,
    OptionalParameter<"std::optional<int64_t>">:$block,
    OptionalParameter<"std::optional<int64_t>">:$rank,
    OptionalParameter<"std::optional<::mlir::hot::Granularity>">:$granularity
  );
  let assemblyFormat = "`<` struct(params) `>`";
}

def Hot_SimulatorTargetAttr : AttrDef<Hot_Dialect, "SimulatorTarget"> {
  let mnemonic = "simulator";
  let summary = "GPU target: NVVM kernels run by a SIMT simulator on the host";
  let description = [{
    A `gpu.module` target (like `#nvvm.target`) whose objects are host shared
    objects: `gpu-module-to-binary` rewrites a copy of the module with
    `convert-nvvm-to-simulator`, translates it to LLVM IR and compiles it with
    clang (`-O<O> -shared`). libhot_simulator_runtime.so implements the
    `mgpu*` functions that lowered host code calls: it loads such an object
    and runs each kernel launch block by block, one fiber per GPU thread,
    with warp-synchronous shuffles, ldmatrix and integer MMA computed from
    their PTX definitions. So the kernels that `hot-lower-to-nvvm` generates
    for `chip` run, and are tested, on machines without a GPU.

    ```mlir
    gpu.module @kernels [#hot.simulator<chip = "sm_80">, #nvvm.target] { ... }
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"unsigned", "2",
                           "optimization level of the host compiler">:$O,
    StringRefParameter<"the chip the kernels were generated for",
                       "\"sm_80\"">:$chip
  );
  let assemblyFormat = [{ (`<` struct(params)^ `>`)? }];
}

#endif // HOT_DIALECT_HOT_HOTATTRS_TD
