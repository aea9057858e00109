#!/usr/bin/env python3
"""Compile time of ``hot-opt --hot-training-pipeline`` on Llama-style joint training graphs.

    .venv/bin/python bench/compile_time.py [--runs 11] [--callgrind] [--json out.json]

(a) The 32-block Llama-style joint graph (build/fixtures-large/llama32_d256_joint.mlir):
    ``hot-opt --hot-training-pipeline="remarks=false"`` against ``mlir-opt-22 --canonicalize
    --cse`` on the same file, plus reference rows (parse + print only, the same canonicalize +
    cse in the hot-opt binary, both commands with ``--verify-each=false``).  Whole-command wall time (process start, parse, passes, print to
    /dev/null: nothing excluded) and the child's CPU time, median of --runs interleaved runs;
    separately, the pass time from ``--mlir-timing`` (median of as many runs).

(b) Scaling: the same pipeline on stacks of 1, 2, 4, 8, 16, 32 Llama decoder layers
    (build/fixtures-scaling/llama<N>_d256_joint.mlir, written by ``hot.fixtures
    --llama-blocks``), with the op counts, times per block, a least-squares line
    t = a + b·N, t(32)/t(1), the exponent of each doubling log2(t(2N)/t(N)) and, per pass of the
    pipeline, its median time at every N and its log-log slope over 4..32 blocks (1.0: linear).

(c) Remarks (on by default in the pipeline and every hot pass): ``--hot-training-pipeline``
    with remarks=true, with remarks=true and ``--mlir-print-op-on-diagnostic=false``, and with
    remarks=false, on the same stacks (one run each; exit statuses reported).

(d) With ``--callgrind``: inclusive instruction counts of the main functions (valgrind
    callgrind) for every N, immune to the load of the machine (~1.5 min more).

Missing graphs are generated with the frontend environment (.venv-frontend, ~30 s for all
six stacks).  The binaries are copied to a temporary directory first so that a rebuild of
build/bin during the run cannot mix two versions.  Prints Markdown tables (bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import REPO, md_table  # noqa: E402

PIPELINE = "--hot-training-pipeline=remarks=false"
BASELINE = ["--canonicalize", "--cse"]
DEFAULT_BLOCKS = [1, 2, 4, 8, 16, 32]
SCALING_DIR = REPO / "build/fixtures-scaling"
LARGE_32 = REPO / "build/fixtures-large/llama32_d256_joint.mlir"


def scaling_graph(n: int) -> Path:
    return SCALING_DIR / f"llama{n}_d256_joint.mlir"


def op_count(hot_opt: Path, graph: Path, passes=()) -> int:
    """Number of operations (nested ones included) of ``graph`` after ``passes``."""
    _, _, err = common.run_timed([hot_opt, graph, *passes, "--print-op-stats=json",
                                  "-o", os.devnull])
    start = err.index("{")
    stats = json.loads(err[start:err.index("}", start) + 1])
    return sum(stats.values())


class Bench:
    """Interleaved repeated runs of named commands; medians of wall, CPU and --mlir-timing."""

    def __init__(self, runs: int):
        self.runs = runs
        self.cmds = {}
        self.wall, self.cpu, self.timing = {}, {}, {}

    def add(self, name, cmd):
        self.cmds[name] = [str(c) for c in cmd]
        self.wall[name], self.cpu[name], self.timing[name] = [], [], []

    def run(self):
        names = list(self.cmds)
        for name in names:                      # warm-up: page cache, dynamic loader
            common.run_timed(self.cmds[name])
        for r in range(self.runs):
            order = names[r % len(names):] + names[:r % len(names)]  # rotate the order
            for name in order:
                w, c, _ = common.run_timed(self.cmds[name])
                self.wall[name].append(w)
                self.cpu[name].append(c)
            for name in order:
                _, _, err = common.run_timed(self.cmds[name] + ["--mlir-timing"])
                self.timing[name].append(common.parse_mlir_timing(err))

    def med_wall(self, name):
        return statistics.median(self.wall[name])

    def med_cpu(self, name):
        return statistics.median(self.cpu[name])

    def med_row(self, name, row):
        return statistics.median(t.get(row, 0.0) for t in self.timing[name])

    def med_passes(self, name):
        return statistics.median(common.pass_seconds(t) for t in self.timing[name])

    def rows(self, name):
        """Top-level --mlir-timing rows in the order of the first report."""
        return list(self.timing[name][0])

    def summary(self, name):
        return {"cmd": self.cmds[name], "wall_s": self.wall[name], "cpu_s": self.cpu[name],
                "mlir_timing": self.timing[name]}


def ms(x):
    return f"{1e3 * x:.1f}"


def fit_line(xs, ys):
    """Least squares y = a + b·x; returns a, b, R²."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    ss_res = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    ss_tot = sum((y - my) ** 2 for y in ys)
    return a, b, 1 - ss_res / ss_tot if ss_tot else 1.0


