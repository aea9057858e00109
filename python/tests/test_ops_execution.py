"""Execution tests of the ``hot`` ops: compiled by ``hot-opt --hot-lower-to-cpu``, run on the CPU.

Every op is compiled (through :mod:`hot.runner`) and run on fresh random inputs, and its results
are compared with the numpy reference :mod:`hot.reference`:

* integers (``q``, ``acc``) and scales are compared bit for bit;
* float results (hadamard, lowrank, dequantize, rescale) are compared bit for bit too, since the
  reference follows the order of operations of ``docs/numerics.md``; NaNs compare equal to NaNs
  (whatever their payload), every other value must have the same bits (signed zeros included);
* float results are additionally checked against an independent float64 computation built in
  this file (dense Sylvester Hadamard matrices, Walsh rows found by counting sign changes, exact
  products) so that a bug shared by the compiled code and the reference is caught as well.

Modules are generated as text from fixed case tables (stable text, so the runner's cache hits on
later runs) and compiled once per test module; only the inputs change from run to run.

Inputs are random: the base seed is drawn from ``os.urandom`` and printed in every assertion
message; rerun with ``HOT_TEST_SEED=<seed>`` (and ``-k <test id>``) to reproduce a failure.

hot-opt: ``$HOT_OPT`` (ctest sets it; the tests *fail* if it does not point to an executable),
else ``<repo>/build/bin/hot-opt``; the tests are skipped only when neither exists.
"""

import itertools
import math
import os
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hot import reference as ref  # noqa: E402
from hot import runner  # noqa: E402

BASE_SEED = int(os.environ.get("HOT_TEST_SEED", int.from_bytes(os.urandom(8), "little")))
F32, F64 = np.float32, np.float64
MLIR_FLOAT = {F32: "f32", F64: "f64"}

BITS = [2, 4, 8]
GRANULARITIES = ["per_tensor", "per_row", "per_col"]
SCALE_MODES = ["maxabs", "sawb"]
ROUNDINGS = ["nearest", "stochastic"]


# ---------------------------------------------------------------------------------------------
# Fixtures and helpers
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def rng(request):
    """A generator seeded from BASE_SEED and the test id (stable under test selection)."""
    name = request.node.name
    print(f"HOT_TEST_SEED={BASE_SEED} test={name}")
    return np.random.default_rng([BASE_SEED, zlib.crc32(name.encode())])


@pytest.fixture
def ctx(request):
    """What to put in assertion messages to reproduce a failure."""
    return f"HOT_TEST_SEED={BASE_SEED} test={request.node.name}"


def compile_text(hot_opt, text):
    return runner.compile_module(text, opt_tool=hot_opt)


def tensor_type(shape, elem):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def _fmt(v):
    v = v.item() if isinstance(v, np.generic) else v
    if isinstance(v, float):
        return f"{v!r} ({v.hex()})"
    return repr(v)


