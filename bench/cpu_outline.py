#!/usr/bin/env python3
"""What ``hot-lower-to-cpu``'s loop-nest outlining costs and buys on the CPU path.

    .venv/bin/python bench/cpu_outline.py [--runs 5] [FIXTURE ...]

Each fixture (default: the demo's ViT block and the LoRA ViT training step) goes through
``hot-opt --hot-training-pipeline``, then is compiled by ``hot.runner.compile_module`` (hot-opt
``--hot-lower-to-cpu``, mlir-translate, clang -O2) with ``outline-loop-nests=1`` (the default) and
``=0``, interleaved. Prints a Markdown table: the whole compile's wall time (fresh cache), the
train step's best run time over --runs calls on the same random inputs, and whether the two
builds' results are the same bytes.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from hot import runner  # noqa: E402

DEFAULT_FIXTURES = [ROOT / "test" / "Fixtures" / "torch" / "vit_block_joint.mlir",
                    ROOT / "test" / "Fixtures" / "train" / "vit_lora_train_step.mlir"]


def random_args(signature, rng):
    args = []
    for t in signature.inputs:
        if not hasattr(t, "shape"):  # a scalar: the seed
            args.append(7 if np.issubdtype(t.dtype, np.integer) else 0.5)
        elif np.issubdtype(t.dtype, np.integer):
            args.append(np.zeros(t.shape, t.dtype))
        else:
            args.append((rng.standard_normal(t.shape) * 0.1).astype(t.dtype))
    return args


def measure(text, outline, runs):
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        module = runner.compile_module(text, cache_dir=Path(tmp),
                                       pipeline=f"--hot-lower-to-cpu=outline-loop-nests={outline}")
        compile_s = time.perf_counter() - start
        step = getattr(module, "train_step")
        args = random_args(module.signatures["train_step"], np.random.default_rng(0))
        results = step(*args)
        best = float("inf")
        for _ in range(runs):
            start = time.perf_counter()
            step(*args)
            best = min(best, time.perf_counter() - start)
        return compile_s, best, [np.asarray(r).tobytes() for r in results]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("fixtures", nargs="*", type=Path, default=DEFAULT_FIXTURES)
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args(argv)
    hot_opt = runner.find_hot_opt()
    print("| fixture | compile, outlined (s) | compile, one function (s) | ratio | "
          "run, outlined (ms) | run, one function (ms) | same bytes |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for fixture in a.fixtures:
        text = subprocess.run([str(hot_opt), str(fixture), "--hot-training-pipeline=remarks=false"],
                              capture_output=True, text=True, check=True).stdout
        on = measure(text, 1, a.runs)
        off = measure(text, 0, a.runs)
        print(f"| {fixture.name} | {on[0]:.1f} | {off[0]:.1f} | {off[0] / on[0]:.1f}x | "
              f"{on[1] * 1e3:.1f} | {off[1] * 1e3:.1f} | {'yes' if on[2] == off[2] else 'NO'} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