def loglog_slope(xs, ys):
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if y > 0]
    if len(pts) < 2:
        return float("nan")
    _, b, _ = fit_line([p[0] for p in pts], [p[1] for p in pts])
    return b


def part_a(hot_opt, mlir_opt, graph, runs):
    b = Bench(runs)
    b.add("hot-opt --hot-training-pipeline", [hot_opt, graph, PIPELINE, "-o", os.devnull])
    b.add("mlir-opt-22 --canonicalize --cse", [mlir_opt, graph, *BASELINE, "-o", os.devnull])
    b.add("hot-opt --canonicalize --cse", [hot_opt, graph, *BASELINE, "-o", os.devnull])
    b.add("hot-opt --hot-training-pipeline --verify-each=false",
          [hot_opt, graph, PIPELINE, "--verify-each=false", "-o", os.devnull])
    b.add("mlir-opt-22 --canonicalize --cse --verify-each=false",
          [mlir_opt, graph, *BASELINE, "--verify-each=false", "-o", os.devnull])
    b.add("hot-opt (parse + print only)", [hot_opt, graph, "-o", os.devnull])
    b.add("mlir-opt-22 (parse + print only)", [mlir_opt, graph, "-o", os.devnull])
    b.run()
    hot, base = "hot-opt --hot-training-pipeline", "mlir-opt-22 --canonicalize --cse"

    n_in = op_count(hot_opt, graph)
    n_out = op_count(hot_opt, graph, [PIPELINE])
    n_base = op_count(mlir_opt, graph, BASELINE)
    print(f"## (a) 32-block Llama-style joint graph: pipeline vs canonicalize + cse\n")
    print(f"graph: `{graph.relative_to(REPO) if graph.is_relative_to(REPO) else graph}` "
          f"({graph.stat().st_size / 2**20:.2f} MiB, {n_in} ops; {n_out} ops after the "
          f"pipeline, {n_base} after canonicalize + cse); {runs} interleaved runs per "
          f"command, medians.\n")
    rows = []
    for name in b.cmds:
        t = {k: b.med_row(name, k) for k in ("Parser", "Output")}
        rows.append([f"`{name}`", ms(b.med_wall(name)), ms(min(b.wall[name])),
                     ms(max(b.wall[name])), ms(b.med_cpu(name)), ms(t["Parser"]),
                     ms(b.med_passes(name)), ms(t["Output"])])
    print(md_table(["command", "wall ms (median)", "min", "max", "CPU ms (median)",
                    "parse ms", "passes ms", "print ms"], rows))
    print()
    r_wall = b.med_wall(hot) / b.med_wall(base)
    r_cpu = b.med_cpu(hot) / b.med_cpu(base)
    r_pass = b.med_passes(hot) / b.med_passes(base)
    nv = " --verify-each=false"
    r_pass_nv = b.med_passes(hot + nv) / b.med_passes(base + nv)
    print(f"ratio hot-training-pipeline / (mlir-opt-22 --canonicalize --cse): "
          f"**{r_wall:.2f}x** whole-command wall time, {r_cpu:.2f}x CPU time, "
          f"{r_pass:.2f}x pass time alone (--mlir-timing; parse and print excluded), "
          f"{r_pass_nv:.2f}x pass time with --verify-each=false on both (the verifier runs "
          f"after each of the pipeline's 5 passes, after the baseline's 2).\n")
    print("Pass breakdown of the pipeline (--mlir-timing, median ms):\n")
    print(md_table(["row", "ms"], [[r, ms(b.med_row(hot, r))] for r in b.rows(hot)]))
    print()
    return {"graph": str(graph), "ops_in": n_in, "ops_out": n_out, "ops_baseline": n_base,
            "ratio_wall": r_wall, "ratio_cpu": r_cpu, "ratio_passes": r_pass,
            "ratio_passes_no_verify": r_pass_nv,
            "commands": {n: b.summary(n) for n in b.cmds}}


