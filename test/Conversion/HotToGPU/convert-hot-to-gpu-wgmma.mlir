// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_90a tile-n=64 hadamard-quantize=false" 2>/dev/null \
// RUN:   | FileCheck %s
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_90a tile-n=64 hadamard-quantize=false" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_90a tile-m=128 tile-n=128 wgmma=false hadamard-quantize=false" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OFF
// The printed kernels parse back.
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_90a tile-n=64 hadamard-quantize=false" 2>/dev/null \
// RUN:   | hot-opt --split-input-file -o /dev/null

// On sm_90a every product is a wgmma kernel: one warpgroup per 64 rows (two
// for the default tile-m=128), N = tile-n, 128-byte K tiles in 4 stages of
// dynamic shared memory.

// REMARK: remark: tensor-core kernel @hot_int_mma_wgmma_s8_48x40x112_t128x64x128_s4_rescale10_f32: s8 wgmma.mma_async m64n64k32 (sm_90a has warpgroup MMA), hot.rescale fused into the epilogue
// OFF: remark: tensor-core kernel @hot_int_mma_s8_48x40x112_t128x128x64_w64x32_s3_rescale10_f32: s8 mma.sync m16n8k32 (operands on an 8-bit grid; wgmma disabled by option), hot.rescale fused into the epilogue

// CHECK-LABEL: func.func @gw
//       CHECK:   gpu.launch_func @hot_kernels::@[[KERNEL:hot_int_mma_wgmma_s8_48x40x112_t128x64x128_s4_rescale10_f32]]
//  CHECK-SAME:     threads in (%c256{{[_0-9]*}},
//  CHECK-SAME:     dynamic_shared_memory_size %c99328_i32
//       CHECK: gpu.module @hot_kernels
//       CHECK:   gpu.func @[[KERNEL]](
//   CHECK-NOT:     workgroup(
//  CHECK-SAME:     kernel attributes {known_block_size = array<i32: 256, 1, 1>}
//       CHECK:     %[[DYN:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
//       CHECK:     memref.extract_aligned_pointer_as_index %[[DYN]]
//       CHECK:     %[[A:.*]] = memref.view %[[DYN]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x128x128xi8, #gpu.address_space<workgroup>>
//       CHECK:     %[[B:.*]] = memref.view %[[DYN]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x64x128xi8, #gpu.address_space<workgroup>>
//       CHECK:     nvgpu.device_async_copy %{{.*}}, %[[A]][%{{.*}}], 16, %{{.*}} {bypassL1}
//       CHECK:     nvgpu.device_async_copy %{{.*}}, %[[B]][%{{.*}}], 16, %{{.*}} {bypassL1}
// One K tile: the prologue's second group is empty, committed by nvvm (an
// nvgpu group of no copies would not parse back, see the round trip above).
//       CHECK:     nvgpu.device_async_create_group
//  CHECK-NEXT:     nvvm.cp.async.commit.group
//       CHECK:     %[[ZERO:.*]] = llvm.mlir.zero : !llvm.struct<(i32, [[REGS:.*]])>
//       CHECK:     %[[ACC:.*]] = scf.for %{{.*}} iter_args(%[[ITER:.*]] = %[[ZERO]]) -> (!llvm.struct
//       CHECK:       nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
//  CHECK-NEXT:       nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
//  CHECK-NEXT:       gpu.barrier
//       CHECK:       nvvm.wgmma.fence.aligned
//       CHECK:       %[[W0:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[ITER]], <m = 64, n = 64, k = 32>, D[<s32>, <one>, <satfinite>], A[<s8>, <one>, <row>], B[<s8>, <one>, <col>]
//       CHECK:       %[[W1:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[W0]],
//       CHECK:       %[[W2:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[W1]],
//       CHECK:       %[[W3:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[W2]],
//   CHECK-NOT:       nvvm.wgmma.mma_async
//       CHECK:       nvvm.wgmma.commit.group.sync.aligned
//       CHECK:       nvgpu.device_async_copy
//       CHECK:       nvgpu.device_async_create_group
//       CHECK:       nvvm.wgmma.wait.group.sync.aligned 1
//  CHECK-NEXT:       scf.yield %[[W3]]
//       CHECK:     nvvm.wgmma.wait.group.sync.aligned 0
//       CHECK:     nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
//       CHECK:     %[[E0:.*]] = llvm.extractvalue %[[ACC]][0]
//       CHECK:     %[[E1:.*]] = llvm.extractvalue %[[ACC]][1]
//       CHECK:     %[[E2:.*]] = llvm.extractvalue %[[ACC]][2]
//       CHECK:     %[[E3:.*]] = llvm.extractvalue %[[ACC]][3]
//       CHECK:     vector.from_elements %[[E0]], %[[E1]], %[[E2]], %[[E3]] : vector<2x2xi32>
//       CHECK:     arith.sitofp
//       CHECK:     scf.if
//       CHECK:       vector.store %{{.*}} : memref<48x40xf32>, vector<2xf32>
func.func @gw(%qgy: tensor<101x48xi8>, %qx: tensor<101x40xi8>, %sgy: tensor<48xf32>, %sx: tensor<f32>) -> tensor<48x40xf32> {
  %acc = hot.int_matmul %qgy transposed, %qx : tensor<101x48xi8>, tensor<101x40xi8> -> tensor<48x40xi32>
  %y = hot.rescale %acc, %sgy, %sx : tensor<48x40xi32>, tensor<48xf32>, tensor<f32> -> tensor<48x40xf32>
  return %y : tensor<48x40xf32>
}

// -----

// 4-bit grids on Hopper: the values are computed with s8 wgmma.

// REMARK: remark: tensor-core kernel @hot_int_mma_wgmma_s8_197x32x64_t128x64x128_s4_i32: s8 wgmma.mma_async m64n64k32 (sm_90a has warpgroup MMA and no INT4 tensor cores: 4-bit operands computed with s8)
// OFF: remark: tensor-core kernel @hot_int_mma_s8_197x32x64_t128x128x64_w64x32_s3_i32: s8 mma.sync m16n8k32 (sm_90a has no INT4 tensor cores: 4-bit operands computed with s8; wgmma disabled by option)

// CHECK-LABEL: func.func @int4
//       CHECK:   gpu.launch_func @hot_kernels::@hot_int_mma_wgmma_s8_197x32x64_t128x64x128_s4_i32 blocks in (%{{.*}}, %c2,
func.func @int4(%g: tensor<197x64xf32>, %w: tensor<32x64xf32>) -> tensor<197x32xi32> {
  %qg, %sg = hot.quantize %g bits 4 granularity per_row scale maxabs rounding nearest : tensor<197x64xf32> -> tensor<197x64xi8>, tensor<197xf32>
  %qw, %sw = hot.quantize %w bits 4 granularity per_tensor scale maxabs rounding nearest : tensor<32x64xf32> -> tensor<32x64xi8>, tensor<f32>
  %acc = hot.int_matmul %qg, %qw transposed : tensor<197x64xi8>, tensor<32x64xi8> -> tensor<197x32xi32>
  return %acc : tensor<197x32xi32>
}
