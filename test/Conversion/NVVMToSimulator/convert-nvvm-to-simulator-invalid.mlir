// RUN: hot-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(gpu.module(convert-nvvm-to-simulator))'

// What the simulator cannot run is an error at its location, never a kernel
// that silently computes something else.

module attributes {gpu.container_module} {
gpu.module @kernels {
  llvm.func @f16_mma(%a: vector<2xf16>, %c: f32) attributes {nvvm.kernel} {
    // expected-error @+1 {{the simulator runs mma.sync .row.col s8 m16n8k32 and s4 m16n8k64 with s32 accumulators only}}
    %d = nvvm.mma.sync A[%a, %a, %a, %a] B[%a, %a] C[%c, %c, %c, %c] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    llvm.return
  }
}
}

// -----

module attributes {gpu.container_module} {
gpu.module @kernels {
  llvm.func @vote(%mask: i32, %p: i1) attributes {nvvm.kernel} {
    // expected-error @+1 {{the simulator does not implement 'nvvm.vote.sync'}}
    %r = nvvm.vote.sync ballot %mask, %p -> i32
    llvm.return
  }
}
}

// -----

module attributes {gpu.container_module} {
gpu.module @kernels {
  llvm.func @ptx() attributes {nvvm.kernel} {
    // expected-error @+1 {{the simulator cannot run inline assembly}}
    llvm.inline_asm has_side_effects "trap;", "" : () -> ()
    llvm.return
  }
}
}

// -----

module attributes {gpu.container_module} {
gpu.module @kernels {
  llvm.func @math(%x: f32) attributes {nvvm.kernel} {
    %y = llvm.call @__nv_j0f(%x) : (f32) -> f32
    llvm.return
  }
  // expected-error @+1 {{the simulator runtime does not define @__nv_j0f}}
  llvm.func @__nv_j0f(f32) -> f32
}
}

// -----

module attributes {gpu.container_module} {
gpu.module @kernels {
  llvm.func @trans8(%p: !llvm.ptr<3>) attributes {nvvm.kernel} {
    // expected-error @+1 {{the simulator runs ldmatrix .m8n8 .b16 .x1/.x2/.x4 only}}
    %r = nvvm.ldmatrix %p {eltType = #nvvm.ld_st_matrix_elt_type<b8>, layout = #nvvm.mma_layout<col>, num = 1 : i32, shape = #nvvm.ld_st_matrix_shape<m = 16, n = 16>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32)>
    llvm.return
  }
}
}

// -----

module attributes {gpu.container_module} {
gpu.module @kernels {
  llvm.func @wgmma_f16(%acc: !llvm.struct<(f32, f32, f32, f32)>, %da: i64, %db: i64) attributes {nvvm.kernel} {
    // expected-error @+1 {{the simulator runs wgmma.mma_async m64nNk32 .s32.s8.s8 with K-major operands only}}
    %r = nvvm.wgmma.mma_async %da, %db, %acc, <m = 64, n = 8, k = 16>, D [<f32>, <one>, <wrapped>], A [<f16>, <one>, <row>], B [<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
    llvm.return
  }
}
}

// -----

module attributes {gpu.container_module} {
gpu.module @kernels {
  llvm.func @round_to_nearest(%x: f32) attributes {nvvm.kernel} {
    // expected-error @+1 {{the simulator does not run llvm.nvvm.f2i.rn}}
    %r = llvm.call_intrinsic "llvm.nvvm.f2i.rn"(%x) : (f32) -> i32
    llvm.return
  }
}
}
