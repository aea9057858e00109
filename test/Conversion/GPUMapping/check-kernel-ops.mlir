// RUN: hot-opt %s --split-input-file --hot-lower-to-nvvm="chip=sm_80 format=isa" -verify-diagnostics -o /dev/null
// RUN: not hot-opt %s --split-input-file --hot-lower-to-nvvm="chip=sm_90 format=isa" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SM90

// Kernel ops on which LLVM's NVPTX backend aborts the process ("unsupported
// library call operation") are located errors before the kernels are
// serialized. On sm_90 a rounding mode is fine; f80 is not (an error for
// each of the hadamard's kernels).
// SM90-NOT: (sm_90): 'arith.truncf'
// SM90: error: cannot run on the GPU (sm_90): 'memref.load' uses f80
// SM90-NOT: (sm_90): 'arith.truncf'

func.func @rounding_mode(%y: tensor<8x16xf32>) -> tensor<8x16xbf16> {
  // expected-error @below {{cannot run on the GPU (sm_80): 'arith.truncf' with a rounding mode from 32-bit float to bf16 has no NVPTX lowering before sm_90}}
  %t = arith.truncf %y to_nearest_away : tensor<8x16xf32> to tensor<8x16xbf16>
  return %t : tensor<8x16xbf16>
}

// -----

func.func @f64_rounding_mode(%y: tensor<8xf64>) -> tensor<8xf32> {
  // expected-error @below {{'arith.truncf' with a rounding mode from 64-bit float to a narrower float has no NVPTX lowering before sm_90}}
  %t = arith.truncf %y upward : tensor<8xf64> to tensor<8xf32>
  return %t : tensor<8xf32>
}

// -----

// One error per kernel, at its first such op.
func.func @f80(%x: tensor<4x32xf80>) -> tensor<4x32xf80> {
  // expected-remark @below {{hadamard left to the generic path: the kernel computes in f32 only}}
  // expected-error @below {{cannot run on the GPU (sm_80): 'memref.load' uses f80, which NVPTX has no arithmetic for}}
  %y = hot.hadamard %x along 1 block 32 : tensor<4x32xf80>
  return %y : tensor<4x32xf80>
}

// -----

// Without a rounding mode, and to f16 with one: lowered.
func.func @fine(%y: tensor<8x16xf32>) -> (tensor<8x16xbf16>, tensor<8x16xf16>) {
  %t = arith.truncf %y : tensor<8x16xf32> to tensor<8x16xbf16>
  %h = arith.truncf %y upward : tensor<8x16xf32> to tensor<8x16xf16>
  return %t, %h : tensor<8x16xbf16>, tensor<8x16xf16>
}
