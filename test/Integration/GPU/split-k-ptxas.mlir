// Products split along K assemble on every chip without spills: each block
// stores its accumulators as 16-byte vectors, thread 0 counts the block with
// an atomic add between two GPU-scope fences, bar.red.or tells the block
// whether it was its tile's last, and that block adds the splits' slots.
//
// REQUIRES: ptxas
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_80 split-k=3})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_80.ptx
// RUN: FileCheck %s < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.sm_80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS -DCHIP=sm_80
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_86 split-k=3})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_86.ptx
// RUN: %ptxas -arch=sm_86 -v %t.sm_86.ptx -o %t.sm_86.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS -DCHIP=sm_86
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_89 split-k=3})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_89.ptx
// RUN: %ptxas -arch=sm_89 -v %t.sm_89.ptx -o %t.sm_89.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS -DCHIP=sm_89
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90 split-k=3})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.sm_90.ptx -o %t.sm_90.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS -DCHIP=sm_90
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90a split-k=3})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels > %t.sm_90a.ptx
// RUN: FileCheck %s < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.sm_90a.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS -DCHIP=sm_90a

// CHECK-LABEL: .entry hot_int_mma_{{.*}}_split3_rescale00_bf16(
// CHECK: st.global.v4.{{[bu]}}32
// CHECK: bar.sync 0;
// CHECK: membar.gl;
// CHECK-NEXT: atom.global.add.u32
// CHECK-NEXT: membar.gl;
// CHECK: bar.red.or.pred
// CHECK: ld.global.v4.{{[bu]}}32
// CHECK: cvt.rn.bf16x2.f32
// CHECK-LABEL: .entry hot_zero_i32_

// PTXAS: Compiling entry function 'hot_int_mma_{{.*}}_split3_rescale00_bf16' for '[[CHIP]]'
// PTXAS-NEXT: Function properties
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: error

// ViT-B proj's gw after HLA, rescaled and truncated to bf16.
func.func @gw(%qgy: tensor<768x6464xi8>, %qx: tensor<768x6464xi8>, %sgy: tensor<f32>, %sx: tensor<f32>) -> tensor<768x768xbf16> {
  %acc = hot.int_matmul %qgy, %qx transposed : tensor<768x6464xi8>, tensor<768x6464xi8> -> tensor<768x768xi32>
  %y = hot.rescale %acc, %sgy, %sx : tensor<768x768xi32>, tensor<f32>, tensor<f32> -> tensor<768x768xf32>
  %e = tensor.empty() : tensor<768x768xbf16>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<768x768xf32>) outs(%e : tensor<768x768xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<768x768xbf16>
  return %t : tensor<768x768xbf16>
}
