"""Modules and helpers shared by the GPU tests (test_gpu_runner.py, test_gpu_execution.py)."""

import shutil
from pathlib import Path

import pytest

from hot import runner

ROWS, COLS, OUT = 64, 128, 48

# gy -> hadamard + quantize (per row, the fused kernel) and an i8 product rescaled to f32: the
# ops the GPU lowering turns into its own kernels.
MODULE = f"""
func.func @quantize(%x: tensor<{ROWS}x{COLS}xf32>)
    -> (tensor<{ROWS}x{COLS}xi8>, tensor<{ROWS}xf32>) {{
  %h = hot.hadamard %x along 1 block 16 : tensor<{ROWS}x{COLS}xf32>
  %q, %s = hot.quantize %h bits 8 granularity per_row scale maxabs rounding nearest
      : tensor<{ROWS}x{COLS}xf32> -> tensor<{ROWS}x{COLS}xi8>, tensor<{ROWS}xf32>
  return %q, %s : tensor<{ROWS}x{COLS}xi8>, tensor<{ROWS}xf32>
}}

func.func @quantize_stochastic(%x: tensor<{ROWS}x{COLS}xf32>, %seed: i64)
    -> (tensor<{ROWS}x{COLS}xi8>, tensor<f32>) {{
  %h = hot.hadamard %x along 1 block 16 : tensor<{ROWS}x{COLS}xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs rounding stochastic
      seed %seed : tensor<{ROWS}x{COLS}xf32> -> tensor<{ROWS}x{COLS}xi8>, tensor<f32>
  return %q, %s : tensor<{ROWS}x{COLS}xi8>, tensor<f32>
}}

func.func @matmul_rescale(%a: tensor<{ROWS}x{COLS}xi8>, %b: tensor<{OUT}x{COLS}xi8>,
                          %sa: tensor<{ROWS}xf32>, %sb: tensor<{OUT}xf32>)
    -> tensor<{ROWS}x{OUT}xf32> {{
  %acc = hot.int_matmul %a, %b transposed
      : tensor<{ROWS}x{COLS}xi8>, tensor<{OUT}x{COLS}xi8> -> tensor<{ROWS}x{OUT}xi32>
  %y = hot.rescale %acc, %sa, %sb
      : tensor<{ROWS}x{OUT}xi32>, tensor<{ROWS}xf32>, tensor<{OUT}xf32> -> tensor<{ROWS}x{OUT}xf32>
  return %y : tensor<{ROWS}x{OUT}xf32>
}}
"""


def _require_toolchain(hot_opt):
    try:
        runtime = runner.find_cuda_runtime()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    if shutil.which("ptxas") is None and not Path("/usr/local/cuda/bin/ptxas").exists():
        pytest.skip("no ptxas: the fatbin needs the CUDA toolkit")
    return runtime


def device_or_skip():
    """(major, minor) of device 0; skips with the probe's reason when there is no usable GPU."""
    capability, why = runner.probe_cuda_device()
    if capability is None:
        pytest.skip(f"no usable CUDA device: {why}")
    return capability


def _chip(capability=None):
    return f"sm_{capability[0]}{capability[1]}" if capability else "sm_90"


def _arch_specific_chip(capability):
    """The architecture-specific target of the device where hot-opt has kernels for it (sm_90a:
    wgmma), else None."""
    return "sm_90a" if tuple(capability) == (9, 0) else None


# The tensor-core kernel on shapes that are no multiple of its tiles (M, N predicated, K padded),
# with every operand layout; 4-bit operands (from 4-bit quantizes) take the packed s4 MMA on
# sm_80/86/89 and s8 on sm_90.
SHAPES = [(1, 1, 1), (1, 17, 33), (197, 33, 65), (130, 129, 200), (256, 128, 128)]


def _int_matmul_module(m, n, k, ta, tb, bits):
    a_shape = f"{k}x{m}" if ta else f"{m}x{k}"
    b_shape = f"{n}x{k}" if tb else f"{k}x{n}"
    return f"""
func.func @product(%a: tensor<{a_shape}xf32>, %b: tensor<{b_shape}xf32>) -> tensor<{m}x{n}xi32> {{
  %qa, %sa = hot.quantize %a bits {bits} granularity per_tensor scale maxabs rounding nearest
      : tensor<{a_shape}xf32> -> tensor<{a_shape}xi8>, tensor<f32>
  %qb, %sb = hot.quantize %b bits {bits} granularity per_tensor scale maxabs rounding nearest
      : tensor<{b_shape}xf32> -> tensor<{b_shape}xi8>, tensor<f32>
  %acc = hot.int_matmul %qa{' transposed' if ta else ''}, %qb{' transposed' if tb else ''}
      : tensor<{a_shape}xi8>, tensor<{b_shape}xi8> -> tensor<{m}x{n}xi32>
  return %acc : tensor<{m}x{n}xi32>
}}
"""


