"""Train a small image classifier with compiled training steps: FP32 vs HOT vs HOT + LQS.

    PYTHONPATH=python .venv/bin/python -m hot.train --dataset fashion-mnist --model mlp \\
        --mode fp32 hot [--epochs 4] [--train-subset 20000] [--seed 0 1] [--lr 0.05] \\
        [--optimizer sgd|adamw] [--schedule constant|cosine] [--checkpoint DIR [--resume]] \\
        [--plot FILE]

The training step is the committed torch-mlir export ``test/Fixtures/train/<model>_train_step.mlir``
(``@train_step(params..., x, target) -> (loss, logits, grads...)``, batch 128, written by
``hot.train_models``), compiled for the CPU with :func:`hot.runner.compile_module`:

* ``fp32``: the step as exported;
* ``hot``: the step through ``hot-opt --hot-training-pipeline`` (HOT's gx/gw rewrites; the step
  gains an ``i64 {hot.seed}`` argument, given a fresh stochastic-rounding seed every step);
* ``hot-lqs``: ``hot.calibrate`` first runs the instrumented step on one calibration batch (the
  first training batch, initial parameters), then the pipeline applies the decisions
  (``lqs-decisions=FILE``; the file is written next to the checkpoints or under build/train);
* the ablations ``hot-gw-int4`` (gw on a plain 4-bit grid, no HLA), ``hot-gx-no-hadamard``,
  ``hot-no-hla`` and ``hot-gx-per-row``: ``hot`` with the options of ``ABLATIONS``.

Python drives the loop: seeded initialisation (PyTorch's default rules, in numpy) and seeded
data order, identical across modes for a given seed; parameter updates in numpy (SGD with
momentum, PyTorch's form, or AdamW); a NaN/Inf check of the loss and every gradient at every
step (the run aborts with the step and the tensor); test accuracy after every epoch with the
forward-only export ``<model>_forward.mlir`` (batch 1000; the same for every mode, HOT changes
only backward products); checkpoints ``DIR/<model>-<mode>-seed<S>.npz`` (parameters,
optimizer state, step, history) after every epoch (and every ``--checkpoint-every`` steps) that
``--resume`` continues from.  At the end: a table (mode, seed, test accuracy, final training
loss, time per step) and, if matplotlib is installed, a PNG of the loss and accuracy curves.

Fine-tuning (``vit_lora``, ``vit_probe``): the step returns the gradients of the trained
parameters only (its header line names them); ``--init CKPT`` loads the frozen ones from a
checkpoint of another run (the ``vit``'s, matched by name; LoRA's ``base_layer`` by its plain
name), the trained ones are drawn fresh (LoRA's B at 0, so the model starts as the checkpoint's
with a new head); ``--classes`` keeps the images of some labels (pretrain on 0-4, fine-tune on
5-9).

"time/step" is the compiled step call alone (the runner's argument copies included, the numpy
update and the data preparation not); the batch size is the export's (128), ``--batch`` only
checks it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from hot import data, runner

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "test" / "Fixtures" / "train"
# Ablations of the paper (hot-method.md section 1's table), each HOT with one choice undone;
# compared against ``hot`` (LQS off) and ``hot-lqs`` (LQS on).
ABLATIONS = {
    # the gw path quantized to a plain 4-bit grid: no HLA, no transform
    "hot-gw-int4": "gw-bits=4 hla-block=1 hla-rank=1",
    # the gx path quantized to 4 bits without the Hadamard transform
    "hot-gx-no-hadamard": "gx-block=1",
    # the gw path without HLA (INT8 on the full token dim): how much HLA costs
    "hot-no-hla": "hla-block=1 hla-rank=1",
    # the gx path with per-token scales everywhere (what LQS may choose per layer)
    "hot-gx-per-row": "gx-granularity=per_row",
    # frozen layers' gx (a weight without a gradient, as LoRA's base weights) kept in FP32
    "hot-no-frozen-gx": "frozen-gx=false",
}
MODES = ("fp32", "hot", "hot-lqs", *ABLATIONS)
# Per-model pipeline options, before the mode's and the user's (the last occurrence wins).
# The ViT's 16 tokens are a 4x4 grid of patches, flattened row by row, so H16 = H4 (x) H4 acts
# on them as a 2-D transform: the paper's 2-D low-pass set (triangle: 10 of 16 components)
# fits them, where the 1-D prefix would keep only the two lowest vertical frequencies.
MODEL_OPTIONS = {"mlp": "", "vit": "hla-selection=triangle", "vit_lora": "hla-selection=triangle",
                 "vit_probe": "hla-selection=triangle"}
MODELS = tuple(MODEL_OPTIONS)
DEFAULT_LR = {"sgd": 0.05, "adamw": 1e-3}


class TrainingDiverged(RuntimeError):
    """A non-finite loss or gradient."""


@dataclass
class Config:
    model: str = "mlp"
    mode: str = "fp32"
    dataset: str = "fashion-mnist"
    epochs: int = 2
    train_subset: Optional[int] = None
    test_subset: Optional[int] = None
    seed: int = 0
    optimizer: str = "sgd"
    lr: Optional[float] = None
    schedule: str = "constant"         # or "cosine": lr · (1 + cos(π·t/T)) / 2 over the T steps
    momentum: float = 0.9
    weight_decay: float = 0.0
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    normalize: bool = True
    classes: Optional[tuple] = None     # train and test on these labels only (default: all)
    init: Optional[str] = None          # checkpoint (.npz) the frozen parameters come from
    max_steps: Optional[int] = None     # stop after this many steps in total (smoke tests)
    eval: bool = True
    pipeline_options: str = ""          # extra options of hot-training-pipeline
    lqs_threshold: float = 0.5
    checkpoint: Optional[str] = None
    checkpoint_every: int = 0
    resume: bool = False
    log_every: int = 20
    quiet: bool = False

    def __post_init__(self):
        if self.lr is None:
            self.lr = DEFAULT_LR[self.optimizer]

    def key(self) -> dict:
        """What must match to resume a checkpoint."""
        d = asdict(self)
        for k in ("epochs", "max_steps", "eval", "checkpoint", "checkpoint_every", "resume",
                  "log_every", "quiet", "test_subset"):
            if not (k == "epochs" and self.schedule != "constant"):   # epochs set the schedule
                d.pop(k)
        d["betas"] = list(d["betas"])
        if d["classes"] is not None:
            d["classes"] = list(d["classes"])
        return d


@dataclass
class Result:
    config: Config
    losses: list = field(default_factory=list)        # per step
    train_correct: list = field(default_factory=list)  # per step (of the batch)
    test_acc: list = field(default_factory=list)      # (step, accuracy) per evaluation
    step_times: list = field(default_factory=list)    # seconds per compiled step call
    compile_s: float = 0.0
    steps: int = 0
    batch: int = 0
    params: list = field(default_factory=list)

    @property
    def final_test_acc(self) -> float:
        return self.test_acc[-1][1] if self.test_acc else float("nan")

    def final_loss(self, window: Optional[int] = None) -> float:
        """Mean training loss over the last ``window`` steps (default: the last epoch's worth,
        at most 50)."""
        if not self.losses:
            return float("nan")
        w = window or min(50, len(self.losses))
        return float(np.mean(self.losses[-w:]))


# ---------------------------------------------------------------------------------------------
# Graphs
# ---------------------------------------------------------------------------------------------


def fixture_text(model: str, kind: str) -> str:
    path = FIXTURES / f"{model}_{kind}.mlir"
    if not path.is_file():
        raise FileNotFoundError(f"{path} missing: regenerate with `PYTHONPATH=python "
                                f".venv-frontend/bin/python -m hot.train_models`")
    return path.read_text()


def param_names(text: str, func: str = "train_step") -> list[str]:
    m = re.search(rf"^// @{func}\((.*?)\) ->", text, re.M)
    if m is None:
        raise ValueError(f"no `// @{func}(...)` header line")
    names = [n.strip() for n in m.group(1).split(",")]
    return [n for n in names if n not in ("x", "target")]


def trained_names(text: str) -> list[str]:
    """The parameters ``@train_step`` returns a gradient of (``grad <name>`` in its header line),
    in order; the others are frozen."""
    m = re.search(r"^// @train_step\(.*?\) -> \((.*)\)$", text, re.M)
    if m is None:
        raise ValueError("no `// @train_step(...) -> (...)` header line")
    return [n.strip()[len("grad "):] for n in m.group(1).split(",")
            if n.strip().startswith("grad ")]


def hot_opt_path() -> str:
    path = runner.find_hot_opt()
    if path is None:
        raise FileNotFoundError("hot-opt not found: build it (make build) or set HOT_OPT")
    return path


def rewrite(text: str, options: str) -> str:
    """The step through ``hot-opt --hot-training-pipeline="<options> remarks=false"``."""
    opts = f"{options} remarks=false".strip()
    r = subprocess.run([hot_opt_path(), f"--hot-training-pipeline={opts}"], input=text,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise runner.CompileError("hot-training-pipeline", [hot_opt_path()], r.returncode,
                                  r.stderr)
    return r.stdout


# ---------------------------------------------------------------------------------------------
# Parameters and optimizers
# ---------------------------------------------------------------------------------------------


def init_params(names: list[str], shapes: list[tuple], seed: int) -> list[np.ndarray]:
    """PyTorch's default initialisation, drawn in numpy from ``seed``: nn.Linear weight and bias
    U(±1/sqrt(fan_in)) (LoRA's A too, as PEFT's kaiming_uniform(a=√5)); LoRA's B 0 (PEFT's);
    LayerNorm weight 1, bias 0; other parameters (position embeddings) N(0, 0.02²)."""
    rng = np.random.default_rng([seed, 0x1A17])
    fan_in = {n[: -len(".weight")]: s[1] for n, s in zip(names, shapes)
              if n.endswith(".weight") and len(s) == 2}
    out = []
    for n, s in zip(names, shapes):
        prefix = n.rsplit(".", 1)[0]
        if "norm" in n:
            v = np.ones(s) if n.endswith(".weight") else np.zeros(s)
        elif ".lora_B." in n:
            v = np.zeros(s)
        elif prefix in fan_in and n.endswith((".weight", ".bias")):
            bound = 1.0 / math.sqrt(fan_in[prefix])
            v = rng.uniform(-bound, bound, size=s)
        else:
            v = 0.02 * rng.standard_normal(s)
        out.append(np.ascontiguousarray(v, dtype=np.float32))
    return out


class SGD:
    """PyTorch's SGD: b = μ·b + (g + wd·p); p -= lr·b."""

    def __init__(self, params, lr, momentum=0.9, weight_decay=0.0):
        self.lr, self.momentum, self.wd = lr, momentum, weight_decay
        self.state = {"buf": [np.zeros_like(p) for p in params]}

    def step(self, params, grads, t, lr):
        for p, g, b in zip(params, grads, self.state["buf"]):
            if self.wd:
                g = g + self.wd * p
            b *= self.momentum
            b += g
            p -= np.float32(lr) * b


