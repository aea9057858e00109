// The hot dialect, passes and pipelines loaded into upstream mlir-opt
// (mlir-opt-22, linked to the shared libMLIR.so) from HotPlugin.so.

// The plugin exports its two entry points, needs the host's libMLIR.so, and
// every strong symbol it defines is the project's own: no second copy of
// MLIR or LLVM in it.
// RUN: llvm-readelf --needed-libs %hot_plugin | FileCheck %s --check-prefix=NEEDED
// RUN: llvm-nm -DC --defined-only %hot_plugin | FileCheck %s --check-prefix=EXPORTS
// RUN: llvm-nm -DC --defined-only %hot_plugin | grep -E '^[0-9a-f]+ [TDBR] ' \
// RUN:   | not grep -v 'mlir::hot::'
// NEEDED: libMLIR.so
// EXPORTS-DAG: {{ [TW] }}mlirGetDialectPluginInfo{{$}}
// EXPORTS-DAG: {{ [TW] }}mlirGetPassPluginInfo{{$}}

// The dialect plugin alone parses and prints hot ops, in custom and generic
// form.
// RUN: mlir-opt --load-dialect-plugin=%hot_plugin %s \
// RUN: | mlir-opt --load-dialect-plugin=%hot_plugin \
// RUN: | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: mlir-opt --load-dialect-plugin=%hot_plugin %s --mlir-print-op-generic \
// RUN: | mlir-opt --load-dialect-plugin=%hot_plugin \
// RUN: | FileCheck %s --check-prefix=ROUNDTRIP

// Passes and pipelines come with --load-pass-plugin. The plugin registers
// them while mlir-opt parses its command line, after the pass flags were
// built, so they are named in --pass-pipeline (a bare --convert-hot-to-linalg
// is an unknown option to mlir-opt).
// RUN: mlir-opt --load-dialect-plugin=%hot_plugin --load-pass-plugin=%hot_plugin %s \
// RUN:   --pass-pipeline='builtin.module(func.func(convert-hot-to-linalg))' \
// RUN: | FileCheck %s --check-prefix=LINALG --implicit-check-not='hot.'

// The CPU pipeline, with an option, down to the LLVM dialect, and run.
// RUN: mlir-opt --load-dialect-plugin=%hot_plugin --load-pass-plugin=%hot_plugin %s \
// RUN:   --pass-pipeline='builtin.module(hot-lower-to-cpu{c-interface=false})' \
// RUN: | FileCheck %s --check-prefix=LLVM --implicit-check-not='hot.' \
// RUN:   --implicit-check-not=_mlir_ciface
// RUN: mlir-opt --load-dialect-plugin=%hot_plugin --load-pass-plugin=%hot_plugin %s \
// RUN:   --pass-pipeline='builtin.module(hot-lower-to-cpu)' \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | FileCheck %s --check-prefix=EXEC

func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefI32(tensor<*xi32>)

// ROUNDTRIP-LABEL: func.func @hadamard
// ROUNDTRIP: hot.hadamard %{{.*}} along 1 block 4 : tensor<1x4xf32>
// LINALG-LABEL: func.func @hadamard
// LINALG: tensor.expand_shape
// LINALG-COUNT-2: linalg.generic
// LINALG: tensor.collapse_shape
// LLVM-LABEL: llvm.func @hadamard
func.func @hadamard(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %y = hot.hadamard %x along 1 block 4 : tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// ROUNDTRIP-LABEL: func.func @quantize
// ROUNDTRIP: hot.quantize %{{.*}} bits 8 granularity per_row scale maxabs rounding stochastic seed %{{.*}} : tensor<2x4xf32> -> tensor<2x4xi8>, tensor<2xf32>
// LINALG-LABEL: func.func @quantize
// LINALG: linalg.generic
// LINALG: math.floor
func.func @quantize(%x: tensor<2x4xf32>, %seed: i64)
    -> (tensor<2x4xi8>, tensor<2xf32>) {
  %q, %s = hot.quantize %x bits 8 granularity per_row scale maxabs
      rounding stochastic seed %seed
      : tensor<2x4xf32> -> tensor<2x4xi8>, tensor<2xf32>
  return %q, %s : tensor<2x4xi8>, tensor<2xf32>
}

// ROUNDTRIP-LABEL: func.func @int_matmul
// ROUNDTRIP: hot.int_matmul %{{.*}}, %{{.*}} transposed : tensor<1x2xi8>, tensor<1x2xi8> -> tensor<1x1xi32>
// LINALG-LABEL: func.func @int_matmul
// LINALG: linalg.fill
// LINALG: linalg.matmul
func.func @int_matmul(%a: tensor<1x2xi8>, %bt: tensor<1x2xi8>)
    -> tensor<1x1xi32> {
  %c = hot.int_matmul %a, %bt transposed
      : tensor<1x2xi8>, tensor<1x2xi8> -> tensor<1x1xi32>
  return %c : tensor<1x1xi32>
}

// LLVM-LABEL: llvm.func @main
func.func @main() {
  // H_4 [1, 1, 1, 1] / sqrt(4) = [2, 0, 0, 0].
  %ones = arith.constant dense<[[1.0, 1.0, 1.0, 1.0]]> : tensor<1x4xf32>
  %h = call @hadamard(%ones) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %hu = tensor.cast %h : tensor<1x4xf32> to tensor<*xf32>
  // EXEC: [2, 0, 0, 0]
  call @printMemrefF32(%hu) : (tensor<*xf32>) -> ()
  // [3, -4] . [5, 6] = -9.
  %a = arith.constant dense<[[3, -4]]> : tensor<1x2xi8>
  %b = arith.constant dense<[[5, 6]]> : tensor<1x2xi8>
  %c = call @int_matmul(%a, %b) : (tensor<1x2xi8>, tensor<1x2xi8>) -> tensor<1x1xi32>
  %cu = tensor.cast %c : tensor<1x1xi32> to tensor<*xi32>
  // EXEC: [-9]
  call @printMemrefI32(%cu) : (tensor<*xi32>) -> ()
  return
}
