"""First-principles tests of hot.reference (the numpy reference of docs/numerics.md).

Each check compares against independently built mathematics (dense Hadamard matrices from
(-1)^popcount(i & j), sign-change counts, float64 / exact-rational formulas, literal scalar loops
of the spec's pseudocode, statistics) rather than against the reference's own helpers.

Inputs are random; the base seed is printed (shown by pytest on failure) and can be fixed with
HOT_TEST_SEED=<int> to reproduce a run.
"""

import contextlib
import math
import os
import warnings
import zlib
from fractions import Fraction

import numpy as np
import pytest

from hot import reference as ref

BASE_SEED = int(os.environ.get("HOT_TEST_SEED", int.from_bytes(os.urandom(8), "little")))
BLOCKS = [1, 2, 4, 8, 16, 32, 64]
F32 = np.float32


@pytest.fixture
def rng(request):
    """A generator seeded from BASE_SEED and the test's name (stable across test selection)."""
    print(f"HOT_TEST_SEED={BASE_SEED} test={request.node.name}")
    return np.random.default_rng([BASE_SEED, zlib.crc32(request.node.name.encode())])


# ---------------------------------------------------------------------------------------------
# Independent constructions
# ---------------------------------------------------------------------------------------------


def dense_hadamard(b):
    """Ĥ_b = H_b / sqrt(b) in float64 with H_b[i, j] = (-1)^popcount(i & j)."""
    i = np.arange(b)
    parity = np.array([[bin(r & c).count("1") & 1 for c in i] for r in i])
    return (1.0 - 2.0 * parity) / math.sqrt(b)


def sylvester(b):
    """H_b by the Sylvester recursion H_2b = [[H, H], [H, -H]] (integer entries)."""
    h = np.ones((1, 1), dtype=np.int64)
    while h.shape[0] < b:
        h = np.block([[h, h], [h, -h]])
    return h


def sign_changes(v):
    return int(np.count_nonzero(np.sign(v[1:]) != np.sign(v[:-1])))


def block_apply(x, dim, mat):
    """Apply the (b x b) matrix ``mat`` to each consecutive block of ``dim`` in float64."""
    b = mat.shape[0]
    moved = np.moveaxis(np.asarray(x, dtype=np.float64), dim, -1)
    y = moved.reshape(moved.shape[:-1] + (-1, b)) @ mat.T
    return np.moveaxis(y.reshape(moved.shape), -1, dim)


def spec_butterfly(vec, dtype):
    """Literal scalar transcription of the butterfly pseudocode of docs/numerics.md."""
    v = [dtype(e) for e in vec]
    b = len(v)
    for s in range(b.bit_length() - 1):
        for t in range(b):
            if not t & (1 << s):
                p = t + (1 << s)
                v[t], v[p] = v[t] + v[p], v[t] - v[p]
    c = dtype(1.0 / math.sqrt(b))  # agrees with the once-rounded value for f16/f32 (tested)
    return np.array([e * c for e in v], dtype=dtype)


def kept_walsh_rows(b, rank, selection):
    """Rows of H_b (Sylvester) that a projection keeps, found from sign counts alone."""
    h = sylvester(b)
    if selection == "prefix":
        return [r for r in range(b) if sign_changes(h[r]) < rank]
    s = math.isqrt(b)
    keep = []
    for r in range(b):
        grid = h[r].reshape(s, s)
        if sign_changes(grid[:, 0]) + sign_changes(grid[0, :]) < s:
            keep.append(r)
    return keep


def projector(n, b, rank, selection="prefix"):
    """P (n x n, float64): Σ w wᵀ over kept normalised Walsh rows per full block, I on the tail."""
    h = sylvester(b) / math.sqrt(b)
    pb = sum(np.outer(h[r], h[r]) for r in kept_walsh_rows(b, rank, selection))
    nb = n // b
    p = np.zeros((n, n))
    for c in range(nb):
        p[c * b:(c + 1) * b, c * b:(c + 1) * b] = pb
    p[nb * b:, nb * b:] = np.eye(n - nb * b)
    return p


def py_mix32(h):
    h &= 0xFFFFFFFF
    h ^= h >> 16
    h = (h * 0x21F0AAAD) & 0xFFFFFFFF
    h ^= h >> 15
    h = (h * 0x735A2D97) & 0xFFFFFFFF
    h ^= h >> 15
    return h


def py_key(seed):
    bits = seed & 0xFFFFFFFFFFFFFFFF
    lo, hi = bits & 0xFFFFFFFF, bits >> 32
    return py_mix32(lo ^ py_mix32(hi ^ 0x9E3779B9))


def py_uniform(seed, idx):
    key = py_key(seed)
    h = py_mix32((py_mix32((idx & 0xFFFFFFFF) ^ key) + key) & 0xFFFFFFFF)
    return Fraction(h >> 8, 2**24)


def round_half_away_exact(v):
    """Exact rational round-half-away-from-zero of a float."""
    f = Fraction(float(v))
    mag = math.floor(abs(f) + Fraction(1, 2))
    return mag if f >= 0 else -mag


