// hot-tile-parallel-loops keeps the meaning of the loops it collapses and
// tiles: the same module, lowered to parallel loops and run on the CPU (where
// scf.parallel runs sequentially), prints the same numbers with and without
// the pass, for tiles that divide the loops and tiles that need the guard.
// The loops: a hadamard along dim 0 (a 6-D loop nest per butterfly stage),
// per-column scales, a transpose, all on odd shapes.
//
// DEFINE: %{bufferize} = --one-shot-bufferize="bufferize-function-boundaries=1 function-boundary-type-conversion=identity-layout-map" --buffer-deallocation-pipeline
// DEFINE: %{llvm} = --convert-scf-to-cf --expand-strided-metadata --lower-affine --convert-to-llvm --reconcile-unrealized-casts
// RUN: hot-opt %s --convert-hot-to-linalg %{bufferize} --convert-linalg-to-parallel-loops %{llvm} \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.plain
// RUN: hot-opt %s --convert-hot-to-linalg %{bufferize} --convert-linalg-to-parallel-loops --hot-tile-parallel-loops %{llvm} \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.256
// RUN: hot-opt %s --convert-hot-to-linalg %{bufferize} --convert-linalg-to-parallel-loops --hot-tile-parallel-loops=threads=32 %{llvm} \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.32
// RUN: diff %t.plain %t.256
// RUN: diff %t.plain %t.32
// RUN: FileCheck %s < %t.plain
//
// Checks that the tiled run did tile (scf.parallel nests of two):
// RUN: hot-opt %s --convert-hot-to-linalg %{bufferize} --convert-linalg-to-parallel-loops --hot-tile-parallel-loops \
// RUN: | FileCheck %s --check-prefix=TILED

// TILED: scf.parallel
// TILED-NEXT: scf.parallel

// CHECK: Unranked Memref rank = 2 offset = 0 sizes = [40, 48]
// CHECK: Unranked Memref rank = 1 offset = 0 sizes = [40]
// CHECK-NOT: nan

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c17 = arith.constant 17 : index
  %x = tensor.generate {
  ^bb0(%i: index, %j: index):
    %ai = arith.muli %i, %c7 : index
    %bj = arith.muli %j, %c3 : index
    %s = arith.addi %ai, %bj : index
    %r = arith.remui %s, %c17 : index
    %v = arith.subi %r, %c8 : index
    %n = arith.index_cast %v : index to i32
    %f = arith.sitofp %n : i32 to f32
    tensor.yield %f : f32
  } : tensor<48x40xf32>
  %h = hot.hadamard %x along 0 block 16 : tensor<48x40xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_col scale sawb rounding nearest
      : tensor<48x40xf32> -> tensor<48x40xi8>, tensor<40xf32>
  %y = hot.dequantize %q, %s granularity per_col
      : tensor<48x40xi8>, tensor<40xf32> -> tensor<48x40xf32>
  %e = tensor.empty() : tensor<40x48xf32>
  %t = linalg.transpose ins(%y : tensor<48x40xf32>) outs(%e : tensor<40x48xf32>) permutation = [1, 0]
  %tu = tensor.cast %t : tensor<40x48xf32> to tensor<*xf32>
  call @printMemrefF32(%tu) : (tensor<*xf32>) -> ()
  %su = tensor.cast %s : tensor<40xf32> to tensor<*xf32>
  call @printMemrefF32(%su) : (tensor<*xf32>) -> ()
  return
}
