// The sm_90a kernels of hot-lower-to-nvvm as PTX (format=isa, no CUDA
// needed): wgmma.mma_async m64n128k32 on s8 for both products (the 4-bit gx
// product too: Hopper has no INT4 tensor cores), operands staged by cp.async
// into dynamic shared memory and handed to the async proxy by a fence.
//
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90a tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | %python %S/extract-ptx.py hot_kernels | FileCheck %s
// RUN: hot-opt %S/int-mma-ptx.mlir --pass-pipeline='builtin.module(hot-lower-to-nvvm{chip=sm_90a tile-m=128 tile-n=128})' 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=HOST

// CHECK: .version 8.0
// CHECK: .target sm_90a

// gw = qgyᵀ·qx, K = 101 padded to 112 bytes: one 128-byte K tile.
// CHECK-LABEL: .entry hot_int_mma_wgmma_s8_48x40x112_t128x128x128_s4_rescale10_f32(
// CHECK: .maxntid 256, 1, 1
// CHECK: __dynamic_shmem__0
// CHECK: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// CHECK: cp.async.commit_group;
// CHECK: cp.async.wait_group 1;
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.sync 0;
// CHECK: wgmma.fence.sync.aligned;
// The descriptors: 128-byte swizzle (bit 62), 1 KiB between 8-row groups
// (64 << 32), leading offset 1 (1 << 16): 0x4000004000010000.
// CHECK: or.b64 {{.*}}, 4611686293305360384;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8.satfinite {{{(%r[0-9]+, ){63}%r[0-9]+}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: cp.async.wait_group 0;
// CHECK: cvt.rn.f32.s32
// CHECK: st.global.v2.b32
// CHECK: ret;

// gx = qg·qw on 4-bit grids: s8 wgmma as well.
// CHECK-LABEL: .entry hot_int_mma_wgmma_s8_197x32x64_t128x128x128_s4_rescale10_f32(
// CHECK: wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8.satfinite
// CHECK-NOT: mma.sync
// CHECK: ret;

// The host launches each wgmma kernel with 4 stages x (128 + 128) rows x 128
// bytes + 1 KiB of dynamic shared memory.
// HOST-COUNT-2: llvm.mlir.constant(132096 : i32) : i32
