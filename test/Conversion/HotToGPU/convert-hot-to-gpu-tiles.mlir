// RUN: hot-opt %s --convert-hot-to-gpu=chip=sm_90a -o /dev/null 2>&1 | FileCheck %s --check-prefix=H200
// RUN: hot-opt %s --convert-hot-to-gpu=chip=sm_80 -o /dev/null 2>&1 | FileCheck %s --check-prefix=A100
// RUN: hot-opt %s --convert-hot-to-gpu="chip=sm_90a sm-count=36" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FEW
// RUN: hot-opt %s --convert-hot-to-gpu="chip=sm_90a tile-m=128 tile-n=128" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIXED
// RUN: hot-opt %s --convert-hot-to-gpu="chip=sm_90a split-k=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// RUN: hot-opt %s --convert-hot-to-gpu="chip=sm_90a split-k=5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPLIT5

// Automatic tiles (tile-m and tile-n left at 0: 128 x 128, its halvings
// down to 64 and, for wgmma, 128 x 256 and 128 x 192) and K splits (split-k=0: up to 16),
// whichever the model of the kernel's time finds fastest on the chip's SMs
// (132 on H100/H200, 108 on A100): waves of blocks, each K step bound by the
// MACs or by L2 (which feeds 128 x 128 tiles too slowly on a full Hopper,
// and 128 x 256 ones, with fewer operand bytes per MAC, less so), a block's
// fixed latency, plus the exchange of partial accumulators and a split's
// fixed cost when K is split (constants fitted to an H200's timings of these
// products: bench/RESULTS.md, 2026-12-04).

// ViT-B proj's gw, 768 x 768, K = 6464: 36 blocks of 128 x 128 would leave
// most SMs idle; 72 of 64 x 128 (or, with the tiles fixed, 3 splits of K,
// barely: the H200 ran them in 27 us against 30 unsplit) fill more of them.
// H200: remark: tensor-core kernel @hot_int_mma_wgmma_s8_768x768x6464_t64x128x128_s4_i32: s8 wgmma.mma_async m64n128k32 (sm_90a has warpgroup MMA); 64x128 tiles (the model of the kernel's time on 132 SMs: 36.2 against 60.0 for 128x128 tiles unsplit){{$}}
// A100: remark: tensor-core kernel @hot_int_mma_s8_768x768x6464_t64x128x64_w64x32_s3_i32: s8 mma.sync m16n8k32 (operands on an 8-bit grid); 64x128 tiles (the model of the kernel's time on 108 SMs: 34.2 against 59.5 for 128x128 tiles unsplit){{$}}
// With 36 SMs, 36 blocks of 128 x 128 fill them: nothing to split.
// FEW: remark: tensor-core kernel @hot_int_mma_wgmma_s8_768x768x6464_t128x128x128_s4_i32: s8 wgmma.mma_async m64n128k32 (sm_90a has warpgroup MMA){{$}}
// FIXED: remark: tensor-core kernel @hot_int_mma_wgmma_s8_768x768x6464_t128x128x128_s4_split3_i32: s8 wgmma.mma_async m64n128k32 (sm_90a has warpgroup MMA); K split in 3 (36 tiles of 51 K steps): the last block of each tile adds the 3 partial products (the model of the kernel's time on 132 SMs: 59.6 against 60.0 for 128x128 tiles unsplit){{$}}
// NOSPLIT: remark: tensor-core kernel @hot_int_mma_wgmma_s8_768x768x6464_t64x128x128_s4_i32:
// A split given by option is used as is (51 K steps: 5 splits of 11, the last 7).
// SPLIT5: remark: tensor-core kernel @hot_int_mma_wgmma_s8_{{.*}}_split5_i32: {{.*}}; K split in 5 ({{.*}} of 51 K steps){{.*}}partial products
func.func @gw_proj(%a: tensor<768x6464xi8>, %b: tensor<768x6464xi8>) -> tensor<768x768xi32> {
  %c = hot.int_matmul %a, %b transposed : tensor<768x6464xi8>, tensor<768x6464xi8> -> tensor<768x768xi32>
  return %c : tensor<768x768xi32>
}

