"""GPU execution of hot ops lowered by hot-opt --hot-lower-to-nvvm, bit for bit against the
numpy reference (which the CPU path equals: test_ops_execution.py), through the runner's CUDA
target.  Every test needs a usable GPU: where the runtime's probe finds none, the whole file is
skipped with the probe's reason (ctest then reports it as skipped, not passed).

On a GPU machine without LLVM, the libraries come from $HOT_PREBUILT_DIR, built here by
bench/gpu/prebuild-tests.sh."""

import numpy as np
import pytest

from gpu_cases import (COLS, MODULE, OUT, ROWS, SHAPES, _arch_specific_chip, _chip,
                       _int_matmul_module, _per_col_module, _quantize_pair_module,
                       _sawb_module, _shared_gy_module, compile_gpu, device_or_skip)
from hot import reference


@pytest.fixture(scope="module")
def device():
    return device_or_skip()


def _same_bits(x, y):
    np.testing.assert_array_equal(np.asarray(x).view(np.uint32), np.asarray(y).view(np.uint32))


@pytest.mark.parametrize("arch_specific", [False, True], ids=["chip", "arch-specific-chip"])
def test_gpu_matches_reference(device, tmp_path, arch_specific):
    """Fused hadamard + quantize (nearest and stochastic) and the tensor-core product with its
    fused rescale, bit for bit; with arch_specific, for the device's architecture-specific
    target (sm_90a: the wgmma kernel)."""
    chip = _arch_specific_chip(device) if arch_specific else _chip(device)
    if chip is None:
        pytest.skip(f"hot-opt has no architecture-specific kernels for {_chip(device)}")
    gpu = compile_gpu(MODULE, chip, tmp_path)
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((ROWS, COLS)) * (1 + np.arange(ROWS)[:, None] % 5)).astype(
        np.float32)
    x[3] = 0  # an all-zero row: scale 0, q 0
    h = reference.hadamard(x, 1, 16)

    q, s = gpu.quantize(x)
    q_ref, s_ref = reference.quantize(h, 8, "per_row", "maxabs", "nearest")
    np.testing.assert_array_equal(q, q_ref)
    _same_bits(s, s_ref)

    for seed in (1234, -3):
        q, s = gpu.quantize_stochastic(x, seed)
        q_ref, s_ref = reference.quantize(h, 4, "per_tensor", "maxabs", "stochastic", seed)
        np.testing.assert_array_equal(q, q_ref)
        _same_bits(s, s_ref)

    a = rng.integers(-127, 128, (ROWS, COLS), dtype=np.int8)
    b = rng.integers(-127, 128, (OUT, COLS), dtype=np.int8)
    sa = rng.random(ROWS, dtype=np.float32)
    sb = rng.random(OUT, dtype=np.float32)
    y = gpu.matmul_rescale(a, b, sa, sb)
    _same_bits(y, reference.rescale(reference.int_matmul(a, b, transpose_b=True), sa, sb))


def _int_matmul_on_gpu(chip, tmp_path, m, n, k, ta, tb, bits):
    gpu = compile_gpu(_int_matmul_module(m, n, k, ta, tb, bits), chip, tmp_path)
    rng = np.random.default_rng([m, n, k, ta, tb, bits])
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    qa, _ = reference.quantize(a, bits, "per_tensor", "maxabs", "nearest")
    qb, _ = reference.quantize(b, bits, "per_tensor", "maxabs", "nearest")
    lhs = qa.astype(np.int64).T if ta else qa.astype(np.int64)
    rhs = qb.astype(np.int64).T if tb else qb.astype(np.int64)
    np.testing.assert_array_equal(gpu.product(a, b), lhs @ rhs)


@pytest.mark.parametrize("bits", [8, 4])
@pytest.mark.parametrize("ta,tb", [(False, True), (False, False), (True, False), (True, True)])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_int_matmul_shapes_on_gpu(device, tmp_path, m, n, k, ta, tb, bits):
    """mma.sync kernels (s4 for 4-bit operands where the chip has INT4 tensor cores)."""
    _int_matmul_on_gpu(_chip(device), tmp_path, m, n, k, ta, tb, bits)


