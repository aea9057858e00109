"""bench/gpu/src/hq_reference.h (the C++ host reference the GPU bench checks its fused
hadamard + quantize kernels against, bit for bit) agrees bit for bit with python/hot/reference.py
(docs/numerics.md): q and scales, per row and per tensor, stochastic rounding with several seeds
(negative and above 2^32 included), an all-zero row and a NaN row."""

import subprocess
from pathlib import Path

import numpy as np
import pytest

from hot import reference

HEADER = Path(__file__).resolve().parents[2] / "bench" / "gpu" / "src" / "hq_reference.h"

DRIVER = r"""
#include "hq_reference.h"
#include <cstdio>
#include <cstdlib>
int main(int argc, char **argv) {
  int64_t rows = atoll(argv[1]), cols = atoll(argv[2]), block = atoll(argv[3]);
  int bits = atoi(argv[4]);
  bool perRow = atoi(argv[5]);
  int64_t seed = atoll(argv[6]);
  std::vector<float> x(rows * cols);
  if (fread(x.data(), 4, x.size(), stdin) != x.size())
    return 2;
  std::vector<int8_t> q;
  std::vector<float> s;
  hq::reference(x, rows, cols, block, bits, perRow, seed, q, s);
  fwrite(q.data(), 1, q.size(), stdout);
  fwrite(s.data(), 4, s.size(), stdout);
}
"""


@pytest.fixture(scope="module")
def driver(host_program):
    return host_program("hq_reference", DRIVER, includes=[HEADER.parent], flags=["-O2"])


@pytest.mark.parametrize("granularity", ["per_row", "per_tensor"])
@pytest.mark.parametrize("block,bits", [(16, 4), (8, 8), (32, 4)])
@pytest.mark.parametrize("seed", [1234, -5, 2**40 + 7])
def test_matches_numpy_reference(driver, granularity, block, bits, seed):
    rows, cols = 29, 96
    rng = np.random.default_rng(abs(seed) % 1000 + block)
    x = (rng.standard_normal((rows, cols)) * (1 + np.arange(rows)[:, None] % 5)).astype(
        np.float32)
    x[3] = 0
    if granularity == "per_row":
        x[7, 5] = np.nan
    out = subprocess.run([str(driver), str(rows), str(cols), str(block), str(bits),
                          str(int(granularity == "per_row")), str(seed)],
                         input=x.tobytes(), capture_output=True, check=True).stdout
    q = np.frombuffer(out[:rows * cols], np.int8).reshape(rows, cols)
    s = np.frombuffer(out[rows * cols:], np.float32)
    q_ref, s_ref = reference.quantize(reference.hadamard(x, 1, block), bits, granularity,
                                      "maxabs", "stochastic", seed)
    np.testing.assert_array_equal(q, q_ref)
    np.testing.assert_array_equal(s.view(np.uint32),
                                  np.asarray(s_ref, np.float32).ravel().view(np.uint32))