def assert_same_bits(got, want, what, ctx):
    """Bit-exact comparison; NaN == NaN (any payload), signed zeros must agree."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype} ({ctx})"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape} ({ctx})"
    if got.dtype.kind == "f":
        nan_g, nan_w = np.isnan(got), np.isnan(want)
        same = (nan_g & nan_w) | ((got == want) & (np.signbit(got) == np.signbit(want)))
    else:
        same = got == want
    if not same.all():
        bad = np.argwhere(~same) if got.ndim else [()]
        lines = [f"  at {tuple(int(k) for k in i)}: got {_fmt(got[tuple(i)])}, "
                 f"reference {_fmt(want[tuple(i)])}" for i in bad[:10]]
        pytest.fail(f"{what}: {len(bad)} of {got.size} elements differ ({ctx})\n"
                    + "\n".join(lines), pytrace=False)
    assert np.array_equal(got, want, equal_nan=(got.dtype.kind == "f")), (what, ctx)


def assert_close_f64(got, exact, what, ctx, rtol=1e-6):
    """max |got - exact| <= rtol * max |exact| (exact in float64, all finite)."""
    got = np.asarray(got, dtype=F64)
    assert got.shape == exact.shape, f"{what}: shape {got.shape} != {exact.shape} ({ctx})"
    assert np.isfinite(exact).all() and np.isfinite(got).all(), f"{what}: non-finite ({ctx})"
    scale = float(np.max(np.abs(exact))) if exact.size else 0.0
    err = float(np.max(np.abs(got - exact))) if exact.size else 0.0
    assert err <= rtol * scale, (f"{what}: max abs error {err:.3e} = {err / scale:.3e} of "
                                 f"max |exact| {scale:.3e} > {rtol} ({ctx})")


def random_floats(rng, shape, dtype=F32):
    """Normal values with magnitudes spread over a few decades per row."""
    spread = rng.uniform(-2, 2, size=shape[:1] + (1,) * (len(shape) - 1))
    x = rng.standard_normal(shape) * 10.0 ** spread
    return x.astype(dtype)


# Independent constructions (float64, from first principles) -----------------------------------


def sylvester(b):
    """H_b by the recursion H_2b = [[H, H], [H, -H]] (integer entries)."""
    h = np.ones((1, 1), dtype=np.int64)
    while h.shape[0] < b:
        h = np.block([[h, h], [h, -h]])
    return h


def sign_changes(v):
    return int(np.count_nonzero(v[1:] != v[:-1]))


def walsh_rows_by_sequency(b):
    """Rows of H_b sorted by their number of sign changes (0, 1, ..., b-1)."""
    h = sylvester(b)
    seq = [sign_changes(h[r]) for r in range(b)]
    assert sorted(seq) == list(range(b))
    return [seq.index(k) for k in range(b)]


def independent_kept_rows(b, rank, selection):
    """The Walsh rows kept by lowrank, in output order, found by sign counting and matching."""
    if selection == "prefix":
        return walsh_rows_by_sequency(b)[:rank]
    s = math.isqrt(b)
    hs, hb = sylvester(s), sylvester(b)
    by_seq = walsh_rows_by_sequency(s)
    rows = []
    for d in range(s):
        for p in range(d + 1):
            w = np.kron(hs[by_seq[p]], hs[by_seq[d - p]])  # w_p ⊗ w_q as a b-vector
            match = [r for r in range(b) if np.array_equal(hb[r], w)]
            assert len(match) == 1
            rows.append(match[0])
    assert len(rows) == rank
    return rows


def blockwise_f64(x, dim, block, mat, tail_ok=False):
    """Apply ``mat`` (r x block) to each full block of ``dim`` in float64; tail copied."""
    moved = np.moveaxis(np.asarray(x, dtype=F64), dim, -1)
    n = moved.shape[-1]
    nb, tail = divmod(n, block)
    assert tail == 0 or tail_ok
    head = moved[..., : nb * block].reshape(moved.shape[:-1] + (nb, block))
    out = (head @ mat.T).reshape(moved.shape[:-1] + (nb * mat.shape[0],))
    out = np.concatenate([out, moved[..., nb * block:]], axis=-1)
    return np.moveaxis(out, -1, dim)


def hadamard_f64(x, dim, block):
    return blockwise_f64(x, dim, block, sylvester(block) / math.sqrt(block))


def lowrank_f64(x, dim, block, rank, selection, allow_tail):
    h = sylvester(block) / math.sqrt(block)
    return blockwise_f64(x, dim, block, h[independent_kept_rows(block, rank, selection)],
                         tail_ok=allow_tail)


# ---------------------------------------------------------------------------------------------
# hot.hadamard and hot.lowrank
# ---------------------------------------------------------------------------------------------

# (shape, dim, block, dtype)
HADAMARD_CASES = [
    ((7, 32), 1, 16, F32),
    ((7, 32), 1, 1, F32),             # block 1: identity (folded away)
    ((7, 32), 1, 32, F32),            # block = dim size
    ((13, 256), 1, 256, F32),
    ((48, 13), 0, 16, F32),           # along dim 0
    ((64, 5), 0, 64, F32),            # along dim 0, block = dim size
    ((197, 3), 0, 1, F32),
    ((1, 2), 1, 2, F32),
    ((2, 197, 12), 1, 1, F32),        # per-sample tokens, 197 prime: only block 1 divides
    ((2, 197, 12), 2, 4, F32),
    ((3, 32, 5), 1, 8, F32),          # rank 3, middle dim
    ((8, 3, 5), 0, 4, F32),           # rank 3, leading dim
    ((2, 3, 64), 2, 64, F32),         # rank 3, last dim
    ((5, 8), 1, 2, F64),              # f64: c_2 = sqrt(0.5) rounded once
    ((24, 3), 0, 8, F64),
    ((3, 128), 1, 32, F64),
]

# (shape, dim, block, rank, selection, allow_tail, dtype)
LOWRANK_CASES = [
    ((64, 5), 0, 16, 8, "prefix", False, F32),
    ((64, 5), 0, 16, 16, "prefix", False, F32),        # rank = block
    ((64, 5), 0, 16, 1, "prefix", False, F32),         # rank 1
    ((7, 48), 1, 16, 10, "triangle", False, F32),      # triangle s=4
    ((128, 3), 0, 64, 36, "triangle", False, F32),     # triangle s=8
    ((3, 256), 1, 256, 136, "triangle", False, F32),   # triangle s=16, block = dim size
    ((13, 8), 1, 4, 3, "triangle", False, F32),        # triangle s=2
    ((197, 13), 0, 16, 8, "prefix", True, F32),        # 12 blocks + tail 5
    ((197, 13), 0, 16, 10, "triangle", True, F32),
    ((13, 197), 1, 64, 36, "triangle", True, F32),     # 3 blocks + tail 5, along dim 1
    ((5, 7), 1, 16, 4, "prefix", True, F32),           # n < block: everything is tail
    ((7, 5), 0, 8, 3, "prefix", True, F32),            # n < block along dim 0
    ((13, 7), 1, 1, 1, "prefix", False, F32),          # block 1
    ((13, 7), 1, 1, 1, "prefix", True, F32),           # block 1 with allow_tail (no tail)
    ((3, 32), 1, 32, 5, "prefix", False, F32),         # block = dim size
    ((32, 3), 0, 16, 16, "prefix", True, F32),         # allow_tail without a tail
    ((2, 197, 12), 1, 16, 8, "prefix", True, F32),     # per-sample token case
    ((2, 197, 12), 1, 16, 10, "triangle", True, F32),
    ((2, 197, 12), 1, 16, 16, "prefix", True, F32),
    ((3, 4, 64), 2, 64, 36, "triangle", False, F32),   # rank 3, last dim
    ((16, 3, 5), 0, 4, 2, "prefix", False, F32),       # rank 3, leading dim
    ((32, 3), 0, 8, 3, "prefix", False, F64),
    ((5, 19), 1, 4, 3, "triangle", True, F64),
]


def lowrank_out_shape(shape, dim, block, rank):
    out = list(shape)
    out[dim] = (shape[dim] // block) * rank + shape[dim] % block
    return tuple(out)


def _transforms_module():
    funcs = []
    for i, (shape, dim, block, dt) in enumerate(HADAMARD_CASES):
        t = tensor_type(shape, MLIR_FLOAT[dt])
        funcs.append(f"func.func @had{i}(%x: {t}) -> {t} {{\n"
                     f"  %y = hot.hadamard %x along {dim} block {block} : {t}\n"
                     f"  return %y : {t}\n}}")
    for i, (shape, dim, block, rank, sel, tail, dt) in enumerate(LOWRANK_CASES):
        t = tensor_type(shape, MLIR_FLOAT[dt])
        r = tensor_type(lowrank_out_shape(shape, dim, block, rank), MLIR_FLOAT[dt])
        attrs = ((" selection triangle" if sel == "triangle" else "")
                 + (" allow_tail" if tail else ""))
        funcs.append(f"func.func @lr{i}(%x: {t}) -> {r} {{\n"
                     f"  %y = hot.lowrank %x along {dim} block {block} rank {rank}{attrs}"
                     f" : {t} -> {r}\n  return %y : {r}\n}}")
    return "\n".join(funcs) + "\n"


@pytest.fixture(scope="module")
def transforms(hot_opt):
    return compile_text(hot_opt, _transforms_module())


def _case_id(case):
    return "-".join(("x".join(map(str, c)) if isinstance(c, tuple) else
                     np.dtype(c).name if isinstance(c, type) else str(c)) for c in case)


@pytest.mark.parametrize("i", range(len(HADAMARD_CASES)),
                         ids=[_case_id(c) for c in HADAMARD_CASES])
def test_hadamard(transforms, rng, ctx, i):
    shape, dim, block, dt = HADAMARD_CASES[i]
    x = random_floats(rng, shape, dt)
    got = transforms.call(f"had{i}", x)
    assert_same_bits(got, ref.hadamard(x, dim, block), "hadamard vs reference", ctx)
    assert_close_f64(got, hadamard_f64(x, dim, block), "hadamard vs float64 x·Ĥ", ctx)
    if block == 1:
        assert_same_bits(got, x, "hadamard block 1 is the identity", ctx)


@pytest.mark.parametrize("i", range(len(HADAMARD_CASES)),
                         ids=[_case_id(c) for c in HADAMARD_CASES])
def test_hadamard_special_values(transforms, rng, ctx, i):
    """Signed zeros, NaN, Inf, subnormals and huge values go through the same butterfly."""
    shape, dim, block, dt = HADAMARD_CASES[i]
    x = random_floats(rng, shape, dt).reshape(-1)
    info = np.finfo(dt)
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, info.tiny / 8, -info.tiny,
                         info.max / 2, -info.max, info.max], dtype=dt)
    pos = rng.choice(x.size, size=min(x.size, specials.size), replace=False)
    x[pos] = specials[: pos.size]
    x = x.reshape(shape)
    got = transforms.call(f"had{i}", x)
    with np.errstate(all="ignore"):
        want = ref.hadamard(x, dim, block)
    assert_same_bits(got, want, "hadamard (special values) vs reference", ctx)


@pytest.mark.parametrize("i", range(len(LOWRANK_CASES)),
                         ids=[_case_id(c) for c in LOWRANK_CASES])
def test_lowrank(transforms, rng, ctx, i):
    shape, dim, block, rank, sel, tail, dt = LOWRANK_CASES[i]
    x = random_floats(rng, shape, dt)
    got = transforms.call(f"lr{i}", x)
    want = ref.lowrank(x, dim, block, rank, selection=sel, allow_tail=tail)
    assert_same_bits(got, want, "lowrank vs reference", ctx)
    assert_close_f64(got, lowrank_f64(x, dim, block, rank, sel, tail),
                     "lowrank vs float64 Walsh projection", ctx)
    # the tail is copied bit for bit
    n = shape[dim]
    nt = n % block
    if nt:
        got_tail = np.take(got, range(got.shape[dim] - nt, got.shape[dim]), axis=dim)
        assert_same_bits(got_tail, np.take(x, range(n - nt, n), axis=dim), "lowrank tail", ctx)


@pytest.mark.parametrize("i", range(len(LOWRANK_CASES)),
                         ids=[_case_id(c) for c in LOWRANK_CASES])
def test_lowrank_special_values(transforms, rng, ctx, i):
    shape, dim, block, rank, sel, tail, dt = LOWRANK_CASES[i]
    x = random_floats(rng, shape, dt).reshape(-1)
    info = np.finfo(dt)
    specials = np.array([-0.0, np.nan, np.inf, -np.inf, info.tiny / 4, info.max], dtype=dt)
    pos = rng.choice(x.size, size=min(x.size, specials.size), replace=False)
    x[pos] = specials[: pos.size]
    x = x.reshape(shape)
    got = transforms.call(f"lr{i}", x)
    with np.errstate(all="ignore"):
        want = ref.lowrank(x, dim, block, rank, selection=sel, allow_tail=tail)
    assert_same_bits(got, want, "lowrank (special values) vs reference", ctx)


def test_transforms_do_not_modify_inputs(transforms, rng, ctx):
    """The runner copies inputs, but the compiled code must also read what it was given."""
    shape, dim, block, dt = HADAMARD_CASES[0]
    x = random_floats(rng, shape, dt)
    first = transforms.call("had0", x)
    second = transforms.call("had0", x)
    assert_same_bits(first, second, "hadamard called twice", ctx)


# ---------------------------------------------------------------------------------------------
# hot.quantize and hot.dequantize
# ---------------------------------------------------------------------------------------------

Q_SHAPES = [(13, 40), (1, 197), (197, 3)]
Q_MAIN = Q_SHAPES[0]
Q_CONFIGS = list(itertools.product(BITS, GRANULARITIES, SCALE_MODES, ROUNDINGS))


def scale_shape(shape, granularity):
    return {"per_tensor": (), "per_row": shape[:1], "per_col": shape[1:]}[granularity]


def qname(shape, bits, g, sc, r):
    return f"q_{shape[0]}x{shape[1]}_{bits}_{g}_{sc}_{r}"


def _quantize_module():
    funcs = []
    for shape in Q_SHAPES:
        xt, qt = tensor_type(shape, "f32"), tensor_type(shape, "i8")
        for bits, g, sc, r in Q_CONFIGS:
            st = tensor_type(scale_shape(shape, g), "f32")
            seed_arg = ", %seed: i64" if r == "stochastic" else ""
            seed_use = " seed %seed" if r == "stochastic" else ""
            funcs.append(
                f"func.func @{qname(shape, bits, g, sc, r)}(%x: {xt}{seed_arg})"
                f" -> ({qt}, {st}) {{\n"
                f"  %q, %s = hot.quantize %x bits {bits} granularity {g} scale {sc} "
                f"rounding {r}{seed_use} : {xt} -> {qt}, {st}\n"
                f"  return %q, %s : {qt}, {st}\n}}")
    for g in GRANULARITIES:
        qt, yt = tensor_type(Q_MAIN, "i8"), tensor_type(Q_MAIN, "f32")
        st = tensor_type(scale_shape(Q_MAIN, g), "f32")
        funcs.append(f"func.func @deq_{g}(%q: {qt}, %s: {st}) -> {yt} {{\n"
                     f"  %y = hot.dequantize %q, %s granularity {g} : {qt}, {st} -> {yt}\n"
                     f"  return %y : {yt}\n}}")
    return "\n".join(funcs) + "\n"


@pytest.fixture(scope="module")
def qmod(hot_opt):
    return compile_text(hot_opt, _quantize_module())


def run_quantize(mod, shape, x, bits, g, sc, r, seed):
    name = qname(shape, bits, g, sc, r)
    if r == "stochastic":
        return mod.call(name, x, seed)
    return mod.call(name, x)


def check_quantize(mod, x, bits, g, sc, r, seed, ctx):
    """Compiled == reference bit for bit; returns (q, scale)."""
    q, s = run_quantize(mod, x.shape, x, bits, g, sc, r, seed)
    wq, ws = ref.quantize(x, bits, g, sc, r, seed=seed if r == "stochastic" else None)
    what = f"quantize bits={bits} {g} {sc} {r}" + (f" seed={seed}" if r == "stochastic" else "")
    assert_same_bits(s, ws, what + ": scale", ctx)
    assert_same_bits(q, wq, what + ": q", ctx)
    qmax = 2 ** (bits - 1) - 1
    assert q.min() >= -qmax and q.max() <= qmax, f"{what}: q outside [-qmax, qmax] ({ctx})"
    return q, s


def random_quantize_input(rng, shape, kind):
    m, n = shape
    if kind == "normal":
        x = rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3, size=(m, 1))
        x *= 10.0 ** rng.uniform(-1, 1, size=(1, n))
    elif kind == "heavy":   # Student t: large outliers, SAWB clips well below max |x|
        x = rng.standard_t(2, size=shape)
    elif kind == "uniform":
        x = rng.uniform(-1, 1, size=shape)
    elif kind == "signs":   # constant magnitude: SAWB's clip is <= 0, falls back to max |x|
        x = rng.choice([-0.75, 0.75], size=shape)
    else:
        raise ValueError(kind)
    return x.astype(F32)


def _q_seed(rng):
    return int(rng.integers(-2**63, 2**63, dtype=np.int64))


@pytest.mark.parametrize("shape", Q_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("kind", ["normal", "heavy", "uniform", "signs"])
@pytest.mark.parametrize("bits,g,sc,r", Q_CONFIGS, ids=["-".join(map(str, c)) for c in Q_CONFIGS])
def test_quantize_random(qmod, rng, ctx, bits, g, sc, r, kind, shape):
    x = random_quantize_input(rng, shape, kind)
    check_quantize(qmod, x, bits, g, sc, r, _q_seed(rng), ctx)


def broadcast_scale(s, g):
    """The scale array of granularity ``g`` as a view broadcastable against [M, N]."""
    return {"per_tensor": lambda: s, "per_row": lambda: s[:, None],
            "per_col": lambda: s[None, :]}[g]()


def affected_mask(shape, g, pos):
    """Elements in the same quantization group as the element at ``pos``."""
    mask = np.zeros(shape, bool)
    if g == "per_tensor":
        mask[:] = True
    elif g == "per_row":
        mask[pos[0], :] = True
    else:
        mask[:, pos[1]] = True
    return mask


def group_index(g, pos):
    return {"per_tensor": (), "per_row": (pos[0],), "per_col": (pos[1],)}[g]


@pytest.mark.parametrize("bits,g,sc,r", Q_CONFIGS, ids=["-".join(map(str, c)) for c in Q_CONFIGS])
def test_quantize_zero_groups(qmod, rng, ctx, bits, g, sc, r):
    """All-zero rows and columns get scale 0 and q 0; an all-zero tensor too."""
    x = random_quantize_input(rng, Q_MAIN, "normal")
    zr, zc = rng.choice(Q_MAIN[0], 2, replace=False), rng.choice(Q_MAIN[1], 2, replace=False)
    x[zr, :] = 0.0
    x[:, zc] = 0.0
    x[zr[0], 5] = -0.0
    q, s = check_quantize(qmod, x, bits, g, sc, r, _q_seed(rng), ctx)
    zero_groups = {"per_row": zr, "per_col": zc, "per_tensor": []}[g]
    for k in zero_groups:
        assert s[k] == 0.0, f"scale of all-zero group {k} is {s[k]} ({ctx})"
    if g == "per_row":
        assert not q[zr, :].any(), ctx
    if g == "per_col":
        assert not q[:, zc].any(), ctx

    z = np.zeros(Q_MAIN, F32)
    q, s = check_quantize(qmod, z, bits, g, sc, r, _q_seed(rng), ctx)
    assert not q.any() and (s == 0).all(), f"all-zero tensor: q {q}, scale {s} ({ctx})"
    check_quantize(qmod, -z, bits, g, sc, r, _q_seed(rng), ctx)


@pytest.mark.parametrize("special", ["nan", "inf", "-inf"])
@pytest.mark.parametrize("bits,g,sc,r", Q_CONFIGS, ids=["-".join(map(str, c)) for c in Q_CONFIGS])
def test_quantize_non_finite(qmod, rng, ctx, bits, g, sc, r, special):
    """A NaN/Inf makes its group's scale non-finite, its q 0 where x/scale is NaN, and the
    dequantized group non-finite; the other groups are unaffected."""
    x = random_quantize_input(rng, Q_MAIN, "normal")
    pos = (int(rng.integers(Q_MAIN[0])), int(rng.integers(Q_MAIN[1])))
    clean = x.copy()
    x[pos] = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}[special]
    seed = _q_seed(rng)
    q, s = check_quantize(qmod, x, bits, g, sc, r, seed, ctx)
    k = group_index(g, pos)
    if special == "nan":
        assert np.isnan(s[k]), f"scale of the group holding a NaN is {s[k]} ({ctx})"
    else:
        assert not np.isfinite(s[k]), f"scale of the group holding an Inf is {s[k]} ({ctx})"
    mask = affected_mask(Q_MAIN, g, pos)
    # x / scale is NaN (NaN scale) or +-0 / NaN (Inf scale) throughout the group
    assert not q[mask].any(), f"q of the affected group is not all 0: {q[mask]} ({ctx})"
    y = qmod.call(f"deq_{g}", q, s)
    assert not np.isfinite(y[mask]).any(), f"dequantized affected group has finite values ({ctx})"
    # groups without the special value are quantized exactly as without it
    q0, s0 = run_quantize(qmod, Q_MAIN, clean, bits, g, sc, r, seed)
    assert_same_bits(q[~mask], q0[~mask], "q of unaffected groups", ctx)
    if g != "per_tensor":
        keep = np.ones(s.shape, bool)
        keep[k] = False
        assert_same_bits(s[keep], s0[keep], "scales of unaffected groups", ctx)
    assert_same_bits(y[~mask], ref.dequantize(q0, s0, g)[~mask], "dequantized unaffected", ctx)


def tie_input(rng, shape, qmax):
    """Every row, column (and the tensor) has max |x| = qmax, so maxabs gives scale 1 exactly;
    the other values are half-integers (exact ties) and their float32 neighbours."""
    m, n = shape
    half = rng.integers(-qmax, qmax, size=shape) + 0.5          # in [-qmax + .5, qmax - .5]
    x = half.astype(F32)
    near = rng.random(shape) < 0.25
    toward = np.where(rng.random(shape) < 0.5, F32(0), F32(np.sign(x) * 2 * qmax))
    x[near] = np.nextafter(x[near], toward[near].astype(F32))   # just below / above the tie
    for j in range(n):
        x[j % m, j] = qmax * (1 if j % 2 else -1)
    for i in range(m):
        x[i, i % n] = qmax * (1 if i % 3 else -1)
    return x


@pytest.mark.parametrize("bits,g,sc,r", Q_CONFIGS, ids=["-".join(map(str, c)) for c in Q_CONFIGS])
def test_quantize_ties(qmod, rng, ctx, bits, g, sc, r):
    qmax = 2 ** (bits - 1) - 1
    x = tie_input(rng, Q_MAIN, qmax)
    q, s = check_quantize(qmod, x, bits, g, sc, r, _q_seed(rng), ctx)
    if sc == "maxabs":
        assert (s == 1.0).all(), f"scale is not exactly 1: {s} ({ctx})"
        if r == "nearest":  # independent: round half away from zero, exact in float64
            want = np.sign(x) * np.floor(np.abs(x.astype(F64)) + 0.5)
            assert_same_bits(q, want.astype(np.int8), "ties round half away from zero", ctx)
        else:               # floor(v + u) is v itself on integers, floor/ceil on the rest
            lo = np.floor(x.astype(F64))
            assert ((q == lo) | (q == lo + 1)).all(), ctx


@pytest.mark.parametrize("bits,g,sc,r", Q_CONFIGS, ids=["-".join(map(str, c)) for c in Q_CONFIGS])
def test_quantize_extreme_magnitudes(qmod, rng, ctx, bits, g, sc, r):
    """Rows of subnormals, of values near FLT_MAX (SAWB's clip overflows f32), single spikes."""
    x = random_quantize_input(rng, Q_MAIN, "normal")
    tiny = np.finfo(F32).tiny
    x[0] = (rng.standard_normal(Q_MAIN[1]) * tiny / 16).astype(F32)   # subnormals
    x[1] = (rng.uniform(-1, 1, Q_MAIN[1]) * 3e38).astype(F32)         # huge
    x[2] = 0.0
    x[2, 7] = -1e-3                                                    # a single spike
    x[3] = np.float32(1e-45) * rng.choice([-1, 1], Q_MAIN[1])          # smallest subnormal
    check_quantize(qmod, x, bits, g, sc, r, _q_seed(rng), ctx)
    check_quantize(qmod, x[::-1].copy(), bits, g, sc, r, _q_seed(rng), ctx)


STOCHASTIC_CONFIGS = [c for c in Q_CONFIGS if c[3] == "stochastic"]
SEEDS = [0, 1, 2**40 + 3, -1, 2**32, 2**32 - 1, -(2**63), 2**63 - 1]


@pytest.mark.parametrize("seed", SEEDS + ["random"])
@pytest.mark.parametrize("bits,g,sc,r", STOCHASTIC_CONFIGS,
                         ids=["-".join(map(str, c)) for c in STOCHASTIC_CONFIGS])
def test_stochastic_seeds_match_reference(qmod, rng, ctx, bits, g, sc, r, seed):
    if seed == "random":
        seed = _q_seed(rng)
    for shape in Q_SHAPES:
        x = random_quantize_input(rng, shape, "normal")
        check_quantize(qmod, x, bits, g, sc, r, seed, ctx + f" shape={shape}")


@pytest.mark.parametrize("bits,g,sc,r", STOCHASTIC_CONFIGS,
                         ids=["-".join(map(str, c)) for c in STOCHASTIC_CONFIGS])
def test_stochastic_determinism(qmod, rng, ctx, bits, g, sc, r):
    x = random_quantize_input(rng, Q_MAIN, "uniform")
    seed = _q_seed(rng)
    q1, s1 = run_quantize(qmod, Q_MAIN, x, bits, g, sc, r, seed)
    q2, s2 = run_quantize(qmod, Q_MAIN, x, bits, g, sc, r, seed)
    assert_same_bits(q2, q1, f"same seed {seed}, second call", ctx)
    assert_same_bits(s2, s1, f"same seed {seed}, second call (scale)", ctx)
    # seeds differing in the low word, only in the high word, and by sign
    for a, b in [(seed, seed ^ 1), (3, 2**40 + 3), (-1, 2**32 - 1), (0, -(2**63))]:
        qa, sa = run_quantize(qmod, Q_MAIN, x, bits, g, sc, r, a)
        qb, sb = run_quantize(qmod, Q_MAIN, x, bits, g, sc, r, b)
        assert_same_bits(sa, sb, "scales do not depend on the seed", ctx)
        assert not np.array_equal(qa, qb), f"seeds {a} and {b} give identical q ({ctx})"


@pytest.mark.parametrize("g", GRANULARITIES)
def test_dequantize(qmod, rng, ctx, g):
    m, n = Q_MAIN
    q = rng.integers(-128, 128, size=Q_MAIN, dtype=np.int8)
    q[0, :4] = [-128, 127, 0, -1]
    s = (rng.standard_normal(scale_shape(Q_MAIN, g)) * 10.0 ** rng.uniform(-30, 30)).astype(F32)
    s = np.asarray(s, F32)
    got = qmod.call(f"deq_{g}", q, s)
    assert_same_bits(got, ref.dequantize(q, s, g), "dequantize vs reference", ctx)
    # independent: f32 x f32 products are exact in float64, so rounding once gives the f32 multiply
    sb = broadcast_scale(s, g)
    exact = (q.astype(F64) * sb.astype(F64)).astype(F32)
    assert_same_bits(got, exact, "dequantize vs exact product", ctx)
    assert_close_f64(got, q.astype(F64) * sb.astype(F64), "dequantize vs float64", ctx)


@pytest.mark.parametrize("g", GRANULARITIES)
def test_dequantize_special_scales(qmod, rng, ctx, g):
    q = rng.integers(-128, 128, size=Q_MAIN, dtype=np.int8)
    q[:, 0] = 0
    q[0, :] = 0
    tiny, big = np.finfo(F32).tiny, np.finfo(F32).max
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, tiny / 64, -tiny, big, -big / 3,
                         1.0, -1.0, 2.0 ** -140], F32)
    shape = scale_shape(Q_MAIN, g)
    if shape:   # one call with the special values among random scales
        s = rng.standard_normal(shape).astype(F32)
        s[: min(shape[0], specials.size)] = specials[: shape[0]]
        scales = [s]
    else:       # one call per special value
        scales = [np.asarray(v, F32) for v in specials]
    for scale in scales:
        got = qmod.call(f"deq_{g}", q, scale)
        with np.errstate(all="ignore"):
            want = ref.dequantize(q, scale, g)
        assert_same_bits(got, want, f"dequantize with special scales {scale}", ctx)


