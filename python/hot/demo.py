"""`make demo`: HOT on a real training graph, end to end on the CPU.

1. The bundled torch-mlir export of a ViT block's training step
   (``test/Fixtures/torch/vit_block_joint.mlir``, ``@train_step(params..., x, target) ->
   (grads...)``) goes through ``hot-opt --hot-training-pipeline``. The remarks it emits are
   counted into a short summary (linear layers found, products rewritten, products left alone
   and why), then ``hot-opt --hot-report=format=table`` prints its per-layer table.
2. The original graph and the HOT graph are compiled with ``hot.runner`` and run for one
   training step on the same inputs (``vit_block.npz``; deterministic random values for
   anything it lacks), the HOT graph with a fresh stochastic-rounding seed. For every parameter
   gradient the demo prints the relative error of HOT against the original graph and of both
   against PyTorch's float64 gradient, and which HOT products it goes through: the HLA + INT8
   weight-gradient product of its own layer, and the INT4 activation-gradient products of the
   layers after it (found by following the def-use chains of the original graph from each
   product to the returned gradients). "HLA only" is the same pipeline without quantization
   (``gx-bits=0 gw-bits=0``), which isolates what HLA costs. As a control, the pipeline with
   quantization off and full-rank HLA (``gx-bits=0 gw-bits=0 hla-rank=16``) must reproduce
   the original graph to within float32 rounding.
3. A shorter second section: one linear layer's HOT backward written with hot ops
   (``examples/linear_backward.mlir``), compiled and compared bit for bit with the numpy
   reference of the ops.

The last line says whether everything ran. The exit status is non-zero only if something
failed to run (or compiled hot ops disagree with their numpy reference), never because of the
size of an approximation error.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
import time
import traceback
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hot import reference as ref
from hot import runner
from hot.runner import compile_module

FIXTURE = runner.REPO_ROOT / "test" / "Fixtures" / "torch" / "vit_block_joint.mlir"
DATA = FIXTURE.with_name(FIXTURE.stem.removesuffix("_joint") + ".npz")
OUT_DIR = runner.REPO_ROOT / "build" / "demo"
EXACT_OPTIONS = "gx-bits=0 gw-bits=0 hla-rank=16"
EXACT_TOLERANCE = 1e-5
HLA_ONLY_OPTIONS = "gx-bits=0 gw-bits=0"

EXAMPLE = Path(__file__).with_name("examples") / "linear_backward.mlir"
B, T, I, O = 2, 197, 64, 96


class StageFailed(Exception):
    """A stage of the demo could not run; the message says why."""


def relative_error(approx, exact) -> float:
    approx = np.asarray(approx, np.float64)
    exact = np.asarray(exact, np.float64)
    norm = np.linalg.norm(exact)
    diff = np.linalg.norm(approx - exact)
    return float(diff / norm) if norm > 0 else (0.0 if diff == 0 else float("inf"))


def run_hot_opt(args: list[str], what: str) -> subprocess.CompletedProcess:
    tool = runner.find_hot_opt()
    if tool is None:
        raise StageFailed("hot-opt not found (build it with `make build`, or set HOT_OPT)")
    proc = subprocess.run([tool, *args], capture_output=True, text=True,
                          timeout=runner.TOOL_TIMEOUT_S)
    if proc.returncode != 0:
        status = (f"killed by signal {-proc.returncode}" if proc.returncode < 0
                  else f"exit status {proc.returncode}")
        lines = proc.stderr.rstrip().splitlines()
        if "Stack dump:" in lines:      # a crash: what was running and the innermost frames
            first = lines.index("Stack dump:")
            lines = lines[first:first + 2] + [l for l in lines if re.match(r"\s*#[3-6] ", l)]
        tail = "\n".join("    " + line[:160] for line in lines[-12:])
        raise StageFailed(f"{what}: hot-opt {status}\n  command: hot-opt {' '.join(args)}\n"
                          f"  last lines of its stderr:\n{tail}")
    return proc


# --------------------------------------------------------------------------------------------
# The original graph: names, def-use chains
# --------------------------------------------------------------------------------------------


def header_names(text: str) -> tuple[list[str], list[str]]:
    """Argument and result names from the fixture's `// @func(args...) -> (results...)` line."""
    m = re.search(r"^// @\w+\((.*)\) -> \((.*)\)$", text, re.M)
    if not m:
        return [], []
    return [s.strip() for s in m.group(1).split(",")], [s.strip() for s in m.group(2).split(",")]