// ViT-B fc1's gw, 3072 x 768: 144 blocks of 128 x 128 are 1.09 waves on 132
// SMs; split in 3, 432 blocks would be 3.3 waves of a third of the work, but
// each block's latency and the split's cost outweigh the half-empty wave (the
// H200 ran the split in 71 us against 56 unsplit). On the H200, 72 blocks of
// 128 x 256 run one wave with L2 to spare: the MACs bound it (45 us); 96
// blocks of 128 x 192 run one wave with three quarters of their work each
// (the model's choice, not yet measured).
// H200: remark: tensor-core kernel @hot_int_mma_wgmma_s8_3072x768x6464_t128x192x128_s4_i32: s8 wgmma.mma_async m64n192k32 (sm_90a has warpgroup MMA); 128x192 tiles (the model of the kernel's time on 132 SMs: 85.5 against 150.8 for 128x128 tiles unsplit){{$}}
// FIXED: remark: tensor-core kernel @hot_int_mma_wgmma_s8_3072x768x6464_t128x128x128_s4_i32: s8 wgmma.mma_async m64n128k32 (sm_90a has warpgroup MMA){{$}}
// A100: remark: tensor-core kernel @hot_int_mma_s8_3072x768x6464_t128x128x64_w64x32_s3_i32: s8 mma.sync m16n8k32 (operands on an 8-bit grid){{$}}
// NOSPLIT: remark: tensor-core kernel @hot_int_mma_wgmma_s8_3072x768x6464_t128x192x128_s4_i32:
// SPLIT5: remark: tensor-core kernel @hot_int_mma_wgmma_s8_{{.*}}_split5_i32: {{.*}}; K split in 5 (
func.func @gw_fc1(%a: tensor<3072x6464xi8>, %b: tensor<768x6464xi8>) -> tensor<3072x768xi32> {
  %c = hot.int_matmul %a, %b transposed : tensor<3072x6464xi8>, tensor<768x6464xi8> -> tensor<3072x768xi32>
  return %c : tensor<3072x768xi32>
}

// ViT-B proj's gx, 12608 x 768: 594 blocks already; K = 768 is 6 steps. On
// the H200, wider tiles load fewer bytes per MAC: 297 blocks of 128 x 256
// are 2.25 waves, 396 of 128 x 192 exactly 3.
// H200: remark: tensor-core kernel @hot_int_mma_wgmma_s8_12608x768x768_t128x192x128_s4_i32: s8 wgmma.mma_async m64n192k32 (sm_90a has warpgroup MMA); 128x192 tiles (the model of the kernel's time on 132 SMs: 56.3 against 84.1 for 128x128 tiles unsplit){{$}}
// FIXED: remark: tensor-core kernel @hot_int_mma_wgmma_s8_12608x768x768_t128x128x128_s4_i32: s8 wgmma.mma_async m64n128k32 (sm_90a has warpgroup MMA){{$}}
// A100: remark: tensor-core kernel @hot_int_mma_s8_12608x768x768_t128x128x64_w64x32_s3_i32: s8 mma.sync m16n8k32 (operands on an 8-bit grid){{$}}
func.func @gx_proj(%a: tensor<12608x768xi8>, %b: tensor<768x768xi8>) -> tensor<12608x768xi32> {
  %c = hot.int_matmul %a, %b transposed : tensor<12608x768xi8>, tensor<768x768xi8> -> tensor<12608x768xi32>
  return %c : tensor<12608x768xi32>
}

// One K step: the smallest tiles waste the fewest MACs; nothing to split.
// H200: remark: tensor-core kernel @hot_int_mma_wgmma_s8_200x40x32_t64x64x128_s4_i32: s8 wgmma.mma_async m64n64k32 (sm_90a has warpgroup MMA); 64x64 tiles (the model of the kernel's time on 132 SMs: 9.2 against 10.0 for 128x128 tiles unsplit){{$}}
// H200: remark: tensor-core kernel @hot_int_mma_wgmma_s8_1x1x32_t64x64x128_s4_i32:
// FIXED: remark: tensor-core kernel @hot_int_mma_wgmma_s8_200x40x32_t128x128x128_s4_i32: s8 wgmma.mma_async m64n128k32 (sm_90a has warpgroup MMA){{$}}
// SPLIT5: remark: tensor-core kernel @hot_int_mma_wgmma_s8_200x40x32_{{[^_]*}}_s4_i32:
func.func @small(%a: tensor<200x32xi8>, %b: tensor<40x32xi8>, %c: tensor<1x32xi8>, %d: tensor<1x32xi8>) -> (tensor<200x40xi32>, tensor<1x1xi32>) {
  %x = hot.int_matmul %a, %b transposed : tensor<200x32xi8>, tensor<40x32xi8> -> tensor<200x40xi32>
  %y = hot.int_matmul %c, %d transposed : tensor<1x32xi8>, tensor<1x32xi8> -> tensor<1x1xi32>
  return %x, %y : tensor<200x40xi32>, tensor<1x1xi32>
}
