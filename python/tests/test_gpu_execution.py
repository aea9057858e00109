"""GPU execution of hot ops lowered by hot-opt --hot-lower-to-nvvm, bit for bit against the
numpy reference (which the CPU path equals: test_ops_execution.py), on two devices:

* ``cuda``: the runner's CUDA target. It needs a usable GPU: where the runtime's probe finds
  none, these tests are skipped with the probe's reason (reported as skipped, not passed).
* ``simulator``: the same kernels (sm_80's, whose products include s4 MMA) run on the CPU by
  libhot_simulator_runtime.so, one fiber per GPU thread, with shuffles, ldmatrix, cp.async
  and integer MMA (mma.sync, and sm_90a's wgmma from shared-memory descriptors) computed from
  their PTX definitions. These always run.

On a GPU machine without LLVM, the libraries come from $HOT_PREBUILT_DIR, built here by
bench/gpu/prebuild-tests.sh."""

import math
import re
import subprocess

import numpy as np
import pytest

from gpu_cases import (LOOP_TRIPS, _column_hadamard_module, column_sawb_near_zero, ROW_HADAMARD_QUANTIZES, ROW_HADAMARD_SHAPES,
                       check_column_hadamard_quantize, check_gw_given_x, COLS,
                       check_row_hadamard_quantize,
                       check_loop_iter_args,
                       COLUMN_HADAMARD_QUANTIZES, COLUMN_HADAMARD_SHAPES, MODULE, NARROW_LAYER_GRANULARITIES, NARROW_LAYER_SHAPES, OUT,
                       PAIR_SHAPES, PER_COL_SHAPES, ROWS, SHAPES, SHARED_GY_SHAPES, _chip,
                       _int_matmul_module, _same_bits, _sawb_module, arch_specific_chip_or_skip,
                       check_narrow_layer, check_per_col_quantize, check_quantize_pair,
                       check_shared_statistics, compile_gpu, device_or_skip, SPLIT_K_LAYER_SHAPE)
from hot import demo, reference, runner


@pytest.fixture(scope="module", params=["cuda", "simulator"])
def device(request):
    return device_or_skip(request.param)


@pytest.mark.parametrize("arch_specific", [False, True], ids=["chip", "arch-specific-chip"])
def test_gpu_matches_reference(device, tmp_path, arch_specific):
    """Fused hadamard + quantize (nearest and stochastic) and the tensor-core product with its
    fused rescale, bit for bit; with arch_specific, for the device's architecture-specific
    target (sm_90a: the wgmma kernel)."""
    chip = arch_specific_chip_or_skip(device) if arch_specific else _chip(device)
    gpu = compile_gpu(MODULE, device, tmp_path, chip)
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


def _int_matmul_on_gpu(device, chip, tmp_path, m, n, k, ta, tb, bits):
    gpu = compile_gpu(_int_matmul_module(m, n, k, ta, tb, bits), device, tmp_path, chip)
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
    _int_matmul_on_gpu(device, _chip(device), tmp_path, m, n, k, ta, tb, bits)


@pytest.mark.parametrize("ta,tb", [(False, True), (True, False)])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_int4_operands_as_s8_simulated(tmp_path, m, n, k, ta, tb):
    """sm_90 has no INT4 tensor cores: its kernels for 4-bit operands use s8 mma.sync, run on
    the simulator (the GPU tests run them on an H200)."""
    device = device_or_skip("simulator", (9, 0))
    _int_matmul_on_gpu(device, _chip(device), tmp_path, m, n, k, ta, tb, 4)


@pytest.mark.parametrize("ta,tb", [(False, True), (False, False), (True, False), (True, True)])
@pytest.mark.parametrize("m,n,k", SHAPES + [(300, 200, 1000)])
def test_int_matmul_shapes_on_gpu_wgmma(device, tmp_path, m, n, k, ta, tb):
    """The wgmma kernels of the architecture-specific target (sm_90a on an H100/H200): 8-bit
    operands (4-bit ones take the same s8 kernel). (300, 200, 1000) runs 8 K tiles through the
    4-stage pipeline, refilling every stage."""
    chip = arch_specific_chip_or_skip(device)
    _int_matmul_on_gpu(device, chip, tmp_path, m, n, k, ta, tb, 8)


