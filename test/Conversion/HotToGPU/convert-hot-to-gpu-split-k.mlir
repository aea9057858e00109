// RUN: hot-opt %s --convert-hot-to-gpu="chip=sm_80 tile-m=64 tile-n=64 split-k=3" --canonicalize 2>&1 | FileCheck %s
// RUN: hot-opt %s --convert-hot-to-gpu="chip=sm_90a tile-m=64 tile-n=64 split-k=3" --canonicalize 2>&1 | FileCheck %s --check-prefix=WGMMA
// RUN: hot-opt %s --convert-hot-to-gpu="chip=sm_80 tile-m=64 tile-n=64 split-k=1" 2>&1 | FileCheck %s --check-prefix=ONE

// K split among 3 blocks per output tile (grid.z): 1000 K values are 16
// steps of 64 bytes, 6 per split (the last split 4). Each block stores its
// accumulators to its slot of the workspace, thread 0 counts the block in
// its tile's counter between two GPU-scope fences, bar.red.or tells every
// thread whether the block was the tile's last, and that block adds the 3
// slots and runs the fused rescale.

// CHECK: remark: tensor-core kernel @hot_int_mma_s8_200x72x1008_t64x64x64_w64x32_s3_split3_rescale01_f32: s8 mma.sync m16n8k32 (operands on an 8-bit grid), hot.rescale fused into the epilogue; K split in 3 (8 tiles of 16 K steps): the last block of each tile adds the 3 partial products
// CHECK-LABEL: func.func @gw
// 3 slots x 8 tiles x 64 x 64 accumulators; one counter per tile.
// CHECK: %[[WORK:.*]] = memref.alloc() {alignment = 64 : i64} : memref<98304xi32>
// CHECK: %[[COUNT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xi32>
// CHECK: gpu.launch_func @hot_kernels::@hot_zero_i32_8 blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[COUNT]] : memref<8xi32>)
// CHECK: gpu.launch_func @hot_kernels::@hot_int_mma_s8_200x72x1008_t64x64x64_w64x32_s3_split3_rescale01_f32 blocks in (%c2, %c4, %c3)
// CHECK-SAME: %[[WORK]] : memref<98304xi32>, %[[COUNT]] : memref<8xi32>)

// CHECK: gpu.func @hot_int_mma_s8_200x72x1008_t64x64x64_w64x32_s3_split3_rescale01_f32
// This split's K tiles: from 6 z, min(6, 16 - 6 z) of them.
// CHECK: %[[Z:.*]] = gpu.block_id z
// CHECK: %[[BEGIN:.*]] = arith.muli %[[Z]], %c6 : index
// CHECK: %[[LEFT:.*]] = arith.subi %c16, %[[BEGIN]] : index
// CHECK: %[[COUNT_K:.*]] = arith.minui %[[LEFT]], %c6 : index
// CHECK: scf.for %{{.*}} = %c0 to %[[COUNT_K]] step %c1
// CHECK: nvgpu.mma.sync
// 16 fragments of 4 accumulators per thread, 16 bytes each.
// CHECK-COUNT-16: vector.store %{{.*}}, %arg5[%{{.*}}] {alignment = 16 : i64} : memref<98304xi32>, vector<4xi32>
// CHECK: gpu.barrier
// CHECK: %[[LAST:.*]] = scf.if %{{.*}} -> (i1) {
// CHECK-NEXT: nvvm.memory.barrier <gpu>
// CHECK-NEXT: %[[BEFORE:.*]] = memref.atomic_rmw addi %c1_i32, %arg6[%{{.*}}] : (i32, memref<8xi32>) -> i32
// CHECK-NEXT: nvvm.memory.barrier <gpu>
// CHECK-NEXT: %[[IS:.*]] = arith.cmpi eq, %[[BEFORE]], %c2_i32 : i32
// CHECK-NEXT: scf.yield %[[IS]] : i1
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %false : i1
// CHECK: %[[PRED:.*]] = arith.extui %[[LAST]] : i1 to i32
// CHECK: %[[ANY:.*]] = nvvm.barrier #nvvm.reduction<or> %[[PRED]] -> i32
// CHECK: %[[GO:.*]] = arith.cmpi ne, %[[ANY]], %c0_i32 : i32
// CHECK: scf.if %[[GO]] {
// CHECK-COUNT-3: vector.load %arg5[%{{.*}}] {alignment = 16 : i64} : memref<98304xi32>, vector<4xi32>
// CHECK: arith.addi %{{.*}} : vector<4xi32>
// CHECK: arith.addi %{{.*}} : vector<4xi32>
// CHECK: arith.sitofp
// CHECK: gpu.return

// The kernel that zeroes the counters.
// CHECK: gpu.func @hot_zero_i32_8(%arg0: memref<8xi32>) kernel
// CHECK: memref.store %c0_i32, %arg0[%{{.*}}] : memref<8xi32>

// The wgmma kernel takes the same epilogue: 64 x 64 tiles on one warpgroup
// hold 8 fragments per thread (1008 bytes of K are 8 steps of 128:
// 3 splits of 3, the last 2).
// WGMMA: remark: tensor-core kernel @hot_int_mma_wgmma_s8_200x72x1008_t64x64x128_s4_split3_rescale01_f32:
// WGMMA: gpu.func @hot_int_mma_wgmma_s8_200x72x1008_t64x64x128_s4_split3_rescale01_f32
// WGMMA: nvvm.wgmma.mma_async
// WGMMA-COUNT-8: vector.store %{{.*}}, %arg5[%{{.*}}] {alignment = 16 : i64} : memref<98304xi32>, vector<4xi32>
// WGMMA: memref.atomic_rmw addi
// WGMMA: nvvm.barrier #nvvm.reduction<or>

// ONE: remark: tensor-core kernel @hot_int_mma_s8_200x72x1008_t64x64x64_w64x32_s3_rescale01_f32: s8 mma.sync m16n8k32 (operands on an 8-bit grid), hot.rescale fused into the epilogue{{$}}
// ONE-NOT: hot_zero_i32
// ONE-NOT: memref.atomic_rmw
func.func @gw(%a: tensor<200x1000xi8>, %b: tensor<72x1000xi8>, %sa: tensor<f32>, %sb: tensor<72xf32>) -> tensor<200x72xf32> {
  %c = hot.int_matmul %a, %b transposed : tensor<200x1000xi8>, tensor<72x1000xi8> -> tensor<200x72xi32>
  %y = hot.rescale %c, %sa, %sb : tensor<200x72xi32>, tensor<f32>, tensor<72xf32> -> tensor<200x72xf32>
  return %y : tensor<200x72xf32>
}
