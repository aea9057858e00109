// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_80 tile-m=128 tile-n=128 hadamard-quantize=false" 2>/dev/null \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_90 tile-m=128 tile-n=128 hadamard-quantize=false" 2>/dev/null \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_80 tile-m=128 tile-n=128 hadamard-quantize=false" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK80
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_90 tile-m=128 tile-n=128 hadamard-quantize=false" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK90
// The printed kernels parse back (for the products of fewer K tiles than
// stages too, whose empty cp.async groups nvvm commits).
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_80" 2>/dev/null \
// RUN:   | hot-opt --split-input-file -o /dev/null

// gx = qg·qw on 4-bit grids: s4 m16n8k64 on sm_80 (operands packed), s8
// m16n8k32 on sm_90; qw : [O, I] is [K][N], so it is transposed first; the
// rescale is fused.

// REMARK80: remark: tensor-core kernel @hot_int_mma_s4_197x32x32_t128x128x64_w64x32_s3_rescale10_f32: s4 mma.sync m16n8k64 (both operands are on a 4-bit grid and sm_80 has INT4 tensor cores; operands packed two per byte), hot.rescale fused into the epilogue
// REMARK80: remark: rhs is not K-contiguous: transposed to [32][K] i8 by @hot_transpose_s4_64x32_to_32x32 (64x64-byte tiles through shared memory) before the product (no kernel that produces it writes it K-major)
// REMARK90: remark: tensor-core kernel @hot_int_mma_s8_197x32x64_t128x128x64_w64x32_s3_rescale10_f32: s8 mma.sync m16n8k32 (sm_90 has no INT4 tensor cores: 4-bit operands computed with s8; wgmma needs sm_90a), hot.rescale fused into the epilogue
// REMARK90: remark: rhs is not K-contiguous: transposed to [32][K] i8

