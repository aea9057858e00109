// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu 2>/dev/null \
// RUN:   | FileCheck %s
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: hot-opt %s --split-input-file \
// RUN:   --convert-hot-to-gpu="hadamard-quantize=false lowrank=false" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OFF
// RUN: hot-opt %s --split-input-file \
// RUN:   --convert-hot-to-gpu="share-statistics=false" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNSHARED
// RUN: hot-opt %s --split-input-file \
// RUN:   --convert-hot-to-gpu="row-values-in-registers=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TWICE
// RUN: hot-opt %s --split-input-file \
// RUN:   --convert-hot-to-gpu="fuse-column-hadamard=false" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COLSPLIT
// RUN: hot-opt %s --split-input-file \
// RUN:   --convert-hot-to-gpu="quantize-channels-per-thread=2" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WIDTH2
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu=chip=sm_90 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=OCC
// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu=chip=sm_80 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=OCC80

// The gx path's gy: hadamard along the rows (block 16) + per_row stochastic
// 4-bit quantize: one kernel, one warp per row. With 4 floats per lane, the
// butterfly stages of bits 0 and 1 stay in registers, bits 2 and 3 are
// shuffles with lanes 1 and 2 apart; then the row max over 32 lanes. The row
// (4 values per lane) stays in registers from its max to its quantize.

// REMARK: remark: fused hadamard (block 16) + per_row quantize kernel @hot_hadamard_quantize_row_20x48_b16_v4_w4_q7_stochastic_regs: one warp per row, 4 rows per block; butterfly stages below 4 in registers, the others by gpu.shuffle xor; row max|y| by a warp shuffle reduction, the row kept in registers to quantize (4 values per lane, read once)
// TWICE: remark: fused hadamard (block 16) + per_row quantize kernel @hot_hadamard_quantize_row_20x48_b16_v4_w8_q7_stochastic: one warp per row, 8 rows per block; butterfly stages below 4 in registers, the others by gpu.shuffle xor; row max|y| by a warp shuffle reduction, the row transformed again to quantize (4 values per lane; at most 0 are kept in registers)

// CHECK-LABEL: func.func @gy_per_row
//  CHECK-SAME: (%[[GY:.*]]: tensor<20x48xf32>, %[[SEED:.*]]: i64)
//   CHECK-NOT:   hot.hadamard
//   CHECK-NOT:   hot.quantize
//       CHECK:   %[[X:.*]] = bufferization.to_buffer %[[GY]] read_only
//       CHECK:   %[[Q:.*]] = memref.alloc() {alignment = 64 : i64} : memref<20x48xi8>
//       CHECK:   %[[S:.*]] = memref.alloc() {alignment = 64 : i64} : memref<20xf32>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_quantize_row_20x48_b16_v4_w4_q7_stochastic_regs
//  CHECK-SAME:     threads in (%c128
//  CHECK-SAME:     args(%[[X]] : memref<20x48xf32>, %[[Q]] : memref<20x48xi8>, %[[S]] : memref<20xf32>, %[[SEED]] : i64)
//       CHECK:   bufferization.to_tensor %[[Q]] restrict writable
//       CHECK:   bufferization.to_tensor %[[S]] restrict writable
//       CHECK: gpu.module @hot_kernels
//       CHECK:   gpu.func @hot_hadamard_quantize_row_20x48_b16_v4_w4_q7_stochastic_regs(
// The blocks per SM that 4 values and 32 working registers per lane allow.
//  CHECK-SAME:       kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 12 : i32}
// The row loaded once (one chunk, lanes past it masked), transformed, max|y|.
//   CHECK-NOT:     scf.for
//       CHECK:     vector.load {{.*}} {alignment = 16 : i64} : memref<20x48xf32>, vector<4xf32>
//   CHECK-NOT:     vector.load
//       CHECK:     arith.addf
//       CHECK:     arith.subf
//       CHECK:     gpu.shuffle  xor %{{.*}}, %c1_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       CHECK:     gpu.shuffle  xor %{{.*}}, %c2_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       CHECK:     arith.constant 2.500000e-01 : f32
//       CHECK:     math.absf
//       CHECK:     arith.maximumf
// The row max across the warp.
//       CHECK:     gpu.shuffle  xor %{{.*}}, %c16_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       CHECK:     gpu.shuffle  xor %{{.*}}, %c1_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       CHECK:     %[[SCALE:.*]] = arith.divf %{{.*}}, %cst{{.*}} : f32
//       CHECK:     memref.store %[[SCALE]]
// The quantize reads the registers: no second load, no second transform.
//   CHECK-NOT:     vector.load
//   CHECK-NOT:     gpu.shuffle
//       CHECK:     %[[INV:.*]] = arith.divf %cst{{.*}}, %[[SCALE]] : f32
//       CHECK:     arith.mulf %{{.*}}, %[[INV]] : f32
//       CHECK:     %[[UNITS:.*]] = arith.uitofp
//       CHECK:     %[[SUM:.*]] = math.fma %[[UNITS]], %cst{{.*}}, %{{.*}} : f32
//       CHECK:     %[[FLOOR:.*]] = llvm.call_intrinsic "llvm.nvvm.f2i.rm"(%[[SUM]]) : (f32) -> i32
//       CHECK:     %[[LOW:.*]] = arith.maxsi %[[FLOOR]], %c-7_i32
//       CHECK:     arith.minsi %[[LOW]], %c7_i32
//       CHECK:     arith.trunci %{{.*}} : i32 to i8
//       CHECK:     vector.from_elements {{.*}} : vector<4xi8>
//       CHECK:     scf.if
//       CHECK:       vector.store {{.*}} {alignment = 4 : i64} : memref<20x48xi8>, vector<4xi8>
//   CHECK-NOT:     vector.load
//       CHECK:     gpu.return

