// The pipeline's options are checked before it runs: a chip it does not
// know, a PTX version in `features` older than the chip needs, a format
// gpu-module-to-binary does not have. Each used to reach LLVM's NVPTX
// backend (a fatal error without a location, or PTX for a chip that does
// not exist) or to print a broken binary and succeed.
// RUN: not hot-opt %s --hot-lower-to-nvvm="chip=sm_999" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not hot-opt %s --hot-lower-to-nvvm="chip=sm_80x" 2>&1 | FileCheck %s --check-prefix=CHIPX
// RUN: not hot-opt %s --hot-lower-to-nvvm="chip=sm_90a features=+ptx70" 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not hot-opt %s --hot-lower-to-nvvm="format=garbage" 2>&1 | FileCheck %s --check-prefix=FORMAT
// A chip newer than sm_90a gets the PTX version LLVM needs for it.
// RUN: hot-opt %s --hot-lower-to-nvvm="chip=sm_100 format=isa" | FileCheck %s --check-prefix=SM100
// RUN: hot-opt %s --hot-lower-to-nvvm="chip=sm_120 format=isa" | FileCheck %s --check-prefix=SM120

// CHIP: hot-lower-to-nvvm: unknown chip 'sm_999' (the kernels need sm_80 or newer; known: sm_80, sm_86, sm_87, sm_88, sm_89, sm_90, sm_90a, sm_100,
// CHIPX: hot-lower-to-nvvm: unknown chip 'sm_80x'
// PTX: hot-lower-to-nvvm: features '+ptx70' ask for PTX 7.0, older than the 8.0 that sm_90a needs
// FORMAT: hot-lower-to-nvvm: format must be isa, bin, fatbin, llvm or offloading, got 'garbage'
// SM100: .version 8.6
// SM100: .target sm_100
// SM120: .version 8.7
// SM120: .target sm_120

func.func @add(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %c = linalg.add ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  return %c : tensor<64xf32>
}
