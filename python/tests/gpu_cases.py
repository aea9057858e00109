"""Modules and helpers shared by the GPU tests (test_gpu_runner.py, test_gpu_execution.py)."""

import math
import os
import shutil
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from hot import reference, runner

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


# HOT_GPU_PREBUILD=1 (with HOT_PREBUILT_DIR): build the GPU execution tests' libraries for an
# H200 here, where LLVM is, and skip running them (bench/gpu/prebuild-tests.sh). On the GPU
# machine, with no hot-opt and HOT_PREBUILT_DIR set, the tests load those libraries.
PREBUILD = os.environ.get("HOT_GPU_PREBUILD") == "1"
PREBUILD_CAPABILITY = (9, 0)


class Device(NamedTuple):
    """Where GPU tests run: ``target`` "cuda" (a GPU) or "simulator" (libhot_simulator_runtime.so
    on the CPU), running the kernels hot-opt generates for ``capability``."""
    target: str
    capability: tuple


# The simulator runs sm_80's kernels by default: they include the s4 products (m16n8k64).
SIMULATED_CAPABILITY = (8, 0)


def device_or_skip(target="cuda", capability=SIMULATED_CAPABILITY):
    """The device of ``target``. For "cuda", device 0's capability; skips with the probe's
    reason when there is no usable GPU (when prebuilding: an H200's, without probing). For
    "simulator", ``capability``: it needs only hot-opt, clang and the simulator runtime, built
    with the project, so a missing runtime is a failure, not a skip."""
    if target == "simulator":
        if PREBUILD:
            pytest.skip("the simulator needs no prebuilt libraries")
        if runner.find_hot_opt() is None:
            pytest.skip("hot-opt not found: set HOT_OPT or build build/bin/hot-opt")
        try:
            runner.find_simulator_runtime()
        except FileNotFoundError as e:
            pytest.fail(str(e), pytrace=False)
        return Device("simulator", tuple(capability))
    if PREBUILD:
        return Device("cuda", PREBUILD_CAPABILITY)
    capability, why = runner.probe_cuda_device()
    if capability is None:
        pytest.skip(f"no usable CUDA device: {why}")
    return Device("cuda", tuple(capability))


def compile_gpu(text, device, tmp_path, chip=None, options=""):
    """``text`` compiled for ``chip`` (default: the device's), with more hot-lower-to-nvvm
    ``options``, and loaded on ``device``. On a GPU, built from hot-opt here, or taken from
    ``$HOT_PREBUILT_DIR`` where there is no hot-opt; when prebuilding, built (and copied there)
    and the test skipped."""
    chip = chip or _chip(device)
    if device.target == "simulator":
        return runner.compile_module(text, target="simulator", chip=chip, cache_dir=tmp_path,
                                     pipeline=runner.simulator_pipeline(chip, options))
    pipeline = runner.cuda_pipeline(chip, options=options) if options else None
    if runner.find_hot_opt() is None and not os.environ.get(runner.PREBUILT_ENV):
        pytest.skip("hot-opt not found (set HOT_OPT, or HOT_PREBUILT_DIR to prebuilt "
                    "libraries)")
    if runner.find_hot_opt() is not None:
        _require_toolchain(None)
    if PREBUILD:
        if not os.environ.get(runner.PREBUILT_ENV):
            pytest.fail(f"HOT_GPU_PREBUILD=1 needs ${runner.PREBUILT_ENV}", pytrace=False)
        runner.compile_module(text, target="cuda", chip=chip, cache_dir=tmp_path, load=False,
                              pipeline=pipeline)
        pytest.skip(f"prebuilt for {chip} into ${runner.PREBUILT_ENV}")
    return runner.compile_module(text, target="cuda", chip=chip, cache_dir=tmp_path,
                                 pipeline=pipeline)


def _chip(device):
    return f"sm_{device.capability[0]}{device.capability[1]}"


def arch_specific_chip_or_skip(device):
    """The architecture-specific target of the device where hot-opt has kernels for it (sm_90a:
    wgmma); skips otherwise. The simulator runs sm_90a's wgmma kernels whatever chip it
    simulates."""
    if device.target == "simulator":
        return "sm_90a"
    if tuple(device.capability) != (9, 0):
        pytest.skip(f"hot-opt has no architecture-specific kernels for {_chip(device)}")
    return "sm_90a"


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