// With row-values-in-registers=0, the row is transformed twice.
//       TWICE:   gpu.func @hot_hadamard_quantize_row_20x48_b16_v4_w8_q7_stochastic(
// Pass 1: the transform, then max|y|. The stages across lanes are one fma
// each, with a sign of +1 or -1 by lane; the normalization waits for the max.
//       TWICE:     scf.for
//       TWICE:       vector.load {{.*}} {alignment = 16 : i64} : memref<20x48xf32>, vector<4xf32>
//       TWICE:       arith.addf
//       TWICE:       arith.subf
//       TWICE:       %[[SIGN1:.*]] = arith.select %{{.*}}, %cst{{.*}}, %cst{{.*}} : f32
//       TWICE:       %[[P1:.*]], %{{.*}} = gpu.shuffle  xor %[[V1:.*]], %c1_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       TWICE:       math.fma %[[SIGN1]], %[[V1]], %[[P1]] : f32
//       TWICE:       gpu.shuffle  xor %{{.*}}, %c2_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//   TWICE-NOT:       gpu.shuffle  xor %{{.*}}, %c4_i32{{(_[0-9]+)?}},
//   TWICE-NOT:       arith.mulf
//       TWICE:       math.absf
//       TWICE:       arith.maximumf
//       TWICE:       scf.yield
// The row max across the warp, then times c_16 = 1/4.
//       TWICE:     gpu.shuffle  xor %{{.*}}, %c16_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       TWICE:     gpu.shuffle  xor %{{.*}}, %c8_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       TWICE:     gpu.shuffle  xor %{{.*}}, %c4_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       TWICE:     gpu.shuffle  xor %{{.*}}, %c2_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       TWICE:     gpu.shuffle  xor %{{.*}}, %c1_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       TWICE:     %[[C16:.*]] = arith.constant 2.500000e-01 : f32
//       TWICE:     arith.mulf %{{.*}}, %[[C16]] : f32
//       TWICE:     %[[SCALE:.*]] = arith.divf %{{.*}}, %cst{{.*}} : f32
//       TWICE:     memref.store %[[SCALE]]
//       TWICE:     %[[INV:.*]] = arith.divf %cst{{.*}}, %[[SCALE]] : f32
// Pass 2: the transform again, v = y * (1 / scale), floor(v + u), clamp, i8.
//       TWICE:     scf.for
//       TWICE:       vector.load
//       TWICE:       gpu.shuffle  xor
//       TWICE:       arith.mulf %{{.*}}, %[[INV]] : f32
//       TWICE:       arith.uitofp
//       TWICE:       math.fma
//       TWICE:       llvm.call_intrinsic "llvm.nvvm.f2i.rm"
//       TWICE:       arith.trunci %{{.*}} : i32 to i8
//       TWICE:       vector.from_elements {{.*}} : vector<4xi8>
//       TWICE:       scf.if
//       TWICE:         vector.store {{.*}} {alignment = 4 : i64} : memref<20x48xi8>, vector<4xi8>

// OFF-LABEL: func.func @gy_per_row
//       OFF:   hot.hadamard
//       OFF:   hot.quantize
//   OFF-NOT:   remark
func.func @gy_per_row(%gy: tensor<20x48xf32>, %seed: i64)
    -> (tensor<20x48xi8>, tensor<20xf32>) {
  %h = hot.hadamard %gy along 1 block 16 : tensor<20x48xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_row scale maxabs
      rounding stochastic seed %seed
      : tensor<20x48xf32> -> tensor<20x48xi8>, tensor<20xf32>
  return %q, %s : tensor<20x48xi8>, tensor<20xf32>
}

// -----

// Per tensor: a kernel of per-warp partial maxima, then the quantize kernel
// that reduces them (rows of 24 floats, 4 per lane: stages 0 and 1 in registers, stage 2 a
// shuffle with the next lane; lanes 6 to 31 are past the row).

// REMARK: remark: fused hadamard (block 8) + per_tensor quantize: two kernels, @hot_hadamard_absmax_9x24_b8_v4_w4_p12_regs (one partial max|y| per warp over a grid-stride of rows, each row's loads issued together, 12 partials) then @hot_hadamard_quantize_tensor_9x24_b8_v4_w4_p12_q127_nearest_regs (one row per warp, its loads issued before the warp reduces the partials to the scale); butterfly stages below 4 in registers, the others by gpu.shuffle xor; the transform is computed in both kernels