def _lowering_remarks(text, chip, options):
    """The remarks of hot-opt's convert-hot-to-gpu on ``text`` (None where hot-opt is absent,
    as on a GPU machine running prebuilt libraries)."""
    hot_opt = runner.find_hot_opt()
    if hot_opt is None:
        return None
    return subprocess.run([hot_opt, f"--convert-hot-to-gpu=chip={chip} {options}",
                           "-o", "/dev/null"], input=text, capture_output=True, text=True,
                          check=True).stderr


def _random_product(m, n, k, bits):
    """Random f32 A [m, k] and B [n, k] (seeded by the shape), and the exact product of their
    quantized values, A_q·B_qᵀ: what _int_matmul_module(m, n, k, False, True, bits) computes."""
    rng = np.random.default_rng([m, n, k, bits])
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32)
    qa, _ = reference.quantize(a, bits, "per_tensor", "maxabs", "nearest")
    qb, _ = reference.quantize(b, bits, "per_tensor", "maxabs", "nearest")
    return a, b, qa.astype(np.int64) @ qb.astype(np.int64).T


# (m, n, k, options, tile-n): wgmma's 128x256 tiles (m64n256k32, 128 accumulators a thread):
# columns past the last tile (520 = 2·256 + 8), with a K split, and as the model's own choice
# (two output tiles of 128x256 on 4 SMs, which the remark must state); and its 128x192 tiles
# (m64n192k32): columns past the last tile (400 = 2·192 + 16), and the model's choice for
# N = 768 on 8 SMs (8 tiles of 128x192: one wave; 128x256 would take 6 blocks of more work).
WIDE_WGMMA_SHAPES = [(300, 520, 1000, "tile-n=256", 256), (130, 300, 700, "tile-n=256 split-k=2", 256),
                     (256, 512, 4096, "sm-count=4", 256), (300, 400, 1000, "tile-n=192", 192),
                     (256, 768, 1024, "sm-count=8", 192)]


@pytest.mark.parametrize("m,n,k,options,tile_n", WIDE_WGMMA_SHAPES)
def test_wide_wgmma_tiles_on_gpu(device, tmp_path, m, n, k, options, tile_n):
    """The wgmma kernel on 128x256 and 128x192 tiles, bit for bit."""
    chip = arch_specific_chip_or_skip(device)
    text = _int_matmul_module(m, n, k, False, True, 8)
    remarks = _lowering_remarks(text, chip, options)
    assert remarks is None or (f"_t128x{tile_n}x128_" in remarks
                               and f"m64n{tile_n}k32" in remarks), remarks
    gpu = compile_gpu(text, device, tmp_path, chip, options)
    a, b, want = _random_product(m, n, k, 8)
    np.testing.assert_array_equal(gpu.product(a, b), want)


# (m, n, k, options): K tiles that the splits do not divide (the last split shorter), rows and
# columns past the tiles, a split past the K tiles (capped at one per tile), and a split the
# model chooses itself (one 128x128 tile and a K long enough on 8 SMs, 4-bit operands too).
SPLIT_K_SHAPES = [(130, 72, 1000, "split-k=3"), (64, 200, 700, "split-k=2"),
                  (17, 9, 500, "split-k=100"),
                  (128, 128, 16384, "sm-count=8 tile-m=128 tile-n=128")]


def _split_k_count(text, chip, options):
    """The K split the remark of hot-opt's lowering states (None where hot-opt is absent)."""
    remarks = _lowering_remarks(text, chip, options)
    if remarks is None:
        return None
    found = re.findall(r"K split in (\d+)", remarks)
    return int(found[0]) if found else 1