// CHECK-LABEL: func.func @gx
//  CHECK-SAME: (%[[GY:.*]]: tensor<197x64xf32>, %[[W:.*]]: tensor<64x32xf32>
//       CHECK:   %[[QG:.*]], %[[SG:.*]] = hot.quantize %[[GY]]
//       CHECK:   %[[QW:.*]], %[[SW:.*]] = hot.quantize %[[W]]
//        SM80:   %[[LHS:.*]] = linalg.generic
//        SM80:     tensor.extract %[[QG]]
//        SM80:   } -> tensor<197x32xi8>
//       CHECK:   %[[QWB:.*]] = bufferization.to_buffer %[[QW]] read_only : tensor<64x32xi8> to memref<64x32xi8>
//        SM80:   %[[RHSB:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x32xi8>
//        SM80:   gpu.launch_func @hot_kernels::@hot_transpose_s4_64x32_to_32x32 blocks in (%c1{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c256{{.*}}, %c1{{.*}}, %c1{{.*}}) args(%[[QWB]] : memref<64x32xi8>, %[[RHSB]] : memref<32x32xi8>)
//    SM90-NOT:   tensor<197x32xi8>
//        SM90:   %[[RHSB:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x64xi8>
//        SM90:   gpu.launch_func @hot_kernels::@hot_transpose_s8_64x32_to_32x64 {{.*}} args(%[[QWB]] : memref<64x32xi8>, %[[RHSB]] : memref<32x64xi8>)
//       CHECK:   %[[RHS:.*]] = bufferization.to_tensor %[[RHSB]] restrict writable
//        SM80:   %[[A:.*]] = bufferization.to_buffer %[[LHS]] read_only : tensor<197x32xi8> to memref<197x32xi8>
//        SM90:   %[[A:.*]] = bufferization.to_buffer %[[QG]] read_only : tensor<197x64xi8> to memref<197x64xi8>
//       CHECK:   %[[B:.*]] = bufferization.to_buffer %[[RHS]] read_only
//       CHECK:   %[[C:.*]] = memref.alloc() {alignment = 64 : i64} : memref<197x32xf32>
//       CHECK:   %[[RS:.*]] = bufferization.to_buffer %[[SG]] read_only : tensor<197xf32> to memref<197xf32>
//       CHECK:   %[[CS:.*]] = bufferization.to_buffer %[[SW]] read_only : tensor<f32> to memref<f32>
//       CHECK:   gpu.launch_func @hot_kernels::@[[KERNEL:hot_int_mma_[a-z0-9_]*]] blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%[[A]] : {{.*}}, %[[B]] : {{.*}}, %[[C]] : memref<197x32xf32>, %[[RS]] : memref<197xf32>, %[[CS]] : memref<f32>)
//       CHECK:   %[[Y:.*]] = bufferization.to_tensor %[[C]] restrict writable
//   CHECK-NOT:   hot.int_matmul
//   CHECK-NOT:   hot.rescale
//       CHECK:   return %[[Y]]
//       CHECK: gpu.module @hot_kernels
//       CHECK:   gpu.func @[[KERNEL]]
//  CHECK-SAME:     workgroup(%{{.*}} : memref<3x128x64xi8, #gpu.address_space<workgroup>> {llvm.align = 128 : i64}, %{{.*}} : memref<3x128x64xi8, #gpu.address_space<workgroup>> {llvm.align = 128 : i64})
//  CHECK-SAME:     kernel attributes {known_block_size = array<i32: 256, 1, 1>}
//       CHECK:     nvgpu.device_async_copy {{.*}}, 16, %{{.*}} {bypassL1}
//       CHECK:     nvgpu.device_async_create_group
//       CHECK:     scf.for
//       CHECK:       nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
//       CHECK:       gpu.barrier
//       CHECK:       nvgpu.device_async_copy
//       CHECK:       nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} {{.*}} -> vector<4x4xi8>
//       CHECK:       nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = false} {{.*}} -> vector<2x4xi8>
//        SM80:       vector.bitcast {{.*}} : vector<4xi8> to vector<8xi4>
//        SM80:       nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 64]} : (vector<4x8xi4>, vector<2x8xi4>, vector<2x2xi32>) -> vector<2x2xi32>
//        SM90:       nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 32]} : (vector<4x4xi8>, vector<2x4xi8>, vector<2x2xi32>) -> vector<2x2xi32>
//    SM90-NOT:       mmaShape = [16, 8, 64]
//       CHECK:     scf.yield
//       CHECK:     %[[SCALE:.*]] = memref.load %{{.*}}[] : memref<f32>
//       CHECK:     %[[ROWSCALE:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<197xf32>
//       CHECK:     %[[ACC:.*]] = vector.extract %{{.*}}[0, 0] : i32 from vector<2x2xi32>
//       CHECK:     %[[F:.*]] = arith.sitofp %[[ACC]] : i32 to f32
//       CHECK:     %[[R:.*]] = arith.mulf %[[F]], %[[ROWSCALE]] : f32
//       CHECK:     %[[RC:.*]] = arith.mulf %[[R]], %[[SCALE]] : f32
//       CHECK:     %[[PAIR:.*]] = vector.from_elements %[[RC]], %{{.*}} : vector<2xf32>
//       CHECK:     scf.if
//       CHECK:       vector.store %[[PAIR]], %{{.*}} {alignment = 8 : i64} : memref<197x32xf32>, vector<2xf32>
func.func @gx(%gy: tensor<197x64xf32>, %w: tensor<64x32xf32>, %seed: i64) -> tensor<197x32xf32> {
  %qg, %sg = hot.quantize %gy bits 4 granularity per_row scale maxabs rounding stochastic seed %seed : tensor<197x64xf32> -> tensor<197x64xi8>, tensor<197xf32>
  %qw, %sw = hot.quantize %w bits 4 granularity per_tensor scale sawb rounding nearest : tensor<64x32xf32> -> tensor<64x32xi8>, tensor<f32>
  %acc = hot.int_matmul %qg, %qw : tensor<197x64xi8>, tensor<64x32xi8> -> tensor<197x32xi32>
  %y = hot.rescale %acc, %sg, %sw : tensor<197x32xi32>, tensor<197xf32>, tensor<f32> -> tensor<197x32xf32>
  return %y : tensor<197x32xf32>
}

// -----

// gw = qgyᵀ·qx on 8-bit grids: s8 everywhere, both operands transposed
// to K-contiguous, K = 101 padded to 112 with zeros.

