// The simulator exports every mgpu* function that host code from MLIR 22's
// gpu-to-llvm calls: the ones ../CUDA/mgpu-symbols.mlir lists.
// RUN: mlir-opt %S/../CUDA/mgpu-symbols.mlir --convert-nvgpu-to-nvvm \
// RUN:   --gpu-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-translate --mlir-to-llvmir -o %t.ll
// RUN: grep -o '^declare .*@mgpu[A-Za-z0-9]*' %t.ll | grep -o 'mgpu[A-Za-z0-9]*' \
// RUN: | sort -u > %t.used
// RUN: count 23 < %t.used
// RUN: sed 's/.*/CHECK-DAG: {{^[0-9a-f]+ T }}&{{$}}/' %t.used > %t.checks
// RUN: llvm-nm -D --defined-only %hot_simulator_runtime | FileCheck %t.checks
