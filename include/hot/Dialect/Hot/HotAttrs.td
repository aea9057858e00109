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

#endif // HOT_DIALECT_HOT_HOTATTRS_TD
