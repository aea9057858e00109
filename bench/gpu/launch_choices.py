#!/usr/bin/env python3
# ===- launch_choices.py - Tiles and K splits of the ViT-B products --------===#
#
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
#
# ===----------------------------------------------------------------------===#
"""The tiles and K split that convert-hot-to-gpu's model of the kernel's time chooses for each
ViT-B product (export.py's GEMM modules: gx = gy·W and gw = gyᵀ·x after HLA), per chip, as
its remark states them: blocks, waves on the chip's SMs, and the modelled time against
128x128 tiles without a split (units: one 128-byte K step of a 128x128 tile at the tensor
cores' full rate). Static: the device run (the `_n128`, `_n256`, `_nosplit`, `_split3` rows of each product)
measures.

    .venv/bin/python bench/gpu/launch_choices.py [--chips sm_90a sm_80]
"""

import argparse
import math
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import export  # noqa: E402

REMARK = re.compile(r"remark: tensor-core kernel @(\w+):.*")
KERNEL = re.compile(r"_t(\d+)x(\d+)x\d+_")
MODEL = re.compile(r"SMs: ([\d.]+) against ([\d.]+)")
SPLIT = re.compile(r"_split(\d+)_")


def choice(hot_opt, chip, m, n, k):
    text = export.gemm_module("p", m, n, k)
    stderr = subprocess.run([hot_opt, f"--convert-hot-to-gpu=chip={chip}", "-o", "/dev/null"],
                            input=text, capture_output=True, text=True, check=True).stderr
    line = REMARK.search(stderr)
    name = line.group(1)
    tile_m, tile_n = map(int, KERNEL.search(name).groups())
    split = int(SPLIT.search(name).group(1)) if SPLIT.search(name) else 1
    model = MODEL.search(line.group(0))
    return tile_m, tile_n, split, model.groups() if model else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hot-opt", default=str(HERE.parent.parent / "build" / "bin" / "hot-opt"))
    parser.add_argument("--chips", nargs="*", default=["sm_90a", "sm_80"])
    args = parser.parse_args()
    n, n_hla = export.BATCH * export.TOKENS, export.BATCH * export.HLA_TOKENS
    print("| chip | product | M x N x K | tiles | K split | blocks | waves | modelled time | "
          "128x128 unsplit |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    for chip in args.chips:
        # What hot-opt assumes (getTypicalSMCount).
        sms = {"sm_80": 108, "sm_86": 84, "sm_89": 128, "sm_90": 132, "sm_90a": 132}[chip]
        for layer, o, i in export.LAYERS:
            for product, (m, nn, k) in (("gx", (n, i, o)), ("gw", (o, i, n_hla))):
                tile_m, tile_n, split, model = choice(args.hot_opt, chip, m, nn, k)
                blocks = math.ceil(m / tile_m) * math.ceil(nn / tile_n) * split
                chosen, plain = model if model else ("=", "-")
                print(f"| {chip} | {product}_{layer} | {m} x {nn} x {k} | {tile_m}x{tile_n} | "
                      f"{split} | {blocks} | {blocks / sms:.2f} | {chosen} | {plain} |")


if __name__ == "__main__":
    main()
