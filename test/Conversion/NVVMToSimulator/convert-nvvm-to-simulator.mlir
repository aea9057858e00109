// RUN: hot-opt %s --pass-pipeline='builtin.module(gpu.module(convert-nvvm-to-simulator))' \
// RUN:   | FileCheck %s

// Every NVVM op of the kernels becomes a call of the simulator runtime
// (include/hot/Runtime/SimulatorABI.h); shared memory becomes offsets into the
// block's window; each kernel gets a launch function.

module attributes {gpu.container_module} {
gpu.module @kernels {
  // CHECK-NOT: llvm.mlir.global {{.*}}addr_space = 3
  llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<100 x i8>
  llvm.mlir.global internal @acc() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<4 x f32>
  llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 256 : i64} : !llvm.array<0 x i8>

  // CHECK-LABEL: llvm.func @k(
  // CHECK-SAME: %[[IN:.*]]: !llvm.ptr, %[[N:.*]]: i64)
  // CHECK-NOT: nvvm.kernel
  // CHECK-NOT: gpu.kernel
  llvm.func @k(%in: !llvm.ptr, %n: i64) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 64, 1, 1>} {
    // CHECK: %[[C0:.*]] = llvm.mlir.constant(0 : i32) : i32
    // CHECK: llvm.call @__hotsim_sreg(%[[C0]]) : (i32) -> i32
    // CHECK: %[[C6:.*]] = llvm.mlir.constant(6 : i32) : i32
    // CHECK: llvm.call @__hotsim_sreg(%[[C6]]) : (i32) -> i32
    // CHECK: %[[C12:.*]] = llvm.mlir.constant(12 : i32) : i32
    // CHECK: llvm.call @__hotsim_sreg(%[[C12]]) : (i32) -> i32
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %lane = nvvm.read.ptx.sreg.laneid : i32
    // CHECK: %[[BASE:.*]] = llvm.call @__hotsim_shared() : () -> !llvm.ptr
    // CHECK: %[[AT:.*]] = llvm.getelementptr %[[BASE]][0] : (!llvm.ptr) -> !llvm.ptr, i8
    // CHECK: %[[TILE:.*]] = llvm.addrspacecast %[[AT]] : !llvm.ptr to !llvm.ptr<3>
    %tile = llvm.mlir.addressof @tile : !llvm.ptr<3>
    // CHECK: llvm.getelementptr %{{.*}}[112] : (!llvm.ptr) -> !llvm.ptr, i8
    %acc = llvm.mlir.addressof @acc : !llvm.ptr<3>
    // Dynamic shared memory after the static 128 bytes, at its own alignment.
    // CHECK: llvm.getelementptr %{{.*}}[256] : (!llvm.ptr) -> !llvm.ptr, i8
    %dyn = llvm.mlir.addressof @__dynamic_shmem__0 : !llvm.ptr<3>

    // cp.async: generic pointers, the source size (zero fill) passed on.
    // CHECK: %[[DST:.*]] = llvm.addrspacecast %[[TILE]] : !llvm.ptr<3> to !llvm.ptr
    // CHECK: %[[SRC:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr<1> to !llvm.ptr
    // CHECK: llvm.call @__hotsim_cp_async(%[[DST]], %[[SRC]], %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
    // CHECK: llvm.call @__hotsim_cp_async_commit() : () -> ()
    // CHECK: llvm.call @__hotsim_cp_async_wait(%{{.*}}) : (i32) -> ()
    // CHECK: llvm.call @__hotsim_barrier() : () -> ()
    %g = llvm.addrspacecast %in : !llvm.ptr to !llvm.ptr<1>
    %c8 = llvm.mlir.constant(8 : i32) : i32
    nvvm.cp.async.shared.global %tile, %g, 16, cache = cg, %c8 : !llvm.ptr<3>, !llvm.ptr<1>, i32
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.barrier0

    // shfl.sync on f32 goes through its bits; the valid flag through a slot.
    // CHECK: %[[BITS:.*]] = llvm.bitcast %{{.*}} : f32 to i32
    // CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
    // CHECK: %[[R:.*]] = llvm.call @__hotsim_shfl(%{{.*}}, %{{.*}}, %[[BITS]], %{{.*}}, %{{.*}}, %[[NULL]])
    // CHECK: llvm.bitcast %[[R]] : i32 to f32
    %mask = llvm.mlir.constant(-1 : i32) : i32
    %one = llvm.mlir.constant(1 : i32) : i32
    %clamp = llvm.mlir.constant(31 : i32) : i32
    %v = llvm.load %acc : !llvm.ptr<3> -> f32
    %s = nvvm.shfl.sync bfly %mask, %v, %one, %clamp : f32 -> f32
    // CHECK: %[[VALID:.*]] = llvm.call @__hotsim_shfl({{.*}}) : (i32, i32, i32, i32, i32, !llvm.ptr) -> i32
    // CHECK: %[[FLAG:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
    // CHECK: llvm.icmp "ne" %[[FLAG]], %{{.*}} : i32
    // CHECK: llvm.insertvalue
    // CHECK: llvm.insertvalue
    %p = nvvm.shfl.sync idx %mask, %tid, %one, %clamp {return_value_and_is_valid} : i32 -> !llvm.struct<(i32, i1)>

    // ldmatrix: registers back from a stack slot; col layout is .trans.
    // CHECK: llvm.call @__hotsim_ldmatrix(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i32, !llvm.ptr) -> ()
    // CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr -> i32
    %frag = nvvm.ldmatrix %tile {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
    %a0 = llvm.extractvalue %frag[0] : !llvm.struct<(i32, i32, i32, i32)>
    %a1 = llvm.extractvalue %frag[1] : !llvm.struct<(i32, i32, i32, i32)>
    %a2 = llvm.extractvalue %frag[2] : !llvm.struct<(i32, i32, i32, i32)>
    %a3 = llvm.extractvalue %frag[3] : !llvm.struct<(i32, i32, i32, i32)>

    // mma.sync s8 with satfinite: kind 0, saturate 1.
    // CHECK: %[[K0:.*]] = llvm.mlir.constant(0 : i32) : i32
    // CHECK: %[[SAT:.*]] = llvm.mlir.constant(1 : i32) : i32
    // CHECK: llvm.call @__hotsim_mma(%[[K0]], %[[SAT]], %{{.*}}, %{{.*}}, %{{.*}}, %[[D:.*]]) : (i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
    %d = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%a0, %a1] C[%tid, %cta, %lane, %tid] {intOverflowBehavior = #nvvm.mma_int_overflow<satfinite>, layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<s8>, multiplicandBPtxType = #nvvm.mma_type<s8>, shape = #nvvm.shape<m = 16, n = 8, k = 32>} : (i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
    %d0 = llvm.extractvalue %d[0] : !llvm.struct<(i32, i32, i32, i32)>
    llvm.store %d0, %dyn : i32, !llvm.ptr<3>
    %abs = llvm.call @__nv_fabsf(%v) : (f32) -> f32
    llvm.return
  }
  llvm.func @__nv_fabsf(f32) -> f32

  // The launch function loads each parameter through cuLaunchKernel's array.
  // CHECK-LABEL: llvm.func @__hotsim_launch_k(
  // CHECK-SAME: %[[PARAMS:.*]]: !llvm.ptr)
  // CHECK: %[[P0:.*]] = llvm.getelementptr %[[PARAMS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  // CHECK: %[[A0:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
  // CHECK: %[[V0:.*]] = llvm.load %[[A0]] : !llvm.ptr -> !llvm.ptr
  // CHECK: %[[P1:.*]] = llvm.getelementptr %[[PARAMS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  // CHECK: %[[A1:.*]] = llvm.load %[[P1]] : !llvm.ptr -> !llvm.ptr
  // CHECK: %[[V1:.*]] = llvm.load %[[A1]] : !llvm.ptr -> i64
  // CHECK: llvm.call @k(%[[V0]], %[[V1]]) : (!llvm.ptr, i64) -> ()
  // Its parameters' sizes, and its static shared memory: the 128 bytes of
  // @tile and @acc, aligned to the dynamic memory's 256.
  // CHECK: llvm.mlir.global external constant @__hotsim_param_sizes_k
  // CHECK: llvm.mlir.global external constant @__hotsim_static_shared_bytes_k(256 : i64)

  // wgmma: the fences go (each wgmma is computed when the warpgroup issues
  // it); the accumulators go through stack slots.
  // CHECK-LABEL: llvm.func @warpgroup(
  // CHECK-NOT: nvvm.
  // CHECK: %[[SCALE:.*]] = llvm.mlir.constant(1 : i32) : i32
  // CHECK: %[[N:.*]] = llvm.mlir.constant(8 : i32) : i32
  // CHECK: %[[SAT:.*]] = llvm.mlir.constant(1 : i32) : i32
  // CHECK: llvm.call @__hotsim_wgmma(%[[N]], %[[SAT]], %[[SCALE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, i64, i64, !llvm.ptr, !llvm.ptr) -> ()
  // CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr -> i32
  // CHECK: llvm.call @__hotsim_wgmma_commit() : () -> ()
  // CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
  // CHECK: llvm.call @__hotsim_wgmma_wait(%[[ONE]]) : (i32) -> ()
  llvm.func @warpgroup(%acc: !llvm.struct<(i32, i32, i32, i32)>, %da: i64, %db: i64) attributes {nvvm.kernel} {
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.wgmma.fence.aligned
    %r = nvvm.wgmma.mma_async %da, %db, %acc, <m = 64, n = 8, k = 32>, D [<s32>, <one>, <satfinite>], A [<s8>, <one>, <row>], B [<s8>, <one>, <col>] : !llvm.struct<(i32, i32, i32, i32)> -> !llvm.struct<(i32, i32, i32, i32)>
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 1
    llvm.return
  }

  // The inline PTX that convert-nvvm-to-llvm makes of nvvm.wgmma.mma_async:
  // the scale-d operand is tested against 0.
  // CHECK-LABEL: llvm.func @inline_wgmma(
  // CHECK-SAME: %[[D0:[^:]*]]: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %[[DA:.*]]: i64, %[[DB:.*]]: i64, %[[S:.*]]: i32)
  // CHECK-NOT: llvm.inline_asm
  // CHECK: %[[NZ:.*]] = llvm.icmp "ne" %[[S]], %{{.*}} : i32
  // CHECK: %[[FLAG:.*]] = llvm.zext %[[NZ]] : i1 to i32
  // CHECK: %[[N8:.*]] = llvm.mlir.constant(8 : i32) : i32
  // CHECK: %[[WRAP:.*]] = llvm.mlir.constant(0 : i32) : i32
  // CHECK: llvm.call @__hotsim_wgmma(%[[N8]], %[[WRAP]], %[[FLAG]], %[[DA]], %[[DB]], %{{.*}}, %{{.*}})
  llvm.func @inline_wgmma(%d0: i32, %d1: i32, %d2: i32, %d3: i32, %da: i64, %db: i64, %scale: i32) attributes {nvvm.kernel} {
    %r = llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {$0, $1, $2, $3}, $8, $9, p;\0A}\0A", "=r,=r,=r,=r,0,1,2,3,l,l,n" %d0, %d1, %d2, %d3, %da, %db, %scale : (i32, i32, i32, i32, i64, i64, i32) -> !llvm.struct<(i32, i32, i32, i32)>
    llvm.return
  }

  // cvt.rmi.s32.f32 (the quantize kernels' floor of v + u): floor, then a
  // saturating conversion that takes NaN to 0, as PTX's cvt does.
  // CHECK-LABEL: llvm.func @floor_to_i32(
  // CHECK-SAME: %[[X:.*]]: f32)
  // CHECK: %[[F:.*]] = llvm.intr.floor(%[[X]]) : (f32) -> f32
  // CHECK: llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"(%[[F]]) : (f32) -> i32
  // CHECK-NOT: llvm.nvvm.f2i
  llvm.func @floor_to_i32(%x: f32) -> i32 attributes {nvvm.kernel} {
    %r = llvm.call_intrinsic "llvm.nvvm.f2i.rm"(%x) : (f32) -> i32
    llvm.return %r : i32
  }

  // A kernel's window holds the shared memory it references: none here, as
  // a GPU counts it (the module has 256 bytes, all @k's).
  // CHECK: llvm.mlir.global external constant @__hotsim_static_shared_bytes_floor_to_i32(0 : i64)
  // CHECK-NOT: @__hotsim_static_shared_bytes(
}
}