// CHECK-LABEL: func.func @gy_per_tensor
// One warp per row in both kernels (9 rows: 12 warps in blocks of 4).
//       CHECK:   %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<12xf32>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_absmax_9x24_b8_v4_w4_p12_regs blocks in (%c3
//  CHECK-SAME:     threads in (%c128
//  CHECK-SAME:     args(%{{.*}} : memref<9x24xf32>, %[[P]] : memref<12xf32>)
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_quantize_tensor_9x24_b8_v4_w4_p12_q127_nearest_regs blocks in (%c3
//  CHECK-SAME:     args(%{{.*}} : memref<9x24xf32>, %[[P]] : memref<12xf32>, %{{.*}} : memref<9x24xi8>, %{{.*}} : memref<f32>)
// The max kernel: a grid stride of rows, each row's chunks loaded before
// they are transformed (one here); the max of the butterfly's magnitudes,
// normalized once after the warp's max.
//       CHECK:   gpu.func @hot_hadamard_absmax_9x24_b8_v4_w4_p12_regs(
//  CHECK-SAME:     nvvm.minctasm = 1
//       CHECK:     scf.for
//       CHECK:       vector.load
//       CHECK:       gpu.shuffle  xor %{{.*}}, %c1_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       CHECK:       math.fma
//   CHECK-NOT:       arith.mulf
//       CHECK:       scf.yield
//       CHECK:     gpu.shuffle  xor %{{.*}}, %c16_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       CHECK:     %[[C8:.*]] = arith.constant 0.353553385 : f32
//       CHECK:     arith.mulf %{{.*}}, %[[C8]] : f32
// The quantize kernel: 4 rows per block, each warp's row loaded before the
// partials' fold, so that the two are in flight together.
//       CHECK:   gpu.func @hot_hadamard_quantize_tensor_9x24_b8_v4_w4_p12_q127_nearest_regs(
//  CHECK-SAME:     known_block_size = array<i32: 128, 1, 1>
//       CHECK:     vector.load %arg0
//       CHECK:     scf.for
//       CHECK:       memref.load %{{.*}} : memref<12xf32>
//       CHECK:     %[[HALF:.*]] = arith.constant 0.49999997 : f32
//       CHECK:     math.copysign %[[HALF]], %{{.*}} : f32
//       CHECK:     llvm.call_intrinsic "llvm.nvvm.f2i.rz"
func.func @gy_per_tensor(%gy: tensor<9x24xf32>) -> (tensor<9x24xi8>, tensor<f32>) {
  %h = hot.hadamard %gy along 1 block 8 : tensor<9x24xf32>
  %q, %s = hot.quantize %h bits 8 granularity per_tensor scale maxabs
      rounding nearest : tensor<9x24xf32> -> tensor<9x24xi8>, tensor<f32>
  return %q, %s : tensor<9x24xi8>, tensor<f32>
}

// -----

// Forms the warp-per-row kernels do not take, each with its reason. A
// per_col quantize runs the matrix as [1, rows, cols] through the
// block-transform kernel with block 1: per-channel maxima (4 channels a
// thread, a row of partials per block row), a kernel of per-channel scales,
// then the quantize. A hadamard along dim 0 (W's on the gx path) is computed
// by the quantize kernel as it loads the block's rows; this one is also a
// result of the function, so it also becomes the block-transform kernel
// (every row kept). A hadamard with a block wider than a warp stays a
// separate op, and the kernel quantizes its result; block 256 is too wide
// for a thread's registers and stays generic.

// REMARK: remark: per_col quantize: @hot_matrix_8x64_v4_t32_i8_stats_outmaxcol_p1 (4 consecutive channels per thread (vector accesses); max|x| per channel, a row of partials per block row (1)), @hot_matrix_8x64_v4_t32_i8_scales_q127_g1 (the per-channel scales) then @hot_matrix_8x64_v4_t32_i8_quantize_out_col_q127s_g1 (quantizes x with the CPU path's rounding; grid {{[0-9]+x[0-9]+ over [0-9]+ items.*}})
// REMARK: remark: fused hadamard along dim 0 (block 4: each lane loads its values of the block's rows and runs the butterfly stages that lead to its row in registers) + per_row quantize kernel @hot_hadamard_quantize_row_8x64_b1_c4_v4_w4_q127_nearest_regs
// With fuse-column-hadamard=false, the block-transform kernel computes that
// hadamard and the quantize kernel reads its result.
// COLSPLIT: remark: hadamard along dim 0 not fused (fuse-column-hadamard=false): the kernel quantizes its result
// COLSPLIT: remark: fused per_row quantize kernel @hot_hadamard_quantize_row_8x64_b1_v4_w4_q127_nearest_regs
// COLSPLIT: remark: hadamard kernel @hot_block_hadamard_1x8x64_b4_v4_t32_i2
// REMARK: remark: hadamard block 256 spans more than one warp (at most 128 for rows of 256): not fused, the kernel quantizes its result
// REMARK: remark: fused per_row quantize kernel @hot_hadamard_quantize_row_8x256_b1_v4_w4_q127_nearest_regs
// REMARK: remark: hadamard kernel @hot_block_hadamard_1x8x64_b4_v4_t32_i2: 4 consecutive channels per thread (vector accesses) and block of 4 along dim 0, butterfly in registers in the CPU path's order
// REMARK: remark: hadamard left to the generic path: block 256 is larger than the 32 values one thread keeps in registers

// CHECK-LABEL: func.func @left
//  CHECK-SAME:   (%[[W:.*]]: tensor<8x64xf32>, %{{.*}}: tensor<8x256xf32>, %[[SEED:.*]]: i64)
//       CHECK:   %[[WE:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2]] output_shape [1, 8, 64]
//       CHECK:   %[[WB:.*]] = bufferization.to_buffer %[[WE]] read_only
//       CHECK:   %[[PART:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x64xf32>
//       CHECK:   %[[QC:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x8x64xi8>
//       CHECK:   %[[SC:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_matrix_8x64_v4_t32_i8_stats_outmaxcol_p1 blocks in (%c1{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c32
//  CHECK-SAME:     args(%[[WB]] : memref<1x8x64xf32>, %[[PART]] : memref<1x64xf32>)
//       CHECK:   gpu.launch_func @hot_kernels::@hot_matrix_8x64_v4_t32_i8_scales_q127_g1
//  CHECK-SAME:     args(%[[PART]] : memref<1x64xf32>, %[[SC]] : memref<64xf32>)
//       CHECK:   gpu.launch_func @hot_kernels::@hot_matrix_8x64_v4_t32_i8_quantize_out_col_q127s_g1
//  CHECK-SAME:     args(%[[WB]] : memref<1x8x64xf32>, %[[QC]] : memref<1x8x64xi8>, %[[SC]] : memref<64xf32>, %[[SEED]] : i64)
//       CHECK:   %[[W0:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<1x8x64xf32> to memref<1x8x64xf32>
//       CHECK:   %[[H0:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x8x64xf32>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_block_hadamard_1x8x64_b4_v4_t32_i2 blocks in (%c1{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c32
//  CHECK-SAME:     args(%[[W0]] : memref<1x8x64xf32>, %[[H0]] : memref<1x8x64xf32>)
//       CHECK:   %[[T0:.*]] = bufferization.to_tensor %[[H0]]
//       CHECK:   tensor.collapse_shape %[[T0]]
// The quantize of the hadamard along dim 0 reads W itself (the hadamard
// kernel above is for the function's result).
//       CHECK:   %[[B0:.*]] = bufferization.to_buffer %[[W]] read_only
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_quantize_row_8x64_b1_c4_v4_w4_q127_nearest_regs {{.*}} args(%[[B0]] : memref<8x64xf32>
//       CHECK:   %[[H1:.*]] = hot.hadamard {{.*}} along 1 block 256
//       CHECK:   %[[B1:.*]] = bufferization.to_buffer %[[H1]]
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_quantize_row_8x256_b1_v4_w4_q127_nearest_regs {{.*}} args(%[[B1]] : memref<8x256xf32>
// The 16 lanes past the 64 channels (4 per lane) compute on zeros and store
// nothing.
// Per channel: each thread's running maxima of its 4 channels over its
// rows, stored as its row of partials; the scales kernel reduces a column of
// partials per channel; the quantize kernel reads its channels' scales.
//       CHECK:   gpu.func @hot_matrix_8x64_v4_t32_i8_stats_outmaxcol_p1(
//       CHECK:     scf.for {{.*}} -> (f32, f32, f32, f32)
//  CHECK-COUNT-4:    arith.maximumf
//       CHECK:     vector.store {{.*}} : memref<1x64xf32>, vector<4xf32>
//   CHECK-NOT:     gpu.barrier
//       CHECK:   gpu.func @hot_matrix_8x64_v4_t32_i8_scales_q127_g1(
//       CHECK:     scf.for {{.*}} = %c0{{.*}} to %c1{{.*}} step %c1{{.*}} iter_args
//       CHECK:       vector.load {{.*}} : memref<1x64xf32>, vector<4xf32>
//       CHECK:     arith.divf
//       CHECK:     vector.store {{.*}} : memref<64xf32>, vector<4xf32>
//       CHECK:   gpu.func @hot_matrix_8x64_v4_t32_i8_quantize_out_col_q127s_g1(
//       CHECK:     vector.load {{.*}} : memref<64xf32>, vector<4xf32>
//       CHECK:     scf.for
//       CHECK:       llvm.call_intrinsic "llvm.nvvm.f2i.rm"
//       CHECK:       vector.store {{.*}} : memref<1x8x64xi8>, vector<4xi8>
// Per row: the 4 rows of its block, each lane's vector of each, then for
// each value the 2 stages that lead to the row (lo + hi or lo - hi by the
// row's bit: fma(sign, hi, lo), the sign -1 where the bit is set) and the
// normalization.
//       CHECK:   gpu.func @hot_hadamard_quantize_row_8x64_b1_c4_v4_w4_q127_nearest_regs(
//       CHECK:     arith.remui %{{.*}}, %c4
//  CHECK-COUNT-4:  vector.load {{.*}} : memref<8x64xf32>, vector<4xf32>
//       CHECK:     %[[SIGN0:.*]] = arith.select %{{.*}}, %cst{{.*}}, %cst{{.*}} : f32
//       CHECK:     %[[SIGN1:.*]] = arith.select %{{.*}}, %cst{{.*}}, %cst{{.*}} : f32
//       CHECK:     %[[LO:.*]] = math.fma %[[SIGN0]], %{{.*}}, %{{.*}} : f32
//       CHECK:     %[[HI:.*]] = math.fma %[[SIGN0]], %{{.*}}, %{{.*}} : f32
//       CHECK:     %[[ROW:.*]] = math.fma %[[SIGN1]], %[[HI]], %[[LO]] : f32
//       CHECK:     arith.mulf %[[ROW]], %cst{{.*}} : f32
// Blocks of 4 rows, items of 8 rows: the 8 rows are one item of two
// blocks.
//       CHECK:   gpu.func @hot_block_hadamard_1x8x64_b4_v4_t32_i2(
//       CHECK:     %[[ACTIVE:.*]] = arith.cmpi ult, %{{.*}}, %c16 : index
//       CHECK:     arith.select %[[ACTIVE]]
//       CHECK:     scf.for
//   CHECK-NOT:       scf.if %{{.*}} -> 
//  CHECK-COUNT-4:    vector.load {{.*}} : memref<1x8x64xf32>, vector<4xf32>
//       CHECK:       arith.constant 5.000000e-01 : f32
//  CHECK-COUNT-4:    vector.load {{.*}} : memref<1x8x64xf32>, vector<4xf32>
//       CHECK:       arith.constant 5.000000e-01 : f32
//       CHECK:       scf.if %[[ACTIVE]]
//  CHECK-COUNT-4:      vector.store {{.*}} : memref<1x8x64xf32>, vector<4xf32>
func.func @left(%w: tensor<8x64xf32>, %w2: tensor<8x256xf32>, %seed: i64)
    -> (tensor<8x64xi8>, tensor<8x64xi8>, tensor<8x256xi8>, tensor<8x64xf32>) {
  %q1, %s1 = hot.quantize %w bits 8 granularity per_col scale maxabs
      rounding stochastic seed %seed
      : tensor<8x64xf32> -> tensor<8x64xi8>, tensor<64xf32>
  %h0 = hot.hadamard %w along 0 block 4 : tensor<8x64xf32>
  %q2, %s2 = hot.quantize %h0 bits 8 granularity per_row scale maxabs
      rounding nearest : tensor<8x64xf32> -> tensor<8x64xi8>, tensor<8xf32>
  %h1 = hot.hadamard %w2 along 1 block 256 : tensor<8x256xf32>
  %q3, %s3 = hot.quantize %h1 bits 8 granularity per_row scale maxabs
      rounding nearest : tensor<8x256xf32> -> tensor<8x256xi8>, tensor<8xf32>
  return %q1, %q2, %q3, %h0
      : tensor<8x64xi8>, tensor<8x64xi8>, tensor<8x256xi8>, tensor<8x64xf32>
}

// -----

// SAWB scales. Per row, the kernel adds the row's f64 sums of |y| and y^2 in
// docs/numerics.md's 128 partials: with 4-wide vectors one 128-element step
// per iteration, each lane's 4 values into its own 4 partials of each sum (no
// shuffle in the loop), then the tree: lanes 16, 8, 4, 2, 1 apart by xor
// shuffles (64-bit values cross lanes as two 32-bit shuffles), then the
// lane's registers. Per tensor, a first kernel (one warp per row) stores each
// row's sums ([2][rows] f64) and max, a one-warp kernel combines the row sums
// (docs/numerics.md: lane p adds rows p, p + 32, ..., then a shuffle tree with
// lanes 16, 8, 4, 2, 1 apart) into the scale, and the quantize kernel reads it.

// REMARK: remark: fused per_tensor sawb quantize: three kernels, @hot_hadamard_absmax_8x64_b1_v4_w8_p8_sawb (one warp per row: its max|y| and its f64 sums in 128 partials and a shuffle tree), @hot_hadamard_scale_8x64_b1_v4_w8_p8_sawb (one warp: the max, and the row sums in 32 partials and a shuffle tree, to the scale) and @hot_hadamard_quantize_tensor_8x64_b1_v4_w4_p8_q7_nearest_sawb_regs (one row per warp, its loads issued before the warp reads the scale); the transform is computed in the first and the last
// REMARK: remark: fused hadamard (block 16) + per_row quantize (sawb) kernel @hot_hadamard_quantize_row_8x64_b16_v4_w4_q7_nearest_sawb_regs: one warp per row, 4 rows per block; butterfly stages below 4 in registers, the others by gpu.shuffle xor; row max|y| by a warp shuffle reduction, its f64 sums in 128 partials (4 per lane) and a shuffle tree, the row kept in registers to quantize (4 values per lane, read once)

// CHECK-LABEL: func.func @sawb
//       CHECK:   %[[PARTIALS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
//       CHECK:   %[[SUMS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x8xf64>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_absmax_8x64_b1_v4_w8_p8_sawb {{.*}} threads in (%c256, {{.*}} args(%{{.*}} : memref<8x64xf32>, %[[PARTIALS]] : memref<8xf32>, %[[SUMS]] : memref<2x8xf64>)
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_scale_8x64_b1_v4_w8_p8_sawb blocks in (%c1{{.*}}) threads in (%c32, {{.*}} args(%[[PARTIALS]] : memref<8xf32>, %[[SUMS]] : memref<2x8xf64>, %[[SCALE:.*]] : memref<f32>)
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_quantize_tensor_8x64_b1_v4_w4_p8_q7_nearest_sawb_regs {{.*}} args(%{{.*}} : memref<8x64xf32>, %{{.*}} : memref<8x64xi8>, %[[SCALE]] : memref<f32>)
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_quantize_row_8x64_b16_v4_w4_q7_nearest_sawb_regs
//   CHECK-NOT:   hot.quantize
//       CHECK: gpu.func @hot_hadamard_absmax_8x64_b1_v4_w8_p8_sawb
//       CHECK:   scf.for {{.*}} step %c128{{.*}} -> (f32, f64, f64, f64, f64, f64, f64, f64, f64)
//   CHECK-NOT:     gpu.shuffle
//       CHECK:     arith.extf {{.*}} : f32 to f64
//       CHECK:     math.absf {{.*}} : f64
//       CHECK:     arith.addf {{.*}} : f64
//       CHECK:     arith.mulf {{.*}} : f64
//       CHECK:     arith.addf {{.*}} : f64
//       CHECK:     scf.yield
//       CHECK:   arith.xori %{{.*}}, %c16
//       CHECK:   arith.bitcast {{.*}} : f64 to i64
//       CHECK:   gpu.shuffle  idx
//       CHECK:   arith.xori %{{.*}}, %c1{{(_[0-9]+)?}} : index
//       CHECK:   memref.store {{.*}} : memref<2x8xf64>
//       CHECK:   memref.store {{.*}} : memref<2x8xf64>
//       CHECK: gpu.func @hot_hadamard_scale_8x64_b1_v4_w8_p8_sawb
//  CHECK-SAME:     known_block_size = array<i32: 32, 1, 1>
//       CHECK:   memref.load {{.*}} : memref<8xf32>
//       CHECK:   scf.for %{{.*}} = %[[LANE:.*]] to %c8{{.*}} step %c32{{.*}} -> (f64, f64)
//       CHECK:     memref.load {{.*}} : memref<2x8xf64>
//       CHECK:     arith.addf {{.*}} : f64
//   CHECK-NOT:     gpu.shuffle
//       CHECK:   scf.yield
//       CHECK:   arith.xori %[[LANE]], %c16
//       CHECK:   arith.bitcast {{.*}} : f64 to i64
//       CHECK:   gpu.shuffle  idx {{.*}} : i32
//       CHECK:   arith.addf {{.*}} : f64
//       CHECK:   arith.xori %[[LANE]], %c1{{(_[0-9]+)?}} : index
//       CHECK:   math.sqrt {{.*}} : f64
//       CHECK:   arith.truncf {{.*}} : f64 to f32
//       CHECK:   arith.cmpf ogt
//       CHECK:   arith.select
//       CHECK:   arith.divf {{.*}} : f32
//       CHECK:   memref.store {{.*}} : memref<f32>
//       CHECK: gpu.func @hot_hadamard_quantize_tensor_8x64_b1_v4_w4_p8_q7_nearest_sawb_regs
//   CHECK-NOT:   f64
//       CHECK:   memref.load {{.*}}[] : memref<f32>
//       CHECK:   llvm.call_intrinsic "llvm.nvvm.f2i.rz"
//       CHECK: gpu.func @hot_hadamard_quantize_row_8x64_b16_v4_w4_q7_nearest_sawb_regs
//       CHECK:   gpu.shuffle  xor
//       CHECK:   gpu.shuffle  idx
//       CHECK:   math.sqrt {{.*}} : f64
func.func @sawb(%w: tensor<8x64xf32>, %g: tensor<8x64xf32>)
    -> (tensor<8x64xi8>, tensor<f32>, tensor<8x64xi8>, tensor<8xf32>) {
  %q0, %s0 = hot.quantize %w bits 4 granularity per_tensor scale sawb
      rounding nearest : tensor<8x64xf32> -> tensor<8x64xi8>, tensor<f32>
  %h = hot.hadamard %g along 1 block 16 : tensor<8x64xf32>
  %q1, %s1 = hot.quantize %h bits 4 granularity per_row scale sawb
      rounding nearest : tensor<8x64xf32> -> tensor<8x64xi8>, tensor<8xf32>
  return %q0, %s0, %q1, %s1
      : tensor<8x64xi8>, tensor<f32>, tensor<8x64xi8>, tensor<8xf32>
}

// -----

// The scale kernel's folds over rows (520 rows of partials: one whole chunk
// of 16 rows per lane, then the 8 left one at a time): the 16 loads of a
// chunk are issued before its adds, which keep the rows' order.
// CHECK-LABEL: gpu.func @hot_hadamard_scale_520x8_b1_v4_w8_p520_sawb
//       CHECK:   scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c512{{(_[0-9]+)?}} step %c512{{.*}} -> (f32)
// CHECK-COUNT-16:  memref.load {{.*}} : memref<520xf32>
//       CHECK:     arith.maximumf
//       CHECK:   scf.for %{{.*}} = %{{.*}} to %c520{{(_[0-9]+)?}} step %c32{{.*}} -> (f32)
//       CHECK:   scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c512{{(_[0-9]+)?}} step %c512{{.*}} -> (f64, f64)
// CHECK-COUNT-32:  memref.load {{.*}} : memref<2x520xf64>
//   CHECK-NOT:     memref.load
//       CHECK:     arith.addf {{.*}} : f64
//       CHECK:   scf.for %{{.*}} = %{{.*}} to %c520{{(_[0-9]+)?}} step %c32{{.*}} -> (f64, f64)
func.func @sawb_many_rows(%w: tensor<520x8xf32>) -> (tensor<520x8xi8>, tensor<f32>) {
  %q, %s = hot.quantize %w bits 4 granularity per_tensor scale sawb
      rounding nearest : tensor<520x8xf32> -> tensor<520x8xi8>, tensor<f32>
  return %q, %s : tensor<520x8xi8>, tensor<f32>
}

// -----

// The gw path's HLA on [samples, T, C] along T (37 tokens: 2 blocks of 16
// and a tail of 5): each thread owns 4 channels of one token block at a
// time (10 threads of 32 hold the 40 channels); one (sample, token block)
// item per thread block; the kept Walsh rows of the prefix selection,
// scaled by 1/4; the tail copied.

// REMARK: remark: lowrank kernel @hot_lowrank_2x37x40_b16_k_0_8_12_4_6_14_10_2_v4_t32: 4 consecutive channels per thread (vector accesses) and block of 16 tokens, 32 threads per block, grid 1x6 over 6 (sample, token block) items; butterfly in registers in the CPU path's order, 8 kept rows, tail copied
// REMARK: remark: lowrank kernel @hot_lowrank_1x37x40_b16_k_0_8_12_4_6_14_10_2_v4_t32

// CHECK-LABEL: func.func @hla
//  CHECK-SAME: (%[[X:.*]]: tensor<2x37x40xf32>, %[[X2:.*]]: tensor<37x40xf32>)
//       CHECK:   %[[B:.*]] = bufferization.to_buffer %[[X]] read_only
//       CHECK:   %[[Y:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x21x40xf32>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x37x40_b16_k_0_8_12_4_6_14_10_2_v4_t32 blocks in (%c1{{.*}}, %c6{{.*}}, %c1{{.*}}) threads in (%c32
//  CHECK-SAME:     args(%[[B]] : memref<2x37x40xf32>, %[[Y]] : memref<2x21x40xf32>)
//       CHECK:   %[[E:.*]] = tensor.expand_shape %[[X2]] {{\[}}[0, 1], [2]] output_shape [1, 37, 40]
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_1x37x40_b16_k_0_8_12_4_6_14_10_2_v4_t32
//       CHECK:   tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<1x21x40xf32> into tensor<21x40xf32>
//       CHECK:   gpu.func @hot_lowrank_2x37x40_b16_k_0_8_12_4_6_14_10_2_v4_t32(
//       CHECK:     %[[ACTIVE:.*]] = arith.cmpi ult, %{{.*}}, %c10 : index
//       CHECK:     scf.for %[[ITEM:.*]] = %{{.*}} to %c6 step %{{.*}} {
//       CHECK:       %[[S:.*]] = arith.divui %[[ITEM]], %c3
//       CHECK:       %[[C:.*]] = arith.remui %[[ITEM]], %c3
//       CHECK:       %[[FULL:.*]] = arith.cmpi ult, %[[C]], %c2
//       CHECK:       scf.if %[[FULL]] {
//  CHECK-COUNT-16:     vector.load %{{.*}}[%[[S]], {{.*}} : memref<2x37x40xf32>, vector<4xf32>
//       CHECK:         arith.constant 2.500000e-01 : f32
//       CHECK:         scf.if %[[ACTIVE]] {
//  CHECK-COUNT-8:        vector.store {{.*}} : memref<2x21x40xf32>, vector<4xf32>
//       CHECK:       } else {
//  CHECK-COUNT-5:      vector.load
//       CHECK:         scf.if %[[ACTIVE]] {
//  CHECK-COUNT-5:        vector.store
//   CHECK-NOT:   gpu.shuffle

// OFF-LABEL: func.func @hla
//       OFF:   hot.lowrank
//       OFF:   hot.lowrank
func.func @hla(%x: tensor<2x37x40xf32>, %x2: tensor<37x40xf32>)
    -> (tensor<2x21x40xf32>, tensor<21x40xf32>) {
  %y = hot.lowrank %x along 1 block 16 rank 8 allow_tail
      : tensor<2x37x40xf32> -> tensor<2x21x40xf32>
  %y2 = hot.lowrank %x2 along 0 block 16 rank 8 allow_tail
      : tensor<37x40xf32> -> tensor<21x40xf32>
  return %y, %y2 : tensor<2x21x40xf32>, tensor<21x40xf32>
}

// -----

// REMARK: remark: lowrank left to the generic path: block 64 is larger than the 32 values one thread keeps in registers

// CHECK-LABEL: func.func @hla_large_block
//       CHECK:   hot.lowrank
func.func @hla_large_block(%x: tensor<128x8xf32>) -> tensor<64x8xf32> {
  %y = hot.lowrank %x along 0 block 64 rank 32
      : tensor<128x8xf32> -> tensor<64x8xf32>
  return %y : tensor<64x8xf32>
}

// -----

// A linear layer's gy, read by both backward paths: the gx path quantizes
// hadamard(gy) per tensor, the gw path projects gy along the tokens and
// quantizes the projection per tensor. Here the projection is also a result
// of the function, so it is stored: the lowrank kernel (moved before the gx
// quantize, which needs its statistics) computes both maxima on its way:
// max|hadamard(gy)| with the butterfly across its 4 registers and 4 lanes
// (shuffles 1 and 2 lanes apart), and max|y|. Each thread block reduces them
// over its 6 warps in shared memory and stores one partial of each. Neither
// quantize gets an absmax kernel.

// REMARK: remark: lowrank kernel @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_inmax16_outmax_p26: 4 consecutive channels per thread (vector accesses) and block of 16 tokens, 192 threads per block, grid 1x26 over 26 (sample, token block) items; butterfly in registers in the CPU path's order, 8 kept rows, tail copied; also the max|hadamard along the channels (block 16)| of a per-tensor quantize of the same data; also the max|y| of the per-tensor quantize of its result (26 partials each)
// REMARK: remark: fused hadamard (block 16) + per_tensor quantize: one kernel, @hot_hadamard_quantize_tensor_394x768_b16_v4_w4_p26_q7_stochastic_regs (one row per warp, its loads issued before the warp reduces the 26 partial max|y| that @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_inmax16_outmax_p26 stored); butterfly stages below 4 in registers, the others by gpu.shuffle xor; no pass of its own for the max
// REMARK: remark: fused per_tensor quantize: one kernel, @hot_hadamard_quantize_tensor_202x768_b1_v4_w4_p26_q127_stochastic_regs (one row per warp, its loads issued before the warp reduces the 26 partial max|y| that @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_inmax16_outmax_p26 stored); no pass of its own for the max

// CHECK-LABEL: func.func @layer_gy_projection_kept
//  CHECK-SAME: (%[[GY3:.*]]: tensor<2x197x768xf32>, %[[SEED:.*]]: i64)
//       CHECK:   %[[GY:.*]] = tensor.collapse_shape %[[GY3]]
//       CHECK:   %[[X:.*]] = bufferization.to_buffer %[[GY3]] read_only
//       CHECK:   %[[Y:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x101x768xf32>
//       CHECK:   %[[PIN:.*]] = memref.alloc() {alignment = 64 : i64} : memref<26xf32>
//       CHECK:   %[[POUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<26xf32>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_inmax16_outmax_p26 blocks in (%c1{{.*}}, %c26{{.*}}, %c1{{.*}}) threads in (%c192
//  CHECK-SAME:     args(%[[X]] : memref<2x197x768xf32>, %[[Y]] : memref<2x101x768xf32>, %[[PIN]] : memref<26xf32>, %[[POUT]] : memref<26xf32>)
//       CHECK:   %[[GYB:.*]] = bufferization.to_buffer %[[GY]] read_only
//   CHECK-NOT:   hot_hadamard_absmax
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_quantize_tensor_394x768_b16_v4_w4_p26_q7_stochastic_regs
//  CHECK-SAME:     args(%[[GYB]] : memref<394x768xf32>, %[[PIN]] : memref<26xf32>, %{{.*}} : memref<394x768xi8>, %{{.*}} : memref<f32>, %[[SEED]] : i64)
//   CHECK-NOT:   hot_hadamard_absmax
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_quantize_tensor_202x768_b1_v4_w4_p26_q127_stochastic_regs
//  CHECK-SAME:     args(%{{.*}} : memref<202x768xf32>, %[[POUT]] : memref<26xf32>,
//       CHECK:   gpu.func @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_inmax16_outmax_p26(
//  CHECK-SAME:       workgroup(%[[SHARED:.*]] : memref<2x6xf32, #gpu.address_space<workgroup>>)
//       CHECK:     scf.for {{.*}} iter_args(%[[IN:.*]] = %{{.*}}, %[[OUT:.*]] = %{{.*}}) -> (f32, f32) {
//       CHECK:       scf.if %{{.*}} -> (f32, f32) {
//       CHECK:         vector.load {{.*}} : memref<2x197x768xf32>, vector<4xf32>
//       CHECK:         gpu.shuffle  xor %{{.*}}, %c1_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       CHECK:         gpu.shuffle  xor %{{.*}}, %c2_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       CHECK:         math.absf
//       CHECK:         arith.maximumf %[[IN]]
//       CHECK:         vector.store
//       CHECK:       } else {
//       CHECK:     gpu.shuffle  xor %{{.*}}, %c16_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : f32
//       CHECK:     memref.store %{{.*}}, %[[SHARED]]
//       CHECK:     gpu.barrier
//       CHECK:     memref.load %[[SHARED]]
//       CHECK:     memref.store %{{.*}}, %arg2[%{{.*}}] : memref<26xf32>
//       CHECK:     memref.store %{{.*}}, %arg3[%{{.*}}] : memref<26xf32>
func.func @layer_gy_projection_kept(%gy3: tensor<2x197x768xf32>, %seed: i64)
    -> (tensor<394x768xi8>, tensor<f32>, tensor<202x768xi8>, tensor<f32>,
        tensor<2x101x768xf32>) {
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]]
      : tensor<2x197x768xf32> into tensor<394x768xf32>
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x768xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<394x768xf32> -> tensor<394x768xi8>, tensor<f32>
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail
      : tensor<2x197x768xf32> -> tensor<2x101x768xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]]
      : tensor<2x101x768xf32> into tensor<202x768xf32>
  %q2, %s2 = hot.quantize %gyl2 bits 8 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<202x768xf32> -> tensor<202x768xi8>, tensor<f32>
  return %q, %s, %q2, %s2, %gyl
      : tensor<394x768xi8>, tensor<f32>, tensor<202x768xi8>, tensor<f32>,
        tensor<2x101x768xf32>
}