// REMARK80: remark: tensor-core kernel @hot_int_mma_s8_48x40x112_{{.*}}: s8 mma.sync m16n8k32 (operands on an 8-bit grid), hot.rescale fused into the epilogue
// REMARK80: remark: lhs is not K-contiguous: transposed to [48][K] i8
// REMARK80: remark: rhs is not K-contiguous: transposed to [40][K] i8

// CHECK-LABEL: func.func @gw
//  CHECK-SAME: (%[[QGY:.*]]: tensor<101x48xi8>, %[[QX:.*]]: tensor<101x40xi8>
//       CHECK:   %[[A:.*]] = bufferization.to_buffer %[[QGY]] read_only : tensor<101x48xi8> to memref<101x48xi8>
//       CHECK:   %[[AT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<48x112xi8>
//       CHECK:   gpu.launch_func @hot_kernels::@[[T1:hot_transpose_s8_101x48_to_48x112]] blocks in (%c2, %c1{{.*}}, %c1{{.*}}) threads in (%c256, {{.*}} args(%[[A]] : memref<101x48xi8>, %[[AT]] : memref<48x112xi8>)
//       CHECK:   %[[B:.*]] = bufferization.to_buffer %[[QX]] read_only : tensor<101x40xi8> to memref<101x40xi8>
//       CHECK:   %[[BT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<40x112xi8>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_transpose_s8_101x40_to_40x112 {{.*}} args(%[[B]] : memref<101x40xi8>, %[[BT]] : memref<40x112xi8>)
//       CHECK:   gpu.launch_func @hot_kernels::@hot_int_mma_s8_48x40x112_{{.*}} args({{.*}} : memref<48x112xi8>, {{.*}} : memref<40x112xi8>, {{.*}} : memref<48x40xf32>, {{.*}} : memref<48xf32>, {{.*}} : memref<f32>)
//   CHECK-NOT:   hot.rescale
// The transpose kernel: a 64 x 64 tile of K values x rows through padded
// shared memory, zero past K (101) and the rows; 16-byte stores of rows.
//       CHECK: gpu.func @[[T1]](%{{.*}}: memref<101x48xi8>, %{{.*}}: memref<48x112xi8>) workgroup(%[[TILE:.*]] : memref<64x68xi8, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
//       CHECK:   arith.cmpi ult, %{{.*}}, %c101
//       CHECK:   memref.load %{{.*}} : memref<101x48xi8>
//       CHECK:   memref.store %{{.*}}, %[[TILE]]
//       CHECK:   gpu.barrier
//       CHECK:   memref.load %[[TILE]]
//       CHECK:   vector.from_elements {{.*}} : vector<16xi8>
//       CHECK:   scf.if
//       CHECK:     vector.store {{.*}} {alignment = 16 : i64} : memref<48x112xi8>, vector<16xi8>
func.func @gw(%qgy: tensor<101x48xi8>, %qx: tensor<101x40xi8>, %sgy: tensor<48xf32>, %sx: tensor<f32>) -> tensor<48x40xf32> {
  %acc = hot.int_matmul %qgy transposed, %qx : tensor<101x48xi8>, tensor<101x40xi8> -> tensor<48x40xi32>
  %y = hot.rescale %acc, %sgy, %sx : tensor<48x40xi32>, tensor<48xf32>, tensor<f32> -> tensor<48x40xf32>
  return %y : tensor<48x40xf32>
}

// -----

// Already K-contiguous operands with K a multiple of 16 go straight to the
// kernel; the product has two users, so it is written as i32.

// REMARK80: remark: tensor-core kernel @hot_int_mma_s8_8x16x48_t128x128x64_w64x32_s3_i32: s8 mma.sync m16n8k32 (operands on an 8-bit grid){{$}}
// REMARK80-NOT: not K-contiguous

