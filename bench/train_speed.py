"""Time per training step of the compiled HOT step against the compiled FP32 step, on the CPU.

    .venv/bin/python bench/train_speed.py [--models mlp vit] [--reps 40]

Both steps of a model (``test/Fixtures/train/<model>_train_step.mlir`` as exported, and the
same through ``hot-opt --hot-training-pipeline``) are compiled by ``hot.runner`` and called
on the same inputs (a real Fashion-MNIST batch, PyTorch-default initial parameters),
alternating FP32 and HOT call by call so that both see the same machine load; the table gives
the medians and their ratio. It also disassembles both shared libraries and counts the x86
instructions that matter for integer products: VNNI dot products (``vpdpbusd``, ``vpdpwssd``
and their saturating forms), the pre-VNNI ``vpmaddubsw``/``vpmaddwd``, and how many
instructions use 512-bit (zmm) or 256-bit (ymm) registers at all.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from common import cpu_model, git_state  # noqa: E402
from hot import data, runner, train  # noqa: E402

INSTRUCTIONS = {
    "VNNI (vpdpbusd/vpdpwssd)": re.compile(r"\bvpdp(busds?|wssds?)\b"),
    "vpmaddubsw/vpmaddwd": re.compile(r"\bvpmadd(ubsw|wd)\b"),
    "zmm": re.compile(r"%zmm"),
    "ymm": re.compile(r"%ymm"),
}


def instruction_mix(lib: Path) -> dict[str, int]:
    objdump = runner.find_llvm_tool("llvm-objdump")
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(lib)], check=True,
                          capture_output=True, text=True).stdout
    lines = [l for l in text.splitlines() if "\t" in l]
    return {k: sum(1 for l in lines if rx.search(l)) for k, rx in INSTRUCTIONS.items()}


def measure(model: str, reps: int) -> dict:
    text = train.fixture_text(model, "train_step")
    names = train.param_names(text)
    fp32 = runner.compile_module(text)
    hot = runner.compile_module(train.rewrite(text, ""))
    sig = fp32.train_step.signature
    shapes = [t.shape for t in sig.inputs[: len(names)]]
    batch, classes = sig.inputs[len(names)].shape[0], sig.inputs[len(names) + 1].shape[1]
    params = train.init_params(names, shapes, seed=0)
    ds = data.load("fashion-mnist", "train", subset=batch, seed=0, normalize=True)
    x, target = np.ascontiguousarray(ds.images[:batch]), data.one_hot(ds.labels[:batch], classes)

    times = {"fp32": [], "hot": []}
    for rep in range(reps + 3):   # the first three calls of each are warm-up
        for mode, fn, extra in (("fp32", fp32.train_step, []),
                                ("hot", hot.train_step, [train.step_seed(0, rep)])):
            t = time.perf_counter()
            fn(*params, x, target, *extra)
            if rep >= 3:
                times[mode].append(time.perf_counter() - t)
    return {"model": model,
            "fp32_ms": 1e3 * statistics.median(times["fp32"]),
            "hot_ms": 1e3 * statistics.median(times["hot"]),
            "mix": {"fp32": instruction_mix(fp32.library_path), "hot": instruction_mix(hot.library_path)}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=["mlp", "vit"], choices=["mlp", "vit"])
    p.add_argument("--reps", type=int, default=40)
    a = p.parse_args(argv)

    rows = [measure(m, a.reps) for m in a.models]
    print(f"# Compiled training step on the CPU ({cpu_model()}), batch 128, "
          f"median of {a.reps} alternating calls; {git_state()}")
    print()
    print("| model | FP32 ms/step | HOT ms/step | HOT / FP32 |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['fp32_ms']:.1f} | {r['hot_ms']:.1f} | "
              f"{r['hot_ms'] / r['fp32_ms']:.2f} |")
    print()
    print("| model | step | " + " | ".join(INSTRUCTIONS) + " |")
    print("|---|---|" + "---|" * len(INSTRUCTIONS))
    for r in rows:
        for mode in ("fp32", "hot"):
            print(f"| {r['model']} | {mode} | " +
                  " | ".join(str(r["mix"][mode][k]) for k in INSTRUCTIONS) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