def part_b(hot_opt, mlir_opt, blocks, runs):
    b = Bench(runs)
    for n in blocks:
        b.add(f"hot{n}", [hot_opt, scaling_graph(n), PIPELINE, "-o", os.devnull])
        b.add(f"base{n}", [mlir_opt, scaling_graph(n), *BASELINE, "-o", os.devnull])
    b.run()

    ops_in = {n: op_count(hot_opt, scaling_graph(n)) for n in blocks}
    ops_out = {n: op_count(hot_opt, scaling_graph(n), [PIPELINE]) for n in blocks}
    wall = {n: b.med_wall(f"hot{n}") for n in blocks}
    cpu = {n: b.med_cpu(f"hot{n}") for n in blocks}
    passes = {n: b.med_passes(f"hot{n}") for n in blocks}
    base_wall = {n: b.med_wall(f"base{n}") for n in blocks}
    base_passes = {n: b.med_passes(f"base{n}") for n in blocks}

    print(f"## (b) Scaling: the pipeline on stacks of N Llama decoder layers\n")
    print(f"graphs: `build/fixtures-scaling/llama<N>_d256_joint.mlir`; {runs} interleaved "
          f"runs per command, medians. wall: whole `hot-opt` command; passes: the pipeline's "
          f"passes from --mlir-timing (parse and print excluded); baseline: `mlir-opt-22 "
          f"--canonicalize --cse` on the same graph.\n")
    rows = []
    for n in blocks:
        rows.append([n, ops_in[n], ops_out[n], ms(wall[n]), ms(wall[n] / n), ms(cpu[n]),
                     ms(passes[n]), ms(passes[n] / n), ms(base_wall[n]),
                     f"{wall[n] / base_wall[n]:.2f}"])
    print(md_table(["blocks", "ops in", "ops out", "wall ms", "wall ms/block", "CPU ms",
                    "passes ms", "passes ms/block", "baseline wall ms", "wall / baseline"],
                   rows))
    print()
    xs = list(blocks)
    fits = {}
    for label, series in (("ops in", ops_in), ("wall", wall), ("CPU", cpu), ("passes", passes),
                          ("baseline wall", base_wall), ("baseline passes", base_passes)):
        ys = [series[n] for n in xs]
        a, slope, r2 = fit_line(xs, ys)
        scale = 1 if label == "ops in" else 1e3
        unit = "" if label == "ops in" else " ms"
        fits[label] = {"a": a, "b": slope, "r2": r2,
                       "ratio_last_first": series[xs[-1]] / series[xs[0]],
                       "doubling_exponents": [math.log2(series[m] / series[n])
                                              for n, m in zip(xs, xs[1:]) if m == 2 * n],
                       "loglog_slope_4up": loglog_slope([n for n in xs if n >= 4],
                                                        [series[n] for n in xs if n >= 4])}
        f = fits[label]
        print(f"- {label}: {a * scale:.2f}{unit} + {slope * scale:.3f}{unit}·N (R² = {r2:.4f}); "
              f"t({xs[-1]})/t({xs[0]}) = {f['ratio_last_first']:.1f}; exponent per doubling "
              f"{', '.join(f'{e:.2f}' for e in f['doubling_exponents'])}; log-log slope over "
              f"N >= 4: {f['loglog_slope_4up']:.2f}")
    print()

    # Per pass.
    names = [r for r in b.rows(f"hot{xs[-1]}")]
    rows = []
    per_pass = {}
    big = [n for n in xs if n >= 4]
    for r in names:
        meds = {n: b.med_row(f"hot{n}", r) for n in xs}
        slope = loglog_slope(big, [meds[n] for n in big])
        last = (math.log2(meds[xs[-1]] / meds[xs[-2]])
                if len(xs) > 1 and meds[xs[-2]] > 0 and xs[-1] == 2 * xs[-2] else float("nan"))
        per_pass[r] = {"median_s": meds, "loglog_slope_4up": slope, "last_doubling": last}
        rows.append([r, *[ms(meds[n]) for n in xs], f"{slope:.2f}", f"{last:.2f}"])
    print("Per row of --mlir-timing (median ms; slope: log-log least squares over N >= 4, "
          "1.00 = linear, 2.00 = quadratic; last: log2 of the last doubling):\n")
    print(md_table(["row", *[f"N={n}" for n in xs], "slope", "last"], rows))
    print()
    for r, p in per_pass.items():
        if r != "Total" and p["loglog_slope_4up"] > 1.2 and p["median_s"][xs[-1]] > 0.005:
            print(f"- superlinear? {r}: slope {p['loglog_slope_4up']:.2f}, "
                  f"{ms(p['median_s'][xs[-1]])} ms at N={xs[-1]}")
    print()
    return {"blocks": xs, "ops_in": ops_in, "ops_out": ops_out, "fits": fits,
            "per_pass": per_pass, "commands": {n: b.summary(n) for n in b.cmds}}


