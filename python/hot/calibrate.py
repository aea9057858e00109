"""Layer-wise quantizer selection (LQS) as a calibration run, like profile-guided optimization.

    python -m hot.calibrate STEP.mlir --inputs BATCH.npz -o decisions.json [--threshold 0.5]

1. instrument: ``hot-opt --hot-training-pipeline --hot-lqs-instrument`` makes the training step
   also return, per layer and path, ‖v − deq(q(v))‖_F of the transformed output gradient v under
   one scale per tensor and under the path's finer granularity (per token on gx, per output
   channel on gw);
2. run: the instrumented step is compiled for the CPU and run on the calibration batch (the
   arrays ``arg0``, ``arg1``, ... of BATCH.npz, in argument order; the seed is ``--seed``);
3. decide: the finer granularity wins iff e_fine < threshold · e_tensor
   (shared/docs/hot-method.md section 4); the decisions file is what
   ``hot-opt --hot-training-pipeline="lqs-decisions=FILE"`` (``hot-lqs-apply``) reads.

Layer names ("layer0", ...) number the layers in program order, so they are stable across runs
of the same graph.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from hot import runner

FINE = {"gx": "per_row", "gw": "per_col"}


def instrument(text: str, pipeline_options: str = "", hot_opt: str | None = None) -> str:
    """The training step rewritten and instrumented (IR text)."""
    hot_opt = hot_opt or runner.find_hot_opt()
    if hot_opt is None:
        raise FileNotFoundError("hot-opt not found: build it or set HOT_OPT")
    result = subprocess.run(
        [hot_opt, f"--hot-training-pipeline={pipeline_options} remarks=false",
         "--hot-lqs-instrument"], input=text, capture_output=True, text=True)
    if result.returncode != 0:
        raise runner.CompileError("instrument", [hot_opt], result.returncode, result.stderr)
    return result.stdout


def calibration_names(instrumented: str) -> dict[str, list[str]]:
    """Function name -> the "<layer>.<path>" names of its extra results (in order)."""
    names = {}
    for m in re.finditer(r"func\.func @([\w$.]+)\(.*?hot\.lqs_results = \[([^\]]*)\]",
                         instrumented, re.S):
        names[m.group(1)] = re.findall(r'"([^"]+)"', m.group(2))
    return names


def calibrate(text: str, inputs: list, *, threshold: float = 0.5, seed: int = 0,
              pipeline_options: str = "", function: str | None = None) -> dict:
    """Runs the instrumented step on `inputs` (the original arguments, without the seed) and
    returns the decisions: {"threshold", "function", "layers": {layer: {path: granularity}},
    "errors": {"layer.path": {"per_tensor": e, "per_row|per_col": e}}}."""
    instrumented = instrument(text, pipeline_options)
    names = calibration_names(instrumented)
    if not names:
        raise ValueError("no quantized output gradient to calibrate: nothing was rewritten")
    function = function or next(iter(names))
    module = runner.compile_module(instrumented)
    results = module.call(function, *inputs, seed)
    results = results if isinstance(results, tuple) else (results,)
    extra = results[len(results) - 2 * len(names[function]):]
    decisions = {"threshold": threshold, "function": function, "layers": {}, "errors": {}}
    for i, name in enumerate(names[function]):
        layer, path = name.rsplit(".", 1)
        e_tensor, e_fine = float(extra[2 * i]), float(extra[2 * i + 1])
        choice = FINE[path] if e_fine < threshold * e_tensor else "per_tensor"
        decisions["layers"].setdefault(layer, {})[path] = choice
        decisions["errors"][name] = {"per_tensor": e_tensor, FINE[path]: e_fine}
    return decisions


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hot.calibrate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("graph", type=Path, help="the training step (linalg MLIR)")
    parser.add_argument("--inputs", type=Path, required=True,
                        help=".npz with arg0, arg1, ... (the step's arguments)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="decisions (JSON)")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pipeline-options", default="",
                        help="options of hot-training-pipeline, e.g. 'gx-bits=4'")
    args = parser.parse_args(argv)
    data = np.load(args.inputs)
    inputs = [data[f"arg{i}"] for i in range(sum(1 for k in data.files if
                                                 re.fullmatch(r"arg\d+", k)))]
    decisions = calibrate(args.graph.read_text(), inputs, threshold=args.threshold,
                          seed=args.seed, pipeline_options=args.pipeline_options)
    args.output.write_text(json.dumps(decisions, indent=2) + "\n")
    for layer, paths in decisions["layers"].items():
        print(f"{layer}: " + ", ".join(f"{p} {g}" for p, g in sorted(paths.items())))
    print(f"decisions written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