class AdamW:
    """PyTorch's AdamW (decoupled weight decay, bias-corrected moments)."""

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        self.lr, self.betas, self.eps, self.wd = lr, betas, eps, weight_decay
        self.state = {"m": [np.zeros_like(p) for p in params],
                      "v": [np.zeros_like(p) for p in params]}

    def step(self, params, grads, t, lr):
        b1, b2 = self.betas
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t
        for p, g, m, v in zip(params, grads, self.state["m"], self.state["v"]):
            if self.wd:
                p *= np.float32(1 - lr * self.wd)
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            p -= (np.float32(lr / c1) * m /
                  (np.sqrt(v / np.float32(c2)) + np.float32(self.eps))).astype(np.float32)


def learning_rate(cfg: Config, step: int, total: int) -> float:
    """The learning rate of (0-based) ``step`` of ``total``."""
    if cfg.schedule == "constant":
        return cfg.lr
    if cfg.schedule == "cosine":
        return cfg.lr * 0.5 * (1.0 + math.cos(math.pi * step / total))
    raise ValueError(f"unknown schedule {cfg.schedule!r}")


def make_optimizer(cfg: Config, params):
    if cfg.optimizer == "sgd":
        return SGD(params, cfg.lr, cfg.momentum, cfg.weight_decay)
    if cfg.optimizer == "adamw":
        return AdamW(params, cfg.lr, tuple(cfg.betas), cfg.eps, cfg.weight_decay)
    raise ValueError(f"unknown optimizer {cfg.optimizer!r}")