@pytest.mark.parametrize("kernel", ["s8", "s4", "wgmma"])
@pytest.mark.parametrize("m,n,k,options", SPLIT_K_SHAPES)
def test_split_k_on_gpu(device, tmp_path, monkeypatch, m, n, k, options, kernel):
    """Products split along K (split-k=N, or by the model): every split's block stores its accumulators, the
    tile's last block to count itself adds them and stores C, bit for bit. On the simulator,
    with the blocks run forward, in reverse and shuffled, so that each split is the last of its
    tile in some run."""
    chip = arch_specific_chip_or_skip(device) if kernel == "wgmma" else _chip(device)
    bits = 4 if kernel == "s4" else 8
    if kernel == "s4" and chip not in ("sm_80", "sm_86", "sm_89"):
        pytest.skip(f"{chip} has no s4 MMA")
    text = _int_matmul_module(m, n, k, False, True, bits)
    splits = _split_k_count(text, chip, options)
    assert splits is None or splits > 1, "the product was not split"
    gpu = compile_gpu(text, device, tmp_path, chip, options)
    a, b, want = _random_product(m, n, k, bits)
    orders = ["forward", "reverse", "shuffle:7"] if device.target == "simulator" else [None]
    for order in orders:
        if order:
            monkeypatch.setenv("HOT_SIM_BLOCK_ORDER", order)
        np.testing.assert_array_equal(gpu.product(a, b), want, err_msg=str(order))


@pytest.mark.parametrize("arch_specific", [False, True], ids=["chip", "arch-specific-chip"])
@pytest.mark.parametrize("granularity", NARROW_LAYER_GRANULARITIES, ids=["tensor", "lqs"])
def test_split_k_layer_on_gpu(device, tmp_path, monkeypatch, granularity, arch_specific):
    """A bf16 layer's backward with split-k=3 (check_narrow_layer; 4 samples of 197 tokens:
    gw's K is 404 projected tokens, in tails-last order): the last block of each tile runs the
    fused rescale and bf16 store on the added accumulators, with per-tensor scales and LQS's
    per-token and per-channel ones."""
    chip = arch_specific_chip_or_skip(device) if arch_specific else _chip(device)
    if device.target == "simulator":
        monkeypatch.setenv("HOT_SIM_BLOCK_ORDER", "shuffle:3")
    def compile_split(text):
        splits = _split_k_count(text, chip, "split-k=3")
        assert splits is None or splits > 1, "the gw product was not split"
        return compile_gpu(text, device, tmp_path, chip, "split-k=3")

    check_narrow_layer(compile_split, SPLIT_K_LAYER_SHAPE, "bf16", granularity)


@pytest.mark.parametrize("tile_n", [256, 192])
@pytest.mark.parametrize("granularity", NARROW_LAYER_GRANULARITIES, ids=["tensor", "lqs"])
def test_wide_wgmma_layer_on_gpu(device, tmp_path, granularity, tile_n):
    """A bf16 layer's backward with its products on wgmma's 128x256 or 128x192 tiles
    (check_narrow_layer): the fused rescale and bf16 store of 256- and 192-column tiles, with
    per-tensor scales and LQS's per-token and per-channel ones."""
    chip = arch_specific_chip_or_skip(device)
    check_narrow_layer(lambda text: compile_gpu(text, device, tmp_path, chip, f"tile-n={tile_n}"),
                       SPLIT_K_LAYER_SHAPE, "bf16", granularity)


def test_training_step_on_gpu(device, tmp_path):
    """A whole training step on the GPU: the bundled ViT block (torch-mlir export) through
    hot-training-pipeline, its hot ops as the HOT kernels and everything else (softmax,
    layer norms, GELU, the bias gradients' reductions, ...) through the generic linalg
    mapping, on the demo's inputs: every result equals the CPU path's bit for bit. The
    reductions run inside their kernels (hot-parallel-dims-outermost), so the step is one chain
    of launches with one host synchronization."""
    hot_opt = runner.find_hot_opt()
    if hot_opt is None:
        pytest.skip("needs hot-opt to rewrite the fixture")
    text = subprocess.run([hot_opt, str(demo.FIXTURE), "--hot-training-pipeline=remarks=false"],
                          capture_output=True, text=True, check=True).stdout
    lowered = subprocess.run([hot_opt, f"--hot-lower-to-nvvm=chip={_chip(device)} format=isa"],
                             input=text, capture_output=True, text=True, check=True).stdout
    assert lowered.count("llvm.call @mgpuStreamSynchronize") == 1
    gpu = compile_gpu(text, device, tmp_path)
    cpu = runner.compile_module(text, cache_dir=tmp_path)
    names, _ = demo.header_names(demo.FIXTURE.read_text())
    args, _, _, _ = demo.load_inputs(cpu.signatures["train_step"], names)
    args[-1] = -987654321  # the stochastic-rounding seed
    want = cpu.train_step(*args)
    got = gpu.train_step(*args)
    assert len(got) == len(want) == 12
    for k, (g, w) in enumerate(zip(got, want)):
        _same_bits(np.asarray(g), np.asarray(w))