def test_quantize_dequantize_roundtrip_error(qmod, rng, ctx):
    """Independent sanity bound: maxabs/nearest error is at most scale/2 per element."""
    for bits, g in itertools.product(BITS, GRANULARITIES):
        x = random_quantize_input(rng, Q_MAIN, "normal")
        q, s = run_quantize(qmod, Q_MAIN, x, bits, g, "maxabs", "nearest", None)
        y = qmod.call(f"deq_{g}", q, s)
        sb = broadcast_scale(s, g)
        err = np.abs(y.astype(F64) - x.astype(F64))
        bound = sb.astype(F64) * (0.5 + 1e-6)
        assert (err <= bound).all(), f"bits={bits} {g}: error above scale/2 ({ctx})"


# ---------------------------------------------------------------------------------------------
# hot.int_matmul and hot.rescale
# ---------------------------------------------------------------------------------------------

TRANSPOSES = list(itertools.product([False, True], [False, True]))
# (M, K, N)
MATMUL_SHAPES = [(13, 197, 7), (1, 3, 1), (5, 2048, 3), (2, 2**17 - 1, 3)]
RESCALE_SHAPE = (13, 7)
SCALE_RANKS = list(itertools.product([0, 1], [0, 1]))


def mm_name(mkn, ta, tb):
    return f"mm_{mkn[0]}_{mkn[1]}_{mkn[2]}_{int(ta)}{int(tb)}"