def step_seed(seed: int, step: int) -> int:
    """The stochastic-rounding seed of global step ``step`` (an i64, fresh every step)."""
    return int(np.random.SeedSequence([seed, step, 0x407]).generate_state(1, np.uint64)[0]
               & np.uint64(0x7FFFFFFFFFFFFFFF))


# ---------------------------------------------------------------------------------------------
# Checkpoints
# ---------------------------------------------------------------------------------------------


def checkpoint_path(cfg: Config) -> Path:
    return Path(cfg.checkpoint) / f"{cfg.model}-{cfg.mode}-seed{cfg.seed}.npz"


def save_checkpoint(cfg: Config, params, opt, res: Result) -> Path:
    path = checkpoint_path(cfg)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"param{i}": p for i, p in enumerate(params)}
    for k, lst in opt.state.items():
        arrays.update({f"opt_{k}{i}": a for i, a in enumerate(lst)})
    arrays.update(step=np.int64(res.steps), losses=np.array(res.losses, np.float64),
                  train_correct=np.array(res.train_correct, np.int64),
                  test_acc=np.array(res.test_acc, np.float64).reshape(-1, 2),
                  step_times=np.array(res.step_times, np.float64),
                  config=np.array(json.dumps(cfg.key(), sort_keys=True)))
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)
    return path


