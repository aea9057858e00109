// The tensor-core kernels of hot-lower-to-nvvm as PTX (format=isa, no CUDA
// needed) for each chip: s8 m16n8k32 everywhere, s4 m16n8k64 for the 4-bit gx
// product on chips with INT4 tensor cores only, cp.async and ldmatrix.
//
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_80 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels | FileCheck %s --check-prefixes=CHECK,INT4 -DPTX=7.0 -DCHIP=sm_80
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_86 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels | FileCheck %s --check-prefixes=CHECK,INT4 -DPTX=7.1 -DCHIP=sm_86
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_89 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels | FileCheck %s --check-prefixes=CHECK,INT4 -DPTX=7.8 -DCHIP=sm_89
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels | FileCheck %s --check-prefixes=CHECK,NOINT4 -DPTX=7.8 -DCHIP=sm_90
//
// The host side is LLVM with the launches and the serialized kernels.
// RUN: hot-opt %s --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_80 tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=HOST

// CHECK: .version [[PTX]]
// CHECK: .target [[CHIP]]

// gw = qgyᵀ·qx, 8-bit: s8 on every chip.
// CHECK-LABEL: .entry hot_int_mma_s8_48x40x112_t128x128x64_w64x32_s3_rescale10_f32(
// CHECK: .shared .align 128 .b8 {{.*}}[24576];
// CHECK: .shared .align 128 .b8 {{.*}}[24576];
// CHECK: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// CHECK: cp.async.commit_group;
// CHECK: cp.async.wait_group 1;
// CHECK: bar.sync 0;
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// CHECK: mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32
// CHECK-NOT: m16n8k64
// CHECK: cvt.rn.f32.s32
// CHECK: mul.rn.f32
// CHECK: mul.rn.f32
// CHECK: ret;

// gx = qg·qw, 4-bit: s4 on sm_80/86/89, s8 on sm_90.
// INT4-LABEL: .entry hot_int_mma_s4_197x32x32_t128x128x64_w64x32_s3_rescale10_f32(
// NOINT4-LABEL: .entry hot_int_mma_s8_197x32x64_t128x128x64_w64x32_s3_rescale10_f32(
// CHECK: cp.async.cg.shared.global
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// INT4: mma.sync.aligned.m16n8k64.row.col.satfinite.s32.s4.s4.s32
// NOINT4-NOT: m16n8k64
// NOINT4: mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32
// NOINT4-NOT: m16n8k64
// CHECK: ret;

// HOST: llvm.func @gw(
// HOST: gpu.launch_func <%{{.*}} : !llvm.ptr> @hot_kernels::@hot_int_mma_s8_48x40x112_t128x128x64_w64x32_s3_rescale10_f32
// HOST: llvm.func @gx(
// HOST: gpu.launch_func <%{{.*}} : !llvm.ptr> @hot_kernels::@hot_int_mma_s4_197x32x32_t128x128x64_w64x32_s3_rescale10_f32
// HOST: gpu.binary @hot_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">

func.func @gw(%qgy: tensor<101x48xi8>, %qx: tensor<101x40xi8>, %sgy: tensor<48xf32>, %sx: tensor<f32>) -> tensor<48x40xf32> {
  %acc = hot.int_matmul %qgy transposed, %qx : tensor<101x48xi8>, tensor<101x40xi8> -> tensor<48x40xi32>
  %y = hot.rescale %acc, %sgy, %sx : tensor<48x40xi32>, tensor<48xf32>, tensor<f32> -> tensor<48x40xf32>
  return %y : tensor<48x40xf32>
}

func.func @gx(%gy: tensor<197x64xf32>, %w: tensor<64x32xf32>, %seed: i64) -> tensor<197x32xf32> {
  %qg, %sg = hot.quantize %gy bits 4 granularity per_row scale maxabs rounding stochastic seed %seed : tensor<197x64xf32> -> tensor<197x64xi8>, tensor<197xf32>
  %qw, %sw = hot.quantize %w bits 4 granularity per_tensor scale sawb rounding nearest : tensor<64x32xf32> -> tensor<64x32xi8>, tensor<f32>
  %acc = hot.int_matmul %qg, %qw : tensor<197x64xi8>, tensor<64x32xi8> -> tensor<197x32xi32>
  %y = hot.rescale %acc, %sg, %sw : tensor<197x32xi32>, tensor<197xf32>, tensor<f32> -> tensor<197x32xf32>
  return %y : tensor<197x32xf32>
}