// -----

// The same layer when nothing else reads the projection: two kernels
// replace the lowrank and both quantizes, at the first of them. The first
// computes the two maxima and stores nothing else; the second reduces the
// partials to both scales and quantizes hadamard(gy) (stochastic index
// (row * 768 + channel)) and the projection (index (row' * 768 + channel)
// of the [202, 768] tensor the gw quantize reads), each with its own seed.
// The projection never reaches memory.

// REMARK: remark: lowrank and the quantizes of its input's hadamard and of its result in one pass over the data after a statistics pass: @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_stats_inmax16_outmax_p26 (4 consecutive channels per thread (vector accesses); max|hadamard along the channels (block 16)|, 26 partials; max|y|, 26 partials) then @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v1_t256_quantize_in16_q7s_out_tensor_q127n_g1x26 (quantizes the hadamard and y with the CPU path's rounding; y never reaches memory; grid {{[0-9]+x[0-9]+ over [0-9]+ items.*}})
// With quantize-channels-per-thread=2, the quantize kernel takes 2 channels a
// thread (v2) and 256 threads; the statistics kernel keeps 4.
// WIDTH2: remark: lowrank and the quantizes of its input's hadamard and of its result in one pass over the data after a statistics pass: @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_stats_inmax16_outmax_p26 {{.*}} then @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v2_t256_quantize_in16_q7s_out_tensor_q127n_g1x26 (