@contextlib.contextmanager
def no_warnings():
    """Turn every warning (numpy's RuntimeWarnings included) into an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ---------------------------------------------------------------------------------------------
# Hadamard
# ---------------------------------------------------------------------------------------------


def test_dense_constructions_agree():
    for b in BLOCKS:
        np.testing.assert_array_equal(dense_hadamard(b) * math.sqrt(b), sylvester(b))


@pytest.mark.parametrize("b", BLOCKS)
def test_hadamard_of_identity_is_dense_matrix(b):
    y = ref.hadamard(np.eye(b, dtype=F32), dim=1, block=b)
    assert y.dtype == F32
    # row j of the result is Ĥ e_j = column j of Ĥ (Ĥ is symmetric)
    np.testing.assert_allclose(y, dense_hadamard(b).T, rtol=0, atol=1e-6)
    h = dense_hadamard(b)
    np.testing.assert_allclose(h @ h, np.eye(b), atol=1e-12)


@pytest.mark.parametrize("b", BLOCKS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_hadamard_matches_dense_and_is_involution(rng, b, dim):
    shape = [3 * b, 5] if dim == 0 else [5, 3 * b]
    x = rng.standard_normal(shape).astype(F32)
    y = ref.hadamard(x, dim=dim, block=b)
    assert y.shape == x.shape and y.dtype == F32
    expect = block_apply(x, dim, dense_hadamard(b))
    np.testing.assert_allclose(y, expect, rtol=1e-6, atol=1e-6 * np.abs(x).max())
    back = ref.hadamard(y, dim=dim, block=b)
    np.testing.assert_allclose(back, x, rtol=0, atol=2e-6 * np.abs(x).max())


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_hadamard_non_power_of_two_dims(rng, dim):
    # 48 = 3 blocks of 16 along `dim`; the other sizes are not powers of two either
    shape = [3, 5, 7]
    shape[dim] = 48
    x = rng.standard_normal(shape)
    y = ref.hadamard(x, dim=dim, block=16)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, block_apply(x, dim, dense_hadamard(16)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ref.hadamard(y, dim, 16), x, rtol=1e-12, atol=1e-12)


def test_hadamard_cancels_in_contraction(rng):
    a = rng.standard_normal((6, 48))
    b = rng.standard_normal((48, 5))
    got = ref.hadamard(a, 1, 16) @ ref.hadamard(b, 0, 16)
    np.testing.assert_allclose(got, a @ b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_hadamard_scale_is_rounded_once(dtype):
    for k in range(0, 2 * -np.finfo(dtype).minexp + 1):  # 1/sqrt(b) stays a normal number
        b = 2**k
        c = ref.hadamard_scale(b, dtype)
        assert c.dtype == dtype
        # exact: the neighbours' midpoints bracket 1/sqrt(b), i.e. mid_lo^2 * b < 1 < mid_hi^2 * b
        lo = Fraction(float(np.nextafter(c, dtype(0))))
        hi = Fraction(float(np.nextafter(c, dtype(2))))
        mid_lo, mid_hi = (lo + Fraction(float(c))) / 2, (hi + Fraction(float(c))) / 2
        assert mid_lo * mid_lo * b < 1 < mid_hi * mid_hi * b, (b, c)
        if dtype != np.float64 and k <= 24:  # the naive f64 route happens to be right here
            assert c == dtype(1.0 / math.sqrt(b))
    if dtype == np.float16:  # subnormal results: 2^-24.5 -> 2^-24; 2^-25 is a tie -> 0 (even)
        assert ref.hadamard_scale(2**49, dtype) == dtype(2.0**-24)
        assert ref.hadamard_scale(2**50, dtype) == 0
        assert ref.hadamard_scale(2**47, dtype) == dtype(2.0**-24)  # 1.41 * 2^-24
        assert ref.hadamard_scale(2**45, dtype) == dtype(3 * 2.0**-24)  # 2.83 * 2^-24
    if dtype == np.float64:  # ... but not for f64: 1/sqrt(2) rounds twice
        assert ref.hadamard_scale(2, dtype) == math.sqrt(0.5) != 1.0 / math.sqrt(2)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("b", [2, 8, 32, 64])
def test_hadamard_bit_exact_butterfly_order(rng, dtype, b):
    x = rng.standard_normal((4, 2 * b)).astype(dtype)
    y = ref.hadamard(x, dim=1, block=b)
    expect = np.stack([
        np.concatenate([spec_butterfly(row[c * b:(c + 1) * b], dtype) for c in range(2)])
        for row in x
    ])
    np.testing.assert_array_equal(y.view(np.uint16 if dtype == np.float16 else np.uint32),
                                  expect.view(np.uint16 if dtype == np.float16 else np.uint32))


def test_butterfly_order_is_observable(rng):
    """Sanity of the bit-exact test: highest-bit-first stages give different f32 bits."""
    b = 64
    x = rng.standard_normal((256, b)).astype(F32)
    v = x.copy()
    for s in reversed(range(6)):
        h = 1 << s
        w = v.reshape(256, b // (2 * h), 2, h)
        v = np.stack((w[:, :, 0] + w[:, :, 1], w[:, :, 0] - w[:, :, 1]), axis=2).reshape(256, b)
    v = v * ref.hadamard_scale(b)
    y = ref.hadamard(x, 1, b)
    np.testing.assert_allclose(v, y, rtol=1e-5, atol=1e-5)
    assert np.any(v != y)


def test_hadamard_block_one_is_identity(rng):
    x = rng.standard_normal((3, 5)).astype(F32)
    np.testing.assert_array_equal(ref.hadamard(x, 0, 1), x)


def test_hadamard_invalid():
    x = np.zeros((4, 48), F32)
    with pytest.raises(ValueError, match="power of two"):
        ref.hadamard(x, 1, 12)
    with pytest.raises(ValueError, match="does not divide"):
        ref.hadamard(x, 1, 32)
    with pytest.raises(ValueError, match="power of two"):
        ref.hadamard(x, 1, 0)
    with pytest.raises(ValueError, match="out of range"):
        ref.hadamard(x, 2, 4)
    with pytest.raises(TypeError):
        ref.hadamard(np.zeros((4, 4), np.int32), 1, 4)


# ---------------------------------------------------------------------------------------------
# Walsh sequency order and low-rank projection
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("b", BLOCKS)
def test_sequency_rows_have_k_sign_changes(b):
    h = sylvester(b)
    rows = ref.sequency_rows(b)
    assert sorted(rows) == list(range(b))
    for k, r in enumerate(rows):
        assert sign_changes(h[r]) == k
    assert ref.kept_rows(b, b, "prefix") == rows
    for r in range(1, b + 1):
        assert ref.kept_rows(b, r) == rows[:r]


@pytest.mark.parametrize("s", [1, 2, 4, 8])
def test_triangle_rows_are_low_pass_outer_products(s):
    b = s * s
    h = sylvester(b)
    rows = ref.kept_rows(b, None, "triangle")
    assert ref.triangle_rank(b) == len(rows) == s * (s + 1) // 2
    assert ref.kept_rows(b, s * (s + 1) // 2, "triangle") == rows
    pairs = []
    for r in rows:
        grid = h[r].reshape(s, s)
        col, row = grid[:, 0], grid[0, :]
        np.testing.assert_array_equal(grid, np.outer(col, row) * grid[0, 0])
        pairs.append((sign_changes(col), sign_changes(row)))
    expect = sorted(((p, q) for p in range(s) for q in range(s) if p + q < s),
                    key=lambda pq: (pq[0] + pq[1], pq[0]))
    assert pairs == expect


@pytest.mark.parametrize("b,rank", [(1, 1), (4, 1), (8, 3), (16, 5), (16, 16), (64, 10)])
def test_lowrank_gram_equals_projected_product(rng, b, rank):
    n = 4 * b
    a = rng.standard_normal((n, 7))
    c = rng.standard_normal((n, 3))
    la, lc = ref.lowrank(a, 0, b, rank), ref.lowrank(c, 0, b, rank)
    assert la.shape == (4 * rank, 7) and lc.shape == (4 * rank, 3)
    p = projector(n, b, rank)
    np.testing.assert_allclose(p, p.T, atol=1e-14)
    np.testing.assert_allclose(p @ p, p, atol=1e-12)
    assert np.isclose(np.trace(p), 4 * rank)
    np.testing.assert_allclose(la.T @ lc, a.T @ p @ c, rtol=1e-10, atol=1e-10)
    if rank == b:
        np.testing.assert_allclose(la.T @ lc, a.T @ c, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("s", [2, 4])
def test_lowrank_triangle_gram(rng, s):
    b, n = s * s, 3 * s * s
    a = rng.standard_normal((5, n))
    la = ref.lowrank(a, 1, b, ref.triangle_rank(b), "triangle")
    assert la.shape == (5, 3 * ref.triangle_rank(b))
    np.testing.assert_allclose(la @ la.T, a @ projector(n, b, None, "triangle") @ a.T,
                               rtol=1e-10, atol=1e-10)


def test_lowrank_tail_passthrough(rng):
    n, b, rank = 197, 16, 8
    x = rng.standard_normal((n, 4)).astype(F32)
    y = ref.lowrank(x, 0, b, rank, allow_tail=True)
    assert y.shape == (12 * rank + 5, 4) and y.dtype == F32
    np.testing.assert_array_equal(y[12 * rank:], x[192:])
    x64 = x.astype(np.float64)
    y64 = ref.lowrank(x64, 0, b, rank, allow_tail=True)
    np.testing.assert_allclose(y64.T @ y64, x64.T @ projector(n, b, rank) @ x64,
                               rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="tail"):
        ref.lowrank(x, 0, b, rank)


def test_lowrank_picks_hadamard_coefficients_bitwise(rng):
    b, rank = 16, 6
    x = rng.standard_normal((3, 5 * b + 3)).astype(F32)
    y = ref.lowrank(x, 1, b, rank, allow_tail=True)
    h = ref.hadamard(x[:, :5 * b], 1, b)
    rows = ref.kept_rows(b, rank)
    for c in range(5):
        np.testing.assert_array_equal(y[:, c * rank:(c + 1) * rank], h[:, c * b + np.array(rows)])


def test_lowrank_invalid():
    x = np.zeros((2, 64), F32)
    with pytest.raises(ValueError, match="power of two"):
        ref.lowrank(x, 1, 12, 4)
    with pytest.raises(ValueError, match="rank"):
        ref.lowrank(x, 1, 16, 17)
    with pytest.raises(ValueError, match="rank"):
        ref.lowrank(x, 1, 16, 0)
    with pytest.raises(ValueError, match="tail"):
        ref.lowrank(np.zeros((2, 40), F32), 1, 16, 4)
    with pytest.raises(ValueError, match="s\\*s"):
        ref.lowrank(x, 1, 32, 4, "triangle")
    with pytest.raises(ValueError, match="rank 10"):
        ref.lowrank(x, 1, 16, 9, "triangle")
    with pytest.raises(ValueError, match="selection"):
        ref.lowrank(x, 1, 16, 4, "diamond")
    with pytest.raises(ValueError, match="s\\*s"):
        ref.triangle_rank(8)


# ---------------------------------------------------------------------------------------------
# Counter-based hash
# ---------------------------------------------------------------------------------------------


def test_mix32_matches_python_ints(rng):
    vals = [0, 1, 0xFFFFFFFF, 0x80000000, 0x9E3779B9] + list(rng.integers(0, 2**32, 200))
    got = ref.mix32(np.array(vals, dtype=np.uint32))
    assert got.dtype == np.uint32
    assert [int(g) for g in got] == [py_mix32(int(v)) for v in vals]
    assert int(ref.mix32(np.uint32(12345))) == py_mix32(12345)


def test_key_and_uniform_match_python_ints(rng):
    seeds = [0, 1, -1, 2**63 - 1, -(2**63), 0x123456789ABCDEF, -987654321]
    seeds += [int(s) for s in rng.integers(-(2**63), 2**63 - 1, 20, dtype=np.int64)]
    idx = np.array([0, 1, 2, 2**31, 2**32 - 1, 2**32, 2**32 + 5, 12345678901], dtype=np.int64)
    for seed in seeds:
        assert int(ref.stochastic_key(seed)) == py_key(seed)
        u = ref.uniform(seed, idx)
        assert u.dtype == F32 and u.shape == idx.shape
        assert [Fraction(float(e)) for e in u] == [py_uniform(seed, int(i)) for i in idx]
    # only the low 32 bits of the index matter
    u = ref.uniform(7, idx)
    assert u[0] == u[5] and u[4] != u[5]
    with pytest.raises(ValueError):
        ref.stochastic_key(2**63)
    with pytest.raises(ValueError):
        ref.stochastic_key(-(2**63) - 1)


def test_uniform_distribution(rng):
    n = 2**20
    seed = int(rng.integers(-(2**63), 2**63 - 1, dtype=np.int64))
    idx = np.arange(n, dtype=np.int64)
    u = ref.uniform(seed, idx)
    assert u.min() >= 0 and u.max() <= 1 - 2**-24
    assert np.all(u * 2**24 == np.floor(u * 2**24))  # exact multiples of 2^-24
    u64 = u.astype(np.float64)
    assert abs(u64.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n)
    # chi-square over 64 equal buckets: mean 63, sd sqrt(126); very loose bound
    counts = np.bincount((u64 * 64).astype(int), minlength=64)
    chi2 = ((counts - n / 64) ** 2 / (n / 64)).sum()
    assert chi2 < 63 + 8 * math.sqrt(126)
    # Kolmogorov-Smirnov statistic, loose bound (5% critical value is 1.36/sqrt(n))
    srt = np.sort(u64)
    ks = max(np.max(np.arange(1, n + 1) / n - srt), np.max(srt - np.arange(n) / n))
    assert ks < 3 / math.sqrt(n)
    # lag-1 correlation of consecutive indices ~ N(0, 1/n)
    corr = np.corrcoef(u64[:-1], u64[1:])[0, 1]
    assert abs(corr) < 5 / math.sqrt(n)


def test_uniform_pairs_at_row_lags(rng):
    """u of elements one row apart is jointly uniform (64 x 64 buckets, chi-square) at the row
    lengths of real layers. Both rounds of mix32 are needed for this: with one round,
    mix32(idx xor key), these lags give z-scores of 10^2 to 10^5 (bench/RESULTS.md), so a
    cheaper hash must pass this test first."""
    n = 2**20
    seed = int(rng.integers(-(2**63), 2**63 - 1, dtype=np.int64))
    u = ref.uniform(seed, np.arange(n, dtype=np.int64)).astype(np.float64)
    cells = 64 * 64
    for lag in (1, 2, 16, 64, 256, 768, 1024, 3072, 4096):
        a, b = u[:-lag], u[lag:]
        counts = np.bincount((a * 64).astype(int) * 64 + (b * 64).astype(int), minlength=cells)
        expect = a.size / cells
        z = (((counts - expect) ** 2 / expect).sum() - (cells - 1)) / math.sqrt(2 * (cells - 1))
        assert abs(z) < 6, (lag, z)


def test_hash_has_no_collisions(rng):
    n = 2**20
    seed = int(rng.integers(-(2**63), 2**63 - 1, dtype=np.int64))
    idx = np.arange(n, dtype=np.int64)
    h = ref.counter_hash(seed, idx)
    assert np.unique(h).size == n  # mix32 is a bijection, so the 32-bit hash is injective
    # the 24-bit value behind u behaves like n random draws from 2^24 values (birthday bound)
    m = 2**24
    distinct = np.unique(h >> np.uint32(8)).size
    expect = m * (1 - (1 - 1 / m) ** n)
    collisions_sd = math.sqrt(n * n / (2 * m))  # ~ Poisson count of colliding pairs
    assert abs(distinct - expect) < 6 * collisions_sd, (distinct, expect)
    # different seeds give (essentially) unrelated streams
    other = ref.counter_hash(seed ^ 1, idx)
    assert np.mean(h == other) < 1e-3


# ---------------------------------------------------------------------------------------------
# Quantize / dequantize
# ---------------------------------------------------------------------------------------------

ALL_CONFIGS = [(g, m, r) for g in ("per_tensor", "per_row", "per_col")
               for m in ("maxabs", "sawb") for r in ("nearest", "stochastic")]


def group_view(a, granularity):
    """List of (index expression, group array) for a rank-2 array."""
    if granularity == "per_tensor":
        return [((slice(None), slice(None)), a)]
    if granularity == "per_row":
        return [((i, slice(None)), a[i]) for i in range(a.shape[0])]
    return [((slice(None), j), a[:, j]) for j in range(a.shape[1])]


def scale_of(scale, granularity, k):
    return scale[()] if granularity == "per_tensor" else scale[k]


@pytest.mark.parametrize("granularity,mode,rounding", ALL_CONFIGS)
@pytest.mark.parametrize("bits", [2, 4, 8])
def test_quantize_range_shapes_and_dtypes(rng, granularity, mode, rounding, bits):
    m, n = 6, 9
    x = (rng.standard_normal((m, n)) * rng.exponential(3, (m, 1))).astype(F32)
    q, scale = ref.quantize(x, bits, granularity, mode, rounding, seed=42)
    qmax = 2 ** (bits - 1) - 1
    assert q.dtype == np.int8 and q.shape == (m, n)
    assert scale.dtype == F32
    assert scale.shape == {"per_tensor": (), "per_row": (m,), "per_col": (n,)}[granularity]
    assert np.all(np.abs(q.astype(int)) <= qmax)
    assert np.all(np.isfinite(scale)) and np.all(scale > 0)
    y = ref.dequantize(q, scale, granularity)
    assert y.dtype == F32 and y.shape == (m, n)


@pytest.mark.parametrize("granularity", ["per_tensor", "per_row", "per_col"])
@pytest.mark.parametrize("bits", [4, 8])
def test_maxabs_nearest_extremes_and_error_bound(rng, granularity, bits):
    x = (rng.standard_normal((8, 12)) * rng.exponential(2, (1, 12))).astype(F32)
    q, scale = ref.quantize(x, bits, granularity, "maxabs", "nearest")
    qmax = 2 ** (bits - 1) - 1
    y = ref.dequantize(q, scale, granularity).astype(np.float64)
    for k, (sel, grp) in enumerate(group_view(x, granularity)):
        s = float(scale_of(scale, granularity, k))
        a = np.abs(grp.astype(np.float64))
        assert np.isclose(s, a.max() / qmax, rtol=2e-7, atol=0)  # one f32 rounding of max / qmax
        top = np.argmax(a)
        assert int(q[sel].reshape(-1)[top]) == qmax * int(np.sign(grp.reshape(-1)[top]))
        err = np.abs(grp.astype(np.float64) - y[sel])
        assert np.all(err <= s * (0.5 + 2e-5)), (err.max(), s)


@pytest.mark.parametrize("granularity", ["per_tensor", "per_row", "per_col"])
def test_sawb_clip_matches_float64_formula(rng, granularity):
    bits = 4
    qmax = 7
    x = rng.standard_normal((16, 24)).astype(F32)
    x[3] = np.sign(rng.standard_normal(24)) * 2.5  # near-constant magnitude: c < 0 (row 3)
    x[:, 5] = -1.75                               # constant column: c = -0.1 * 1.75 < 0
    q, scale = ref.quantize(x, bits, granularity, "sawb", "nearest")
    y = ref.dequantize(q, scale, granularity).astype(np.float64)
    for k, (sel, grp) in enumerate(group_view(x, granularity)):
        g = grp.astype(np.float64).reshape(-1)
        c = 12.1 * math.sqrt(np.mean(g * g)) - 12.2 * np.mean(np.abs(g))
        s = float(scale_of(scale, granularity, k))
        clip = c if c > 0 else np.abs(g).max()
        assert np.isclose(s * qmax, clip, rtol=1e-6, atol=0), (k, s * qmax, c)
        inside = np.abs(g) <= clip * (1 - 1e-5)
        assert np.all(np.abs(g - y[sel].reshape(-1))[inside] <= s * (0.5 + 2e-5))
        assert np.all(np.abs(q[sel].reshape(-1)[~inside].astype(int)) >= qmax - 1)
    if granularity == "per_row":
        assert math.isclose(float(scale[3]), 2.5 / 7, rel_tol=1e-7)  # fallback to maxabs
    if granularity == "per_col":
        assert math.isclose(float(scale[5]), 1.75 / 7, rel_tol=1e-7)


@pytest.mark.parametrize("granularity", ["per_tensor", "per_row", "per_col"])
@pytest.mark.parametrize("shape", [(5, 7), (3, 300), (70, 129)])
def test_sawb_scale_bit_exact_f64(rng, granularity, shape):
    x = (rng.standard_normal(shape) * 10 ** rng.uniform(-3, 3, shape)).astype(F32)
    _, scale = ref.quantize(x, 8, granularity, "sawb", "nearest")
    for k, (_, grp) in enumerate(group_view(x, granularity)):
        if granularity == "per_col":
            column = grp.reshape(-1).tolist()
            s1, s2 = sum_sequential(abs(e) for e in column), sum_sequential(e * e for e in column)
        else:
            s1, s2 = sawb_sums(grp if granularity == "per_tensor" else grp.reshape(1, -1))
        n = grp.size
        c = np.float32(12.1 * math.sqrt(s2 / n) - 12.2 * (s1 / n))
        a = c if c > 0 else np.abs(grp).max()
        assert scale_of(scale, granularity, k) == np.float32(a) / np.float32(127)


def tree(partials):
    """P[p] += P[p + h] for h = len / 2, ..., 2, 1; returns P[0]."""
    p = list(partials)
    h = len(p) // 2
    while h >= 1:
        for i in range(h):
            p[i] += p[i + h]
        h //= 2
    return p[0]


def row_sawb_sums(row):
    """docs/numerics.md's sawb sums of one row, in plain Python floats (IEEE f64): element j
    added to partial j mod 128 (each from 0, in element order), then the tree."""
    p1, p2 = [0.0] * 128, [0.0] * 128
    for j, e in enumerate(row):
        p1[j % 128] += abs(e)
        p2[j % 128] += e * e
    return tree(p1), tree(p2)


def sawb_sums(grp):
    """docs/numerics.md's sawb sums of a 2-D group, in plain Python floats: each row's
    (row_sawb_sums); then row i added to partial i mod 32 (each from 0, in row order), and the
    tree."""
    p1, p2 = [0.0] * 32, [0.0] * 32
    for i, row in enumerate(grp.tolist()):
        r1, r2 = row_sawb_sums(row)
        p1[i % 32] += r1
        p2[i % 32] += r2
    return tree(p1), tree(p2)


def sawb_near_zero_group(rng, n):
    """f32 values whose SAWB clip c is a tiny positive number (|c| / mean|x| ~ 1e-8).

    The cancellation in 12.1 * rms - 12.2 * mean amplifies the last-bit differences between
    summation orders, so only the specified order reproduces the f32 scale.
    """
    base = rng.uniform(1, 1.01, n) * np.where(rng.random(n) < 0.5, -1.0, 1.0)
    sub = rng.random(n) < 0.01

    def make(t):
        return np.where(sub, base * t, base).astype(F32)

    def clip(x):
        g = x.astype(np.float64)
        return 12.1 * math.sqrt(np.sum(g * g) / n) - 12.2 * np.sum(np.abs(g)) / n

    lo, hi = 1.0, 100.0  # clip(make(1)) < 0 < clip(make(100))
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if clip(make(mid)) < 0 else (lo, mid)
    t = F32(lo)
    while clip(make(t)) <= 0:
        t = np.nextafter(t, F32(200))
    return make(t)


def sawb_row_order_group():
    """A 4096 x 16 near-zero SAWB group (sawb_near_zero_group) on which combining the row sums
    one after the other, or the 32 partials in the tree taken the other way round (h = 1, 2,
    ..., 16), instead of docs/numerics.md's order, gives another f32 clip
    (test_sawb_row_sums_combination_is_observable)."""
    return sawb_near_zero_group(np.random.default_rng(3), 2**16).reshape(4096, 16)


# n -> seed: rows whose vector width on the GPU is 4, 2 and 1 (n mod 4 = 0, 2, 1).
SAWB_ROW_ORDER_SEEDS = {1000: 9, 1002: 5, 1001: 23}


def sawb_row_order_row(n):
    """A 1 x n near-zero SAWB row (sawb_near_zero_group) on which docs/numerics.md's 128
    partials give another f32 clip than summing the row one element after the other, than the
    partials' tree taken the other way round (h = 1, 2, ..., 64) and than 32 partials of
    4-element vectors (test_sawb_row_order_is_observable)."""
    return sawb_near_zero_group(np.random.default_rng(SAWB_ROW_ORDER_SEEDS[n]), n).reshape(1, n)


@pytest.mark.parametrize("n", sorted(SAWB_ROW_ORDER_SEEDS))
def test_sawb_row_order_is_observable(n):
    x = sawb_row_order_row(n)
    row = x[0].tolist()

    def clip(s1, s2):
        return np.float32(12.1 * math.sqrt(s2 / n) - 12.2 * (s1 / n))

    c = clip(*row_sawb_sums(row))
    assert c > 0
    for granularity in ("per_row", "per_tensor"):  # one row: the same sums
        _, scale = ref.quantize(x, 8, granularity, "sawb", "nearest")
        assert np.asarray(scale).reshape(-1)[0] == c / F32(127)
    assert clip(sum_sequential(abs(e) for e in row), sum_sequential(e * e for e in row)) != c
    xor = [[0.0] * 128, [0.0] * 128]  # the tree the other way round
    vectors = [[0.0] * 32, [0.0] * 32]  # lane l's 4-element vectors in partial l
    for j, e in enumerate(row):
        xor[0][j % 128] += abs(e)
        xor[1][j % 128] += e * e
        vectors[0][j // 4 % 32] += abs(e)
        vectors[1][j // 4 % 32] += e * e
    for h in (1, 2, 4, 8, 16, 32, 64):
        xor = [[p[i] + p[i ^ h] for i in range(128)] for p in xor]
    assert clip(xor[0][0], xor[1][0]) != c
    assert clip(tree(vectors[0]), tree(vectors[1])) != c


def test_sawb_row_sums_combination_is_observable():
    x = sawb_row_order_group()
    _, scale = ref.quantize(x, 8, "per_tensor", "sawb", "nearest")
    n = x.size
    s1, s2 = sawb_sums(x)
    c = np.float32(12.1 * math.sqrt(s2 / n) - 12.2 * (s1 / n))
    assert scale == c / F32(127)
    r1 = r2 = 0.0  # the row sums one after the other
    for row in x.tolist():
        a, b = row_sawb_sums(row)
        r1 += a
        r2 += b
    c_rows = np.float32(12.1 * math.sqrt(r2 / n) - 12.2 * (r1 / n))
    assert c_rows != c
    # The partials' tree the other way round: lane pairs 1 apart first (xor shuffles).
    partials = [[0.0] * 32, [0.0] * 32]
    for i, row in enumerate(x.tolist()):
        a, b = row_sawb_sums(row)
        partials[0][i % 32] += a
        partials[1][i % 32] += b
    for h in (1, 2, 4, 8, 16):
        partials = [[p[lane] + p[lane ^ h] for lane in range(32)] for p in partials]
    t1, t2 = partials[0][0], partials[1][0]
    assert np.float32(12.1 * math.sqrt(t2 / n) - 12.2 * (t1 / n)) != c


def sum_sequential(values):
    total = 0.0
    for v in values:
        total += v
    return total


def test_sawb_summation_order_is_observable(rng):
    x = sawb_near_zero_group(rng, 2**16).reshape(256, 256)
    _, scale = ref.quantize(x, 8, "per_tensor", "sawb", "nearest")
    s1, s2 = sawb_sums(x)  # rows in partials and a tree, then the row sums' partials and tree
    n = x.size
    c = np.float32(12.1 * math.sqrt(s2 / n) - 12.2 * (s1 / n))
    assert 0 < c < 1e-5
    assert scale == c / F32(127)
    # One flat sequential sum gives other bits: the order matters.
    flat = x.reshape(-1).tolist()
    f1, f2 = sum_sequential(abs(e) for e in flat), sum_sequential(e * e for e in flat)
    assert np.float32(12.1 * math.sqrt(f2 / n) - 12.2 * (f1 / n)) != c


def test_round_half_away_from_zero():
    below_half = np.nextafter(F32(0.5), F32(0))
    assert below_half == F32(0.49999997)
    vals = [127, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 126.5, -126.5, below_half, -below_half,
            np.nextafter(F32(2.5), F32(0)), np.nextafter(F32(2.5), F32(3)), 0.0, -0.0,
            np.nextafter(F32(0), F32(1)), 3.0, -3.0]
    expect = [127, 1, -1, 2, -2, 3, -3, 127, -127, 0, 0, 2, 3, 0, 0, 0, 3, -3]
    x = np.array([vals], dtype=F32)
    q, scale = ref.quantize(x, 8, "per_tensor", "maxabs", "nearest")
    assert scale == F32(1)  # 127 / 127: v == x exactly
    assert q.tolist() == [expect]


def test_nearest_rounding_exact_on_dense_grid(rng):
    # values near every half-integer in [-127, 127], plus random ones; scale is exactly 1
    halves = np.arange(-127, 127, dtype=F32) + F32(0.5)
    near = np.concatenate([halves, np.nextafter(halves, F32(-200)), np.nextafter(halves, F32(200)),
                           rng.uniform(-127, 127, 2000).astype(F32)])
    x = np.concatenate([[F32(127)], near]).reshape(1, -1).astype(F32)
    q, scale = ref.quantize(x, 8, "per_tensor", "maxabs", "nearest")
    assert scale == F32(1)
    expect = [max(-127, min(127, round_half_away_exact(v))) for v in x[0]]
    assert q[0].tolist() == expect


def test_round_half_away_as_biased_truncation(rng):
    """What the GPU kernels compute for nearest rounding (TransformMath.cpp): the truncation of
    v + copysign(0.49999997, v), the f32 add rounding to nearest, is round half away from zero.
    Checked on every float of magnitude in [1/4, 2^25] (below 1/4 both give 0, above 2^24 every
    float is an integer), and on random bit patterns of every exponent."""
    below_half = np.nextafter(F32(0.5), F32(0))

    def check(v):
        v = v[np.isfinite(v)]
        v64 = v.astype(np.float64)
        exact = np.sign(v64) * np.floor(np.abs(v64) + 0.5)  # exact in float64
        biased = np.trunc(v + np.copysign(below_half, v))
        assert biased.dtype == F32
        bad = np.flatnonzero(biased.astype(np.float64) != exact)
        assert bad.size == 0, f"{v[bad[:5]]}: {biased[bad[:5]]} != {exact[bad[:5]]}"

    low, high = F32(0.25).view(np.uint32), F32(2.0**25).view(np.uint32)
    chunk = 1 << 24
    for start in range(int(low), int(high) + 1, chunk):
        bits = np.arange(start, min(start + chunk, int(high) + 1), dtype=np.uint32)
        check(bits.view(F32))
        check(-bits.view(F32))
    check(rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(F32))


def test_quantize_multiplies_by_the_reciprocal(rng):
    """v = x * (1 / scale), not x / scale (docs/numerics.md): on elements placed at half-way
    points k + 1/2 of a scale that is not a power of two, the two differ by an ulp often enough
    to round differently, and q follows the multiply."""
    scale_target = F32(0.37)
    k = rng.integers(-126, 126, 20000).astype(F32)
    x = ((k + F32(0.5)) * scale_target).astype(F32)
    x = np.concatenate([[F32(127) * scale_target], x]).reshape(1, -1).astype(F32)
    q, scale = ref.quantize(x, 8, "per_tensor", "maxabs", "nearest")
    inv = F32(1) / scale
    by_multiply = np.array([round_half_away_exact(v) for v in (x * inv)[0]])
    by_division = np.array([round_half_away_exact(v) for v in (x / scale)[0]])
    assert np.any(by_multiply != by_division)  # the test separates the two definitions
    np.testing.assert_array_equal(q[0], np.clip(by_multiply, -127, 127))


def test_tiny_scale_reciprocal_overflows():
    """A group whose scale is at most 2^-128 has 1 / scale = +Inf: every nonzero element gets
    +-qmax, zeros stay 0 (docs/numerics.md)."""
    x = np.array([[2.0**-126, -(2.0**-130), 0.0, 2.0**-140]], dtype=F32)
    q, scale = ref.quantize(x, 4, "per_tensor", "maxabs", "nearest")
    assert 0 < scale <= 2.0**-128
    with np.errstate(over="ignore"):
        assert F32(1) / scale == np.inf
    assert q.tolist() == [[7, -7, 0, 7]]


def test_sawb_clip_rounding_to_zero_falls_back():
    # subnormal group: c = -0.1 * 2^-149 rounds to -0.0 in f32; "c > 0" is false, so a = m.
    # The scale m / 7 then underflows to +0, inv = 1 / +0 = +Inf, v = x * inv = +Inf and q
    # clamps to +qmax.
    tiny = np.float32(2.0**-149)
    x = np.array([[tiny, tiny]], dtype=F32)
    q, scale = ref.quantize(x, 4, "per_tensor", "sawb", "nearest")
    assert scale == 0 and not np.signbit(scale)
    assert q.tolist() == [[7, 7]]


@pytest.mark.parametrize("granularity", ["per_tensor", "per_row", "per_col"])
@pytest.mark.parametrize("mode", ["maxabs", "sawb"])
@pytest.mark.parametrize("rounding", ["nearest", "stochastic"])
def test_zero_groups_no_warnings(rng, granularity, mode, rounding):
    x = rng.standard_normal((4, 5)).astype(F32)
    x[1, :] = 0
    x[:, 2] = 0
    zero = np.zeros_like(x)
    with no_warnings():
        qz, sz = ref.quantize(zero, 8, granularity, mode, rounding, seed=3)
        q, s = ref.quantize(x, 8, granularity, mode, rounding, seed=3)
        y = ref.dequantize(q, s, granularity)
    assert np.all(sz == 0) and np.all(qz == 0)
    if granularity == "per_row":
        assert s[1] == 0 and np.all(q[1] == 0) and np.all(y[1] == 0)
        assert np.all(np.delete(s, 1) > 0)
    if granularity == "per_col":
        assert s[2] == 0 and np.all(q[:, 2] == 0) and np.all(y[:, 2] == 0)
    assert np.all(np.isfinite(y))


@pytest.mark.parametrize("mode", ["maxabs", "sawb"])
@pytest.mark.parametrize("rounding", ["nearest", "stochastic"])
def test_nan_poisons_only_its_group(rng, mode, rounding):
    x = rng.standard_normal((4, 6)).astype(F32)
    x[2, 3] = np.nan
    with no_warnings():
        qr, sr = ref.quantize(x, 8, "per_row", mode, rounding, seed=11)
        qc, sc = ref.quantize(x, 8, "per_col", mode, rounding, seed=11)
        qt, st = ref.quantize(x, 8, "per_tensor", mode, rounding, seed=11)
        yr = ref.dequantize(qr, sr, "per_row")
        yc = ref.dequantize(qc, sc, "per_col")
        yt = ref.dequantize(qt, st, "per_tensor")
    assert np.isnan(sr[2]) and np.all(np.isfinite(np.delete(sr, 2)))
    assert np.all(qr[2] == 0) and np.all(np.isnan(yr[2]))
    assert np.all(np.isfinite(np.delete(yr, 2, axis=0)))
    assert np.isnan(sc[3]) and np.all(np.isfinite(np.delete(sc, 3)))
    assert np.all(np.isnan(yc[:, 3])) and np.all(np.isfinite(np.delete(yc, 3, axis=1)))
    assert np.isnan(st) and np.all(np.isnan(yt))


@pytest.mark.parametrize("mode", ["maxabs", "sawb"])
@pytest.mark.parametrize("sign", [1, -1])
def test_inf_makes_group_non_finite(rng, mode, sign):
    x = rng.standard_normal((3, 5)).astype(F32)
    x[1, 4] = sign * np.inf
    with no_warnings():
        q, s = ref.quantize(x, 8, "per_row", mode, "nearest")
        y = ref.dequantize(q, s, "per_row")
    assert not np.isfinite(s[1]) and np.all(np.isfinite(s[[0, 2]]))
    if mode == "maxabs":
        assert s[1] == np.inf
    assert not np.any(np.isfinite(y[1])) and np.all(np.isfinite(y[[0, 2]]))


def test_stochastic_same_seed_same_bits(rng):
    x = rng.standard_normal((32, 48)).astype(F32)
    seed = int(rng.integers(-(2**63), 2**63 - 1, dtype=np.int64))
    q1, s1 = ref.quantize(x, 4, "per_row", "maxabs", "stochastic", seed=seed)
    q2, s2 = ref.quantize(x.copy(), 4, "per_row", "maxabs", "stochastic", seed=seed)
    np.testing.assert_array_equal(q1, q2)
    np.testing.assert_array_equal(s1.view(np.uint32), s2.view(np.uint32))
    q3, _ = ref.quantize(x, 4, "per_row", "maxabs", "stochastic", seed=seed + 1)
    assert np.mean(q1 != q3) > 0.1
    # stochastic rounding only ever picks floor(v) or floor(v) + 1
    v = np.floor(x * (F32(1) / s1)[:, None])  # f32, as specified
    assert np.all((q1 == v) | (q1 == v + 1) | (np.abs(q1) == 7))


def test_stochastic_bit_exact_scalar_loop(rng):
    x = rng.standard_normal((3, 5)).astype(F32)
    seed = -123456789012
    q, scale = ref.quantize(x, 8, "per_col", "maxabs", "stochastic", seed=seed)
    for i in range(3):
        for j in range(5):
            s = np.abs(x[:, j]).max() / F32(127)
            v = x[i, j] * (F32(1) / s)
            u = F32(float(py_uniform(seed, i * 5 + j)))
            r = np.floor(F32(v + u))
            assert q[i, j] == max(-127, min(127, int(r))), (i, j)


def test_stochastic_add_rounds_in_f32(rng):
    # Put v just below k - u (u = the element's own uniform, itself checked against Python ints
    # above): the exact sum v + u is then within an f32 ulp (2^-17) below the integer k, and the
    # f32 add rounds it up to k about half the time, where an exact floor would give k - 1.
    m, n = 32, 256
    seed = int(rng.integers(-(2**63), 2**63 - 1, dtype=np.int64))
    u = ref.uniform(seed, np.arange(m * n).reshape(m, n)).astype(np.float64)
    target = rng.integers(64, 127, (m, n)) - u  # exact in f64
    x = target.astype(F32)
    x = np.where(x > target, np.nextafter(x, F32(0)), x)  # round down onto the f32 grid
    x[:, 0] = 127  # scale exactly 1: v == x
    q, scale = ref.quantize(x, 8, "per_row", "maxabs", "stochastic", seed=seed)
    assert np.all(scale == 1)
    exact_sum = x.astype(np.float64) + u  # exact: both have few significant bits
    expect = np.minimum(np.floor(exact_sum.astype(F32)), 127)  # one rounding to f32, then floor
    np.testing.assert_array_equal(q, expect)
    assert np.mean(np.floor(exact_sum) != expect) > 0.2  # the f32 rounding is visible here


def test_stochastic_unbiased_over_seeds(rng):
    # scale exactly 1 (max entry 127 per row), so v == x; fractional parts 0.1 .. 0.9
    fr = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    base = rng.integers(-60, 60, (4, 5)).astype(np.float64)
    x = (base + fr).astype(F32)
    x = np.concatenate([x, np.full((4, 1), 127, F32)], axis=1)
    v = x.astype(np.float64)
    n_seeds = 2000
    seeds = rng.integers(-(2**63), 2**63 - 1, n_seeds, dtype=np.int64)
    total = np.zeros(x.shape)
    for seed in seeds:
        q, scale = ref.quantize(x, 8, "per_row", "maxabs", "stochastic", seed=int(seed))
        total += q
    assert np.all(scale == 1)
    mean = total / n_seeds
    frac = v - np.floor(v)
    se = np.sqrt(frac * (1 - frac) / n_seeds)
    assert np.all(np.abs(mean - v) <= 5 * se + 1e-6), np.max(np.abs(mean - v) / (se + 1e-12))
    qn, _ = ref.quantize(x, 8, "per_row", "maxabs", "nearest")
    biased = np.abs(qn - v)[:, :5] > 5 * se[:, :5]
    assert np.all(biased)  # nearest rounding is off by 0.1 .. 0.5 everywhere


def test_stochastic_unbiased_on_large_tensor(rng):
    m, n = 256, 1024
    x = (rng.integers(-100, 100, (m, n)) + 0.3).astype(F32)
    x[:, 0] = 127  # per-row scale exactly 1
    seed = int(rng.integers(-(2**63), 2**63 - 1, dtype=np.int64))
    q, scale = ref.quantize(x, 8, "per_row", "maxabs", "stochastic", seed=seed)
    assert np.all(scale == 1)
    v = x[:, 1:].astype(np.float64)
    diff = q[:, 1:] - v
    frac = v - np.floor(v)
    se = math.sqrt(np.sum(frac * (1 - frac))) / diff.size
    assert abs(diff.mean()) < 5 * se, (diff.mean(), se)
    qn, _ = ref.quantize(x, 8, "per_row", "maxabs", "nearest")
    assert abs((qn[:, 1:] - v).mean()) > 5 * se  # -0.3 bias


def test_quantize_invalid():
    x = np.ones((2, 3), F32)
    with pytest.raises(ValueError, match="bits"):
        ref.quantize(x, 1)
    with pytest.raises(ValueError, match="bits"):
        ref.quantize(x, 9)
    with pytest.raises(ValueError, match="granularity"):
        ref.quantize(x, 8, "per_block")
    with pytest.raises(ValueError, match="scale_mode"):
        ref.quantize(x, 8, "per_row", "mse")
    with pytest.raises(ValueError, match="rounding"):
        ref.quantize(x, 8, "per_row", "maxabs", "up")
    with pytest.raises(ValueError, match="seed"):
        ref.quantize(x, 8, "per_row", "maxabs", "stochastic")
    with pytest.raises(ValueError, match="seed"):
        ref.quantize(x, 8, "per_row", "maxabs", "stochastic", seed=2**64)
    with pytest.raises(ValueError, match="rank 2"):
        ref.quantize(np.ones(3, F32), 8)
    with pytest.raises(TypeError, match="float32"):
        ref.quantize(np.ones((2, 3)), 8)


@pytest.mark.parametrize("granularity", ["per_tensor", "per_row", "per_col"])
def test_dequantize_matches_float64(rng, granularity):
    q = rng.integers(-128, 128, (7, 9)).astype(np.int8)
    shape = {"per_tensor": (), "per_row": (7,), "per_col": (9,)}[granularity]
    scale = (rng.uniform(0.5, 2, shape) * 10.0 ** rng.integers(-20, 20, shape)).astype(F32)
    y = ref.dequantize(q, scale, granularity)
    assert y.dtype == F32
    s64 = scale.astype(np.float64)
    s64 = s64[:, None] if granularity == "per_row" else s64
    expect = q.astype(np.float64) * s64
    np.testing.assert_allclose(y, expect, rtol=1e-6, atol=0)
    with pytest.raises(ValueError, match="shape"):
        ref.dequantize(q, np.ones(5, F32), granularity)


# ---------------------------------------------------------------------------------------------
# Integer matmul and rescale
# ---------------------------------------------------------------------------------------------


def int64_product(a, b):
    """Exact product by explicit broadcast-and-sum in int64 (no matmul routine)."""
    return (a.astype(np.int64)[:, :, None] * b.astype(np.int64)[None, :, :]).sum(axis=1)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_int_matmul_exact(rng, ta, tb):
    m, k, n = 9, 37, 11
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    got = ref.int_matmul(a.T.copy() if ta else a, b.T.copy() if tb else b,
                         transpose_a=ta, transpose_b=tb)
    assert got.dtype == np.int32 and got.shape == (m, n)
    np.testing.assert_array_equal(got, int64_product(a, b))


def test_int_matmul_extremes(rng):
    k = 4096
    a = rng.choice(np.array([-128, 127], np.int8), (4, k))
    b = rng.choice(np.array([-128, 127], np.int8), (k, 3))
    a[0] = -128
    b[:, 0] = -128
    got = ref.int_matmul(a, b)
    np.testing.assert_array_equal(got, int64_product(a, b))
    assert got[0, 0] == k * 128 * 128
    # the largest K the verifier allows cannot overflow; one more can
    kmax = 2**17 - 1
    big = ref.int_matmul(np.full((1, kmax), -128, np.int8), np.full((kmax, 1), -128, np.int8))
    assert big[0, 0] == kmax * 2**14 == 2**31 - 2**14
    with pytest.raises(OverflowError):
        ref.int_matmul(np.full((1, 2**17), -128, np.int8), np.full((2**17, 1), -128, np.int8))


def test_int_matmul_invalid():
    with pytest.raises(ValueError, match="contraction"):
        ref.int_matmul(np.zeros((2, 3), np.int8), np.zeros((4, 2), np.int8))
    with pytest.raises(ValueError, match="i8"):
        ref.int_matmul(np.full((2, 3), 200, np.int32), np.zeros((3, 2), np.int8))
    with pytest.raises(TypeError):
        ref.int_matmul(np.zeros((2, 3), F32), np.zeros((3, 2), np.int8))


@pytest.mark.parametrize("row_rank0", [False, True])
@pytest.mark.parametrize("col_rank0", [False, True])
def test_rescale_matches_float64(rng, row_rank0, col_rank0):
    m, n = 8, 10
    acc = rng.integers(-(2**31), 2**31, (m, n)).astype(np.int32)
    acc[0, :3] = [0, 2**31 - 1, -(2**31)]
    rs = rng.uniform(1e-4, 1e-2, () if row_rank0 else (m,)).astype(F32)
    cs = rng.uniform(1e-4, 1e-2, () if col_rank0 else (n,)).astype(F32)
    y = ref.rescale(acc, rs, cs)
    assert y.dtype == F32 and y.shape == (m, n)
    r64 = rs.astype(np.float64) if row_rank0 else rs.astype(np.float64)[:, None]
    expect = acc.astype(np.float64) * r64 * cs.astype(np.float64)
    np.testing.assert_allclose(y, expect, rtol=1e-6, atol=0)
    # left to right in f32: (f32(acc) * rs) * cs, element by element
    for i, j in [(0, 1), (0, 2), (m - 1, n - 1)]:
        r = rs if row_rank0 else rs[i]
        c = cs if col_rank0 else cs[j]
        assert y[i, j] == F32(F32(F32(int(acc[i, j])) * r) * c)
    y16 = ref.rescale(acc, rs, cs, dtype=np.float16)
    assert y16.dtype == np.float16
    with np.errstate(over="ignore"):  # large products overflow f16 to Inf, as specified
        np.testing.assert_array_equal(y16, y.astype(np.float16))


def test_rescale_invalid():
    acc = np.zeros((2, 3), np.int32)
    with pytest.raises(ValueError, match="row_scale"):
        ref.rescale(acc, np.ones(3, F32), np.ones(3, F32))
    with pytest.raises(ValueError, match="col_scale"):
        ref.rescale(acc, np.ones(2, F32), np.ones(2, F32))
    with pytest.raises(TypeError, match="float32"):
        ref.rescale(acc, np.ones(2), np.ones(3, F32))
