"""Statistics of stochastic rounding in the *compiled* code (hot-opt --hot-lower-to-cpu).

E[q] = v for stochastic rounding; nearest rounding is biased on inputs whose fractional parts
are not symmetric about one half. Both are measured over many seeds on the same input, with a
bound from the binomial standard error, so that the test can fail: nearest rounding fails it.
"""

import os

import numpy as np
import pytest

from hot import runner

N = 256
MODULE = f"""
func.func @sr(%x: tensor<1x{N}xf32>, %seed: i64) -> (tensor<1x{N}xi8>, tensor<f32>) {{
  %q, %s = hot.quantize %x bits 4 granularity per_tensor scale maxabs rounding stochastic
      seed %seed : tensor<1x{N}xf32> -> tensor<1x{N}xi8>, tensor<f32>
  return %q, %s : tensor<1x{N}xi8>, tensor<f32>
}}
func.func @rn(%x: tensor<1x{N}xf32>) -> (tensor<1x{N}xi8>, tensor<f32>) {{
  %q, %s = hot.quantize %x bits 4 granularity per_tensor scale maxabs rounding nearest
      : tensor<1x{N}xf32> -> tensor<1x{N}xi8>, tensor<f32>
  return %q, %s : tensor<1x{N}xi8>, tensor<f32>
}}
"""
SEEDS = 2000


@pytest.fixture(scope="module")
def module():
    if runner.find_hot_opt() is None:
        pytest.skip("hot-opt not built")
    return runner.compile_module(MODULE)


def biased_input(rng):
    """Grid values v = x / scale = k + 0.3 (nearest always rounds them down by 0.3), plus one
    element at exactly 7 that fixes the scale to 1."""
    k = rng.integers(-6, 6, size=N).astype(np.float32)
    x = k + np.float32(0.3)
    x[0] = 7.0
    return x.reshape(1, N)


def test_stochastic_rounding_is_unbiased_and_nearest_is_not(module):
    seed = int.from_bytes(os.urandom(8), "little") >> 1
    rng = np.random.default_rng(seed)
    x = biased_input(rng)
    total = np.zeros((1, N), np.float64)
    first = None
    for s in range(SEEDS):
        q, scale = module.sr(x, seed + s)
        assert scale == np.float32(1.0)
        total += q
        first = q if first is None else first
    mean = total / SEEDS
    # Each q is k or k + 1 with p = 0.3: standard error sqrt(0.21 / SEEDS) per element.
    stderr = np.sqrt(0.3 * 0.7 / SEEDS)
    bound = 5 * stderr
    bias = mean - x
    # Per element and on average over the elements (a much tighter test of E[q] = v).
    assert np.max(np.abs(bias[0, 1:])) < bound, f"seed {seed}: max |bias| {np.abs(bias).max()}"
    assert abs(bias[0, 1:].mean()) < 5 * stderr / np.sqrt(N - 1), f"seed {seed}"
    # Nearest rounding misses the same bound by far: its bias is -0.3 everywhere.
    qn, _ = module.rn(x)
    nearest_bias = qn.astype(np.float64) - x
    assert np.all(np.abs(nearest_bias[0, 1:]) > bound)
    assert abs(nearest_bias[0, 1:].mean()) > 5 * stderr / np.sqrt(N - 1)


def test_seeds_give_reproducible_and_distinct_bits(module):
    x = biased_input(np.random.default_rng(0))
    a, _ = module.sr(x, 42)
    b, _ = module.sr(x, 42)
    c, _ = module.sr(x, 43)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    # Seeds that differ only in the high word or only in sign differ too.
    d, _ = module.sr(x, 42 + (1 << 32))
    e, _ = module.sr(x, -42)
    assert not np.array_equal(a, d) and not np.array_equal(a, e)
