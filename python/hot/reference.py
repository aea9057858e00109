"""Independent numpy reference for the ``hot`` ops.

Every function here follows the bit-level contract in ``docs/numerics.md`` (the order of
operations, the rounding of every constant, the hash) so that its results can be compared bit for
bit with the code that ``convert-hot-to-linalg`` (and later the GPU kernels) produce.  The
mathematical meaning of the ops is described in ``shared/docs/hot-method.md``, section 2.

Only numpy is used.  Floating-point warnings that the contract makes part of normal operation
(``0/0`` for an all-zero group, ``Inf - Inf`` in SAWB, ...) are silenced locally.

Public API:

* Hadamard transform: :func:`hadamard`, :func:`hadamard_scale`.
* Walsh low-rank projection: :func:`lowrank`, :func:`sequency_rows`, :func:`kept_rows`,
  :func:`triangle_rank`.
* Counter-based hash: :func:`mix32`, :func:`stochastic_key`, :func:`counter_hash`,
  :func:`uniform`.
* Quantization: :func:`qmax_for_bits`, :func:`quantize`, :func:`dequantize`.
* Integer matmul and rescale: :func:`int_matmul`, :func:`rescale`.
"""

import math
import operator

import numpy as np

__all__ = [
    "GRANULARITIES",
    "ROUNDINGS",
    "SCALE_MODES",
    "SELECTIONS",
    "counter_hash",
    "dequantize",
    "hadamard",
    "hadamard_scale",
    "int_matmul",
    "kept_rows",
    "lowrank",
    "mix32",
    "qmax_for_bits",
    "quantize",
    "rescale",
    "sequency_rows",
    "stochastic_key",
    "triangle_rank",
    "uniform",
]

SELECTIONS = ("prefix", "triangle")
GRANULARITIES = ("per_tensor", "per_row", "per_col")
SCALE_MODES = ("maxabs", "sawb")
ROUNDINGS = ("nearest", "stochastic")

# The verifier bounds of docs/numerics.md.
_MIN_BITS, _MAX_BITS = 2, 8  # qmax >= 1 and the values fit in i8
_I8_MIN, _I8_MAX = -128, 127
_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1
_U32_MASK = 0xFFFFFFFF
_U64_MASK = 0xFFFFFFFFFFFFFFFF

# ---------------------------------------------------------------------------------------------
# Argument checking helpers
# ---------------------------------------------------------------------------------------------


def _as_int(value, name):
    """Return ``value`` as a Python int (rejecting bools, floats, ...)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {value!r}") from None


def _log2_exact(value, name):
    """Return log2(value) for a power of two ``value >= 1``; raise ValueError otherwise."""
    value = _as_int(value, name)
    if value < 1 or value & (value - 1):
        raise ValueError(f"{name} must be a power of two >= 1, got {value}")
    return value.bit_length() - 1


def _float_array(x, name="x"):
    """``np.asarray(x)``, requiring a floating-point element type."""
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError(f"{name} must have a floating-point dtype, got {x.dtype}")
    return x


def _f32_array(x, name):
    """``np.asarray(x)``, requiring exactly float32 (no silent rounding from float64)."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        raise TypeError(f"{name} must be float32, got {x.dtype}")
    return x


def _matrix(x, name):
    if x.ndim != 2:
        raise ValueError(f"{name} must be rank 2 [M, N], got shape {x.shape}")
    return x


def _axis(dim, ndim):
    """Normalise a (possibly negative) dimension index."""
    dim = _as_int(dim, "dim")
    if not -ndim <= dim < ndim:
        raise ValueError(f"dim {dim} is out of range for a rank-{ndim} tensor")
    return dim % ndim


def _choice(value, allowed, name):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value


# ---------------------------------------------------------------------------------------------
# Hadamard transform
# ---------------------------------------------------------------------------------------------