def _sawb_module(m, n, granularity, block):
    """quantize (4 bits, sawb, nearest) of a [m, n] f32 input, after a hadamard along dim 1 of
    `block` when it is over 1."""
    t = f"tensor<{m}x{n}xf32>"
    st = "tensor<f32>" if granularity == "per_tensor" else f"tensor<{m}xf32>"
    src = "%h" if block > 1 else "%x"
    hadamard = f"  %h = hot.hadamard %x along 1 block {block} : {t}\n" if block > 1 else ""
    return (f"func.func @q(%x: {t}) -> (tensor<{m}x{n}xi8>, {st}) {{\n" + hadamard
            + f"  %q, %s = hot.quantize {src} bits 4 granularity {granularity} scale sawb"
            f" rounding nearest : {t} -> tensor<{m}x{n}xi8>, {st}\n"
            f"  return %q, %s : tensor<{m}x{n}xi8>, {st}\n}}\n")


def _shared_gy_module(samples, tokens, channels, block, keep_projection):
    """A layer's gy [samples, tokens, channels] read by both paths: hadamard along the channels
    (`block`) + per-tensor stochastic 4-bit quantize (gx), the HLA projection along the tokens
    (16 -> 8, tail copied) + per-tensor stochastic 8-bit quantize (gw), and W's hadamard along
    dim 0 (`block`). With `keep_projection` the function also returns the projection: the
    lowrank kernel stores it and computes both quantizes' maxima; without, a statistics kernel
    and a quantize kernel replace all three ops. The hadamard is the block-transform kernel."""
    n, t = samples * tokens, tokens // 16 * 8 + tokens % 16
    g3, g2 = f"tensor<{samples}x{tokens}x{channels}xf32>", f"tensor<{n}x{channels}xf32>"
    l3, l2 = f"tensor<{samples}x{t}x{channels}xf32>", f"tensor<{samples * t}x{channels}xf32>"
    q2, ql = f"tensor<{n}x{channels}xi8>", f"tensor<{samples * t}x{channels}xi8>"
    w = f"tensor<{channels}x24xf32>"
    kept, kept_type = (", %gyl", f", {l3}") if keep_projection else ("", "")
    return f"""
func.func @gy(%gy3: {g3}, %w: {w}, %seed: i64)
    -> ({q2}, tensor<f32>, {ql}, tensor<f32>, {w}{kept_type}) {{
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]] : {g3} into {g2}
  %h = hot.hadamard %gy along 1 block {block} : {g2}
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs rounding stochastic
      seed %seed : {g2} -> {q2}, tensor<f32>
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail : {g3} -> {l3}
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]] : {l3} into {l2}
  %seed2 = arith.addi %seed, %seed : i64
  %ql, %sl = hot.quantize %gyl2 bits 8 granularity per_tensor scale maxabs rounding stochastic
      seed %seed2 : {l2} -> {ql}, tensor<f32>
  %wh = hot.hadamard %w along 0 block {block} : {w}
  return %q, %s, %ql, %sl, %wh{kept} : {q2}, tensor<f32>, {ql}, tensor<f32>, {w}{kept_type}
}}
"""


def _per_col_module(m, n, bits, rounding):
    """quantize (per_col, maxabs) of a [m, n] f32 input: per-channel maxima, scales and the
    quantize as three kernels."""
    t, q, s = f"tensor<{m}x{n}xf32>", f"tensor<{m}x{n}xi8>", f"tensor<{n}xf32>"
    seed = " seed %seed" if rounding == "stochastic" else ""
    return (f"func.func @q(%x: {t}, %seed: i64) -> ({q}, {s}) {{\n"
            f"  %q, %s = hot.quantize %x bits {bits} granularity per_col scale maxabs"
            f" rounding {rounding}{seed} : {t} -> {q}, {s}\n"
            f"  return %q, %s : {q}, {s}\n}}\n")


def _quantize_pair_module(m, n, block, granularity, product=False):
    """A 2-D layer's gy [m, n] read by both paths without HLA: hadamard along the rows
    (`block`) + per-tensor stochastic 4-bit quantize (gx), and the 8-bit stochastic quantize of
    gy itself per tensor or per column (gw): one statistics kernel and one quantize kernel for
    both (with a scales kernel between them per column). With `product`, gy's 8-bit q is only
    read by gw = rescale(q2^T qx): the quantize kernel writes it K-contiguous for the product
    (K = m tokens, 8 a thread at a time), and the function returns gw instead."""
    t, q = f"tensor<{m}x{n}xf32>", f"tensor<{m}x{n}xi8>"
    s = "tensor<f32>" if granularity == "per_tensor" else f"tensor<{n}xf32>"
    if product:
        tx, qx, gw = f"tensor<{m}x24xf32>", f"tensor<{m}x24xi8>", f"tensor<{n}x24xf32>"
        args, results = f", %x: {tx}", f"{gw}, {s}"
        tail = f"""  %qx, %sx = hot.quantize %x bits 8 granularity per_tensor scale maxabs rounding nearest
      : {tx} -> {qx}, tensor<f32>
  %acc = hot.int_matmul %q2 transposed, %qx : {q}, {qx} -> tensor<{n}x24xi32>
  %gw = hot.rescale %acc, %s2, %sx : tensor<{n}x24xi32>, {s}, tensor<f32> -> {gw}
  return %q, %s, %gw, %s2 : {q}, tensor<f32>, {results}"""
    else:
        args, results = "", f"{q}, {s}"
        tail = f"  return %q, %s, %q2, %s2 : {q}, tensor<f32>, {results}"
    return f"""
func.func @pair(%gy: {t}, %seed: i64{args}) -> ({q}, tensor<f32>, {results}) {{
  %h = hot.hadamard %gy along 1 block {block} : {t}
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs rounding stochastic
      seed %seed : {t} -> {q}, tensor<f32>
  %seed2 = arith.addi %seed, %seed : i64
  %q2, %s2 = hot.quantize %gy bits 8 granularity {granularity} scale maxabs rounding stochastic
      seed %seed2 : {t} -> {q}, {s}
{tail}
}}
"""