def mm_operand_shapes(mkn, ta, tb):
    m, k, n = mkn
    return ((k, m) if ta else (m, k)), ((n, k) if tb else (k, n))


def _linear_module():
    funcs = []
    for mkn in MATMUL_SHAPES:
        for ta, tb in TRANSPOSES:
            sa, sb = mm_operand_shapes(mkn, ta, tb)
            at, bt = tensor_type(sa, "i8"), tensor_type(sb, "i8")
            rt = tensor_type((mkn[0], mkn[2]), "i32")
            funcs.append(
                f"func.func @{mm_name(mkn, ta, tb)}(%a: {at}, %b: {bt}) -> {rt} {{\n"
                f"  %c = hot.int_matmul %a{' transposed' if ta else ''}, "
                f"%b{' transposed' if tb else ''} : {at}, {bt} -> {rt}\n"
                f"  return %c : {rt}\n}}")
    m, n = RESCALE_SHAPE
    acc_t = tensor_type(RESCALE_SHAPE, "i32")
    for rr, cr in SCALE_RANKS:
        rs = tensor_type((m,) if rr else (), "f32")
        cs = tensor_type((n,) if cr else (), "f32")
        for elem in ["f32", "f64"]:
            yt = tensor_type(RESCALE_SHAPE, elem)
            funcs.append(
                f"func.func @rescale_{rr}{cr}_{elem}(%acc: {acc_t}, %rs: {rs}, %cs: {cs})"
                f" -> {yt} {{\n"
                f"  %y = hot.rescale %acc, %rs, %cs : {acc_t}, {rs}, {cs} -> {yt}\n"
                f"  return %y : {yt}\n}}")
    return "\n".join(funcs) + "\n"