@pytest.mark.parametrize("ta,tb", [(False, True), (False, False), (True, False), (True, True)])
@pytest.mark.parametrize("m,n,k", SHAPES + [(300, 200, 1000)])
def test_int_matmul_shapes_on_gpu_wgmma(device, tmp_path, m, n, k, ta, tb):
    """The wgmma kernels of the architecture-specific target (sm_90a on an H100/H200): 8-bit
    operands (4-bit ones take the same s8 kernel). (300, 200, 1000) runs 8 K tiles through the
    4-stage pipeline, refilling every stage."""
    chip = _arch_specific_chip(device)
    if chip is None:
        pytest.skip(f"hot-opt has no architecture-specific kernels for {_chip(device)}")
    _int_matmul_on_gpu(chip, tmp_path, m, n, k, ta, tb, 8)


@pytest.mark.parametrize("granularity", ["per_row", "per_tensor"])
@pytest.mark.parametrize("m,n,block", [(1, 4, 1), (37, 100, 1), (300, 768, 16), (64, 256, 1)])
def test_sawb_quantize_on_gpu(device, tmp_path, m, n, block, granularity):
    """SAWB scales in the fused kernels: the f64 sums in element order (per tensor: rows, then
    the row sums in row order) equal the reference's bit for bit. The 64x256 per-tensor case is
    a group whose clip cancels to ~1e-8 of its mean, where any other summation order gives
    other bits."""
    from test_reference import sawb_near_zero_group

    gpu = compile_gpu(_sawb_module(m, n, granularity, block), _chip(device), tmp_path)
    rng = np.random.default_rng([m, n, block])
    if (m, n) == (64, 256):
        x = sawb_near_zero_group(rng, m * n).reshape(m, n)
    else:
        x = (rng.standard_t(2, (m, n)) * 10.0 ** rng.uniform(-2, 2, (m, 1))).astype(np.float32)
    q, s = gpu.q(x)
    h = reference.hadamard(x, 1, block) if block > 1 else x
    q_ref, s_ref = reference.quantize(h, 4, granularity, "sawb", "nearest")
    _same_bits(s, s_ref)
    np.testing.assert_array_equal(q, q_ref)


@pytest.mark.parametrize("arch_specific", [False, True], ids=["chip", "arch-specific-chip"])
def test_linear_backward_on_gpu(device, tmp_path, arch_specific):
    """One linear layer's HOT backward written in hot ops (python/hot/examples/
    linear_backward.mlir, what `make demo` checks on the CPU), every kernel kind in one module:
    the fused per-row stochastic hadamard + quantize of gy, W's hadamard along dim 0 (the
    block-transform kernel) and per-tensor SAWB, both products with their transposes and fused
    rescales, the HLA kernels (x's also computing the max of its per-tensor quantize), the
    per-column stochastic quantize. All six results bit for bit against the
    numpy reference."""
    from hot import demo

    chip = _arch_specific_chip(device) if arch_specific else _chip(device)
    if chip is None:
        pytest.skip(f"hot-opt has no architecture-specific kernels for {_chip(device)}")
    gpu = compile_gpu(demo.EXAMPLE.read_text(), chip, tmp_path)
    gy, x, w = demo.make_inputs(np.random.default_rng(11))
    seed = 0x5EED_0F_6B
    got = gpu.linear_backward(gy, x, w, seed)
    want = demo.reference_backward(gy, x, w, seed)
    for name, g, e in zip(["gx", "gw", "qg", "sg", "qgy", "sgy"], got, want):
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape, name
        if g.dtype == np.float32:
            g, e = g.view(np.uint32), e.view(np.uint32)
        np.testing.assert_array_equal(g, e, err_msg=name)


@pytest.mark.parametrize("keep_projection", [True, False], ids=["kept", "not-stored"])
@pytest.mark.parametrize("data", ["random", "zeros", "nan"])
@pytest.mark.parametrize("samples,tokens,channels,block", [(3, 37, 40, 8), (2, 197, 96, 16),
                                                           (1, 16, 768, 16)])