def load_checkpoint(cfg: Config, params, opt, res: Result) -> bool:
    path = checkpoint_path(cfg)
    if not path.is_file():
        return False
    d = np.load(path)
    saved = json.loads(str(d["config"]))
    if saved != cfg.key():
        diff = {k: (saved.get(k), v) for k, v in cfg.key().items() if saved.get(k) != v}
        raise ValueError(f"{path}: written by a different configuration (saved, now): {diff}")
    for i, p in enumerate(params):
        p[...] = d[f"param{i}"]
    for k, lst in opt.state.items():
        for i, a in enumerate(lst):
            a[...] = d[f"opt_{k}{i}"]
    res.steps = int(d["step"])
    res.losses = d["losses"].tolist()
    res.train_correct = d["train_correct"].tolist()
    res.test_acc = [tuple(r) for r in d["test_acc"].tolist()]
    res.step_times = d["step_times"].tolist()
    return True


def base_name(name: str) -> str:
    """A LoRA-wrapped layer's base parameter under the name it has in the plain model
    (``blocks.0.fc1.base_layer.weight`` -> ``blocks.0.fc1.weight``)."""
    return name.replace(".base_layer.", ".")


def load_frozen(path: Path, names: list[str], params: list[np.ndarray],
                frozen: list[str]) -> None:
    """Sets the ``frozen`` parameters from the checkpoint at ``path`` (written by a run of any
    model), matched by name (LoRA's base layers by their plain model's names) and shape."""
    d = np.load(path)
    saved_model = json.loads(str(d["config"]))["model"]
    saved = {n: d[f"param{i}"]
             for i, n in enumerate(param_names(fixture_text(saved_model, "train_step")))}
    for n in frozen:
        v = saved.get(base_name(n))
        p = params[names.index(n)]
        if v is None:
            raise ValueError(f"--init {path}: the {saved_model} checkpoint has no parameter "
                             f"{base_name(n)!r} (frozen {n!r})")
        if v.shape != p.shape:
            raise ValueError(f"--init {path}: {base_name(n)!r} is {v.shape} there, {n!r} is "
                             f"{p.shape}")
        p[...] = v


# ---------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------


class Progress:
    """A plain-text progress bar (carriage returns on a terminal, a line per update otherwise)."""

    def __init__(self, total: int, prefix: str, quiet: bool):
        self.total, self.prefix, self.quiet = total, prefix, quiet
        self.tty = sys.stdout.isatty()

    def update(self, done: int, text: str, final: bool = False):
        if self.quiet:
            return
        width = 24
        filled = int(width * done / max(self.total, 1))
        line = f"{self.prefix} [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} {text}"
        if self.tty:
            print("\r" + line, end="\n" if final else "", flush=True)
        else:
            print(line, flush=True)