// With share-statistics=false: the lowrank kernel and two absmax + quantize
// pairs, each absmax a pass of its own.
// UNSHARED: remark: lowrank kernel @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192: 4 consecutive
// UNSHARED: remark: fused hadamard (block 16) + per_tensor quantize: two kernels, @hot_hadamard_absmax_394x768_b16_v4_w4_p200_regs_r2 (one partial max|y| per warp over a grid-stride of steps of 2 rows, each step's loads issued together
// UNSHARED: remark: fused per_tensor quantize: two kernels, @hot_hadamard_absmax_202x768_b1_v4_w4_p104_regs_r2

// One channel per thread: on sm_90 the quantize kernel asks for 6 blocks
// per SM (40 registers); on sm_80, where 40 spill, for the 5 that its 48
// registers allow.
// OCC: gpu.func @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v1_t256_quantize_in16_q7s_out_tensor_q127n_g1x26(
// OCC-SAME: nvvm.minctasm = 6
// OCC80: gpu.func @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v1_t256_quantize_in16_q7s_out_tensor_q127n_g1x26(
// OCC80-SAME: nvvm.minctasm = 5

// CHECK-LABEL: func.func @layer_gy
//  CHECK-SAME: (%[[GY3:.*]]: tensor<2x197x768xf32>, %[[SEED:.*]]: i64)
//       CHECK:   %[[X:.*]] = bufferization.to_buffer %[[GY3]] read_only
//       CHECK:   %[[PIN:.*]] = memref.alloc() {alignment = 64 : i64} : memref<26xf32>
//       CHECK:   %[[QIN:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x197x768xi8>
//       CHECK:   %[[SIN:.*]] = memref.alloc() {alignment = 64 : i64} : memref<f32>
//       CHECK:   %[[POUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<26xf32>
//       CHECK:   %[[QOUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x101x768xi8>
//       CHECK:   %[[SOUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<f32>
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_stats_inmax16_outmax_p26 blocks in (%c1{{.*}}, %c26{{.*}}, %c1{{.*}}) threads in (%c192
//  CHECK-SAME:     args(%[[X]] : memref<2x197x768xf32>, %[[PIN]] : memref<26xf32>, %[[POUT]] : memref<26xf32>)
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v1_t256_quantize_in16_q7s_out_tensor_q127n_g1x26 blocks in (%c3{{.*}}, %c26{{.*}}, %c1{{.*}}) threads in (%c256
//  CHECK-SAME:     args(%[[X]] : memref<2x197x768xf32>, %[[PIN]] : memref<26xf32>, %[[QIN]] : memref<2x197x768xi8>, %[[SIN]] : memref<f32>, %[[POUT]] : memref<26xf32>, %[[QOUT]] : memref<2x101x768xi8>, %[[SOUT]] : memref<f32>, %[[SEED]] : i64)
//       CHECK:   %[[TIN:.*]] = bufferization.to_tensor %[[QIN]]
//       CHECK:   tensor.collapse_shape %[[TIN]] {{\[}}[0, 1], [2]] : tensor<2x197x768xi8> into tensor<394x768xi8>
//       CHECK:   %[[TOUT:.*]] = bufferization.to_tensor %[[QOUT]]
//       CHECK:   tensor.collapse_shape %[[TOUT]] {{\[}}[0, 1], [2]] : tensor<2x101x768xi8> into tensor<202x768xi8>
//   CHECK-NOT:   hot.
//       CHECK:   gpu.func @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192_stats_inmax16_outmax_p26(
//   CHECK-NOT:     vector.store
//       CHECK:     gpu.barrier
//       CHECK:   gpu.func @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v1_t256_quantize_in16_q7s_out_tensor_q127n_g1x26(
// Both scales: the partials' max over the warp, over qmax.
//       CHECK:     memref.load %arg1
//       CHECK:     arith.divf %{{.*}}, %cst{{.*}} : f32
//       CHECK:     memref.load %arg4
//       CHECK:     arith.divf %{{.*}}, %cst{{.*}} : f32
// One channel per thread (per tensor: few registers, more blocks per SM),
// so the 16-channel Hadamard of the gx path takes four shuffle stages.
//       CHECK:     scf.for
//       CHECK:       vector.load {{.*}} : memref<2x197x768xf32>, vector<1xf32>
// CHECK-COUNT-4:     gpu.shuffle  xor
//       CHECK:       llvm.call_intrinsic "llvm.nvvm.f2i.rm"
//       CHECK:       vector.store {{.*}} : memref<2x197x768xi8>, vector<1xi8>
//       CHECK:       llvm.call_intrinsic "llvm.nvvm.f2i.rz"
//       CHECK:       vector.store {{.*}} : memref<2x101x768xi8>, vector<1xi8>
//   CHECK-NOT:     vector.store {{.*}}xf32>
func.func @layer_gy(%gy3: tensor<2x197x768xf32>, %seed: i64)
    -> (tensor<394x768xi8>, tensor<f32>, tensor<202x768xi8>, tensor<f32>) {
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]]
      : tensor<2x197x768xf32> into tensor<394x768xf32>
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x768xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<394x768xf32> -> tensor<394x768xi8>, tensor<f32>
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail
      : tensor<2x197x768xf32> -> tensor<2x101x768xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]]
      : tensor<2x101x768xf32> into tensor<202x768xf32>
  %q2, %s2 = hot.quantize %gyl2 bits 8 granularity per_tensor scale maxabs
      rounding nearest : tensor<202x768xf32> -> tensor<202x768xi8>, tensor<f32>
  return %q, %s, %q2, %s2
      : tensor<394x768xi8>, tensor<f32>, tensor<202x768xi8>, tensor<f32>
}