def test_shared_statistics_on_gpu(device, tmp_path, samples, tokens, channels, block, data,
                                  keep_projection):
    """gy read by both backward paths. Kept projection: the HLA kernel stores it and computes
    max|hadamard(gy)| (its channel butterfly across registers and lanes) for the gx quantize and
    max|gyl| for the gw quantize, which then run without absmax kernels. Not stored: a statistics
    kernel, then one kernel that quantizes both with their own seeds and hash indices. W's
    hadamard along dim 0 in the block-transform kernel. Tails of 5 tokens, lanes past the
    channels (40 = 10 lanes of 4, 96 = 24), one token block; all-zero gy (scales 0) and a NaN
    (non-finite scales, q 0) too."""
    gpu = compile_gpu(_shared_gy_module(samples, tokens, channels, block, keep_projection),
                      _chip(device), tmp_path)
    rng = np.random.default_rng([samples, tokens, channels, block])
    gy3 = (rng.standard_normal((samples, tokens, channels))
           * 10.0 ** rng.uniform(-1, 1, (samples, tokens, 1))).astype(np.float32)
    if data == "zeros":
        gy3[:] = 0
    elif data == "nan":
        gy3[-1, tokens // 2, channels // 3] = np.nan
    w = rng.standard_normal((channels, 24)).astype(np.float32)
    seed = -77
    q, s, ql, sl, wh, *gyl = gpu.gy(gy3, w, seed)

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


@pytest.mark.parametrize("rounding", ["nearest", "stochastic"])
@pytest.mark.parametrize("m,n", [(1, 4), (37, 100), (5, 6), (300, 7), (64, 768)])
def test_per_col_quantize_on_gpu(device, tmp_path, m, n, rounding):
    """per_col maxabs quantize (LQS's per-output-channel gw scales): per-channel maxima (4, 2 or
    1 channels a thread by the column count), the scales, then the quantize; a zero column
    (scale 0, q 0), a column with a NaN (scale NaN, q 0) and one with an Inf."""
    gpu = compile_gpu(_per_col_module(m, n, 8 if m % 2 else 4, rounding), _chip(device),
                      tmp_path)
    rng = np.random.default_rng([m, n])
    x = (rng.standard_normal((m, n)) * 10.0 ** rng.uniform(-2, 2, (1, n))).astype(np.float32)
    x[:, 0] = 0
    if n > 2:
        x[m // 2, 1] = np.nan
        x[0, 2] = np.inf
    q, s = gpu.q(x, 99)
    q_ref, s_ref = reference.quantize(x, 8 if m % 2 else 4, "per_col", "maxabs", rounding, 99)
    np.testing.assert_array_equal(np.isnan(s), np.isnan(s_ref))
    _same_bits(np.nan_to_num(s), np.nan_to_num(s_ref))
    np.testing.assert_array_equal(q, q_ref)


@pytest.mark.parametrize("granularity", ["per_tensor", "per_col"])
@pytest.mark.parametrize("m,n,block", [(8, 64, 16), (37, 10, 2), (300, 96, 32)])
def test_quantize_pair_on_gpu(device, tmp_path, m, n, block, granularity):
    """A 2-D layer's gy quantized for both paths (hadamard + per-tensor INT4 for gx, INT8 per
    tensor or per column for gw) by one statistics and one quantize kernel, each result with
    its own seed; 10 columns (2 a thread, lanes past them) and a hadamard block spanning 8
    lanes."""
    gpu = compile_gpu(_quantize_pair_module(m, n, block, granularity), _chip(device), tmp_path)
    rng = np.random.default_rng([m, n, block])
    gy = (rng.standard_normal((m, n)) * 10.0 ** rng.uniform(-1, 1, (m, 1))).astype(np.float32)
    seed = 2024
    q, s, q2, s2 = gpu.pair(gy, seed)
    q_ref, s_ref = reference.quantize(reference.hadamard(gy, 1, block), 4, "per_tensor",
                                      "maxabs", "stochastic", seed)
    q2_ref, s2_ref = reference.quantize(gy, 8, granularity, "maxabs", "stochastic", 2 * seed)
    _same_bits(s, s_ref)
    _same_bits(s2, s2_ref)
    np.testing.assert_array_equal(q, q_ref)
    np.testing.assert_array_equal(q2, q2_ref)
