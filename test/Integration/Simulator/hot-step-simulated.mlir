// The training step of ../GPU/hot-step-managed.mlir (hadamard, per-token and
// per-tensor int8 quantization, the tensor-core int_matmul with its rescale,
// the rest through upstream's linalg-to-GPU mapping) lowered for a GPU and run
// by mlir-runner on libhot_simulator_runtime.so: no GPU needed. It must print
// what the CPU path prints (the first line, with the buffer's address, aside),
// for sm_80's kernels and sm_90's.
// RUN: hot-opt %S/../GPU/hot-step-managed.mlir --hot-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | tail -n +2 > %t.cpu
// RUN: hot-opt %S/../GPU/hot-step-managed.mlir \
// RUN:   --hot-lower-to-nvvm="chip=sm_80 format=isa simulator=true" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%hot_simulator_runtime,%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: 2> %t.sm80.err | tail -n +2 > %t.sm80
// RUN: diff %t.cpu %t.sm80
// RUN: hot-opt %S/../GPU/hot-step-managed.mlir \
// RUN:   --hot-lower-to-nvvm="chip=sm_90 format=isa simulator=true" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%hot_simulator_runtime,%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: 2> %t.sm90.err | tail -n +2 > %t.sm90
// RUN: diff %t.cpu %t.sm90
// RUN: FileCheck %s < %t.sm80
// The runtime reported nothing:
// RUN: count 0 < %t.sm80.err
// RUN: count 0 < %t.sm90.err

// CHECK: {{^}}{{\[\[}}
// CHECK-NOT: nan

// The embedded object is the simulator's (a host shared object, listed first);
// the PTX comes along.
// RUN: hot-opt %S/../GPU/hot-step-managed.mlir \
// RUN:   --hot-lower-to-nvvm="chip=sm_80 format=isa simulator=true" \
// RUN: | FileCheck %s --check-prefix=OBJECT
// OBJECT: gpu.binary @hot_kernels  [#gpu.object<#nvvm.target<chip = "sm_80">, properties = {hot.simulator = "{{.*}}"}, bin = "\7FELF
// OBJECT-SAME: #gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">, {{.*}}assembly = "