// -----

// Not shared: the gx quantize is per row (one pass of its own anyway), and
// the other per-tensor quantize reads gy with rows of 384, not the lowrank's
// 768 channels. The lowrank kernel computes no statistics.

// REMARK: remark: lowrank kernel @hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192:
// REMARK: remark: fused hadamard (block 16) + per_row quantize kernel
// REMARK: remark: fused per_tensor quantize: two kernels, @hot_hadamard_absmax_788x384_b1_v4_w4_p200_regs_r4

// CHECK-LABEL: func.func @not_shared
//       CHECK:   gpu.launch_func @hot_kernels::@hot_lowrank_2x197x768_b16_k_0_8_12_4_6_14_10_2_v4_t192 blocks
//  CHECK-SAME:     args(%{{.*}} : memref<2x197x768xf32>, %{{.*}} : memref<2x101x768xf32>)
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_quantize_row_394x768
//       CHECK:   gpu.launch_func @hot_kernels::@hot_hadamard_absmax_788x384
func.func @not_shared(%gy3: tensor<2x197x768xf32>, %seed: i64)
    -> (tensor<2x101x768xf32>, tensor<394x768xi8>, tensor<394xf32>, tensor<788x384xi8>, tensor<f32>) {
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail
      : tensor<2x197x768xf32> -> tensor<2x101x768xf32>
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]]
      : tensor<2x197x768xf32> into tensor<394x768xf32>
  %h = hot.hadamard %gy along 1 block 16 : tensor<394x768xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_row scale maxabs
      rounding stochastic seed %seed
      : tensor<394x768xf32> -> tensor<394x768xi8>, tensor<394xf32>
  %flat = tensor.collapse_shape %gy3 [[0, 1, 2]]
      : tensor<2x197x768xf32> into tensor<302592xf32>
  %r = tensor.expand_shape %flat [[0, 1]] output_shape [788, 384]
      : tensor<302592xf32> into tensor<788x384xf32>
  %q2, %s2 = hot.quantize %r bits 8 granularity per_tensor scale maxabs
      rounding nearest : tensor<788x384xf32> -> tensor<788x384xi8>, tensor<f32>
  return %gyl, %q, %s, %q2, %s2
      : tensor<2x101x768xf32>, tensor<394x768xi8>, tensor<394xf32>, tensor<788x384xi8>, tensor<f32>
}