_VALUE = re.compile(r"%[\w$.-]+")
_DEFS = re.compile(r"^\s*((?:%[\w$.-]+(?::\d+)?\s*,\s*)*%[\w$.-]+(?::\d+)?)\s*=")


@dataclass
class TopOp:
    line: int                       # 1-based line where the op starts
    defs: list[str]
    uses: set[str]
    is_return: bool
    text: str


def top_level_ops(text: str, function: str) -> list[TopOp]:
    """The ops directly inside `func.func @function`, with the SSA values each defines and
    uses (values used inside an op's regions count as uses of the op)."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines)
                  if re.match(rf"\s*func\.func\s+(?:public\s+|private\s+)?@{function}\(", l)),
                 None)
    if start is None:
        raise StageFailed(f"no func.func @{function} in {FIXTURE.name}")
    ops: list[TopOp] = []
    depth = _brace_delta(lines[start])
    current: list[str] = []
    first = 0
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if depth == 1 and not current:
            if not line.strip() or line.strip().startswith("//"):
                continue
            first = i + 1
        current.append(line)
        depth += _brace_delta(line)
        if depth == 0:          # the function's closing brace
            break
        if depth == 1:
            op_text = "\n".join(current)
            m = _DEFS.match(op_text)
            defs = [d.split(":")[0].strip() for d in m.group(1).split(",")] if m else []
            uses = {v for v in _VALUE.findall(op_text[m.end():] if m else op_text)}
            ops.append(TopOp(first, defs, uses, op_text.lstrip().startswith(("return",
                                                                            "func.return")),
                             op_text))
            current = []
    return ops


def _brace_delta(line: str) -> int:
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    return line.count("{") - line.count("}")


def returned_values(ops: list[TopOp]) -> list[str]:
    ret = next(op for op in ops if op.is_return)
    body = ret.text.strip().split(None, 1)[1].split(":")[0]
    return [v.strip().split("#")[0] for v in body.split(",")]


def reached_results(ops: list[TopOp], product_line: int) -> set[int]:
    """Indices of the function results that depend on the op starting at `product_line`."""
    tainted: set[str] = set()
    for op in ops:
        if op.line == product_line:
            tainted.update(op.defs)
        elif op.uses & tainted and not op.is_return:
            tainted.update(op.defs)
    return {k for k, v in enumerate(returned_values(ops)) if v in tainted}


# --------------------------------------------------------------------------------------------
# Section 1: the pipeline on the ViT block
# --------------------------------------------------------------------------------------------

_REMARK = re.compile(r"^(?P<file>[^\n]*?):(?P<line>\d+):(?P<col>\d+): remark: (?P<msg>.*)$", re.M)


@dataclass
class Layer:
    name: str                                   # layer0, ...
    products: dict[str, int] = field(default_factory=dict)     # role -> line
    rewritten: dict[str, str] = field(default_factory=dict)    # gx/gw -> how
    unchanged: dict[str, str] = field(default_factory=dict)    # gx/gw -> reason
    weight: str = ""                                           # parameter name


def read_remarks(stderr: str):
    """Sorts the remarks of hot-training-pipeline; a product's line is its line in FIXTURE
    (0 when the remark points elsewhere)."""
    layers: dict[str, Layer] = {}
    left_alone: Counter = Counter()
    other: list[str] = []
    for m in _REMARK.finditer(stderr):
        msg = m.group("msg")
        line = int(m.group("line")) if Path(m.group("file")) == FIXTURE else 0
        if mm := re.match(r"(\w+): (forward|gx|gw) (?:y =|=)", msg):
            layers.setdefault(mm[1], Layer(mm[1])).products[mm[2]] = line
        elif mm := re.match(r"(\w+): (gx|gw) rewritten: (.*)", msg):
            layers.setdefault(mm[1], Layer(mm[1])).rewritten[mm[2]] = mm[3]
        elif mm := re.match(r"(\w+): (gx|gw) left unchanged: (.*)", msg):
            layers.setdefault(mm[1], Layer(mm[1])).unchanged[mm[2]] = mm[3]
        elif mm := re.match(r"not rewritten: (.*)", msg):
            left_alone[mm[1]] += 1
        else:
            other.append(msg)
    return layers, left_alone, other


def print_summary(layers: dict[str, Layer], left_alone: Counter, other: list[str],
                  short: dict[str, str]):
    full = sum(1 for l in layers.values() if {"forward", "gx", "gw"} <= l.products.keys())
    print(f"recognised: {len(layers)} linear layers ({full} with forward, gx and gw products): "
          + ", ".join(f"{l.name} = {short[l.name]}" for l in layers.values()))
    by_how = Counter((role, how) for l in layers.values() for role, how in l.rewritten.items())
    print(f"rewritten:  {sum(by_how.values())} backward products")
    for (role, how), n in sorted(by_how.items(), key=lambda item: item[0][0] != "gx"):
        print(f"  {n} x {role}: {how}")
    unchanged = Counter((role, why) for l in layers.values() for role, why in l.unchanged.items())
    print(f"left alone: {sum(unchanged.values()) + sum(left_alone.values())} products")
    for (role, why), n in sorted(unchanged.items()):
        print(f"  {n} x {role} of a linear layer: {why}")
    for why, n in sorted(left_alone.items()):
        print(f"  {n} x {why}")
    for msg in other:
        print(f"  other remark: {msg}")


def load_inputs(signature, names: list[str]):
    """Arguments from the .npz where present and of the right shape, else deterministic random
    values; float64 references where present."""
    data = np.load(DATA) if DATA.is_file() else {}
    files = set(getattr(data, "files", []))
    rng = np.random.default_rng(0)
    args, made_up = [], []
    for k, t in enumerate(signature.inputs):
        key = f"arg{k}"
        if key in files and data[key].shape == t.shape and data[key].dtype == t.dtype:
            args.append(data[key])
            continue
        made_up.append(names[k] if k < len(names) else key)
        if isinstance(t, runner.TensorType):
            args.append(rng.standard_normal(t.shape).astype(t.dtype) * 0.5 if t.dtype.kind == "f"
                        else np.zeros(t.shape, t.dtype))
        else:
            args.append(0)
    refs = [data[f"ref{k}"] if f"ref{k}" in files else None
            for k in range(len(signature.results))]
    meta = json.loads(str(data["meta"])) if "meta" in files else {}
    return args, refs, meta, made_up


def main_job(seed: int, pool: ThreadPoolExecutor) -> bool:
    """Returns whether every check that is not an error size passed (the exact-mode control)."""
    text = FIXTURE.read_text()
    rel = FIXTURE.relative_to(runner.REPO_ROOT)
    print(f"== {rel}: a ViT block's training step (torch-mlir export) ==")
    description = re.search(r"^// (timm.*)$", text, re.M)
    if description:
        print(description.group(1))

    start = time.perf_counter()
    proc = run_hot_opt([str(FIXTURE), "--hot-training-pipeline"], "hot-training-pipeline")
    took = time.perf_counter() - start
    hot_text = proc.stdout
    futures = {"original": pool.submit(compile_module, text),
               "HOT": pool.submit(compile_module, hot_text)}
    for key, options in (("exact", EXACT_OPTIONS), ("HLA", HLA_ONLY_OPTIONS)):
        variant = run_hot_opt([str(FIXTURE), f"--hot-training-pipeline={options} remarks=false"],
                              f"hot-training-pipeline={options}").stdout
        futures[key] = pool.submit(compile_module, variant)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    hot_path = OUT_DIR / FIXTURE.name.replace(".mlir", ".hot.mlir")
    hot_path.write_text(hot_text)

    arg_names, result_names = header_names(text)
    layers, left_alone, other = read_remarks(proc.stderr)
    ops = top_level_ops(text, "train_step")
    n_results = len(returned_values(ops))
    if not result_names or len(result_names) != n_results:
        result_names = [f"result {k}" for k in range(n_results)]
    # Each layer's weight; which results each rewritten product feeds.
    gw_of: dict[int, Layer] = {}
    after_gx: dict[int, list[Layer]] = defaultdict(list)
    for layer in layers.values():
        if "gx" in layer.products:
            gx_op = next((op for op in ops if op.line == layer.products["gx"]), None)
            args_used = sorted(int(a[4:]) for a in gx_op.uses if re.fullmatch(r"%arg\d+", a)) \
                if gx_op else []
            if len(args_used) == 1 and args_used[0] < len(arg_names):
                layer.weight = arg_names[args_used[0]]
            if "gx" in layer.rewritten:
                for k in reached_results(ops, layer.products["gx"]):
                    after_gx[k].append(layer)
        if "gw" in layer.products:
            reached = reached_results(ops, layer.products["gw"])
            if not layer.weight and len(reached) == 1:
                layer.weight = result_names[next(iter(reached))].removeprefix("grad ")
            if "gw" in layer.rewritten:
                for k in reached:
                    gw_of[k] = layer
    short = short_names(layers)

    print(f"\nhot-opt {rel.name} --hot-training-pipeline  ({took:.1f} s; "
          f"IR written to {hot_path.relative_to(runner.REPO_ROOT)})")
    print_summary(layers, left_alone, other, short)
    report = run_hot_opt([str(hot_path), "--hot-report=format=table", "-o", "/dev/null"],
                         "hot-report").stdout
    print("\nhot-opt --hot-report=format=table:")
    print(report.rstrip())

    # One training step of each graph.
    start = time.perf_counter()
    modules = {key: future.result() for key, future in futures.items()}
    print(f"\ncompiled the original graph and three rewritten ones in "
          f"{time.perf_counter() - start:.1f} s (cached after the first run)")
    name = "train_step"
    signature = modules["original"].signatures[name]
    for key in ("HOT", "exact", "HLA"):
        sig = modules[key].signatures[name]
        if sig.inputs[:len(signature.inputs)] != signature.inputs or \
                [str(t) for t in sig.inputs[len(signature.inputs):]] != ["i64"]:
            raise StageFailed(f"unexpected signature {sig} of the {key} graph "
                              f"(original: {signature})")
    args, refs, meta, made_up = load_inputs(signature, arg_names)
    result_names = [n.removeprefix("grad ") for n in meta.get("results", result_names)]
    if made_up:
        print(f"not in {DATA.name}, deterministic random values instead: {', '.join(made_up)} "
              f"(so no comparison with its float64 gradients)")
        refs = [None] * len(refs)
    as_tuple = lambda r: r if isinstance(r, tuple) else (r,)
    grads = {key: as_tuple(module.call(name, *args) if key == "original"
                           else module.call(name, *args, seed))
             for key, module in modules.items()}
    before, after = grads["original"], grads["HOT"]

    print(f"\none training step on {DATA.name}, HOT seed {seed}")
    print("relative errors ‖a − b‖ / ‖b‖ of each parameter gradient; f64: PyTorch's float64 "
          "gradient;\nHLA only: the pipeline with gx-bits=0 gw-bits=0 (HLA, no quantization) "
          "vs the original")
    print("gw: a weight gradient computed by HLA + INT8; after gx: downstream of the INT4 gx "
          "products of these layers")
    gx_texts = [" ".join(short[l.name] for l in sorted(after_gx.get(k, []), key=lambda l: l.name,
                                                         reverse=True))
                for k in range(len(before))]
    width = max([len("after gx")] + [len(t) for t in gx_texts]) + 2
    header = (f"{'parameter':<18}{'shape':>6}  {'gw':<4}{'after gx':<{width}}"
              f"{'HOT vs orig':>12}{'HLA only':>10}{'orig vs f64':>13}{'HOT vs f64':>12}")
    print(header)
    print("-" * len(header))
    finite = True
    for k, (a, b) in enumerate(zip(before, after)):
        finite &= bool(np.all(np.isfinite(b)))
        pname = result_names[k] if k < len(result_names) else f"result {k}"
        shape = "x".join(map(str, a.shape))
        gw = "yes" if k in gw_of else ""
        r = refs[k] if k < len(refs) else None
        vs_ref = (lambda x: f"{relative_error(x, r):.2e}") if r is not None else (lambda x: "n/a")
        hla = relative_error(grads["HLA"][k], a)
        print(f"{pname:<18}{shape:>6}  {gw:<4}{gx_texts[k]:<{width}}"
              f"{relative_error(b, a):>12.2e}{hla:>10.2f}{vs_ref(a):>13}{vs_ref(b):>12}")
    if not finite:
        print("NOTE: the HOT step produced non-finite gradients")
    if "x" in arg_names and np.ndim(args[arg_names.index("x")]) == 3:
        x = args[arg_names.index("x")].astype(np.float64)
        x = x - x.mean(axis=1, keepdims=True)
        lag1 = float((x[:, 1:] * x[:, :-1]).sum() / (x * x).sum())
        print(f"The input tokens are random (lag-1 autocorrelation of x along the tokens "
              f"{lag1:+.2f}), the worst case for HLA,\nwhich assumes activations that vary "
              f"smoothly along the tokens: 'HLA only' is most of the weight-gradient error.")

    worst = max(relative_error(c, a) for a, c in zip(before, grads["exact"]))
    ok = worst < EXACT_TOLERANCE
    print(f"\ncontrol: --hot-training-pipeline=\"{EXACT_OPTIONS}\" (the same rewrite without "
          f"quantization, full-rank HLA)\nvs the original: largest relative error {worst:.1e} "
          + ("(float32 rounding)" if ok else f"UNEXPECTED: above {EXACT_TOLERANCE:g}"))
    return ok


def short_names(layers: dict[str, Layer]) -> dict[str, str]:
    """layer0 -> qkv (from attn.qkv.weight); the full module path where that is ambiguous."""
    full = {l.name: l.weight.removesuffix(".weight") or l.name for l in layers.values()}
    last = {n: p.rsplit(".", 1)[-1] for n, p in full.items()}
    counts = Counter(last.values())
    return {n: last[n] if counts[last[n]] == 1 else full[n] for n in full}


# --------------------------------------------------------------------------------------------
# Section 2: the hot ops of one linear layer, bit for bit
# --------------------------------------------------------------------------------------------


def make_inputs(rng: np.random.Generator):
    """Activations that are smooth along the tokens (as in vision transformers, where HLA
    pays off), output gradients with a few outlier tokens (what per-row scales are for)."""
    walk = np.cumsum(rng.standard_normal((B, T, I)), axis=1) / np.sqrt(T)
    x = (walk + 0.1 * rng.standard_normal((B, T, I))).astype(np.float32)
    gy = rng.standard_normal((B, T, O)).astype(np.float32)
    gy[:, rng.choice(T, 4, replace=False)] *= 20.0
    w = (rng.standard_normal((O, I)) / np.sqrt(I)).astype(np.float32)
    return gy, x, w


def reference_backward(gy, x, w, seed):
    """The same computation with the numpy reference, op by op."""
    gy2 = gy.reshape(B * T, O)
    qg, sg = ref.quantize(ref.hadamard(gy2, 1, 16), 4, "per_row", "maxabs", "stochastic", seed)
    qw, sw = ref.quantize(ref.hadamard(w, 0, 16), 4, "per_tensor", "sawb", "nearest")
    gx = ref.rescale(ref.int_matmul(qg, qw), sg, sw)
    gyl = ref.lowrank(gy, 1, 16, 8, allow_tail=True).reshape(-1, O)
    xl = ref.lowrank(x, 1, 16, 8, allow_tail=True).reshape(-1, I)
    qgy, sgy = ref.quantize(gyl, 8, "per_col", "maxabs", "stochastic", seed + 1)
    qx, sx = ref.quantize(xl, 8, "per_tensor", "maxabs", "nearest")
    gw = ref.rescale(ref.int_matmul(qgy, qx, transpose_a=True), sgy, sx)
    return gx, gw, qg, sg, qgy, sgy


def hot_ops_section(seed: int, module_future) -> bool:
    """Returns whether the compiled hot ops agree bit for bit with the numpy reference."""
    rng = np.random.default_rng(seed)
    gy, x, w = make_inputs(rng)
    print(f"\n== {EXAMPLE.relative_to(runner.REPO_ROOT)}: one linear layer's HOT backward "
          f"in hot ops, vs the numpy reference ==")
    module = module_future.result()
    compiled = module.linear_backward(gy, x, w, seed)
    expected = reference_backward(gy, x, w, seed)
    gx_exact = gy.reshape(B * T, O).astype(np.float64) @ w.astype(np.float64)
    gw_exact = gy.reshape(B * T, O).astype(np.float64).T @ x.reshape(B * T, I).astype(np.float64)
    names = ["gx = gy·W", "gw = gyᵀ·x", "q(Ĥ gy), 4-bit", "its per-row scales",
             "q(HLA gy), 8-bit", "its per-channel scales"]
    print(f"{'result':<24}{'shape':>8}  {'compiled == numpy reference':<30}"
          f"{'rel. error vs float64':>22}")
    all_exact = True
    for nm, got, want in zip(names, compiled, expected):
        same = np.array_equal(got, want, equal_nan=True)
        all_exact &= same
        verdict = "bit-exact" if same else f"DIFFERS ({np.count_nonzero(got != want)} values)"
        exact = {"gx = gy·W": gx_exact, "gw = gyᵀ·x": gw_exact}.get(nm)
        error = f"{relative_error(got, exact):.4f}" if exact is not None else ""
        print(f"{nm:<24}{'x'.join(map(str, got.shape)):>8}  {verdict:<30}{error:>22}".rstrip())
    p_gy = ref.lowrank(gy.astype(np.float64), 1, 16, 8, allow_tail=True).reshape(-1, O)
    p_x = ref.lowrank(x.astype(np.float64), 1, 16, 8, allow_tail=True).reshape(-1, I)
    print(f"(gw with HLA alone, float64, no quantization: rel. error "
          f"{relative_error(p_gy.T @ p_x, gw_exact):.4f})")
    return all_exact


# --------------------------------------------------------------------------------------------


def main() -> int:
    start = time.perf_counter()
    seed = secrets.randbits(62)
    failures: list[str] = []
    notes: list[str] = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        example_future = pool.submit(compile_module, EXAMPLE.read_text())
        try:
            if not main_job(seed, pool):
                notes.append("the exact-mode control does not reproduce the original graph")
        except Exception as error:  # noqa: BLE001 -- report and go on with section 2
            sys.stdout.flush()
            message = str(error) if isinstance(error, StageFailed) else traceback.format_exc()
            print(f"\nFAILED: {message.rstrip()}", flush=True)
            failures.append(f"the ViT block ({str(error).splitlines()[0]})")
        try:
            if not hot_ops_section(seed, example_future):
                failures.append("compiled hot ops differ from the numpy reference")
        except Exception:  # noqa: BLE001
            print(f"\nFAILED:\n{traceback.format_exc().rstrip()}", flush=True)
            failures.append("the hot-ops example")
    took = time.perf_counter() - start
    if failures:
        print(f"\ndemo: FAILED ({took:.0f} s): " + "; ".join(failures + notes))
        return 1
    print(f"\ndemo: everything ran ({took:.0f} s)"
          + (f"; but {'; '.join(notes)}" if notes else
             "; compiled hot ops bit-exact with their numpy reference"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