def evaluate(forward, params, test: data.Dataset, batch: int) -> float:
    correct = 0
    for s in range(0, len(test), batch):
        x = test.images[s:s + batch]
        n = len(x)
        if n < batch:
            x = np.concatenate([x, np.zeros((batch - n, x.shape[1]), np.float32)])
        logits = forward(*params, x)
        correct += int(np.sum(np.argmax(logits[:n], axis=1) == test.labels[s:s + n]))
    return correct / len(test)


def log(cfg: Config, msg: str):
    if not cfg.quiet:
        print(msg, flush=True)


def pipeline_options(cfg: Config) -> str:
    """The hot-training-pipeline options of a HOT mode: the model's, the ablation's, the user's."""
    return " ".join(o for o in (MODEL_OPTIONS.get(cfg.model, ""), ABLATIONS.get(cfg.mode, ""),
                                cfg.pipeline_options) if o)


def compile_step(cfg: Config, text: str, names, calib_inputs, workdir: Path):
    """(compiled train_step, whether it takes a seed)."""
    if cfg.mode == "fp32":
        return runner.compile_module(text).train_step, False
    options = pipeline_options(cfg)
    if cfg.mode == "hot-lqs":
        from hot import calibrate
        decisions = calibrate.calibrate(text, calib_inputs, threshold=cfg.lqs_threshold,
                                        seed=step_seed(cfg.seed, 1 << 40),
                                        pipeline_options=options)
        workdir.mkdir(parents=True, exist_ok=True)
        dfile = workdir / f"lqs-{cfg.model}-seed{cfg.seed}.json"
        dfile.write_text(json.dumps(decisions, indent=2) + "\n")
        chosen = ", ".join(f"{l}: " + "/".join(f"{p} {g}" for p, g in sorted(v.items()))
                           for l, v in decisions["layers"].items())
        log(cfg, f"  lqs decisions ({dfile}): {chosen}")
        options = f"{options} lqs-decisions={dfile}".strip()
    elif cfg.mode != "hot" and cfg.mode not in ABLATIONS:
        raise ValueError(f"unknown mode {cfg.mode!r} (one of {', '.join(MODES)})")
    return runner.compile_module(rewrite(text, options)).train_step, True


