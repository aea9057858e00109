// RUN: hot-opt %s --convert-hot-to-gpu=chip=sm_90a -o /dev/null 2>&1 | FileCheck %s --check-prefix=H200
// RUN: hot-opt %s --convert-hot-to-gpu=chip=sm_80 -o /dev/null 2>&1 | FileCheck %s --check-prefix=A100
// RUN: hot-opt %s --convert-hot-to-gpu="chip=sm_90a sm-count=36" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FEW
// RUN: hot-opt %s --convert-hot-to-gpu="chip=sm_90a tile-n=128" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIXED

// Automatic tiles (tile-m and tile-n left at 0): 128 x 128, halved (the larger
// first, down to 64) while a product would get fewer thread blocks than the
// chip's SMs (132 on H100/H200, 108 on A100) and halving adds blocks.

// ViT-B proj's gw, 768 x 768: 36 blocks of 128 x 128 -> 144 of 64 x 64.
// H200: remark: tensor-core kernel @hot_int_mma_wgmma_s8_768x768x6464_t64x64x128_s4_i32: s8 wgmma.mma_async m64n64k32 (sm_90a has warpgroup MMA); 64x64 tiles: 128x128 would give fewer thread blocks than the chip's SMs
// A100: remark: tensor-core kernel @hot_int_mma_s8_768x768x6464_t64x64x64_w64x32_s3_i32: s8 mma.sync m16n8k32 (operands on an 8-bit grid); 64x64 tiles: 128x128 would give fewer thread blocks than the chip's SMs
// With 36 SMs to fill, 36 blocks do.
// FEW: remark: tensor-core kernel @hot_int_mma_wgmma_s8_768x768x6464_t128x128x128_s4_i32: s8 wgmma.mma_async m64n128k32 (sm_90a has warpgroup MMA){{$}}
// A tile size given by option is kept.
// FIXED: remark: tensor-core kernel @hot_int_mma_wgmma_s8_768x768x6464_t128x128x128_s4_i32: s8 wgmma.mma_async m64n128k32 (sm_90a has warpgroup MMA){{$}}
func.func @gw_proj(%a: tensor<768x6464xi8>, %b: tensor<768x6464xi8>) -> tensor<768x768xi32> {
  %c = hot.int_matmul %a, %b transposed : tensor<768x6464xi8>, tensor<768x6464xi8> -> tensor<768x768xi32>
  return %c : tensor<768x768xi32>
}

// ViT-B proj's gx, 12608 x 768: 594 blocks already.
// H200: remark: tensor-core kernel @hot_int_mma_wgmma_s8_12608x768x768_t128x128x128_s4_i32: s8 wgmma.mma_async m64n128k32 (sm_90a has warpgroup MMA){{$}}
// A100: remark: tensor-core kernel @hot_int_mma_s8_12608x768x768_t128x128x64_w64x32_s3_i32: s8 mma.sync m16n8k32 (operands on an 8-bit grid){{$}}
func.func @gx_proj(%a: tensor<12608x768xi8>, %b: tensor<768x768xi8>) -> tensor<12608x768xi32> {
  %c = hot.int_matmul %a, %b transposed : tensor<12608x768xi8>, tensor<768x768xi8> -> tensor<12608x768xi32>
  return %c : tensor<12608x768xi32>
}

// 200 x 40: only M can use more blocks (N fits one tile either way).
// H200: remark: tensor-core kernel @hot_int_mma_wgmma_s8_200x40x32_t64x128x128_s4_i32: s8 wgmma.mma_async m64n128k32 (sm_90a has warpgroup MMA); 64x128 tiles: 128x128 would give fewer thread blocks than the chip's SMs
// 1 x 1: no halving adds a block.
// H200: remark: tensor-core kernel @hot_int_mma_wgmma_s8_1x1x32_t128x128x128_s4_i32: s8 wgmma.mma_async m64n128k32 (sm_90a has warpgroup MMA){{$}}
func.func @small(%a: tensor<200x32xi8>, %b: tensor<40x32xi8>, %c: tensor<1x32xi8>, %d: tensor<1x32xi8>) -> (tensor<200x40xi32>, tensor<1x1xi32>) {
  %x = hot.int_matmul %a, %b transposed : tensor<200x32xi8>, tensor<40x32xi8> -> tensor<200x40xi32>
  %y = hot.int_matmul %c, %d transposed : tensor<1x32xi8>, tensor<1x32xi8> -> tensor<1x1xi32>
  return %x, %y : tensor<200x40xi32>, tensor<1x1xi32>
}