// CHECK-LABEL: func.func @two_users
//  CHECK-SAME: (%[[A:.*]]: tensor<8x48xi8>, %[[B:.*]]: tensor<16x48xi8>
//   CHECK-NOT:   linalg.generic
//       CHECK:   %[[MA:.*]] = bufferization.to_buffer %[[A]] read_only
//       CHECK:   %[[MB:.*]] = bufferization.to_buffer %[[B]] read_only
//       CHECK:   %[[C:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x16xi32>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_int_mma_s8_8x16x48_t128x128x64_w64x32_s3_i32 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%[[MA]] : memref<8x48xi8>, %[[MB]] : memref<16x48xi8>, %[[C]] : memref<8x16xi32>)
//       CHECK:   %[[ACC:.*]] = bufferization.to_tensor %[[C]] restrict writable : memref<8x16xi32> to tensor<8x16xi32>
//       CHECK:   hot.rescale %[[ACC]]
//       CHECK:   return %[[ACC]]
//       CHECK: gpu.func @hot_int_mma_s8_8x16x48_t128x128x64_w64x32_s3_i32
//   CHECK-NOT:   arith.sitofp
//       CHECK:   vector.store %{{.*}} {alignment = 8 : i64} : memref<8x16xi32>, vector<2xi32>
func.func @two_users(%a: tensor<8x48xi8>, %b: tensor<16x48xi8>, %s: tensor<f32>) -> (tensor<8x16xi32>, tensor<8x16xf32>) {
  %acc = hot.int_matmul %a, %b transposed : tensor<8x48xi8>, tensor<16x48xi8> -> tensor<8x16xi32>
  %y = hot.rescale %acc, %s, %s : tensor<8x16xi32>, tensor<f32>, tensor<f32> -> tensor<8x16xf32>
  return %acc, %y : tensor<8x16xi32>, tensor<8x16xf32>
}

// -----

// M = N = 1 and K = 20: zero-filled loads, guarded stores, K padded to 32;
// a bf16 rescale result is converted in the epilogue.

// REMARK80: remark: tensor-core kernel @hot_int_mma_s8_1x1x32_t128x128x64_w64x32_s3_rescale01_bf16: s8 mma.sync m16n8k32
// REMARK80: remark: rhs is not K-contiguous: transposed to [1][K] i8

// CHECK-LABEL: func.func @tiny
//       CHECK:   } -> tensor<1x32xi8>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_transpose_s8_20x1_to_1x32 {{.*}} : memref<1x32xi8>)
//       CHECK:   gpu.launch_func @hot_kernels::@hot_int_mma_s8_1x1x32_t128x128x64_w64x32_s3_rescale01_bf16
//       CHECK:   bufferization.to_tensor %{{.*}} restrict writable : memref<1x1xbf16> to tensor<1x1xbf16>
//       CHECK: gpu.func @hot_int_mma_s8_1x1x32_t128x128x64_w64x32_s3_rescale01_bf16(%{{.*}}: memref<1x32xi8>, %{{.*}}: memref<1x32xi8>, %{{.*}}: memref<1x1xbf16>, %{{.*}}: memref<f32>, %{{.*}}: memref<1xf32>)
//       CHECK:   %[[ROWOK:.*]] = arith.cmpi ult, %{{.*}}, %c1
//       CHECK:   %[[KOK:.*]] = arith.andi
//       CHECK:   %[[N:.*]] = arith.select %{{.*}}, %c16{{.*}}, %c0
//       CHECK:   nvgpu.device_async_copy {{.*}}, 16, %[[N]] {bypassL1}
//       CHECK:   arith.minui %{{.*}}, %c0
//       CHECK:   arith.truncf %{{.*}} : f32 to bf16
//       CHECK:   scf.if
//       CHECK:     memref.store %{{.*}} : memref<1x1xbf16>
// (N = 1 is odd: one value per store, each guarded.)
func.func @tiny(%a: tensor<1x20xi8>, %b: tensor<20x1xi8>, %rs: tensor<f32>, %cs: tensor<1xf32>) -> tensor<1x1xbf16> {
  %acc = hot.int_matmul %a, %b : tensor<1x20xi8>, tensor<20x1xi8> -> tensor<1x1xi32>
  %y = hot.rescale %acc, %rs, %cs : tensor<1x1xi32>, tensor<f32>, tensor<1xf32> -> tensor<1x1xbf16>
  return %y : tensor<1x1xbf16>
}
