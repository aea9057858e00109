#!/usr/bin/env python3
"""Statistical quality of stochastic rounding's hash and of cheaper variants (bench/RESULTS.md,
"The stochastic hash stays at two rounds").

For each variant, u over 2^22 consecutive element indices and several seeds, and a 2-D
chi-square test (as a z-score: 0 +- 1 for independent uniforms) of (u[i], u[i + lag]) in 64 x 64
cells at small lags and at the row lengths of real layers, and, for the variants that take two
16-bit values from one hash, of the two halves in 256 x 256 cells.

    .venv/bin/python bench/hash_quality.py [--log2n 22]
"""

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from hot.reference import mix32, stochastic_key  # noqa: E402

SEEDS = [0, 1, 2, 12345, 2**40 + 3, 99, -5]
SMALL_LAGS = [1, 2, 3, 4, 8, 16, 64]
ROW_LAGS = [256, 768, 1024, 3072, 4096]


def variants(seed, idx):
    """u per variant: the contract's (two rounds, 24 bits), one round per element, and one or
    two rounds per pair of elements (16 bits each)."""
    key = stochastic_key(seed)
    i32, pair = idx.astype(np.uint32), (idx >> 1).astype(np.uint32)
    out = {}
    first = mix32(i32 ^ key)
    out["two rounds, 24 bits (the contract)"] = (mix32(first + key) >> np.uint32(8)) / 2.0**24
    out["one round per element, 24 bits"] = (first >> np.uint32(8)) / 2.0**24
    one = mix32(pair ^ key)
    for name, h in (("one round per pair, 16 bits each", one),
                    ("two rounds per pair, 16 bits each", mix32(one + key))):
        out[name] = np.where(idx & 1, h >> np.uint32(16), h & np.uint32(0xFFFF)) / 2.0**16
    return out


def z2d(a, b, cells):
    counts = np.bincount((a * cells).astype(np.int64) * cells + (b * cells).astype(np.int64),
                         minlength=cells * cells)
    expect = a.size / cells**2
    dof = cells**2 - 1
    return (((counts - expect) ** 2 / expect).sum() - dof) / math.sqrt(2 * dof)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--log2n", type=int, default=22)
    a = p.parse_args(argv)
    idx = np.arange(2**a.log2n, dtype=np.int64)
    worst = {}
    for seed in SEEDS:
        for name, u in variants(seed, idx).items():
            w = worst.setdefault(name, [0.0, 0.0, None])
            w[0] = max(w[0], max(abs(z2d(u[:-l], u[l:], 64)) for l in SMALL_LAGS))
            w[1] = max(w[1], max(abs(z2d(u[:-l], u[l:], 64)) for l in ROW_LAGS))
            if "pair" in name:
                w[2] = max(w[2] or 0.0, abs(z2d(u[0::2], u[1::2], 256)))
    print(f"| hash | worst \\|z\\| at lags {SMALL_LAGS[0]}-{SMALL_LAGS[-1]} | worst \\|z\\| at "
          f"row lags {ROW_LAGS[0]}-{ROW_LAGS[-1]} | halves of one hash (256 x 256) |")
    print("|---|---:|---:|---:|")
    for name, (small, rows, halves) in worst.items():
        print(f"| {name} | {small:.1f} | {rows:.1f} | "
              f"{'-' if halves is None else f'{halves:.1f}'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