def part_remarks(hot_opt, blocks):
    """(c) The cost of remarks (on by default in the pipeline and in every hot pass)."""
    print("## (c) Remarks: `--hot-training-pipeline` with its default remarks=true\n")
    print("One run per cell (the remarks=true runs take seconds). remarks=true: "
          "`hot-opt G --hot-training-pipeline -o /dev/null` (remarks to stderr, captured); "
          "op-on-diagnostic=false: the same with `--mlir-print-op-on-diagnostic=false` (MLIR "
          "then does not attach the 'see current operation' note to each remark, which prints "
          "the op with its SSA names numbered over the whole enclosing function); "
          "remarks=false: the pipeline as in (a) and (b).\n")
    rows, out = [], {}

    def cell(cmd):
        w, _, err, rc = common.run_timed_rc(cmd)
        return w, err, rc, (f"{w:.3f}" if rc == 0 else f"{w:.3f} (exit {rc})")

    for n in blocks:
        g = scaling_graph(n)
        w_on, err, rc_on, c_on = cell([hot_opt, g, "--hot-training-pipeline", "-o", os.devnull])
        w_nop, _, rc_nop, c_nop = cell([hot_opt, g, "--hot-training-pipeline",
                                        "--mlir-print-op-on-diagnostic=false", "-o", os.devnull])
        w_off, _, rc_off, c_off = cell([hot_opt, g, PIPELINE, "-o", os.devnull])
        out[n] = {"remarks": err.count("remark:"), "wall_on": w_on, "rc_on": rc_on,
                  "wall_no_op_print": w_nop, "rc_no_op_print": rc_nop,
                  "wall_off": w_off, "rc_off": rc_off}
        rows.append([n, out[n]["remarks"], c_on, c_nop, c_off])
    print(md_table(["blocks", "remarks", "remarks=true s", "op-on-diagnostic=false s",
                    "remarks=false s"], rows))
    print()
    big = [n for n in blocks if n >= 4]
    if len(big) >= 2:
        print(f"- log-log slope over N >= 4: remarks=true "
              f"{loglog_slope(big, [out[n]['wall_on'] for n in big]):.2f}, "
              f"op-on-diagnostic=false "
              f"{loglog_slope(big, [out[n]['wall_no_op_print'] for n in big]):.2f}, "
              f"remarks=false {loglog_slope(big, [out[n]['wall_off'] for n in big]):.2f}\n")
    return out


CALLGRIND_ROWS = [
    ("total", r"PROGRAM TOTALS"),
    ("parse (mlir::parseSourceFile)", r"mlir::parseSourceFile\("),
    ("PassManager::run (passes + verifier)", r"mlir::PassManager::run\("),
    ("mlir::verify (parser's and after each pass)", r"\?\?\?:mlir::verify\(mlir::Operation\*, bool\)"),
    ("HotAnnotateBackwardMatmulsPass::runOnOperation", r"HotAnnotateBackwardMatmulsPass::runOnOperation\(\) \["),
    ("HotRewriteBackwardMatmulsPass::runOnOperation", r"HotRewriteBackwardMatmulsPass::runOnOperation\(\) \["),
    ("HotCompressActivationsPass::runOnOperation", r"HotCompressActivationsPass::runOnOperation\(\) \["),
    ("BackwardMatmulAnalysis ctor (annotate + rewrite)", r"mlir::hot::BackwardMatmulAnalysis::BackwardMatmulAnalysis\(mlir::Operation\*\) \["),
    ("  its findPartner lambda ($_2)", r"BackwardMatmulAnalysis\(mlir::Operation\*\)::\$_2::operator\(\)"),
    ("computePeakLiveTensorBytes", r"mlir::hot::computePeakLiveTensorBytes\("),
    ("applyPatternsGreedily (canonicalize)", r"mlir::applyPatternsGreedily\(mlir::Region&"),
    ("print (mlir::Operation::print)", r"mlir::Operation::print\(llvm::raw_ostream&, mlir::AsmState&\)"),
]


