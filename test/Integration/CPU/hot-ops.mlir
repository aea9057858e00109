// RUN: hot-opt %s --hot-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | FileCheck %s

// Every hot op through hot-lower-to-cpu and the JIT, on inputs whose results
// follow by hand from the definitions (docs/numerics.md).

func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefI32(tensor<*xi32>)

func.func @print_f32(%t: tensor<1x4xf32>) {
  %u = tensor.cast %t : tensor<1x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func @print_i8(%t: tensor<1x4xi8>) {
  %w = arith.extsi %t : tensor<1x4xi8> to tensor<1x4xi32>
  %u = tensor.cast %w : tensor<1x4xi32> to tensor<*xi32>
  call @printMemrefI32(%u) : (tensor<*xi32>) -> ()
  return
}

func.func @main() {
  // Ĥ_4 [1, 0, 0, 0] is the first column of H_4 / 2; Ĥ_4 [1, 1, 1, 1] = [2, 0, 0, 0].
  %e0 = arith.constant dense<[[1.0, 0.0, 0.0, 0.0]]> : tensor<1x4xf32>
  %h0 = hot.hadamard %e0 along 1 block 4 : tensor<1x4xf32>
  // CHECK: [0.5, 0.5, 0.5, 0.5]
  call @print_f32(%h0) : (tensor<1x4xf32>) -> ()
  %ones = arith.constant dense<[[1.0, 1.0, 1.0, 1.0]]> : tensor<1x4xf32>
  %h1 = hot.hadamard %ones along 1 block 4 : tensor<1x4xf32>
  // CHECK: [2, 0, 0, 0]
  call @print_f32(%h1) : (tensor<1x4xf32>) -> ()
  // Sylvester row 1 of H_4 is [1, -1, 1, -1]; a column vector along dim 1.
  %alt = arith.constant dense<[[1.0, -1.0, 1.0, -1.0]]> : tensor<1x4xf32>
  %h2 = hot.hadamard %alt along 1 block 4 : tensor<1x4xf32>
  // CHECK: [0, 2, 0, 0]
  call @print_f32(%h2) : (tensor<1x4xf32>) -> ()

  // HLA keeps sequency 0 and 1 of each block of 4: Walsh rows [1,1,1,1]/2
  // and [1,1,-1,-1]/2. x = [1, 2, 3, 4] gives [5, -2].
  %ramp = arith.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %l = hot.lowrank %ramp along 1 block 4 rank 2 : tensor<1x4xf32> -> tensor<1x2xf32>
  %lp = tensor.pad %l low[0, 0] high[0, 2] {
  ^bb0(%i: index, %j: index):
    %z = arith.constant 0.0 : f32
    tensor.yield %z : f32
  } : tensor<1x2xf32> to tensor<1x4xf32>
  // CHECK: [5, -2, 0, 0]
  call @print_f32(%lp) : (tensor<1x4xf32>) -> ()

  // 2-bit grid (qmax = 1), scale = max|x| = 4: x / 4 = [0.5, -1, 0.25, 0]
  // rounds half away from zero to [1, -1, 0, 0].
  %x2 = arith.constant dense<[[2.0, -4.0, 1.0, 0.0]]> : tensor<1x4xf32>
  %q2, %s2 = hot.quantize %x2 bits 2 granularity per_tensor scale maxabs rounding nearest
      : tensor<1x4xf32> -> tensor<1x4xi8>, tensor<f32>
  // CHECK: [1, -1, 0, 0]
  call @print_i8(%q2) : (tensor<1x4xi8>) -> ()
  // 3-bit grid (qmax = 3), scale = 6 / 3 = 2: [1.5, -3, 0.75, -0.375] -> [2, -3, 1, 0].
  %x3 = arith.constant dense<[[3.0, -6.0, 1.5, -0.75]]> : tensor<1x4xf32>
  %q3, %s3 = hot.quantize %x3 bits 3 granularity per_row scale maxabs rounding nearest
      : tensor<1x4xf32> -> tensor<1x4xi8>, tensor<1xf32>
  // CHECK: [2, -3, 1, 0]
  call @print_i8(%q3) : (tensor<1x4xi8>) -> ()
  // An all-zero row: scale 0 and q = 0, no NaN.
  %zero = arith.constant dense<0.0> : tensor<1x4xf32>
  %qz, %sz = hot.quantize %zero bits 4 granularity per_row scale maxabs rounding nearest
      : tensor<1x4xf32> -> tensor<1x4xi8>, tensor<1xf32>
  %dz = hot.dequantize %qz, %sz granularity per_row
      : tensor<1x4xi8>, tensor<1xf32> -> tensor<1x4xf32>
  // CHECK: [0, 0, 0, 0]
  call @print_f32(%dz) : (tensor<1x4xf32>) -> ()
  // Dequantize: [2, -3, 1, 0] * 2.
  %d3 = hot.dequantize %q3, %s3 granularity per_row
      : tensor<1x4xi8>, tensor<1xf32> -> tensor<1x4xf32>
  // CHECK: [4, -6, 2, 0]
  call @print_f32(%d3) : (tensor<1x4xf32>) -> ()
  // A NaN poisons its group's scale and so the dequantized values.
  %xn = arith.constant dense<[[1.0, 0x7FC00000, 2.0, 0.0]]> : tensor<1x4xf32>
  %qn, %sn = hot.quantize %xn bits 8 granularity per_tensor scale maxabs rounding nearest
      : tensor<1x4xf32> -> tensor<1x4xi8>, tensor<f32>
  %dn = hot.dequantize %qn, %sn granularity per_tensor
      : tensor<1x4xi8>, tensor<f32> -> tensor<1x4xf32>
  // CHECK: [nan, nan, nan, nan]
  call @print_f32(%dn) : (tensor<1x4xf32>) -> ()

  // Extreme i8 values, exact in i32: a = [127, 127, -128, -128],
  // a . a = 2 * 16129 + 2 * 16384 = 65026.
  %a = arith.constant dense<[[127, 127, -128, -128]]> : tensor<1x4xi8>
  %acc = hot.int_matmul %a, %a transposed : tensor<1x4xi8>, tensor<1x4xi8> -> tensor<1x1xi32>
  %accp = tensor.pad %acc low[0, 0] high[0, 3] {
  ^bb0(%i: index, %j: index):
    %z = arith.constant 0 : i32
    tensor.yield %z : i32
  } : tensor<1x1xi32> to tensor<1x4xi32>
  %accu = tensor.cast %accp : tensor<1x4xi32> to tensor<*xi32>
  // CHECK: [65026, 0, 0, 0]
  call @printMemrefI32(%accu) : (tensor<*xi32>) -> ()
  // Rescale: (f32(65026) * 0.5) * 0.25.
  %rs = arith.constant dense<0.5> : tensor<1xf32>
  %cs = arith.constant dense<0.25> : tensor<f32>
  %r = hot.rescale %acc, %rs, %cs : tensor<1x1xi32>, tensor<1xf32>, tensor<f32> -> tensor<1x1xf32>
  %rp = tensor.pad %r low[0, 0] high[0, 3] {
  ^bb0(%i: index, %j: index):
    %z = arith.constant 0.0 : f32
    tensor.yield %z : f32
  } : tensor<1x1xf32> to tensor<1x4xf32>
  // CHECK: [8128.25, 0, 0, 0]
  call @print_f32(%rp) : (tensor<1x4xf32>) -> ()
  return
}
