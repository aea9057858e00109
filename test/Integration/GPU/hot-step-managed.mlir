// REQUIRES: cuda, ptxas
// A HOT-rewritten gx (Hadamard, per-token int8 quantization, tensor-core
// int_matmul, rescale) lowered by hot-lower-to-nvvm and run on the GPU, with
// every buffer in managed memory (hot-allocate-managed-memory); the same
// module through hot-lower-to-cpu must print the same numbers (the first
// line, with the buffer's address, aside).
// RUN: hot-opt %s --hot-lower-to-nvvm="chip=%cuda_chip format=fatbin" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%hot_cuda_runtime,%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | tail -n +2 > %t.gpu
// RUN: hot-opt %s --hot-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | tail -n +2 > %t.cpu
// RUN: diff %t.cpu %t.gpu
// RUN: FileCheck %s < %t.gpu
// The device's architecture-specific target (sm_90a on Hopper: the wgmma
// kernel; elsewhere the same chip again) must agree too.
// RUN: hot-opt %s --hot-lower-to-nvvm="chip=%cuda_arch_chip format=fatbin" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%hot_cuda_runtime,%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | tail -n +2 > %t.arch.gpu
// RUN: diff %t.cpu %t.arch.gpu
// CHECK: {{^}}{{\[\[}}
// CHECK-NOT: nan

func.func private @printMemrefF32(tensor<*xf32>)

func.func @step(%gy: tensor<64x32xf32>, %w: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %gh = hot.hadamard %gy along 1 block 16 : tensor<64x32xf32>
  %qg, %sg = hot.quantize %gh bits 8 granularity per_row scale maxabs rounding nearest
      : tensor<64x32xf32> -> tensor<64x32xi8>, tensor<64xf32>
  %wh = hot.hadamard %w along 0 block 16 : tensor<32x64xf32>
  %qw, %sw = hot.quantize %wh bits 8 granularity per_tensor scale maxabs rounding nearest
      : tensor<32x64xf32> -> tensor<32x64xi8>, tensor<f32>
  %acc = hot.int_matmul %qg, %qw : tensor<64x32xi8>, tensor<32x64xi8> -> tensor<64x64xi32>
  %gx = hot.rescale %acc, %sg, %sw : tensor<64x64xi32>, tensor<64xf32>, tensor<f32> -> tensor<64x64xf32>
  return %gx : tensor<64x64xf32>
}

// Inputs (a·i + b·j) mod p - o: small integers, exact in every sum.
func.func @main() {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c13 = arith.constant 13 : index
  %c17 = arith.constant 17 : index
  %gy = tensor.generate {
  ^bb0(%i: index, %j: index):
    %ai = arith.muli %i, %c7 : index
    %bj = arith.muli %j, %c3 : index
    %s = arith.addi %ai, %bj : index
    %r = arith.remui %s, %c17 : index
    %v = arith.subi %r, %c8 : index
    %n = arith.index_cast %v : index to i32
    %f = arith.sitofp %n : i32 to f32
    tensor.yield %f : f32
  } : tensor<64x32xf32>
  %w = tensor.generate {
  ^bb0(%i: index, %j: index):
    %ai = arith.muli %i, %c5 : index
    %bj = arith.muli %j, %c1 : index
    %s = arith.addi %ai, %bj : index
    %r = arith.remui %s, %c13 : index
    %v = arith.subi %r, %c6 : index
    %n = arith.index_cast %v : index to i32
    %f = arith.sitofp %n : i32 to f32
    tensor.yield %f : f32
  } : tensor<32x64xf32>
  %gx = func.call @step(%gy, %w) : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
  %u = tensor.cast %gx : tensor<64x64xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