def train(cfg: Config, train_set: Optional[data.Dataset] = None,
          test_set: Optional[data.Dataset] = None) -> Result:
    text = fixture_text(cfg.model, "train_step")
    names = param_names(text)
    trained = trained_names(text)
    frozen = [n for n in names if n not in trained]
    if frozen and cfg.init is None:
        log(cfg, f"  warning: {cfg.model} has {len(frozen)} frozen parameters and no --init: "
                 f"they keep their random initialisation")
    if train_set is None:
        train_set = data.load(cfg.dataset, "train", subset=cfg.train_subset, seed=cfg.seed,
                              normalize=cfg.normalize, classes=cfg.classes)
    if test_set is None and cfg.eval:
        test_set = data.load(cfg.dataset, "test", subset=cfg.test_subset, seed=cfg.seed,
                             normalize=cfg.normalize, classes=cfg.classes)

    t0 = time.perf_counter()
    sig = runner.compile_module(text).train_step.signature
    shapes = [t.shape for t in sig.inputs[: len(names)]]
    batch = sig.inputs[len(names)].shape[0]
    classes = sig.inputs[len(names) + 1].shape[1]
    if len(train_set) < batch:
        raise ValueError(f"{len(train_set)} training images, fewer than one batch ({batch})")
    steps_per_epoch = len(train_set) // batch   # the last partial batch is dropped

    params = init_params(names, shapes, cfg.seed)
    if cfg.init is not None:
        load_frozen(Path(cfg.init), names, params, frozen)
    # The optimizer updates the trained parameters, the step's gradients in order.
    trained_params = [params[names.index(n)] for n in trained]
    opt = make_optimizer(cfg, trained_params)
    res = Result(cfg, batch=batch)

    def batch_at(epoch: int, i: int):
        order = data.epoch_order(len(train_set), cfg.seed, epoch)
        idx = order[i * batch:(i + 1) * batch]
        return (np.ascontiguousarray(train_set.images[idx]),
                data.one_hot(train_set.labels[idx], classes), train_set.labels[idx])

    workdir = Path(cfg.checkpoint) if cfg.checkpoint else REPO / "build" / "train"
    x0, t0_, _ = batch_at(0, 0)
    step_fn, seeded = compile_step(cfg, text, names, [*params, x0, t0_], workdir)
    forward = runner.compile_module(fixture_text(cfg.model, "forward")).forward if cfg.eval \
        else None
    eval_batch = forward.signature.inputs[-1].shape[0] if forward else 0
    res.compile_s = time.perf_counter() - t0

    if cfg.resume and cfg.checkpoint and load_checkpoint(cfg, params, opt, res):
        log(cfg, f"  resumed from {checkpoint_path(cfg)} at step {res.steps}")

    total = cfg.epochs * steps_per_epoch
    schedule_steps = total   # the schedule spans the epochs asked for, not --max-steps
    if cfg.max_steps is not None:
        total = min(total, cfg.max_steps)
    prefix = f"{cfg.model} {cfg.mode} seed {cfg.seed}"
    while res.steps < total:
        epoch, i = divmod(res.steps, steps_per_epoch)
        bar = Progress(min(steps_per_epoch, total - epoch * steps_per_epoch),
                       f"{prefix} epoch {epoch + 1}/{cfg.epochs}", cfg.quiet)
        while i < steps_per_epoch and res.steps < total:
            x, target, labels = batch_at(epoch, i)
            args = [*params, x, target] + ([step_seed(cfg.seed, res.steps)] if seeded else [])
            ts = time.perf_counter()
            out = step_fn(*args)
            res.step_times.append(time.perf_counter() - ts)
            loss, logits, grads = float(out[0]), out[1], list(out[2:])
            if not math.isfinite(loss):
                raise TrainingDiverged(f"{prefix}: loss is {loss} at step {res.steps} "
                                       f"(epoch {epoch + 1}, batch {i})")
            for n, g in zip(trained, grads):
                if not np.all(np.isfinite(g)):
                    raise TrainingDiverged(
                        f"{prefix}: gradient of {n} has {int(np.sum(~np.isfinite(g)))} "
                        f"non-finite entries at step {res.steps} (epoch {epoch + 1}, batch {i}); "
                        f"loss {loss:.4f}")
            res.losses.append(loss)
            res.train_correct.append(int(np.sum(np.argmax(logits, axis=1) == labels)))
            opt.step(trained_params, grads, res.steps + 1,
                     learning_rate(cfg, res.steps, schedule_steps))
            res.steps += 1
            i += 1
            if i % cfg.log_every == 0 or i == steps_per_epoch or res.steps == total:
                w = min(cfg.log_every, len(res.losses))
                acc = 100.0 * sum(res.train_correct[-w:]) / (w * batch)
                bar.update(i, f"loss {np.mean(res.losses[-w:]):.4f} train acc {acc:5.1f}% "
                           f"{1e3 * np.mean(res.step_times[-w:]):.0f} ms/step",
                           final=(i == steps_per_epoch or res.steps == total))
            if cfg.checkpoint and cfg.checkpoint_every and res.steps % cfg.checkpoint_every == 0:
                save_checkpoint(cfg, params, opt, res)
        if i == steps_per_epoch or res.steps == total:
            if forward is not None:
                acc = evaluate(forward, params, test_set, eval_batch)
                res.test_acc.append((res.steps, acc))
                log(cfg, f"{prefix}: epoch {epoch + 1} step {res.steps}: test accuracy "
                         f"{100 * acc:.2f}% ({len(test_set)} images)")
            if cfg.checkpoint:
                save_checkpoint(cfg, params, opt, res)
    res.params = params
    return res


# ---------------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------------