def part_callgrind(hot_opt, blocks, tmp: Path):
    """(d) Instruction counts (valgrind callgrind, inclusive Ir per function): deterministic,
    immune to the machine's load."""
    import re
    import shutil
    import subprocess
    if not shutil.which("valgrind") or not shutil.which("callgrind_annotate"):
        print("## (d) skipped: valgrind / callgrind_annotate not found\n")
        return None
    vals = {}
    for n in blocks:
        out = tmp / f"callgrind.{n}.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        str(hot_opt), str(scaling_graph(n)), PIPELINE, "-o", os.devnull],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100",
                               str(out)], check=True, capture_output=True,
                              text=True).stdout.splitlines()
        for label, pat in CALLGRIND_ROWS:
            rx = re.compile(pat)
            vals[(label, n)] = max((int(line.split()[0].replace(",", ""))
                                    for line in text if rx.search(line)), default=0)
    big = [n for n in blocks if n >= 4]
    rows = []
    for label, _ in CALLGRIND_ROWS:
        ys = [vals[(label, n)] for n in blocks]
        slope = loglog_slope(big, [vals[(label, n)] for n in big])
        last = (vals[(label, blocks[-1])] / vals[(label, blocks[-2])]
                if len(blocks) > 1 and vals[(label, blocks[-2])] else float("nan"))
        rows.append([label, *[f"{y / 1e6:.1f}" for y in ys], f"{slope:.2f}", f"{last:.2f}"])
    print("## (d) Instruction counts of the pipeline (valgrind callgrind)\n")
    print("Inclusive instructions (millions) per function, `hot-opt <graph> "
          "--hot-training-pipeline=remarks=false -o /dev/null`; slope: log-log least squares "
          f"over N >= 4 (1.00 linear, 2.00 quadratic); last: Ir(N={blocks[-1]}) / "
          f"Ir(N={blocks[-2]}).\n")
    print(md_table(["function", *[f"N={n}" for n in blocks], "slope", "last"], rows))
    print()
    return {f"{label}@{n}": v for (label, n), v in vals.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hot-opt", type=Path, default=REPO / "build/bin/hot-opt")
    ap.add_argument("--mlir-opt", default="mlir-opt-22")
    ap.add_argument("--graph", type=Path, default=None,
                    help="the 32-block joint graph of (a) (default "
                         "build/fixtures-large/llama32_d256_joint.mlir if present, else the "
                         "body-identical build/fixtures-scaling/llama32_d256_joint.mlir)")
    ap.add_argument("--blocks", type=int, nargs="+", default=DEFAULT_BLOCKS)
    ap.add_argument("--runs", type=int, default=11, help="measured runs per command (odd)")
    ap.add_argument("--only", choices=["a", "b", "c", "d"], default=None,
                    help="run one part only (d: callgrind, also needs --callgrind)")
    ap.add_argument("--callgrind", action="store_true",
                    help="(d): instruction counts per function under valgrind callgrind for "
                         "every N (about 1.5 min more for N <= 32)")
    ap.add_argument("--no-generate", action="store_true",
                    help="fail instead of generating missing graphs")
    ap.add_argument("--json", type=Path, default=None, help="write all raw figures here")
    a = ap.parse_args(argv)

    import shutil
    mlir_opt = shutil.which(a.mlir_opt)
    if mlir_opt is None:
        raise SystemExit(f"{a.mlir_opt} not found")
    if not a.hot_opt.exists():
        raise SystemExit(f"{a.hot_opt} not found: build first (make check or cmake --build build)")

    need = sorted(set(a.blocks if a.only in (None, "b", "c", "d") else []) |
                  ({32} if a.only in (None, "a") and a.graph is None and not LARGE_32.exists()
                   else set()))
    missing = [n for n in need if not scaling_graph(n).exists()]
    if missing:
        if a.no_generate:
            raise SystemExit(f"missing graphs for blocks {missing}")
        common.generate(["--llama-blocks", *map(str, missing)])
    graph = a.graph or (LARGE_32 if LARGE_32.exists() else scaling_graph(32))

    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        hot_opt = common.snapshot_binary(a.hot_opt, Path(tmp))
        print("# Compile time of hot-training-pipeline\n")
        print("\n".join(common.machine_lines(
            {"hot-opt": (hot_opt, a.hot_opt), "mlir-opt": (Path(mlir_opt), mlir_opt)})))
        args = " ".join(argv if argv is not None else sys.argv[1:])
        print(f"- command: `{' '.join(['.venv/bin/python bench/compile_time.py', args]).strip()}`"
              "\n")
        if a.only in (None, "a"):
            result["a"] = part_a(hot_opt, Path(mlir_opt), graph, a.runs)
        if a.only in (None, "b"):
            result["b"] = part_b(hot_opt, Path(mlir_opt), a.blocks, a.runs)
        if a.only in (None, "c"):
            result["c"] = part_remarks(hot_opt, a.blocks)
        if a.callgrind and a.only in (None, "d"):
            result["d"] = part_callgrind(hot_opt, a.blocks, Path(tmp))
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if a.json:
        a.json.write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
