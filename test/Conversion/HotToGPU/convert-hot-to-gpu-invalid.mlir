// RUN: hot-opt %s --split-input-file --convert-hot-to-gpu -verify-diagnostics
// RUN: not hot-opt %s --split-input-file --convert-hot-to-gpu=chip=sm_75 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHIP
// RUN: not hot-opt %s --split-input-file --convert-hot-to-gpu=tile-k=48 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TILEK
// RUN: not hot-opt %s --split-input-file --convert-hot-to-gpu=stages=4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHARED
// RUN: not hot-opt %s --split-input-file --convert-hot-to-gpu=warp-m=24 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WARP
// RUN: not hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_90a tile-m=96" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WG-M
// RUN: not hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_90a tile-n=40" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WG-N
// RUN: not hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_90a stages=2" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WG-STAGES
// RUN: not hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_90a tile-n=256 stages=5" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WG-SHARED
// RUN: not hot-opt %s --split-input-file --convert-hot-to-gpu="chip=sm_90a tile-m=576" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WG-THREADS
// RUN: not hot-opt %s --split-input-file --convert-hot-to-gpu=quantize-channels-per-thread=3 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHANNELS
// RUN: not hot-opt %s --split-input-file --convert-hot-to-gpu=row-values-in-registers=-1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ROW-VALUES

// CHIP: error: convert-hot-to-gpu: chip 'sm_75' has no integer mma.sync of the kernel's shapes (needs sm_80 or newer)
// TILEK: error: convert-hot-to-gpu: tile-k must be 32, 64 or 128 bytes
// SHARED: error: convert-hot-to-gpu: the staged tiles need 65536 bytes of shared memory, more than the 48 KiB of static shared memory: use fewer stages or smaller tiles
// WARP: error: convert-hot-to-gpu: warp-m must be a positive multiple of 16 (the MMA's M)
// WG-M: error: convert-hot-to-gpu: wgmma: tile-m must be a positive multiple of 64 (one warpgroup per 64 rows)
// WG-N: error: convert-hot-to-gpu: wgmma: tile-n must be an N of wgmma m64nNk32 on s8: 8, 16, 24, or a multiple of 16 up to 256
// WG-STAGES: error: convert-hot-to-gpu: wgmma: the pipeline needs at least 3 stages (one tile being read by wgmma, one awaited, one being copied)
// WG-SHARED: error: convert-hot-to-gpu: wgmma: the staged tiles need 246784 bytes of shared memory, more than the 227 KiB a block may use: use fewer stages or smaller tiles
// WG-THREADS: error: convert-hot-to-gpu: the tiling needs 1152 threads per block, more than 1024
// CHANNELS: error: convert-hot-to-gpu: quantize-channels-per-thread must be 1, 2 or 4 (0: the default), not 3
// ROW-VALUES: error: convert-hot-to-gpu: row-values-in-registers must be 0 or more, not -1

// Rows map to grid.y, at most 65535 blocks of tile-m rows: a product with
// more rows is a located error, never a crash or a wrong launch.
func.func @too_many_rows(%a: tensor<8388609x32xi8>, %b: tensor<32x16xi8>) -> tensor<8388609x16xi32> {
  // expected-error @below {{cannot lower to a tensor-core kernel: 8388609 rows need more than 65535 thread blocks of 128 rows (grid.y limit)}}
  %acc = hot.int_matmul %a, %b : tensor<8388609x32xi8>, tensor<32x16xi8> -> tensor<8388609x16xi32>
  return %acc : tensor<8388609x16xi32>
}

// -----

// Exactly 65535 blocks of 128 rows fit (and tiles of 64 rows are not
// considered).
func.func @max_rows(%a: tensor<8388480x32xi8>, %b: tensor<32x16xi8>) -> tensor<8388480x16xi32> {
  // expected-remark @below {{tensor-core kernel @hot_int_mma_s8_8388480x16x32_t128x64x64_w64x32_s3_i32: s8 mma.sync m16n8k32 (operands on an 8-bit grid); 128x64 tiles (the model of the kernel's time on 108 SMs}}
  // expected-remark @below {{rhs is not K-contiguous}}
  %acc = hot.int_matmul %a, %b : tensor<8388480x32xi8>, tensor<32x16xi8> -> tensor<8388480x16xi32>
  return %acc : tensor<8388480x16xi32>
}

// -----

// A K-major operand goes through a transpose kernel of 64 rows per block of
// grid.y: more rows than that grid holds are an error too.
func.func @transpose_rows(%a: tensor<32x8388480xi8>, %b: tensor<32x16xi8>) -> tensor<8388480x16xi32> {
  // expected-error @below {{cannot lower to a tensor-core kernel: the lhs is K-major, and its 8388480 rows need more than 65535 thread blocks of the transpose kernel (grid.y limit)}}
  %acc = hot.int_matmul %a transposed, %b : tensor<32x8388480xi8>, tensor<32x16xi8> -> tensor<8388480x16xi32>
  return %acc : tensor<8388480x16xi32>
}

// -----

// Columns map to grid.x, at most 2^31 - 1 blocks.
func.func @too_many_columns(%a: tensor<16x32xi8>, %b: tensor<1099511627776x32xi8>) -> tensor<16x1099511627776xi32> {
  // expected-error @below {{cannot lower to a tensor-core kernel: 1099511627776 columns need more than 2147483647 thread blocks of 128 columns (grid.x limit)}}
  %acc = hot.int_matmul %a, %b transposed : tensor<16x32xi8>, tensor<1099511627776x32xi8> -> tensor<16x1099511627776xi32>
  return %acc : tensor<16x1099511627776xi32>
}

// -----

// A block of 2^40 is a valid op: the kernel's limit is checked before any
// per-row table is built (it used to take minutes and all the memory).
func.func @huge_block(%x: tensor<197x64xf32>) -> tensor<197x64xf32> {
  // expected-remark @below {{lowrank left to the generic path: block 1099511627776 is larger than the 32 values one thread keeps in registers}}
  %y = hot.lowrank %x along 0 block 1099511627776 rank 1099511627776 allow_tail : tensor<197x64xf32> -> tensor<197x64xf32>
  return %y : tensor<197x64xf32>
}