def _same_bits(x, y):
    """x and y bit for bit, except that a NaN matches any NaN: docs/numerics.md leaves a NaN's
    sign and payload unspecified (the CPU path propagates the input's quiet NaN, 0x7fc00000;
    an H200's max and divide give 0x7fffffff)."""
    x, y = np.asarray(x), np.asarray(y)
    assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, x.dtype, y.shape, y.dtype)
    nan = np.isnan(x)
    np.testing.assert_array_equal(nan, np.isnan(y), err_msg="NaN in one but not the other")
    np.testing.assert_array_equal(x[~nan].view(np.uint32), y[~nan].view(np.uint32))


# Checks of the transform kernels, given `compile(text) -> module`: run by test_gpu_execution.py
# on the device, and by test_gpu_cases_on_cpu.py on the CPU path (which equals the reference:
# test_ops_execution.py), so that the checks themselves are known to be right.

SHARED_GY_SHAPES = [(3, 37, 40, 8), (2, 197, 96, 16), (1, 16, 768, 16)]
PER_COL_SHAPES = [(1, 4), (37, 100), (5, 6), (300, 7), (64, 768)]
PAIR_SHAPES = [(8, 64, 16), (37, 10, 2), (300, 96, 32)]


def check_shared_statistics(compile, samples, tokens, channels, block, data, keep_projection):
    """gy read by both backward paths. Kept projection: the HLA kernel stores it and computes
    max|hadamard(gy)| (its channel butterfly across registers and lanes) for the gx quantize and
    max|gyl| for the gw quantize, which then run without absmax kernels. Not stored: a statistics
    kernel, then one kernel that quantizes both with their own seeds and hash indices. W's
    hadamard along dim 0 in the block-transform kernel. Tails of 5 tokens, lanes past the
    channels (40 = 10 lanes of 4, 96 = 24), one token block; all-zero gy (scales 0) and a NaN
    (non-finite scales, q 0) too."""
    module = compile(_shared_gy_module(samples, tokens, channels, block, keep_projection))
    rng = np.random.default_rng([samples, tokens, channels, block])
    gy3 = (rng.standard_normal((samples, tokens, channels))
           * 10.0 ** rng.uniform(-1, 1, (samples, tokens, 1))).astype(np.float32)
    if data == "zeros":
        gy3[:] = 0
    elif data == "nan":
        gy3[-1, tokens // 2, channels // 3] = np.nan
    w = rng.standard_normal((channels, 24)).astype(np.float32)
    seed = -77
    q, s, ql, sl, wh, *gyl = module.gy(gy3, w, seed)

    gy = gy3.reshape(samples * tokens, channels)
    q_ref, s_ref = reference.quantize(reference.hadamard(gy, 1, block), 4, "per_tensor",
                                      "maxabs", "stochastic", seed)
    gyl_ref = reference.lowrank(gy3, 1, 16, 8, allow_tail=True)
    ql_ref, sl_ref = reference.quantize(gyl_ref.reshape(-1, channels), 8, "per_tensor",
                                        "maxabs", "stochastic", 2 * seed)
    if keep_projection:
        np.testing.assert_array_equal(np.isnan(gyl[0]), np.isnan(gyl_ref))
        _same_bits(np.nan_to_num(gyl[0]), np.nan_to_num(gyl_ref))
    for got, want in ((s, s_ref), (sl, sl_ref)):
        if data == "nan":
            assert np.isnan(got) and np.isnan(want)
        else:
            _same_bits(got, want)
    np.testing.assert_array_equal(q, q_ref)
    np.testing.assert_array_equal(ql, ql_ref)
    _same_bits(wh, reference.hadamard(w, 0, block))


def check_per_col_quantize(compile, m, n, rounding):
    """per_col maxabs quantize (LQS's per-output-channel gw scales): per-channel maxima (4, 2 or
    1 channels a thread by the column count), the scales, then the quantize; a zero column
    (scale 0, q 0), a column with a NaN (scale NaN, q 0) and one with an Inf."""
    bits = 8 if m % 2 else 4
    module = compile(_per_col_module(m, n, bits, rounding))
    rng = np.random.default_rng([m, n])
    x = (rng.standard_normal((m, n)) * 10.0 ** rng.uniform(-2, 2, (1, n))).astype(np.float32)
    x[:, 0] = 0
    if n > 2:
        x[m // 2, 1] = np.nan
        x[0, 2] = np.inf
    q, s = module.q(x, 99)
    q_ref, s_ref = reference.quantize(x, bits, "per_col", "maxabs", rounding, 99)
    np.testing.assert_array_equal(np.isnan(s), np.isnan(s_ref))
    _same_bits(np.nan_to_num(s), np.nan_to_num(s_ref))
    np.testing.assert_array_equal(q, q_ref)


def check_quantize_pair(compile, m, n, block, granularity, product=False):
    """A 2-D layer's gy quantized for both paths (hadamard + per-tensor INT4 for gx, INT8 per
    tensor or per column for gw) by one statistics and one quantize kernel, each result with
    its own seed; 10 columns (2 a thread, lanes past them) and a hadamard block spanning 8
    lanes. With `product`, the gw product of the 8-bit q (written K-major by the quantize
    kernel) and a quantized x [m, 24], bit for bit."""
    module = compile(_quantize_pair_module(m, n, block, granularity, product))
    rng = np.random.default_rng([m, n, block])
    gy = (rng.standard_normal((m, n)) * 10.0 ** rng.uniform(-1, 1, (m, 1))).astype(np.float32)
    seed = 2024
    q2_ref, s2_ref = reference.quantize(gy, 8, granularity, "maxabs", "stochastic", 2 * seed)
    if product:
        x = rng.standard_normal((m, 24)).astype(np.float32)
        q, s, gw, s2 = module.pair(gy, seed, x)
        qx, sx = reference.quantize(x, 8, "per_tensor", "maxabs", "nearest")
        gw_ref = reference.rescale(reference.int_matmul(q2_ref, qx, transpose_a=True), s2_ref,
                                   sx)
        _same_bits(gw, gw_ref)
    else:
        q, s, q2, s2 = module.pair(gy, seed)
        np.testing.assert_array_equal(q2, q2_ref)
    q_ref, s_ref = reference.quantize(reference.hadamard(gy, 1, block), 4, "per_tensor",
                                      "maxabs", "stochastic", seed)
    _same_bits(s, s_ref)
    _same_bits(s2, s2_ref)
    np.testing.assert_array_equal(q, q_ref)


# A linear layer's backward in a bf16 or f16 graph, in the form hot-rewrite-backward-matmuls
# gives it: gy, x and W extended to f32 for the hot ops (gy and W by arith.extf on tensors, x by
# a linalg.generic, torch-mlir's form), both products truncated back (gx by arith.truncf, gw by
# a linalg.generic). The GPU lowering reads the narrow tensors in its transform kernels and
# truncates in the products' epilogues: no f32 copy of gy, x or W is made.
NARROW_LAYER_SHAPES = [(2, 37, 40, 48), (3, 16, 24, 64)]
# A layer whose gw product has a K long enough to split: 4 x 101 projected tokens.
SPLIT_K_LAYER_SHAPE = (4, 197, 40, 48)
# (gx, gw) scale granularities: the defaults, and LQS's finer choices.
NARROW_LAYER_GRANULARITIES = [("per_tensor", "per_tensor"), ("per_row", "per_col")]


def _narrow_layer_module(b, t, i, o, element, gx_granularity, gw_granularity):
    n, tl = b * t, (t // 16) * 8 + t % 16
    nl = b * tl
    e = element
    sg = f"tensor<{n}xf32>" if gx_granularity == "per_row" else "tensor<f32>"
    sgy = f"tensor<{o}xf32>" if gw_granularity == "per_col" else "tensor<f32>"
    ident = "affine_map<(d0, d1, d2) -> (d0, d1, d2)>"
    ident2 = "affine_map<(d0, d1) -> (d0, d1)>"
    return f"""
func.func @layer(%x3: tensor<{b}x{t}x{i}x{e}>, %w: tensor<{o}x{i}x{e}>,
                 %gy3: tensor<{b}x{t}x{o}x{e}>, %seed: i64)
    -> (tensor<{n}x{i}x{e}>, tensor<{o}x{i}x{e}>) {{
  %c1 = arith.constant 4294967296 : i64
  %c2 = arith.constant 8589934592 : i64
  %seed1 = arith.addi %seed, %c1 : i64
  %seed2 = arith.addi %seed, %c2 : i64
  %gyf = arith.extf %gy3 : tensor<{b}x{t}x{o}x{e}> to tensor<{b}x{t}x{o}xf32>
  %gy = tensor.collapse_shape %gyf [[0, 1], [2]] : tensor<{b}x{t}x{o}xf32> into tensor<{n}x{o}xf32>
  %wf = arith.extf %w : tensor<{o}x{i}x{e}> to tensor<{o}x{i}xf32>
  %gyh = hot.hadamard %gy along 1 block 16 : tensor<{n}x{o}xf32>
  %wh = hot.hadamard %wf along 0 block 16 : tensor<{o}x{i}xf32>
  %qg, %sg = hot.quantize %gyh bits 4 granularity {gx_granularity} scale maxabs
      rounding stochastic seed %seed1 : tensor<{n}x{o}xf32> -> tensor<{n}x{o}xi8>, {sg}
  %qw, %sw = hot.quantize %wh bits 4 granularity per_tensor scale sawb rounding nearest
      : tensor<{o}x{i}xf32> -> tensor<{o}x{i}xi8>, tensor<f32>
  %acc = hot.int_matmul %qg, %qw : tensor<{n}x{o}xi8>, tensor<{o}x{i}xi8> -> tensor<{n}x{i}xi32>
  %gx32 = hot.rescale %acc, %sg, %sw : tensor<{n}x{i}xi32>, {sg}, tensor<f32> -> tensor<{n}x{i}xf32>
  %gx = arith.truncf %gx32 : tensor<{n}x{i}xf32> to tensor<{n}x{i}x{e}>
  %gyl = hot.lowrank %gyf along 1 block 16 rank 8 allow_tail
      : tensor<{b}x{t}x{o}xf32> -> tensor<{b}x{tl}x{o}xf32>
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]] : tensor<{b}x{tl}x{o}xf32> into tensor<{nl}x{o}xf32>
  %xe = tensor.empty() : tensor<{b}x{t}x{i}xf32>
  %xf = linalg.generic {{indexing_maps = [{ident}, {ident}],
                        iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%x3 : tensor<{b}x{t}x{i}x{e}>) outs(%xe : tensor<{b}x{t}x{i}xf32>) {{
  ^bb0(%in: {e}, %out: f32):
    %v = arith.extf %in : {e} to f32
    linalg.yield %v : f32
  }} -> tensor<{b}x{t}x{i}xf32>
  %xl = hot.lowrank %xf along 1 block 16 rank 8 allow_tail
      : tensor<{b}x{t}x{i}xf32> -> tensor<{b}x{tl}x{i}xf32>
  %xl2 = tensor.collapse_shape %xl [[0, 1], [2]] : tensor<{b}x{tl}x{i}xf32> into tensor<{nl}x{i}xf32>
  %qgy, %sgy = hot.quantize %gyl2 bits 8 granularity {gw_granularity} scale maxabs
      rounding stochastic seed %seed2 : tensor<{nl}x{o}xf32> -> tensor<{nl}x{o}xi8>, {sgy}
  %qx, %sx = hot.quantize %xl2 bits 8 granularity per_tensor scale maxabs rounding nearest
      : tensor<{nl}x{i}xf32> -> tensor<{nl}x{i}xi8>, tensor<f32>
  %acc2 = hot.int_matmul %qgy transposed, %qx
      : tensor<{nl}x{o}xi8>, tensor<{nl}x{i}xi8> -> tensor<{o}x{i}xi32>
  %gw32 = hot.rescale %acc2, %sgy, %sx : tensor<{o}x{i}xi32>, {sgy}, tensor<f32> -> tensor<{o}x{i}xf32>
  %ge = tensor.empty() : tensor<{o}x{i}x{e}>
  %gw = linalg.generic {{indexing_maps = [{ident2}, {ident2}],
                        iterator_types = ["parallel", "parallel"]}}
      ins(%gw32 : tensor<{o}x{i}xf32>) outs(%ge : tensor<{o}x{i}x{e}>) {{
  ^bb0(%in: f32, %out: {e}):
    %v = arith.truncf %in : f32 to {e}
    linalg.yield %v : {e}
  }} -> tensor<{o}x{i}x{e}>
  return %gx, %gw : tensor<{n}x{i}x{e}>, tensor<{o}x{i}x{e}>
}}
"""


def _narrow(values, element):
    """float32 values in the element type as the runner passes it (bf16: bit patterns)."""
    if element == "bf16":
        return runner.to_bfloat16(values)
    return np.asarray(values, dtype=np.float32).astype(np.float16)


def _widen(values, element):
    if element == "bf16":
        return runner.from_bfloat16(values)
    return np.asarray(values).astype(np.float32)


def check_narrow_layer(compile, shape, element, granularity, gw_bits=8):
    """A bf16/f16 layer's HOT backward (_narrow_layer_module), both gradients bit for bit
    against the numpy reference of the rewritten layer on the inputs extended to f32, each
    result rounded to the element type (to nearest even) as the graph's truncation does. gy has
    outlier tokens and, per_row, an all-zero token (its scale 0); T = 37 has tails of 5 tokens.
    With gw_bits 4, both gw operands are on a 4-bit grid: packed two per byte for s4 MMA where
    the chip has it, by transpose kernels (the quantize kernels write only s8 operands)."""
    b, t, i, o = shape
    gx_granularity, gw_granularity = granularity
    text = _narrow_layer_module(b, t, i, o, element, gx_granularity, gw_granularity)
    if gw_bits != 8:
        assert text.count("bits 8 ") == 2
        text = text.replace("bits 8 ", f"bits {gw_bits} ")
    module = compile(text)
    rng = np.random.default_rng([b, t, i, o, len(element)])
    x3 = _narrow(np.cumsum(rng.standard_normal((b, t, i)), axis=1) / np.sqrt(t), element)
    w = _narrow(rng.standard_normal((o, i)) / np.sqrt(i), element)
    gy = rng.standard_normal((b, t, o)) * 10.0 ** rng.uniform(-1, 1, (b, t, 1))
    gy[0, 1] = 0
    gy3 = _narrow(gy, element)
    seed = -1234567
    gx, gw = module.layer(x3, w, gy3, seed)
    want_gx, want_gw = reference.linear_backward(_widen(x3, element), _widen(w, element),
                                                 _widen(gy3, element), seed, gx_granularity,
                                                 gw_granularity, gw_bits=gw_bits)
    np.testing.assert_array_equal(np.asarray(gx), _narrow(want_gx, element), err_msg="gx")
    np.testing.assert_array_equal(np.asarray(gw), _narrow(want_gw, element), err_msg="gw")


def _gw_given_x_module(b, t, i, o):
    """gw = gyᵀ·x where only gy is projected here (HLA along its t tokens, tail of t mod 16) and
    x comes already projected, [b·t', i]: the product's operands are not two projections of one
    shape, so K keeps its natural order, and gy's quantize kernel writes its operand
    K-contiguous in it (a sample's block rows, then its tail rows, then the next sample's)."""
    tl = (t // 16) * 8 + t % 16
    g3, l3, l2 = (f"tensor<{b}x{t}x{o}xf32>", f"tensor<{b}x{tl}x{o}xf32>",
                  f"tensor<{b * tl}x{o}xf32>")
    x2 = f"tensor<{b * tl}x{i}xf32>"
    return f"""
func.func @gw(%gy3: {g3}, %xl: {x2}, %seed: i64) -> tensor<{o}x{i}xf32> {{
  %gyl = hot.lowrank %gy3 along 1 block 16 rank 8 allow_tail : {g3} -> {l3}
  %gyl2 = tensor.collapse_shape %gyl [[0, 1], [2]] : {l3} into {l2}
  %qgy, %sgy = hot.quantize %gyl2 bits 8 granularity per_tensor scale maxabs
      rounding stochastic seed %seed : {l2} -> tensor<{b * tl}x{o}xi8>, tensor<f32>
  %qx, %sx = hot.quantize %xl bits 8 granularity per_tensor scale maxabs rounding nearest
      : {x2} -> tensor<{b * tl}x{i}xi8>, tensor<f32>
  %acc = hot.int_matmul %qgy transposed, %qx
      : tensor<{b * tl}x{o}xi8>, tensor<{b * tl}x{i}xi8> -> tensor<{o}x{i}xi32>
  %gw = hot.rescale %acc, %sgy, %sx : tensor<{o}x{i}xi32>, tensor<f32>, tensor<f32>
      -> tensor<{o}x{i}xf32>
  return %gw : tensor<{o}x{i}xf32>
}}
"""


def check_gw_given_x(compile, b=3, t=37, i=24, o=40):
    """_gw_given_x_module bit for bit against the numpy reference: gy with outlier tokens, 3
    samples of 37 tokens (a tail of 5 each)."""
    module = compile(_gw_given_x_module(b, t, i, o))
    rng = np.random.default_rng([b, t, i, o])
    gy3 = (rng.standard_normal((b, t, o)) * 10.0 ** rng.uniform(-1, 1, (b, t, 1))).astype(
        np.float32)
    tl = (t // 16) * 8 + t % 16
    xl = rng.standard_normal((b * tl, i)).astype(np.float32)
    seed = 77
    gw = module.gw(gy3, xl, seed)
    gyl = reference.lowrank(gy3, 1, 16, 8, allow_tail=True).reshape(-1, o)
    qgy, sgy = reference.quantize(gyl, 8, "per_tensor", "maxabs", "stochastic", seed)
    qx, sx = reference.quantize(xl, 8, "per_tensor", "maxabs", "nearest")
    _same_bits(gw, reference.rescale(reference.int_matmul(qgy, qx, transpose_a=True), sgy, sx))


# (m, n, block, element): W's shapes in small (rows in blocks of 16 along dim 0), rows that are
# not a multiple of the vector width (n = 50: 2 per lane; n = 33: 1, lanes past the row), the
# largest block a thread holds (32) and the smallest (2), a bf16 input.
COLUMN_HADAMARD_SHAPES = [(48, 96, 16, "f32"), (64, 50, 32, "f32"), (6, 33, 2, "f32"),
                          (32, 128, 16, "bf16")]
COLUMN_HADAMARD_QUANTIZES = [("per_tensor", "sawb", "nearest"),
                             ("per_tensor", "maxabs", "stochastic"),
                             ("per_row", "sawb", "nearest"), ("per_row", "maxabs", "stochastic")]


def _column_hadamard_module(m, n, block, element, granularity, scale, rounding):
    """quantize(hadamard(x along 0, block)) of an [m, n] input (bf16 extended to f32, as the
    rewrite gives W of a bf16 graph): W's path on the gx side."""
    t, e = f"tensor<{m}x{n}xf32>", f"tensor<{m}x{n}x{element}>"
    st = "tensor<f32>" if granularity == "per_tensor" else f"tensor<{m}xf32>"
    seed = " seed %seed" if rounding == "stochastic" else ""
    if element == "f32":
        head, x = f"func.func @q(%x: {t}, %seed: i64)", "%x"
        extend = ""
    else:
        head, x = f"func.func @q(%xn: {e}, %seed: i64)", "%x"
        extend = f"  %x = arith.extf %xn : {e} to {t}\n"
    return (f"{head} -> (tensor<{m}x{n}xi8>, {st}) {{\n{extend}"
            f"  %h = hot.hadamard {x} along 0 block {block} : {t}\n"
            f"  %q, %s = hot.quantize %h bits 4 granularity {granularity} scale {scale}"
            f" rounding {rounding}{seed} : {t} -> tensor<{m}x{n}xi8>, {st}\n"
            f"  return %q, %s : tensor<{m}x{n}xi8>, {st}\n}}\n")


def check_column_hadamard_quantize(compile, m, n, block, element, granularity, scale, rounding):
    """W's hadamard along dim 0 computed by the quantize kernels as they load the rows
    (columnBlock), against the reference's hadamard then quantize: q and the scales bit for bit,
    with a row of zeros and, per_row, a NaN in one row (its scale NaN, its q 0)."""
    module = compile(_column_hadamard_module(m, n, block, element, granularity, scale, rounding))
    rng = np.random.default_rng([m, n, block, len(element)])
    x = (rng.standard_t(3, (m, n)) * 10.0 ** rng.uniform(-1, 1, (m, 1))).astype(np.float32)
    x[m // 2] = 0
    if granularity == "per_row":
        x[1, n // 3] = np.nan
    xn = _narrow(x, element) if element != "f32" else x
    seed = -424242
    q, s = module.q(xn, seed)
    h = reference.hadamard(_widen(xn, element) if element != "f32" else x, 0, block)
    q_ref, s_ref = reference.quantize(h, 4, granularity, scale, rounding,
                                      seed if rounding == "stochastic" else None)
    _same_bits(s, s_ref)
    np.testing.assert_array_equal(q, q_ref)


# (m, n, block, element) of check_row_hadamard_quantize: 96 values per lane (the most the
# kernel keeps in registers by default), 100 (transformed twice), a partial last chunk at
# vector widths 4, 2 and 1, one-element blocks, a bf16 input.
ROW_HADAMARD_SHAPES = [(9, 3072, 16, "f32"), (5, 3200, 16, "f32"), (7, 1000, 8, "f32"),
                       (6, 1002, 2, "f32"), (3, 33, 1, "f32"), (10, 96, 16, "bf16")]
ROW_HADAMARD_QUANTIZES = [("maxabs", "stochastic"), ("maxabs", "nearest"), ("sawb", "nearest")]


def _row_hadamard_module(m, n, block, element, scale, rounding):
    """quantize(hadamard(x along 1, block)) per row, 4 bits, of an [m, n] input (bf16 extended
    to f32 first): the gx path's gy with LQS."""
    t, e = f"tensor<{m}x{n}xf32>", f"tensor<{m}x{n}x{element}>"
    head = f"func.func @q(%x{'n' if element != 'f32' else ''}: {e}, %seed: i64)"
    extend = f"  %x = arith.extf %xn : {e} to {t}\n" if element != "f32" else ""
    hadamard = f"  %h = hot.hadamard %x along 1 block {block} : {t}\n" if block > 1 else ""
    seed = " seed %seed" if rounding == "stochastic" else ""
    return (f"{head} -> (tensor<{m}x{n}xi8>, tensor<{m}xf32>) {{\n{extend}{hadamard}"
            f"  %q, %s = hot.quantize {'%h' if block > 1 else '%x'} bits 4 granularity per_row"
            f" scale {scale} rounding {rounding}{seed} : {t} -> tensor<{m}x{n}xi8>,"
            f" tensor<{m}xf32>\n"
            f"  return %q, %s : tensor<{m}x{n}xi8>, tensor<{m}xf32>\n}}\n")


def check_row_hadamard_quantize(compile, m, n, block, element, scale, rounding):
    """The per-row fused hadamard + quantize kernel (the row kept in registers, or transformed
    twice), against the reference's hadamard then quantize: q and the scales bit for bit, with
    rows of zeros, of a NaN and of an Inf (scales 0, NaN and Inf or NaN), and rows whose
    magnitudes span 10^-2 to 10^2."""
    module = compile(_row_hadamard_module(m, n, block, element, scale, rounding))
    rng = np.random.default_rng([m, n, block, len(element), len(scale), len(rounding)])
    x = (rng.standard_t(3, (m, n)) * 10.0 ** rng.uniform(-2, 2, (m, 1))).astype(np.float32)
    x[0] = 0
    x[1, n - 1] = np.nan
    x[2, n // 2] = np.inf
    xn = _narrow(x, element) if element != "f32" else x
    seed = 987654321987
    q, s = module.q(xn, seed)
    w = _widen(xn, element) if element != "f32" else x
    h = reference.hadamard(w, 1, block) if block > 1 else w
    q_ref, s_ref = reference.quantize(h, 4, "per_row", scale, rounding,
                                      seed if rounding == "stochastic" else None)
    _same_bits(s, s_ref)
    np.testing.assert_array_equal(q, q_ref)


LOOP_TRIPS = [0, 1, 5]

_LOOP_MODULE = """
func.func @scan(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %n: index) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<4x8xf32> {
    %e = tensor.empty() : tensor<4x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %p = linalg.matmul ins(%acc, %w : tensor<4x8xf32>, tensor<8x8xf32>)
                       outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
    %y = linalg.add ins(%p, %x : tensor<4x8xf32>, tensor<4x8xf32>)
                    outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %y : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}
"""


def check_loop_iter_args(compile, trips):
    """A loop whose iter_args are tensors (a scan: acc = acc·W + x, `trips` times): each trip
    yields a new buffer, which bufferization must be allowed to return from the loop and the
    deallocation pipeline to free. Against numpy in float64, rounded: the same f32 operations
    in the same order are not guaranteed (the matmul's sum order), so to 1e-5 relative."""
    module = compile(_LOOP_MODULE)
    rng = np.random.default_rng(trips)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 8)) / 4).astype(np.float32)
    want = x.astype(np.float64)
    for _ in range(trips):
        want = want @ w.astype(np.float64) + x
    got = np.asarray(module.scan(x, w, trips))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def column_sawb_near_zero(rng, m, n, block):
    """An [m, n] f32 x whose hadamard along dim 0 (``block``) has a SAWB clip of about 1e-8 of
    its mean, and that hadamard (the reference's). x is the transform of values of magnitude
    about 1, 1 % of them scaled by t, so transforming it gives them back up to rounding; t is
    the least f32 at which the clip of the result is positive (as sawb_near_zero_group does
    for a group itself)."""
    base = rng.uniform(1, 1.01, (m, n)) * np.where(rng.random((m, n)) < 0.5, -1.0, 1.0)
    sub = rng.random((m, n)) < 0.01

    def transformed(t):
        x = reference.hadamard(np.where(sub, base * t, base).astype(np.float32), 0, block)
        return x, reference.hadamard(x, 0, block)

    def clip(t):
        h = transformed(t)[1].astype(np.float64)
        return 12.1 * math.sqrt(np.mean(h * h)) - 12.2 * np.mean(np.abs(h))

    lo, hi = 1.0, 100.0  # clip(1) < 0 < clip(100)
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if clip(mid) < 0 else (lo, mid)
    t = np.float32(lo)
    while clip(t) <= 0:
        t = np.nextafter(t, np.float32(200))
    return transformed(t)
