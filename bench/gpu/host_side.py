#!/usr/bin/env python3
# ===- host_side.py - What a step's host code asks of the CUDA driver -----===#
#
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
#
# ===----------------------------------------------------------------------===#
"""Runs the host code of each bf16 ViT-B layer's HOT backward (export.py's
modules) and of the bundled ViT block's training step over the fake CUDA
driver (python/hot/fake_cuda.py: real cubins, no kernel run), two calls each,
and prints what the second call (the steady state) asks of the driver: the
launches, every driver call, the allocations, the synchronizations, and the
memory the module's own buffers take, by kind. No GPU needed; ~1 min.

    .venv/bin/python bench/gpu/host_side.py [--chip sm_90a]
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "python"))
sys.path.insert(0, str(HERE))

from hot import demo, fake_cuda, runner  # noqa: E402
import export  # noqa: E402


def row(name, run, kernels_note=""):
    first, second = run.calls
    calls = second["driver_calls"]
    launches = second["launches"] - first["launches"]
    allocs = sum(calls.get(n, 0) for n in ("cuMemAlloc_v2", "cuMemAllocManaged"))
    print(f"| {name} | {run.kernels}{kernels_note} | {launches} | {sum(calls.values())} "
          f"| {calls.get('cuFuncSetAttribute', 0)} | {calls.get('cuEventRecord', 0)} "
          f"| {allocs} | {calls.get('cuStreamSynchronize', 0)} "
          f"| {first['device']} / {first['managed']} | {first['peak'] / 1e6:,.1f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chip", default="sm_90a")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        driver = fake_cuda.build_driver(tmp / "driver")
        print(f"chip {args.chip}; the second of two calls; MB = 10^6 bytes; allocations: "
              "driver allocations (the runtime's cache hands out the rest)\n")
        print("| module | kernels | launches | driver calls | cuFuncSetAttribute | "
              "cuEventRecord | allocations | stream syncs | first call's allocations: "
              "device / managed | peak MB |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
        for name, o, i in export.LAYERS:
            work = tmp / name
            work.mkdir()
            inputs = [[export.BATCH, export.TOKENS, i], [o, i],
                      [export.BATCH, export.TOKENS, o]]
            run = fake_cuda.run(export.layer_module("layer", o, i, "bf16"), args.chip,
                                ["--hot-rewrite-backward-matmuls",
                                 *runner.cuda_pipeline(args.chip)],
                                "layer", inputs, work, driver)
            if run.errors():
                sys.exit("\n".join(run.errors()))
            row(f"layer_{name}_bf16", run)
        work = tmp / "step"
        work.mkdir()
        text = subprocess.run([runner.find_hot_opt(), str(demo.FIXTURE),
                               "--hot-training-pipeline=remarks=false"],
                              capture_output=True, text=True, check=True).stdout
        run = fake_cuda.run(text, args.chip, runner.cuda_pipeline(args.chip), "train_step",
                            "demo", work, driver)
        if run.errors():
            sys.exit("\n".join(run.errors()))
        row("ViT block training step", run)
        print("\n(first call's allocations include the runner's own: each argument and "
              "each result in managed memory)")


if __name__ == "__main__":
    main()