// -----

// A 2-D layer's gy (no HLA): the gx path quantizes its hadamard per tensor,
// the gw path gy itself per output channel (LQS). One statistics kernel
// (max|hadamard(gy)| and the per-channel maxima) over gy as [1, 8, 64] with
// block 1, the per-channel scales, one quantize kernel for both, placed at
// the first quantize (the second one's seed moves up with it).

// REMARK: remark: this quantize and the one of the same data's hadamard in one pass over it after a statistics pass: @hot_matrix_8x64_v4_t32_i8_stats_inmax16_outmaxcol_p1 (4 consecutive channels per thread (vector accesses); max|hadamard along the channels (block 16)|, 1 partials; max|x| per channel, a row of partials per block row (1)), @hot_matrix_8x64_v4_t32_i8_scales_q127_g1 (the per-channel scales) then @hot_matrix_8x64_v4_t32_i8_quantize_in16_q7s_out_col_q127s_g1 (quantizes the hadamard and x with the CPU path's rounding; grid {{[0-9]+x[0-9]+ over [0-9]+ items.*}})

// CHECK-LABEL: func.func @quantize_pair
//  CHECK-SAME: (%[[GY:.*]]: tensor<8x64xf32>, %[[SEED:.*]]: i64)
//       CHECK:   %[[SEED2:.*]] = arith.addi %[[SEED]], %[[SEED]] : i64
//       CHECK:   gpu.launch_func @hot_kernels::@hot_matrix_8x64_v4_t32_i8_stats_inmax16_outmaxcol_p1
//       CHECK:   gpu.launch_func @hot_kernels::@hot_matrix_8x64_v4_t32_i8_scales_q127_g1
//       CHECK:   gpu.launch_func @hot_kernels::@hot_matrix_8x64_v4_t32_i8_quantize_in16_q7s_out_col_q127s_g1
//  CHECK-SAME:     %[[SEED]] : i64, %[[SEED2]] : i64)
//   CHECK-NOT:   hot.
//       CHECK:   return
func.func @quantize_pair(%gy: tensor<8x64xf32>, %seed: i64)
    -> (tensor<8x64xi8>, tensor<f32>, tensor<8x64xi8>, tensor<64xf32>) {
  %h = hot.hadamard %gy along 1 block 16 : tensor<8x64xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs
      rounding stochastic seed %seed
      : tensor<8x64xf32> -> tensor<8x64xi8>, tensor<f32>
  %seed2 = arith.addi %seed, %seed : i64
  %q2, %s2 = hot.quantize %gy bits 8 granularity per_col scale maxabs
      rounding stochastic seed %seed2
      : tensor<8x64xf32> -> tensor<8x64xi8>, tensor<64xf32>
  return %q, %s, %q2, %s2
      : tensor<8x64xi8>, tensor<f32>, tensor<8x64xi8>, tensor<64xf32>
}
