#!/usr/bin/env python3
# ===- traffic.py - Bytes each kernel of a layer's backward touches -------===#
#
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
#
# ===----------------------------------------------------------------------===#
"""A static traffic model of one ViT-B linear layer's HOT backward on the GPU: the layer module
of export.py through `hot-rewrite-backward-matmuls` and `convert-hot-to-gpu{chip=...}`, and for
every `gpu.launch_func` the bytes of the buffers it is given (each counted once: read or
written; a GEMM's re-reads of operand tiles, which L2 mostly serves, are not counted). Memory
bound kernels move about that much; the table compares the lowering as generated with
`share-statistics=0` (every per-tensor quantize's max in a pass of its own), and the last column
with LQS's finer scales (per token on gx, per output channel on gw).

    .venv/bin/python bench/gpu/traffic.py [--layers fc1 qkv] [--chip sm_90a]
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

ELEMENT_BYTES = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "f16": 2, "bf16": 2, "i8": 1}
LAUNCH = re.compile(r"gpu\.launch_func\s+@hot_kernels::@(\w+).*?args\((.*)\)\s*$")
MEMREF = re.compile(r"memref<([0-9x]*)(f64|i64|f32|i32|f16|bf16|i8)>")


def memref_bytes(shape, element):
    count = 1
    for size in filter(None, shape.split("x")):
        count *= int(size)
    return count * ELEMENT_BYTES[element]


LQS = " gx-granularity=per_row gw-granularity=per_col"


def launches(hot_opt, text, chip, share, rewrite=""):
    """(kernel name, bytes of its buffer arguments) of each launch, in program order."""
    rewritten = subprocess.run([hot_opt, f"--hot-rewrite-backward-matmuls=remarks=false{rewrite}"],
                               input=text, capture_output=True, text=True, check=True).stdout
    lowered = subprocess.run(
        [hot_opt, f"--convert-hot-to-gpu=chip={chip} share-statistics={int(share)}"],
        input=rewritten, capture_output=True, text=True, check=True).stdout
    found = []
    for line in lowered.splitlines():
        m = LAUNCH.search(line)
        if m:
            found.append((m.group(1), sum(memref_bytes(s, e)
                                          for s, e in MEMREF.findall(m.group(2)))))
    host = lowered.split("gpu.module")[0]
    leftover = sorted(set(re.findall(r"^\s*(?:%\S+ = )?((?:hot|linalg)\.\w+)", host,
                                     re.MULTILINE)))
    return found, leftover


def kind(name):
    """The kernel's family, without its shape suffixes."""
    for prefix in ("int_mma_wgmma", "int_mma", "transpose", "block_hadamard",
                   "hadamard_quantize_row", "hadamard_quantize_tensor", "hadamard_absmax",
                   "hadamard_scale"):
        if name.startswith("hot_" + prefix):
            return prefix
    if name.startswith("hot_lowrank"):
        for stage in ("stats", "quantize"):
            if f"_{stage}" in name:
                return f"lowrank ({stage})"
        return "lowrank (+ maxima)" if "max" in name else "lowrank"
    return name


def main():
    sys.path.insert(0, str(HERE))
    import export  # noqa: E402 (export.py imports this module for launches())

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hot-opt", default=str(ROOT / "build" / "bin" / "hot-opt"))
    parser.add_argument("--chip", default="sm_90a")
    parser.add_argument("--layers", nargs="*", default=[name for name, _, _ in export.LAYERS])
    args = parser.parse_args()

    mb = 1e6
    print(f"chip {args.chip}; N = {export.BATCH}·{export.TOKENS} tokens; MB = 10^6 bytes\n")
    print("| layer | kernels (shared) | MB (shared) | kernels (unshared) | MB (unshared) "
          "| shared / unshared | kernels (LQS scales) | MB (LQS scales) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    details = []
    for layer, o, i in export.LAYERS:
        if layer not in args.layers:
            continue
        text = export.layer_module(f"layer_{layer}", o, i)
        shared, left_s = launches(args.hot_opt, text, args.chip, True)
        unshared, left_u = launches(args.hot_opt, text, args.chip, False)
        lqs, left_l = launches(args.hot_opt, text, args.chip, True, LQS)
        if left_s or left_u or left_l:
            sys.exit(f"traffic.py: {layer}: ops left for the generic path "
                     f"({left_s or left_u or left_l}): the model counts kernels of ours "
                     "only")
        total_s = sum(b for _, b in shared)
        total_u = sum(b for _, b in unshared)
        total_l = sum(b for _, b in lqs)
        print(f"| {layer} (O {o}, I {i}) | {len(shared)} | {total_s / mb:,.1f} | "
              f"{len(unshared)} | {total_u / mb:,.1f} | {total_s / total_u:.2f} | "
              f"{len(lqs)} | {total_l / mb:,.1f} |")
        details.append((layer, shared, unshared))

    for layer, shared, unshared in details:
        print(f"\n{layer}: MB per kind of kernel\n")
        print("| kernel | launches (shared) | MB (shared) | launches (unshared) "
              "| MB (unshared) |")
        print("|---|---:|---:|---:|---:|")
        kinds = {}
        for column, found in ((0, shared), (1, unshared)):
            for name, size in found:
                entry = kinds.setdefault(kind(name), [0, 0.0, 0, 0.0])
                entry[2 * column] += 1
                entry[2 * column + 1] += size
        for k, (ns, bs, nu, bu) in kinds.items():
            print(f"| {k} | {ns} | {bs / mb:,.1f} | {nu} | {bu / mb:,.1f} |")


if __name__ == "__main__":
    main()
