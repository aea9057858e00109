#!/usr/bin/env python3
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
"""The issue's three summary tables from one bench/gpu/run.sh output (the markdown table
that hot-gpu-bench prints), against the targets of issue 5:

1. int8 GEMM: each product's default module against cuBLASLt int8 on the same shape
   (target: 70 %), kernels only and host call, with the fastest variant of the run;
2. fused hadamard + quantize: bytes that must move over the kernels' time (outputs on the
   device), against the faster device-copy row (target: 80 %);
3. one layer's backward: the layer modules against cuBLAS FP32, TF32 and BF16 gx + gw
   (targets: 2.6x FP32, faster than BF16).

Rates are recomputed from the times and shapes, so older outputs read the same.

    bench/gpu/summarize.py bench/gpu/results/h200-2026-12-04.txt
"""

import re
import sys
from collections import defaultdict


def rows(path):
    """The table's rows as dicts (op, shape, impl, ms, note)."""
    for line in open(path, encoding="utf-8"):
        if not line.startswith("| ") or line.startswith("| op ") or line.startswith("| module"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 9:
            continue
        try:
            ms = float(cells[3])
        except ValueError:
            continue  # a FAILED or not-run row
        yield {"op": cells[0], "shape": cells[1], "impl": cells[2], "ms": ms, "note": cells[8]}


def module_of(impl):
    m = re.match(r"hot (\S+)\.so \((.*)\)", impl)
    return (m[1], m[2]) if m else (None, None)


def summarize(path):
    table = list(rows(path))
    # 1 GiB read and written, the faster of the two copy rows.
    copy = max(2 * 2**30 / (r["ms"] * 1e6) for r in table if r["op"] == "device copy")
    out = []

    out.append("int8 GEMM (kernels only; host call in brackets) against cuBLASLt int8\n")
    out.append("| product | M x N x K | cuBLASLt ms | hot ms | of cuBLASLt | fastest variant |")
    out.append("|---|---|---:|---:|---:|---|")
    by_op = defaultdict(list)
    for r in table:
        by_op[r["op"]].append(r)
    for op, group in by_op.items():
        lib = [r for r in group if r["impl"] == "cuBLASLt int8"]
        default = {module_of(r["impl"])[1]: r for r in group
                   if re.fullmatch(r"g[xw]_[a-z0-9]+", module_of(r["impl"])[0] or "")}
        if not lib or "kernels only" not in default:
            continue
        base = lib[0]["ms"]
        kern, wall = default["kernels only"]["ms"], default["host call, wall"]["ms"]
        variants = [(r["ms"], module_of(r["impl"])[0]) for r in group
                    if module_of(r["impl"])[1] == "kernels only"]
        best_ms, best = min(variants)
        out.append(f"| {op} | {group[0]['shape']} | {base:.3f} | {kern:.3f} ({wall:.3f}) | "
                   f"{100 * base / kern:.0f} % ({100 * base / wall:.0f} %) | "
                   f"{best} {best_ms:.3f} ({100 * base / best_ms:.0f} %) |")

    out.append(f"\nfused hadamard + quantize, outputs on the device (device copy {copy:.0f} GB/s)\n")
    out.append("| op | shape | module | us | GB/s | of copy |")
    out.append("|---|---|---|---:|---:|---:|")
    for r in table:
        if "hadamard+quantize" in r["op"] and r["impl"].endswith("outputs on the device)"):
            n, c = map(int, re.match(r"(\d+) x (\d+)", r["shape"]).groups())
            per_row = "per_row" in r["op"]
            moved = n * c * 5 + 4 * (n if per_row else 1)  # f32 read, i8 written, scales
            gbs = moved / (r["ms"] * 1e6)
            out.append(f"| {r['op']} | {r['shape']} | {module_of(r['impl'])[0]} | "
                       f"{1e3 * r['ms']:.0f} | {gbs:.0f} | {100 * gbs / copy:.0f} % |")

    out.append("\none layer's backward (gx + gw): kernels only (host call)\n")
    out.append("| layer | module | ms | vs FP32 | vs TF32 | vs BF16 |")
    out.append("|---|---|---:|---:|---:|---:|")
    base = {}
    for r in table:
        m = re.fullmatch(r"cuBLAS (FP32|TF32|BF16) gx \+ gw", r["impl"])
        if m:
            base[(r["op"], m[1])] = r["ms"]
    layers = defaultdict(dict)
    for r in table:
        name, kind = module_of(r["impl"])
        if name and name.startswith("layer_"):
            layers[(r["op"], name)][kind] = r["ms"]
    for (op, name), t in layers.items():
        if "kernels only" not in t or (op, "FP32") not in base:
            continue
        k, w = t["kernels only"], t.get("host call, wall", float("nan"))
        cells = [f"{base[(op, b)] / k:.2f}x ({base[(op, b)] / w:.2f}x)"
                 for b in ("FP32", "TF32", "BF16")]
        out.append(f"| {op.replace(' backward', '')} | {name} | {k:.3f} ({w:.3f}) | "
                   + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(summarize(sys.argv[1]))