def test_jax_training_step_on_gpu(device, tmp_path):
    """A JAX/StableHLO step ([in, out] kernels, [B, S, D] activations, gw reducing over two
    dims) through hot-training-pipeline and onto the GPU: every result equals the CPU path's
    bit for bit, the loss also the original graph's (the forward is not rewritten)."""
    hot_opt = runner.find_hot_opt()
    if hot_opt is None:
        pytest.skip("needs hot-opt to rewrite the fixture")
    fixture = runner.REPO_ROOT / "test" / "Fixtures" / "linalg" / "tokens_stablehlo_generic.mlir"
    original = fixture.read_text()
    text = subprocess.run([hot_opt, "--hot-training-pipeline=remarks=false"], input=original,
                          capture_output=True, text=True, check=True).stdout
    gpu = compile_gpu(text, device, tmp_path)
    cpu = runner.compile_module(text, cache_dir=tmp_path)
    rng = np.random.default_rng(11)
    signature = cpu.signatures["train_step"]
    args = [rng.standard_normal(t.shape).astype(np.float32) for t in signature.inputs[:-1]]
    want = cpu.train_step(*args, 4242)
    got = gpu.train_step(*args, 4242)
    assert "hot.int_matmul" in text and len(got) == len(want) == 5
    for g, w in zip(got, want):
        _same_bits(np.asarray(g), np.asarray(w))
    loss = runner.compile_module(original, cache_dir=tmp_path).train_step(*args)[0]
    _same_bits(np.asarray(got[0]), np.asarray(loss))