def hadamard_scale(block, dtype=np.float32):
    """The normalisation constant ``c_b = 1/sqrt(block)`` rounded *once* to ``dtype``.

    ``block`` is a power of two ``2^k``.  The rounding (to nearest, at the precision of
    ``dtype``, subnormals included) is done exactly in integer arithmetic: with ``2^E`` the
    spacing of ``dtype`` values just below ``1/sqrt(b)``, the result is ``m * 2^E`` where
    ``m`` is the integer nearest to ``sqrt(2^(-2E) / b)``; that square root is an integer or
    irrational (see :func:`_round_sqrt_pow2`).  (Computing ``1 / sqrt(b)`` in float64 first
    rounds twice; for float64 itself that gives the wrong last bit: ``1/math.sqrt(2)`` is
    0.7071067811865475 but the correctly rounded value is ``math.sqrt(0.5)`` =
    0.7071067811865476.)
    """
    k = _log2_exact(block, "block")
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"hadamard_scale supports float16, float32 and float64, not {dtype}")
    info = np.finfo(dtype)
    top = -((k + 1) // 2)  # floor(log2(1/sqrt(2^k)))
    spacing = max(top - info.nmant, info.minexp - info.nmant)  # E: ulp exponent, subnormals too
    m = _round_sqrt_pow2(-2 * spacing - k)  # nearest integer to 1/sqrt(b) / 2^E
    return dtype.type(math.ldexp(m, spacing))  # m < 2^54 and in range: exact


def _round_sqrt_pow2(e):
    """The integer nearest to ``sqrt(2^e)`` for any integer ``e``.

    For ``e >= 0`` the root is an integer or irrational, so there is no tie.  The only tie is
    ``e = -2`` (1/2, deep in the subnormal range), which goes to the even value 0.
    """
    if e < 0:  # sqrt(2^e) < 1: 1 if it exceeds 1/2, i.e. if e > -2
        return 1 if e == -1 else 0
    target = 2**e
    m = math.isqrt(target)  # floor
    if (2 * m + 1) ** 2 < 4 * target:  # m + 1/2 < sqrt(target): round up
        m += 1
    return m


def _butterfly_blocks(v, block):
    """Transform the last axis (of length ``block``) of ``v`` with Ĥ_block, in ``v.dtype``.

    Stage ``s`` (lowest first) replaces each pair ``(v[t], v[t + 2^s])`` with ``t``'s bit ``s``
    clear by ``(v[t] + v[t + 2^s], v[t] - v[t + 2^s])``; the result is multiplied by ``c_b``.
    The stages are vectorised: viewing the block as ``[b / 2^(s+1), 2, 2^s]`` puts ``t`` (bit s
    clear) at index 0 of the middle axis and its partner ``t + 2^s`` at index 1.
    """
    stages = _log2_exact(block, "block")
    lead = v.shape[:-1]
    for s in range(stages):
        half = 1 << s
        pairs = v.reshape(lead + (block // (2 * half), 2, half))
        low, high = pairs[..., 0, :], pairs[..., 1, :]
        v = np.stack((low + high, low - high), axis=-2).reshape(lead + (block,))
    return v * hadamard_scale(block, v.dtype)


def _split_blocks(x, dim, block):
    """Move ``dim`` last; return (moved view, number of full blocks, tail length)."""
    moved = np.moveaxis(x, dim, -1)
    nb, tail = divmod(moved.shape[-1], block)
    return moved, nb, tail


def _transform_full_blocks(moved, nb, block):
    """Ĥ_block applied to the ``nb`` full blocks at the start of the last axis: [..., nb, b]."""
    head = moved[..., : nb * block].reshape(moved.shape[:-1] + (nb, block))
    return _butterfly_blocks(head, block)


def hadamard(x, dim, block):
    """Block Hadamard transform ``hot.hadamard(x, dim, block)``.

    Along ``dim`` (size ``n``, a multiple of ``block``), each of the ``n / block`` consecutive
    blocks ``v`` becomes ``Ĥ_b · v`` (``Ĥ_b = H_b / sqrt(b)``, Sylvester order), computed with
    the exact butterfly order of docs/numerics.md in ``x``'s floating-point type, which is also
    the result type.  ``block = 1`` is the identity.

    Raises ValueError if ``block`` is not a power of two or does not divide ``n``.
    """
    x = _float_array(x)
    dim = _axis(dim, x.ndim)
    _log2_exact(block, "block")
    moved, nb, tail = _split_blocks(x, dim, block)
    if tail:
        raise ValueError(
            f"hadamard: block {block} does not divide size {x.shape[dim]} of dim {dim}"
        )
    y = _transform_full_blocks(moved, nb, block).reshape(moved.shape)
    return np.ascontiguousarray(np.moveaxis(y, -1, dim))


# ---------------------------------------------------------------------------------------------
# Walsh low-rank projection
# ---------------------------------------------------------------------------------------------


def _bitreverse(value, bits):
    out = 0
    for _ in range(bits):
        out = (out << 1) | (value & 1)
        value >>= 1
    return out


def _sequency_row(k, bits):
    """Sylvester row index of the Walsh function with ``k`` sign changes (``2^bits`` points)."""
    return _bitreverse(k ^ (k >> 1), bits)


def sequency_rows(b):
    """List ``R`` with ``R[k]`` = the row of ``H_b`` (Sylvester order) with ``k`` sign changes.

    ``R[k] = bitreverse_log2(b)(k xor (k >> 1))`` for ``k`` in ``[0, b)``.
    """
    bits = _log2_exact(b, "b")
    return [_sequency_row(k, bits) for k in range(b)]


def _triangle_side(block):
    """``s`` with ``block = s * s`` and ``s`` a power of two; ValueError otherwise."""
    k = _log2_exact(block, "block")
    if k % 2:
        raise ValueError(
            f"selection 'triangle' needs block = s*s with s a power of two, got block {block}"
        )
    return 1 << (k // 2)


def triangle_rank(block):
    """Rank of the ``triangle`` selection: ``s * (s + 1) / 2`` for ``block = s * s``."""
    s = _triangle_side(block)
    return s * (s + 1) // 2


def kept_rows(block, rank, selection="prefix"):
    """The list ``K`` of Sylvester rows of ``H_block`` kept by ``hot.lowrank``, in output order.

    * ``prefix``: ``K[k] = sequency_rows(block)[k]`` for ``k < rank`` (lowest sequency first);
      needs ``1 <= rank <= block``.
    * ``triangle``: ``block = s * s``; the pairs ``(p, q)`` with ``p + q < s`` ordered by
      ``p + q`` then ``p`` give ``K = seqrow_s(p) * s + seqrow_s(q)``; ``rank`` must equal
      ``triangle_rank(block)`` (``None`` is accepted and means exactly that).
    """
    _choice(selection, SELECTIONS, "selection")
    if selection == "prefix":
        _log2_exact(block, "block")
        if rank is None:
            raise ValueError("selection 'prefix' needs an explicit rank")
        rank = _as_int(rank, "rank")
        if not 1 <= rank <= block:
            raise ValueError(f"rank must satisfy 1 <= rank <= block = {block}, got {rank}")
        return sequency_rows(block)[:rank]
    s = _triangle_side(block)
    expected = s * (s + 1) // 2
    if rank is not None and _as_int(rank, "rank") != expected:
        raise ValueError(
            f"selection 'triangle' with block {block} (s = {s}) has rank {expected}, got {rank}"
        )
    bits = s.bit_length() - 1
    return [
        _sequency_row(p, bits) * s + _sequency_row(d - p, bits)
        for d in range(s)
        for p in range(d + 1)
    ]


def lowrank(x, dim, block, rank, selection="prefix", allow_tail=False):
    """Walsh low-rank projection ``hot.lowrank(x, dim, block, rank, selection, allow_tail)``.

    Along ``dim`` (size ``n``): ``nb = n // block`` full blocks are transformed exactly as
    :func:`hadamard` does, and of each block's coefficients the rows ``K = kept_rows(block,
    rank, selection)`` are kept, in that order; the ``tail = n % block`` trailing elements are
    copied unchanged (only allowed with ``allow_tail``).  The result has ``nb * rank + tail``
    elements along ``dim`` and ``x``'s dtype.

    Raises ValueError on a block that is not a power of two, a rank out of range, a tail that is
    not allowed, or a triangle selection with a non-square block or the wrong rank.
    """
    x = _float_array(x)
    dim = _axis(dim, x.ndim)
    rows = kept_rows(block, rank, selection)
    moved, nb, tail = _split_blocks(x, dim, block)
    if tail and not allow_tail:
        raise ValueError(
            f"lowrank: block {block} leaves a tail of {tail} elements of size {x.shape[dim]} "
            f"(dim {dim}); pass allow_tail=True to copy it unchanged"
        )
    kept = _transform_full_blocks(moved, nb, block)[..., rows]
    kept = kept.reshape(moved.shape[:-1] + (nb * len(rows),))
    out = np.concatenate((kept, moved[..., nb * block :]), axis=-1)
    return np.ascontiguousarray(np.moveaxis(out, -1, dim))


# ---------------------------------------------------------------------------------------------
# Counter-based hash
# ---------------------------------------------------------------------------------------------

_MIX_M1 = np.uint32(0x21F0AAAD)
_MIX_M2 = np.uint32(0x735A2D97)
_KEY_SALT = np.uint32(0x9E3779B9)


def mix32(h):
    """The 32-bit finaliser of docs/numerics.md on a uint32 value or array (wrapping u32 ops).

    ``h ^= h >> 16; h *= 0x21f0aaad; h ^= h >> 15; h *= 0x735a2d97; h ^= h >> 15``.
    Returns a uint32 array of ``h``'s shape (0-d for a scalar input).
    """
    h = np.asarray(h)
    if h.dtype != np.uint32:
        in_range = np.issubdtype(h.dtype, np.integer) and (
            h.size == 0 or (h.min() >= 0 and h.max() <= _U32_MASK))
        if not in_range:
            raise ValueError("mix32 expects uint32 values (integers in [0, 2^32))")
        h = h.astype(np.uint32)
    shape = h.shape
    h = h.reshape(-1)  # 1-d arrays: ufuncs wrap silently (numpy scalars would warn)
    h = h ^ (h >> np.uint32(16))
    h = h * _MIX_M1
    h = h ^ (h >> np.uint32(15))
    h = h * _MIX_M2
    h = h ^ (h >> np.uint32(15))
    return h.reshape(shape)


def _seed_words(seed):
    """(lo32, hi32) of the 64-bit two's complement pattern of the i64 ``seed``."""
    seed = _as_int(seed, "seed")
    if not -(2**63) <= seed < 2**63:
        raise ValueError(f"seed must fit in a signed 64-bit integer, got {seed}")
    bits = seed & _U64_MASK
    return bits & _U32_MASK, bits >> 32


def stochastic_key(seed):
    """``key(seed) = mix32(lo32(seed) xor mix32(hi32(seed) xor 0x9e3779b9))`` as a uint32.

    ``seed`` is a Python int interpreted as an i64 (two's complement).
    """
    lo, hi = _seed_words(seed)
    inner = mix32(np.uint32(hi) ^ _KEY_SALT)
    return np.uint32(mix32(np.uint32(lo) ^ inner))


def _low32(idx):
    """The low 32 bits of the integer array ``idx`` as uint32."""
    idx = np.asarray(idx)
    if not np.issubdtype(idx.dtype, np.integer):
        raise TypeError(f"idx must be an integer array, got {idx.dtype}")
    return (idx.astype(np.uint64) & np.uint64(_U32_MASK)).astype(np.uint32)


def counter_hash(seed, idx):
    """``hash(seed, idx) = mix32(mix32(lo32(idx) xor key) + key)`` (u32), vectorised over idx."""
    key = stochastic_key(seed)
    first = mix32(_low32(idx) ^ key)
    return mix32((first.reshape(-1) + key).reshape(first.shape))


def uniform(seed, idx):
    """``uniform(seed, idx) = f32(hash(seed, idx) >> 8) * 2^-24``: float32 in ``[0, 1 - 2^-24]``.

    Vectorised over the integer array ``idx`` (only its low 32 bits are used); exact.
    """
    top24 = counter_hash(seed, idx) >> np.uint32(8)
    return top24.astype(np.float32) * np.float32(2.0**-24)


# ---------------------------------------------------------------------------------------------
# Quantize / dequantize
# ---------------------------------------------------------------------------------------------


def qmax_for_bits(bits):
    """``qmax = 2^(bits-1) - 1`` for ``2 <= bits <= 8`` (the range where q fits in i8)."""
    bits = _as_int(bits, "bits")
    if not _MIN_BITS <= bits <= _MAX_BITS:
        raise ValueError(f"bits must be in [{_MIN_BITS}, {_MAX_BITS}], got {bits}")
    return 2 ** (bits - 1) - 1


def _group_axis(granularity):
    """Reduction axis of a rank-2 tensor for each granularity (None = everything)."""
    return {"per_tensor": None, "per_row": 1, "per_col": 0}[granularity]


def _expand_scale(scale, granularity):
    """Broadcastable [M, N] view of a group scale array."""
    if granularity == "per_row":
        return scale[:, None]
    if granularity == "per_col":
        return scale[None, :]
    return scale


def _group_maxabs(x, axis):
    """``m = max |x|`` per group in float32; NaN if the group holds a NaN (np.max propagates)."""
    return np.asarray(np.max(np.abs(x), axis=axis), dtype=np.float32)


def _sequential_sum_f64(values, axis):
    """Sum in float64 strictly left to right along ``axis``.

    ``np.sum`` uses pairwise summation; the last element of ``np.cumsum`` is the sequential sum.
    """
    return np.take(np.cumsum(values, axis=axis, dtype=np.float64), -1, axis=axis)


ROW_PARTIALS = 128  # docs/numerics.md: the partials of a row's sawb sums
ROW_SUM_PARTIALS = 32  # and of a per-tensor group's row sums


def _tree_sums(values, partials):
    """docs/numerics.md's sum of each row of the 2-D ``values`` in float64: element j into
    partial j mod ``partials`` (each partial from +0, elements in order), then the fixed tree
    ``P[p] += P[p + h]`` for h = partials / 2, ..., 2, 1."""
    v = np.asarray(values, dtype=np.float64)
    rows, length = v.shape
    # +0 past the end: adding it changes no sum of |x| or x^2
    padded = np.concatenate([v, np.zeros((rows, -length % partials))], axis=1)
    acc = np.zeros((rows, partials))
    for chunk in padded.reshape(rows, -1, partials).transpose(1, 0, 2):
        acc = acc + chunk
    h = partials // 2
    while h >= 1:
        acc = acc[:, :h] + acc[:, h:2 * h]
        h //= 2
    return acc[:, 0]


def _sawb_sum(values, axis):
    """A sawb sum of docs/numerics.md: a row's (``axis=1``) in 128 interleaved partials and a
    tree; a column's (``axis=0``) sequential; the whole tensor's (``axis=None``) its row sums
    in 32 interleaved partials and a tree."""
    if axis is None:
        return _tree_sums(_tree_sums(values, ROW_PARTIALS)[None, :], ROW_SUM_PARTIALS)[0]
    if axis == 1:
        return _tree_sums(values, ROW_PARTIALS)
    return _sequential_sum_f64(values, axis)


def _group_sawb_clip(x, axis):
    """``c = f32(12.1 * sqrt(s2 / n) - 12.2 * (s1 / n))`` per group, sums in f64 (row sums
    first for the whole tensor)."""
    wide = x.astype(np.float64)
    n = x.size if axis is None else x.shape[axis]
    s1 = _sawb_sum(np.abs(wide), axis)
    s2 = _sawb_sum(wide * wide, axis)
    c = 12.1 * np.sqrt(s2 / n) - 12.2 * (s1 / n)
    return np.asarray(c, dtype=np.float64).astype(np.float32)


def _group_scale(x, axis, scale_mode, qmax):
    m = _group_maxabs(x, axis)
    if scale_mode == "maxabs":
        a = m
    else:
        c = _group_sawb_clip(x, axis)
        a = np.where(c > 0, c, m).astype(np.float32)  # NaN > 0 is False: NaN -> m
    return np.asarray(a / np.float32(qmax), dtype=np.float32)


def _round_half_away(v):
    """Round float32 ``v`` to the nearest integer, ties away from zero, exactly.

    ``frac = |v - trunc(v)|`` is exact in float32, so the tie test ``frac >= 0.5`` is exact
    (unlike ``floor(|v| + 0.5)``, which rounds 0.49999997 up).  NaN stays NaN, +-Inf stays.
    """
    whole = np.trunc(v)
    frac = np.abs(v - whole)
    step = np.where(frac >= np.float32(0.5), np.copysign(np.float32(1), v), np.float32(0))
    return (whole + step).astype(np.float32)


def _stochastic_round(v, seed):
    """``floor(v + u)`` in float32 with ``u = uniform(seed, i * N + j)``."""
    rows, cols = v.shape
    if rows * cols >= 2**32:
        raise ValueError("stochastic rounding needs fewer than 2^32 elements")
    idx = np.arange(rows * cols, dtype=np.uint64).reshape(rows, cols)
    return np.floor(v + uniform(seed, idx)).astype(np.float32)


def quantize(x, bits, granularity="per_tensor", scale_mode="maxabs", rounding="nearest",
             seed=None):
    """Symmetric quantization ``hot.quantize(x, bits, granularity, scale_mode, rounding, seed)``.

    ``x`` is a float32 ``[M, N]`` array; ``qmax = 2^(bits-1) - 1``.  Per group (the whole
    tensor, row ``i`` or column ``j``):

    * ``maxabs``: ``a = max |x|`` (NaN if the group holds a NaN);
    * ``sawb``: ``c = f32(12.1 * sqrt(s2/n) - 12.2 * (s1/n))`` with ``s1 = sum |x|`` and
      ``s2 = sum x^2`` summed sequentially in float64 (per_tensor: each row sequentially, then
      the row sums in 32 interleaved partials and a fixed tree); ``a = c if c > 0 else max |x|``;
    * ``scale = a / f32(qmax)`` and ``inv = 1 / scale`` (float32 divisions).

    Per element ``v = x * inv`` (one float32 multiply); ``nearest`` rounds half away from zero,
    ``stochastic`` takes ``floor(v + uniform(seed, i * N + j))`` (``seed``, an i64, required);
    then ``q = 0`` where the rounded value is NaN, else it is clamped to ``[-qmax, qmax]``.
    For ``nearest`` the seed is ignored.

    Returns ``(q, scale)``: ``q`` int8 ``[M, N]``; ``scale`` float32 of shape ``()``
    (per_tensor), ``(M,)`` (per_row) or ``(N,)`` (per_col).
    """
    x = _matrix(_f32_array(x, "x"), "x")
    if x.size == 0:
        raise ValueError(f"quantize needs a non-empty tensor, got shape {x.shape}")
    qmax = qmax_for_bits(bits)
    _choice(granularity, GRANULARITIES, "granularity")
    _choice(scale_mode, SCALE_MODES, "scale_mode")
    _choice(rounding, ROUNDINGS, "rounding")
    if rounding == "stochastic":
        if seed is None:
            raise ValueError("rounding 'stochastic' needs a seed")
        _seed_words(seed)  # validate before computing

    with np.errstate(all="ignore"):  # 1/0, 0*Inf, Inf-Inf, f64->f32 overflow are all specified
        scale = _group_scale(x, _group_axis(granularity), scale_mode, qmax)
        inv = (np.float32(1) / scale).astype(np.float32)
        v = (x * _expand_scale(inv, granularity)).astype(np.float32)
        if rounding == "nearest":
            r = _round_half_away(v)
        else:
            r = _stochastic_round(v, seed)
        r = np.where(np.isnan(r), np.float32(0), r)
        q = np.clip(r, -qmax, qmax).astype(np.int8)
    return q, scale


def _check_scale_shape(scale, granularity, shape, name="scale"):
    rows, cols = shape
    expected = {"per_tensor": (), "per_row": (rows,), "per_col": (cols,)}[granularity]
    if scale.shape != expected:
        raise ValueError(
            f"{name} for {granularity} of a {rows}x{cols} tensor must have shape {expected}, "
            f"got {scale.shape}"
        )


def dequantize(q, scale, granularity="per_tensor"):
    """``hot.dequantize``: ``y[i, j] = f32(q[i, j]) * scale_g`` (one float32 multiply).

    ``q`` is an integer ``[M, N]`` array, ``scale`` float32 of shape ``()`` / ``(M,)`` /
    ``(N,)`` for per_tensor / per_row / per_col.  Returns float32 ``[M, N]``.
    """
    q = _matrix(np.asarray(q), "q")
    if not np.issubdtype(q.dtype, np.integer):
        raise TypeError(f"q must be an integer array, got {q.dtype}")
    _choice(granularity, GRANULARITIES, "granularity")
    scale = _f32_array(scale, "scale")
    _check_scale_shape(scale, granularity, q.shape)
    with np.errstate(all="ignore"):  # 0 * Inf is specified (NaN)
        return (q.astype(np.float32) * _expand_scale(scale, granularity)).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Integer matmul and rescale
# ---------------------------------------------------------------------------------------------


def _i8_matrix(a, name):
    a = _matrix(np.asarray(a), name)
    if not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{name} must be an integer (i8) array, got {a.dtype}")
    if a.size and (a.min() < _I8_MIN or a.max() > _I8_MAX):
        raise ValueError(f"{name} has values outside the i8 range [-128, 127]")
    return a.astype(np.int64)


def int_matmul(a, b, transpose_a=False, transpose_b=False):
    """``hot.int_matmul``: ``acc[m, n] = sum_k A[m, k] * B[k, n]`` exactly, as int32.

    ``A = a.T`` if ``transpose_a`` else ``a`` (likewise ``B``); inputs are integer arrays with
    values in the i8 range.  The product is computed exactly in int64; OverflowError if any
    entry does not fit in int32 (impossible for ``K < 2^17``, which the verifier requires).
    """
    a = _i8_matrix(a, "a")
    b = _i8_matrix(b, "b")
    if transpose_a:
        a = a.T
    if transpose_b:
        b = b.T
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"int_matmul: contraction sizes differ: {a.shape} x {b.shape}")
    acc = a @ b  # |entries| <= K * 2^14: exact in int64 for any realistic K
    if acc.size and (acc.min() < _I32_MIN or acc.max() > _I32_MAX):
        raise OverflowError("int_matmul: an accumulator does not fit in int32")
    return acc.astype(np.int32)


def _side_scale(scale, length, name):
    scale = _f32_array(scale, name)
    if scale.shape not in ((), (length,)):
        raise ValueError(f"{name} must have shape () or ({length},), got {scale.shape}")
    return scale


def rescale(acc, row_scale, col_scale, dtype=np.float32):
    """``hot.rescale``: ``y[m, n] = (f32(acc[m, n]) * rs) * cs`` in float32, left to right.

    ``rs = row_scale[m]`` (or the value of a rank-0 ``row_scale``), ``cs = col_scale[n]``
    likewise; both float32.  The float32 result is then converted (round to nearest even) to
    ``dtype``.
    """
    acc = _matrix(np.asarray(acc), "acc")
    if not np.issubdtype(acc.dtype, np.integer):
        raise TypeError(f"acc must be an integer (i32) array, got {acc.dtype}")
    rows, cols = acc.shape
    rs = _side_scale(row_scale, rows, "row_scale")
    cs = _side_scale(col_scale, cols, "col_scale")
    rs = rs[:, None] if rs.ndim else rs
    cs = cs[None, :] if cs.ndim else cs
    with np.errstate(all="ignore"):  # non-finite scales propagate as specified
        y = ((acc.astype(np.float32) * rs).astype(np.float32) * cs).astype(np.float32)
        return y.astype(dtype)


def _wrap_i64(value):
    return (int(value) + 2**63) % 2**64 - 2**63


def linear_backward(x3, w, gy3, seed, gx_granularity="per_tensor",
                    gw_granularity="per_tensor", gx_block=16, hla_block=16, hla_rank=8,
                    gw_bits=8):
    """One linear layer's backward as ``hot-rewrite-backward-matmuls`` rewrites it
    (hot-method.md section 3): x3 [B, T, I], w [O, I] and gy3 [B, T, O] float32 give
    ``(gx [B*T, I], gw [O, I])``, both float32. The gx Hadamard block is ``gx_block`` capped
    by the largest power of two dividing O; HLA runs along each sample's T tokens with a
    pass-through tail, then both gw operands are quantized to ``gw_bits``; the k-th rewritten
    product (gx first) is seeded ``seed + (k << 32)``, wrapping like i64.
    """
    x3, w, gy3 = (_f32_array(a, n) for a, n in ((x3, "x3"), (w, "w"), (gy3, "gy3")))
    out = w.shape[0]
    block = min(gx_block, out & -out)
    gy = gy3.reshape(-1, out)
    qg, sg = quantize(hadamard(gy, 1, block), 4, gx_granularity, "maxabs", "stochastic",
                      _wrap_i64(seed + (1 << 32)))
    qw, sw = quantize(hadamard(w, 0, block), 4, "per_tensor", "sawb", "nearest")
    gx = rescale(int_matmul(qg, qw), sg, sw)
    gyl = lowrank(gy3, 1, hla_block, hla_rank, allow_tail=True).reshape(-1, out)
    xl = lowrank(x3, 1, hla_block, hla_rank, allow_tail=True).reshape(-1, x3.shape[2])
    qgy, sgy = quantize(gyl, gw_bits, gw_granularity, "maxabs", "stochastic",
                        _wrap_i64(seed + (2 << 32)))
    qx, sx = quantize(xl, gw_bits, "per_tensor", "maxabs", "nearest")
    gw = rescale(int_matmul(qgy, qx, transpose_a=True), sgy, sx)
    return gx, gw