def table(results: list[Result]) -> str:
    head = (f"{'mode':18} {'seed':>4} {'steps':>6} {'test acc':>9} {'final loss':>10} "
            f"{'ms/step':>8} {'compile s':>9}")
    lines = [head, "-" * len(head)]
    for r in results:
        ms = 1e3 * float(np.median(r.step_times)) if r.step_times else float("nan")
        lines.append(f"{r.config.mode:18} {r.config.seed:>4} {r.steps:>6} "
                     f"{100 * r.final_test_acc:>8.2f}% {r.final_loss():>10.4f} {ms:>8.1f} "
                     f"{r.compile_s:>9.1f}")
    modes = sorted({r.config.mode for r in results}, key=MODES.index)
    if len({r.config.seed for r in results}) > 1:
        lines.append("")
        for m in modes:
            accs = [100 * r.final_test_acc for r in results if r.config.mode == m]
            lines.append(f"{m:18} mean test acc {np.mean(accs):.2f}% ± {np.std(accs):.2f} "
                         f"over {len(accs)} seeds")
    return "\n".join(lines)


def results_from_json(path: Path) -> list[Result]:
    """The results that ``--json`` wrote (histories only; no parameters)."""
    out = []
    for d in json.loads(Path(path).read_text()):
        known = {k: v for k, v in d["config"].items() if k in Config.__dataclass_fields__}
        if known.get("classes") is not None:
            known["classes"] = tuple(known["classes"])
        cfg = Config(**{**known, "betas": tuple(known.get("betas", (0.9, 0.999)))})
        out.append(Result(cfg, losses=d["losses"], train_correct=d["train_correct"],
                          test_acc=[tuple(t) for t in d["test_acc"]], steps=d["steps"],
                          compile_s=d["compile_s"], step_times=[d["median_step_s"]]))
    return out