def test_lora_training_step_on_gpu(device, tmp_path):
    """Two Llama blocks fine-tuned with LoRA (torch-mlir joint graph): 11 frozen layers' gx
    and the LoRA layers' products rewritten, onto the GPU; every gradient equals the CPU
    path's bit for bit."""
    hot_opt = runner.find_hot_opt()
    if hot_opt is None:
        pytest.skip("needs hot-opt to rewrite the fixture")
    fixture = runner.REPO_ROOT / "test" / "Fixtures" / "torch" / "llama_lora_joint.mlir"
    text = subprocess.run([hot_opt, "--hot-training-pipeline=remarks=false"],
                          input=fixture.read_text(), capture_output=True, text=True,
                          check=True).stdout
    assert text.count("hot.int_matmul") == 25
    gpu = compile_gpu(text, device, tmp_path)
    cpu = runner.compile_module(text, cache_dir=tmp_path)
    data = np.load(runner.REPO_ROOT / "test" / "Fixtures" / "torch" / "llama_lora.npz")
    signature = cpu.signatures["train_step"]
    args = [data[f"arg{i}"] for i in range(len(signature.inputs) - 1)]
    want = cpu.train_step(*args, 99)
    got = gpu.train_step(*args, 99)
    assert len(got) == len(want) == 8
    for g, w in zip(got, want):
        _same_bits(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("granularity", ["per_row", "per_tensor"])
@pytest.mark.parametrize("m,n,block", [(1, 4, 1), (37, 100, 1), (300, 768, 16), (64, 256, 1),
                                       (4096, 16, 1), (1, 1000, 1), (1, 1002, 1), (1, 1001, 1)])
def test_sawb_quantize_on_gpu(device, tmp_path, m, n, block, granularity):
    """SAWB scales in the fused kernels: the f64 sums in docs/numerics.md's order (each row in
    128 partials and a tree; per tensor, then the row sums in 32 partials and a tree) equal the
    reference's bit for bit. The 64x256, 4096x16 and 1xn cases are groups whose clip cancels to
    ~1e-8 of its mean: on the first a flat sequential sum gives other bits, on the second (per
    tensor) adding the row sums one after the other does, on the rows (vector widths 4, 2 and
    1) a sequential row sum, the tree reversed or per-lane vector partials do
    (test_reference.py)."""
    from test_reference import sawb_near_zero_group, sawb_row_order_group, sawb_row_order_row

    gpu = compile_gpu(_sawb_module(m, n, granularity, block), device, tmp_path)
    rng = np.random.default_rng([m, n, block])
    if (m, n) == (64, 256):
        x = sawb_near_zero_group(rng, m * n).reshape(m, n)
    elif (m, n) == (4096, 16):
        x = sawb_row_order_group()
    elif m == 1 and n >= 1000:
        x = sawb_row_order_row(n)
    else:
        x = (rng.standard_t(2, (m, n)) * 10.0 ** rng.uniform(-2, 2, (m, 1))).astype(np.float32)
    q, s = gpu.q(x)
    h = reference.hadamard(x, 1, block) if block > 1 else x
    q_ref, s_ref = reference.quantize(h, 4, granularity, "sawb", "nearest")
    _same_bits(s, s_ref)
    np.testing.assert_array_equal(q, q_ref)


@pytest.mark.parametrize("scale,rounding", ROW_HADAMARD_QUANTIZES)
@pytest.mark.parametrize("m,n,block,element,regs", [
    pytest.param(*shape, regs, id="-".join(map(str, shape)) + f"-{regs}regs")
    for shape in ROW_HADAMARD_SHAPES for regs in (96, 0) if not (regs and shape[1] > 3072)])
def test_row_hadamard_quantize_on_gpu(device, tmp_path, m, n, block, element, scale, rounding,
                                      regs):
    """The per-row fused kernel (check_row_hadamard_quantize), with the row kept in registers
    where it fits (row-values-in-registers=96, the default: 5x3200 has 100 values per lane, so
    only its transformed-twice kernel runs) and always transformed twice (=0)."""
    check_row_hadamard_quantize(
        lambda text: compile_gpu(text, device, tmp_path,
                                 options=f"row-values-in-registers={regs}"),
        m, n, block, element, scale, rounding)


@pytest.mark.parametrize("granularity,scale,rounding", COLUMN_HADAMARD_QUANTIZES)
@pytest.mark.parametrize("m,n,block,element", COLUMN_HADAMARD_SHAPES[:2])
def test_column_hadamard_unfused_on_gpu(device, tmp_path, m, n, block, element, granularity,
                                        scale, rounding):
    """The same with fuse-column-hadamard=false: the block-transform kernel writes the
    hadamard along dim 0 and the quantize kernels read it, bit for bit."""
    check_column_hadamard_quantize(
        lambda text: compile_gpu(text, device, tmp_path, options="fuse-column-hadamard=0"),
        m, n, block, element, granularity, scale, rounding)


@pytest.mark.parametrize("granularity,scale,rounding", COLUMN_HADAMARD_QUANTIZES)
@pytest.mark.parametrize("m,n,block,element", COLUMN_HADAMARD_SHAPES)
def test_column_hadamard_quantize_on_gpu(device, tmp_path, m, n, block, element, granularity,
                                         scale, rounding):
    """W's hadamard along dim 0 fused into the quantize kernels (check_column_hadamard_quantize):
    no block-transform kernel, the rows' butterfly as they are loaded, bit for bit."""
    check_column_hadamard_quantize(lambda text: compile_gpu(text, device, tmp_path), m, n,
                                   block, element, granularity, scale, rounding)


@pytest.mark.parametrize("m,n,block,seed,rows_in_order",
                         [(64, 256, 16, 0, True), (2048, 16, 8, 2, False)])
def test_column_sawb_order_on_gpu(device, tmp_path, m, n, block, seed, rows_in_order):
    """W's column-block kernels keep docs/numerics.md's SAWB order: a thread per partial of a
    row's sums (the tree in shared memory), the row sums folded by the quantize kernel's first
    warp. On groups whose clip cancels to ~1e-8 of its mean after the transform, the scale and
    q equal the reference's bit for bit, where adding each row's elements one after the other
    (64x256) or the row sums one after the other (2048x16) gives another scale: checked here,
    so that the data can tell the orders apart (the seeds are ones where it can)."""
    from test_reference import row_sawb_sums, sum_sequential, tree

    x, h = column_sawb_near_zero(np.random.default_rng([m, n, block, seed]), m, n, block)
    q_ref, s_ref = reference.quantize(h, 4, "per_tensor", "sawb", "nearest")

    rows = h.tolist()
    if rows_in_order:  # each row one element after the other, the row sums as specified
        sums = [(sum_sequential(abs(e) for e in r), sum_sequential(e * e for e in r))
                for r in rows]
        parts = [[0.0] * 32, [0.0] * 32]
        for i, (r1, r2) in enumerate(sums):
            parts[0][i % 32] += r1
            parts[1][i % 32] += r2
        s1, s2 = tree(parts[0]), tree(parts[1])
    else:  # each row as specified, the row sums one after the other
        sums = [row_sawb_sums(r) for r in rows]
        s1, s2 = sum_sequential(r1 for r1, _ in sums), sum_sequential(r2 for _, r2 in sums)
    other = np.float32(12.1 * math.sqrt(s2 / h.size) - 12.2 * (s1 / h.size))
    assert other > 0 and other / np.float32(7) != np.asarray(s_ref)

    gpu = compile_gpu(_column_hadamard_module(m, n, block, "f32", "per_tensor", "sawb", "nearest"),
                      device, tmp_path)
    q, s = gpu.q(x, 0)
    _same_bits(s, s_ref)
    np.testing.assert_array_equal(q, q_ref)


@pytest.mark.parametrize("scale,rounding", [("sawb", "nearest"), ("maxabs", "stochastic")])
@pytest.mark.parametrize("case", ["zeros", "nan", "inf", "one column"])
def test_column_quantize_special_values_on_gpu(device, tmp_path, scale, rounding, case):
    """W's column-block kernels on a zero W (scale 0, q 0), a NaN or an Inf in one element (a
    non-finite scale, q 0 where v is NaN: docs/numerics.md) and a one-column W (127 of the 128
    threads own no column), against the reference bit for bit."""
    m, n, block = (32, 1, 16) if case == "one column" else (48, 200, 16)
    x = np.random.default_rng([m, n, len(case)]).standard_normal((m, n)).astype(np.float32)
    if case == "zeros":
        x[:] = 0
    elif case in ("nan", "inf"):
        x[17, 150] = np.nan if case == "nan" else -np.inf
    gpu = compile_gpu(_column_hadamard_module(m, n, block, "f32", "per_tensor", scale, rounding),
                      device, tmp_path)
    seed = 31337
    q, s = gpu.q(x, seed)
    q_ref, s_ref = reference.quantize(reference.hadamard(x, 0, block), 4, "per_tensor", scale,
                                      rounding, seed if rounding == "stochastic" else None)
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

    chip = arch_specific_chip_or_skip(device) if arch_specific else _chip(device)
    gpu = compile_gpu(demo.EXAMPLE.read_text(), device, tmp_path, chip)
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
@pytest.mark.parametrize("samples,tokens,channels,block", SHARED_GY_SHAPES)
def test_shared_statistics_on_gpu(device, tmp_path, samples, tokens, channels, block, data,
                                  keep_projection):
    """gy read by both backward paths (check_shared_statistics)."""
    check_shared_statistics(lambda text: compile_gpu(text, device, tmp_path), samples,
                            tokens, channels, block, data, keep_projection)


@pytest.mark.parametrize("rounding", ["nearest", "stochastic"])
@pytest.mark.parametrize("m,n", PER_COL_SHAPES)
def test_per_col_quantize_on_gpu(device, tmp_path, m, n, rounding):
    """per_col maxabs quantize (check_per_col_quantize)."""
    check_per_col_quantize(lambda text: compile_gpu(text, device, tmp_path), m, n,
                           rounding)


@pytest.mark.parametrize("product", [False, True], ids=["q", "gw"])
@pytest.mark.parametrize("granularity", ["per_tensor", "per_col"])
@pytest.mark.parametrize("m,n,block", PAIR_SHAPES)
def test_quantize_pair_on_gpu(device, tmp_path, m, n, block, granularity, product):
    """A 2-D layer's gy quantized for both paths, with or without the gw product
    (check_quantize_pair)."""
    check_quantize_pair(lambda text: compile_gpu(text, device, tmp_path), m, n, block,
                        granularity, product)


@pytest.mark.parametrize("case", ["shared-kept", "shared-not-stored", "pair"])
def test_grid_stride_loops(device, tmp_path, case):
    """ViT-B's token count (64 x 197 = 12608 rows) with few channels: the statistics kernels cap
    their grids (512 partials) and the quantize kernels size theirs to the blocks the SMs hold
    at once (832 items in 416 blocks on an H200), so each block loops over several items, which
    the small shapes above never do."""
    compile = lambda text: compile_gpu(text, device, tmp_path)  # noqa: E731
    if case == "pair":
        check_quantize_pair(compile, 64 * 197, 64, 16, "per_tensor")
    else:
        check_shared_statistics(compile, 64, 197, 64, 16, "random", case == "shared-kept")


@pytest.mark.parametrize("arch_specific", [False, True], ids=["chip", "arch-specific-chip"])
@pytest.mark.parametrize("granularity", NARROW_LAYER_GRANULARITIES, ids=["tensor", "lqs"])
@pytest.mark.parametrize("element", ["bf16", "f16"])
def test_narrow_layer_on_gpu(device, tmp_path, element, granularity, arch_specific):
    """A bf16/f16 layer's backward (check_narrow_layer): the transform kernels read gy, x and W
    in the narrow type and the products' epilogues store it, bit for bit; with arch_specific,
    sm_90a's wgmma products. (The first of NARROW_LAYER_SHAPES: tails of 5 tokens, 40
    channels, per-token and per-channel scales with LQS.)"""
    chip = arch_specific_chip_or_skip(device) if arch_specific else _chip(device)
    check_narrow_layer(lambda text: compile_gpu(text, device, tmp_path, chip),
                       NARROW_LAYER_SHAPES[0], element, granularity)


@pytest.mark.parametrize("width", [1, 2, 4])
@pytest.mark.parametrize("granularity", NARROW_LAYER_GRANULARITIES, ids=["tensor", "lqs"])
def test_quantize_channels_per_thread_on_gpu(device, tmp_path, granularity, width):
    """The layer of test_narrow_layer_on_gpu (bf16, 40 and 48 channels) with its lowrank
    quantize kernels at 1, 2 and 4 channels per thread (quantize-channels-per-thread), per
    tensor and per channel, bit for bit."""
    check_narrow_layer(
        lambda text: compile_gpu(text, device, tmp_path,
                                 options=f"quantize-channels-per-thread={width}"),
        NARROW_LAYER_SHAPES[0], "bf16", granularity)


@pytest.mark.parametrize("shape,gw_bits", [(NARROW_LAYER_SHAPES[1], 8),
                                           (NARROW_LAYER_SHAPES[0], 4)],
                         ids=["no-tail", "gw-4-bit"])
def test_gw_operands_on_gpu(device, tmp_path, shape, gw_bits):
    """The gw product's K-major operands (check_narrow_layer, bf16): 3 samples of 16 tokens
    (no tail: both quantize kernels write their operand K-contiguous in the natural K order),
    and 4-bit gw operands (which the quantize kernels do not pack: on sm_80, s4 MMA after two
    transpose kernels that pack and read K in the tails-last order)."""
    check_narrow_layer(lambda text: compile_gpu(text, device, tmp_path), shape, "bf16",
                       NARROW_LAYER_GRANULARITIES[0], gw_bits)


def test_gw_natural_order_with_tails_on_gpu(device, tmp_path):
    """gy's quantize kernel writes the gw operand K-contiguous in the natural K order, tails
    between the samples (check_gw_given_x); x's operand goes through the transpose kernel."""
    check_gw_given_x(lambda text: compile_gpu(text, device, tmp_path))


@pytest.mark.parametrize("trips", LOOP_TRIPS)
def test_loop_iter_args_on_gpu(device, tmp_path, trips):
    """A host loop whose iter_args are tensors, its body's ops as kernels (check_loop_iter_args):
    the buffer each trip yields is returned from the loop and freed by the deallocation pipeline
    (bufferization's allow-return-allocs-from-loops)."""
    check_loop_iter_args(lambda text: compile_gpu(text, device, tmp_path), trips)