@pytest.fixture(scope="module")
def linmod(hot_opt):
    return compile_text(hot_opt, _linear_module())


def check_matmul(mod, mkn, ta, tb, a, b, ctx, what):
    got = mod.call(mm_name(mkn, ta, tb), a, b)
    assert_same_bits(got, ref.int_matmul(a, b, ta, tb), what + " vs reference", ctx)
    a64 = a.astype(np.int64).T if ta else a.astype(np.int64)
    b64 = b.astype(np.int64).T if tb else b.astype(np.int64)
    exact = a64 @ b64
    assert np.array_equal(got.astype(np.int64), exact), \
        f"{what}: not the exact int64 product ({ctx})"
    return got


@pytest.mark.parametrize("ta,tb", TRANSPOSES, ids=lambda t: "T" if t else "N")
@pytest.mark.parametrize("mkn", MATMUL_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_int_matmul_random(linmod, rng, ctx, mkn, ta, tb):
    sa, sb = mm_operand_shapes(mkn, ta, tb)
    a = rng.integers(-128, 128, size=sa, dtype=np.int8)
    b = rng.integers(-128, 128, size=sb, dtype=np.int8)
    check_matmul(linmod, mkn, ta, tb, a, b, ctx, f"int_matmul {mkn} ta={ta} tb={tb}")


@pytest.mark.parametrize("ta,tb", TRANSPOSES, ids=lambda t: "T" if t else "N")
@pytest.mark.parametrize("mkn", MATMUL_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_int_matmul_extremes(linmod, rng, ctx, mkn, ta, tb):
    """-128 and 127 only: the largest accumulators (up to (2^17 - 1) * 2^14 < 2^31)."""
    sa, sb = mm_operand_shapes(mkn, ta, tb)
    for fill_a, fill_b in [(-128, -128), (-128, 127), (127, 127), (None, None)]:
        a = (np.full(sa, fill_a, np.int8) if fill_a is not None
             else rng.choice(np.array([-128, 127], np.int8), size=sa))
        b = (np.full(sb, fill_b, np.int8) if fill_b is not None
             else rng.choice(np.array([-128, 127], np.int8), size=sb))
        got = check_matmul(linmod, mkn, ta, tb, a, b, ctx,
                           f"int_matmul {mkn} ta={ta} tb={tb} fill={fill_a},{fill_b}")
        if fill_a is not None:
            assert (got.astype(np.int64) == mkn[1] * fill_a * fill_b).all(), ctx


def _rescale_inputs(rng, rr, cr, special):
    m, n = RESCALE_SHAPE
    acc = rng.integers(-2**31, 2**31, size=RESCALE_SHAPE, dtype=np.int64).astype(np.int32)
    acc[0, :3] = [-2**31, 2**31 - 1, 0]
    acc[1, :3] = [16777217, -16777219, 1]   # not representable in f32: conversion rounds
    rs = (rng.standard_normal((m,) if rr else ()) * 1e-4).astype(F32)
    cs = (rng.standard_normal((n,) if cr else ()) * 1e-3).astype(F32)
    rs, cs = np.asarray(rs, F32), np.asarray(cs, F32)
    if special:
        tiny = np.finfo(F32).tiny
        vals = np.array([np.nan, np.inf, -0.0, 0.0, tiny / 8, 3e38, -np.inf], F32)
        if rr:
            rs[: min(m, vals.size)] = vals[:m]
        else:
            rs = np.asarray(vals[int(rng.integers(vals.size))], F32)
        if cr:
            cs[:4] = vals[[4, 5, 0, 2]]
        else:
            cs = np.asarray(F32(1e30), F32)
    return acc, rs, cs


@pytest.mark.parametrize("elem", ["f32", "f64"])
@pytest.mark.parametrize("special", [False, True], ids=["normal", "special"])
@pytest.mark.parametrize("rr,cr", SCALE_RANKS, ids=lambda r: f"rank{r}")
def test_rescale(linmod, rng, ctx, rr, cr, special, elem):
    acc, rs, cs = _rescale_inputs(rng, rr, cr, special)
    got = linmod.call(f"rescale_{rr}{cr}_{elem}", acc, rs, cs)
    dtype = F32 if elem == "f32" else F64
    assert_same_bits(got, ref.rescale(acc, rs, cs, dtype=dtype), "rescale vs reference", ctx)
    if not special:
        rsb = rs[:, None] if rs.ndim else rs
        csb = cs[None, :] if cs.ndim else cs
        exact = acc.astype(F64) * rsb.astype(F64) * csb.astype(F64)
        np.testing.assert_allclose(got.astype(F64), exact, rtol=1e-6, atol=0,
                                   err_msg=f"rescale vs float64 ({ctx})")


# ---------------------------------------------------------------------------------------------
# Chains: gx = gy · W and gw = gyᵀ · x through hadamard/lowrank, quantize, int_matmul, rescale
# ---------------------------------------------------------------------------------------------

CHAIN_M, CHAIN_K, CHAIN_N, CHAIN_BLOCK = 37, 96, 24, 16
GW_T, GW_O, GW_I, GW_BLOCK, GW_RANK = 197, 12, 20, 16, 8


def _chain_module():
    m, k, n, b = CHAIN_M, CHAIN_K, CHAIN_N, CHAIN_BLOCK
    gy, w = tensor_type((m, k), "f32"), tensor_type((k, n), "f32")
    qg, qw = tensor_type((m, k), "i8"), tensor_type((k, n), "i8")
    sg, sw = tensor_type((m,), "f32"), tensor_type((n,), "f32")
    acc, out = tensor_type((m, n), "i32"), tensor_type((m, n), "f32")
    gx_body = (
        f"  %hg = hot.hadamard %gy along 1 block {b} : {gy}\n"
        f"  %hw = hot.hadamard %w along 0 block {b} : {w}\n"
        f"  %qg, %sg = hot.quantize %hg bits {{BG}} granularity per_row scale {{SG}} rounding "
        f"stochastic seed %seed : {gy} -> {qg}, {sg}\n"
        f"  %qw, %sw = hot.quantize %hw bits {{BW}} granularity per_col scale maxabs rounding "
        f"nearest : {w} -> {qw}, {sw}\n"
        f"  %acc = hot.int_matmul %qg, %qw : {qg}, {qw} -> {acc}\n"
        f"  %gx = hot.rescale %acc, %sg, %sw : {acc}, {sg}, {sw} -> {out}\n")
    funcs = []
    for bits, sgm in [(8, "maxabs"), (4, "sawb")]:
        body = gx_body.replace("{BG}", str(bits)).replace("{BW}", str(bits)).replace("{SG}", sgm)
        funcs.append(f"func.func @gx_{bits}(%gy: {gy}, %w: {w}, %seed: i64) -> {out} {{\n"
                     f"{body}  return %gx : {out}\n}}")
        funcs.append(f"func.func @gx_{bits}_all(%gy: {gy}, %w: {w}, %seed: i64) -> "
                     f"({qg}, {sg}, {qw}, {sw}, {acc}, {out}) {{\n{body}"
                     f"  return %qg, %sg, %qw, %sw, %acc, %gx : {qg}, {sg}, {qw}, {sw}, {acc}, "
                     f"{out}\n}}")
    # gw = gyᵀ · x: tokens are contracted; project them with lowrank, quantize per free column
    t, o, i, b, r = GW_T, GW_O, GW_I, GW_BLOCK, GW_RANK
    tl = (t // b) * r + t % b
    gyt, xt = tensor_type((t, o), "f32"), tensor_type((t, i), "f32")
    gyl, xl = tensor_type((tl, o), "f32"), tensor_type((tl, i), "f32")
    qgl, qxl = tensor_type((tl, o), "i8"), tensor_type((tl, i), "i8")
    so, si = tensor_type((o,), "f32"), tensor_type((i,), "f32")
    acc2, out2 = tensor_type((o, i), "i32"), tensor_type((o, i), "f32")
    funcs.append(
        f"func.func @gw(%gy: {gyt}, %x: {xt}, %seed: i64) -> {out2} {{\n"
        f"  %lg = hot.lowrank %gy along 0 block {b} rank {r} allow_tail : {gyt} -> {gyl}\n"
        f"  %lx = hot.lowrank %x along 0 block {b} rank {r} allow_tail : {xt} -> {xl}\n"
        f"  %qg, %sg = hot.quantize %lg bits 8 granularity per_col scale maxabs rounding "
        f"stochastic seed %seed : {gyl} -> {qgl}, {so}\n"
        f"  %qx, %sx = hot.quantize %lx bits 8 granularity per_col scale maxabs rounding "
        f"nearest : {xl} -> {qxl}, {si}\n"
        f"  %acc = hot.int_matmul %qg transposed, %qx : {qgl}, {qxl} -> {acc2}\n"
        f"  %gw = hot.rescale %acc, %sg, %sx : {acc2}, {so}, {si} -> {out2}\n"
        f"  return %gw : {out2}\n}}")
    return "\n".join(funcs) + "\n"


@pytest.fixture(scope="module")
def chainmod(hot_opt):
    return compile_text(hot_opt, _chain_module())


def reference_gx(gy, w, seed, bits, sgm):
    hg = ref.hadamard(gy, 1, CHAIN_BLOCK)
    hw = ref.hadamard(w, 0, CHAIN_BLOCK)
    qg, sg = ref.quantize(hg, bits, "per_row", sgm, "stochastic", seed=seed)
    qw, sw = ref.quantize(hw, bits, "per_col", "maxabs", "nearest")
    acc = ref.int_matmul(qg, qw)
    return qg, sg, qw, sw, acc, ref.rescale(acc, sg, sw)


def rel_err(got, exact):
    return float(np.linalg.norm(got.astype(F64) - exact) / np.linalg.norm(exact))


# loose bounds on ||result - exact||_F / ||exact||_F (typical values are ~5x smaller)
GX_BOUND = {8: 0.03, 4: 0.5}


@pytest.mark.parametrize("bits,sgm", [(8, "maxabs"), (4, "sawb")], ids=["8-maxabs", "4-sawb"])
def test_chain_gx(chainmod, rng, ctx, bits, sgm):
    gy = random_floats(rng, (CHAIN_M, CHAIN_K))
    w = (rng.standard_normal((CHAIN_K, CHAIN_N)) / math.sqrt(CHAIN_K)).astype(F32)
    seed = _q_seed(rng)
    want = reference_gx(gy, w, seed, bits, sgm)
    got_all = chainmod.call(f"gx_{bits}_all", gy, w, seed)
    for name, g, wv in zip(["qg", "sg", "qw", "sw", "acc", "gx"], got_all, want):
        assert_same_bits(g, wv, f"chain gx bits={bits} seed={seed}: {name}", ctx)
    gx = chainmod.call(f"gx_{bits}", gy, w, seed)
    assert_same_bits(gx, want[-1], f"chain gx (fused) bits={bits} seed={seed}", ctx)
    exact = gy.astype(F64) @ w.astype(F64)
    err = rel_err(gx, exact)
    print(f"chain gx bits={bits}: relative error vs float64 gy·W = {err:.4g}")
    assert err < GX_BOUND[bits], (f"chain gx bits={bits}: relative Frobenius error {err:.4g} "
                                  f"vs float64 gy·W exceeds {GX_BOUND[bits]} ({ctx})")


def test_chain_gw(chainmod, rng, ctx):
    t, b, r = GW_T, GW_BLOCK, GW_RANK
    gy = random_floats(rng, (t, GW_O))
    x = rng.standard_normal((t, GW_I)).astype(F32)
    seed = _q_seed(rng)
    lg = ref.lowrank(gy, 0, b, r, allow_tail=True)
    lx = ref.lowrank(x, 0, b, r, allow_tail=True)
    qg, sg = ref.quantize(lg, 8, "per_col", "maxabs", "stochastic", seed=seed)
    qx, sx = ref.quantize(lx, 8, "per_col", "maxabs", "nearest")
    want = ref.rescale(ref.int_matmul(qg, qx, transpose_a=True), sg, sx)
    got = chainmod.call("gw", gy, x, seed)
    assert_same_bits(got, want, f"chain gw seed={seed}", ctx)
    # against the float64 product of the independently projected operands (quantization only)
    pg = lowrank_f64(gy, 0, b, r, "prefix", True)
    px = lowrank_f64(x, 0, b, r, "prefix", True)
    exact = pg.T @ px
    err = rel_err(got, exact)
    print(f"chain gw: relative error vs float64 lowrank(gy)ᵀ·lowrank(x) = {err:.4g}")
    assert err < 0.05, f"chain gw: relative error {err:.4g} vs float64 ({ctx})"


def _check_sawb(hot_opt, x, granularity="per_tensor"):
    """Compiles an 8-bit SAWB quantize of x's shape; its scale and q against the reference,
    bit for bit. Returns the compiled scale."""
    m, n = x.shape
    t, qt = f"tensor<{m}x{n}xf32>", f"tensor<{m}x{n}xi8>"
    st = "tensor<f32>" if granularity == "per_tensor" else f"tensor<{m}xf32>"
    mod = compile_text(hot_opt, (
        f"func.func @q(%x: {t}) -> ({qt}, {st}) {{\n"
        f"  %q, %s = hot.quantize %x bits 8 granularity {granularity} scale sawb rounding nearest"
        f" : {t} -> {qt}, {st}\n"
        f"  return %q, %s : {qt}, {st}\n}}\n"))
    q, s = mod.call("q", x)
    wq, ws = ref.quantize(x, 8, granularity, "sawb", "nearest")
    np.testing.assert_array_equal(np.asarray(s).view(np.uint32), np.asarray(ws).view(np.uint32))
    np.testing.assert_array_equal(q, wq)
    return s


@pytest.mark.parametrize("granularity", ["per_row", "per_tensor"])
@pytest.mark.parametrize("n", [1000, 1002, 1001])
def test_sawb_row_sums_order(hot_opt, n, granularity):
    """A row's compiled SAWB sums take docs/numerics.md's 128 partials and tree: on
    test_reference.py's rows where the sequential sum, the tree the other way round and 32
    vector partials each give another scale, it equals the reference bit for bit."""
    from test_reference import sawb_row_order_row

    _check_sawb(hot_opt, sawb_row_order_row(n), granularity)


def test_sawb_per_tensor_row_sums_combination(hot_opt):
    """The compiled per-tensor SAWB scale combines the row sums in docs/numerics.md's 32
    partials and tree: on test_reference.py's group where adding them one after the other
    gives another scale, it equals the reference bit for bit."""
    from test_reference import sawb_row_order_group

    _check_sawb(hot_opt, sawb_row_order_group())


def test_sawb_per_tensor_summation_order(hot_opt, rng):
    """A per-tensor SAWB scale takes docs/numerics.md's order (each row in 128 partials and a
    tree, then the row sums in 32 interleaved partials and a fixed tree): on a group whose clip cancels to
    ~1e-8 of its mean, the row-major sequential order of one flat sum gives other f32 bits, and
    the compiled code must not."""
    from test_reference import sawb_near_zero_group

    x = sawb_near_zero_group(rng, 2**16).reshape(256, 256)
    s = _check_sawb(hot_opt, x)
    flat1 = flat2 = 0.0
    for e in x.reshape(-1).tolist():
        flat1 += abs(e)
        flat2 += e * e
    n = x.size
    c_flat = np.float32(12.1 * np.sqrt(flat2 / n) - 12.2 * (flat1 / n))
    assert c_flat / np.float32(127) != s