def plot(results: list[Result], path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    colors = dict(zip(MODES, plt.get_cmap("tab10").colors))
    modes = sorted({r.config.mode for r in results}, key=MODES.index)
    for mode in modes:
        runs = [r for r in results if r.config.mode == mode]
        n = len(runs)
        label = f"{mode} ({n} seed{'s' if n > 1 else ''})"
        # Loss: moving average of each run, then mean over the seeds (band: min to max).
        steps = min(len(r.losses) for r in runs)
        w = max(1, min(20, steps // 10))
        smooth = np.array([np.convolve(r.losses[:steps], np.ones(w) / w, mode="valid")
                           for r in runs])
        x = np.arange(smooth.shape[1]) + w
        ax1.plot(x, smooth.mean(0), color=colors[mode], label=label)
        if n > 1:
            ax1.fill_between(x, smooth.min(0), smooth.max(0), color=colors[mode], alpha=0.15)
        # Test accuracy at each evaluation: mean over the seeds, band min to max.
        evals = min(len(r.test_acc) for r in runs)
        if evals:
            s_ = [runs[0].test_acc[i][0] for i in range(evals)]
            acc = 100 * np.array([[r.test_acc[i][1] for i in range(evals)] for r in runs])
            ax2.plot(s_, acc.mean(0), marker="o", color=colors[mode], label=label)
            if n > 1:
                ax2.fill_between(s_, acc.min(0), acc.max(0), color=colors[mode], alpha=0.15)
    ax1.set(xlabel="step", ylabel="training loss",
            title="training loss (moving average; mean, band: min-max over seeds)")
    ax2.set(xlabel="step", ylabel="test accuracy (%)",
            title="test accuracy (mean, band: min-max over seeds)")
    ax1.title.set_fontsize("medium")
    ax2.title.set_fontsize("medium")
    ax1.legend(fontsize="small")
    ax2.legend(fontsize="small")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    return True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m hot.train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", default="fashion-mnist", choices=["fashion-mnist"])
    p.add_argument("--model", default="mlp", choices=MODELS)
    p.add_argument("--mode", nargs="+", default=["fp32", "hot"], choices=MODES)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--train-subset", type=int, default=None, help="images (default: all 60000)")
    p.add_argument("--test-subset", type=int, default=None, help="images (default: all 10000)")
    p.add_argument("--batch", type=int, default=None,
                   help="must be the export's batch size (128); re-export to change it")
    p.add_argument("--seed", type=int, nargs="+", default=[0])
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adamw"])
    p.add_argument("--lr", type=float, default=None, help="default: sgd 0.05, adamw 1e-3")
    p.add_argument("--schedule", default="constant", choices=["constant", "cosine"],
                   help="learning-rate schedule over the epochs (cosine: decays to 0)")
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=None,
                   help="default: sgd 0, adamw 0.01")
    p.add_argument("--classes", type=int, nargs="+", default=None, metavar="LABEL",
                   help="train and test on the images of these labels only (default: all)")
    p.add_argument("--init", default=None, metavar="CHECKPOINT",
                   help="the frozen parameters (of vit_lora, vit_probe) from this checkpoint "
                        "(.npz of a --checkpoint run, e.g. of the vit); the trained ones are "
                        "initialised fresh")
    p.add_argument("--no-normalize", action="store_true",
                   help="images in [0, 1] instead of standardized")
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--pipeline-options", default="",
                   help="extra hot-training-pipeline options, e.g. 'gx-bits=4'")
    p.add_argument("--checkpoint", default=None, metavar="DIR")
    p.add_argument("--checkpoint-every", type=int, default=0, metavar="STEPS")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--plot", type=Path, default=None,
                   help="PNG of the curves (default: build/train/<model>.png, if matplotlib)")
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--json", type=Path, default=None, help="write the results (histories) here")
    p.add_argument("--plot-from", type=Path, default=None, metavar="JSON",
                   help="only draw the plot (--plot) of the results a --json run wrote")
    a = p.parse_args(argv)
    if a.plot_from:
        results = results_from_json(a.plot_from)
        plot_path = a.plot or a.plot_from.with_suffix(".png")
        if not plot(results, plot_path):
            p.error("--plot-from needs matplotlib")
        print(f"plot: {plot_path}")
        return 0
    if a.resume and not a.checkpoint:
        p.error("--resume needs --checkpoint DIR")

    if a.batch is not None:
        sig = runner.compile_module(fixture_text(a.model, "train_step")).train_step.signature
        n_params = len(param_names(fixture_text(a.model, "train_step")))
        if a.batch != sig.inputs[n_params].shape[0]:
            p.error(f"--batch {a.batch}: the exported step has batch "
                    f"{sig.inputs[n_params].shape[0]} (re-export with hot.train_models)")

    results = []
    try:
        for seed in a.seed:
            for mode in a.mode:
                cfg = Config(model=a.model, mode=mode, dataset=a.dataset, epochs=a.epochs,
                             train_subset=a.train_subset, test_subset=a.test_subset, seed=seed,
                             optimizer=a.optimizer, lr=a.lr, schedule=a.schedule,
                             momentum=a.momentum,
                             weight_decay=(a.weight_decay if a.weight_decay is not None else
                                           (0.01 if a.optimizer == "adamw" else 0.0)),
                             normalize=not a.no_normalize, max_steps=a.max_steps,
                             classes=tuple(a.classes) if a.classes else None, init=a.init,
                             pipeline_options=a.pipeline_options, checkpoint=a.checkpoint,
                             checkpoint_every=a.checkpoint_every, resume=a.resume,
                             log_every=a.log_every)
                r = train(cfg)
                results.append(r)
                print(f"{cfg.model} {mode} seed {seed}: {r.steps} steps, compile "
                      f"{r.compile_s:.1f} s, {1e3 * np.median(r.step_times):.0f} ms/step",
                      flush=True)
    except data.DatasetMissing as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except TrainingDiverged as e:
        print(f"error: training diverged: {e}", file=sys.stderr)
        if results:
            print(table(results))
        return 3

    print()
    r0 = results[0]
    print(f"{a.model} on {a.dataset}: {a.epochs} epochs ({r0.steps} steps of batch {r0.batch}), "
          f"{a.optimizer} lr {r0.config.lr}; final loss: mean of the last 50 steps; ms/step: "
          f"median of the compiled step calls")
    print(table(results))
    plot_path = a.plot or REPO / "build" / "train" / f"{a.model}.png"
    if plot(results, plot_path):
        print(f"plot: {plot_path}")
    else:
        print("plot: skipped (matplotlib not installed)")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps([{
            "config": r.config.key(), "steps": r.steps, "losses": r.losses,
            "train_correct": r.train_correct, "test_acc": r.test_acc,
            "median_step_s": float(np.median(r.step_times)), "compile_s": r.compile_s}
            for r in results]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
