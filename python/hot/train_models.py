"""Export the models that ``hot.train`` trains, through the same frontend route as the fixtures.

Run from the repository root with the frontend environment (torch + torch-mlir)::

    PYTHONPATH=python .venv-frontend/bin/python -m hot.train_models --out test/Fixtures/train

Writes, per model, two files:

* ``<model>_train_step.mlir``: ``@train_step(params..., x, target) -> (loss, logits,
  grads...)``, one training step at a fixed batch size (``TRAIN_BATCH`` = 128): forward,
  mean cross-entropy ``-mean(sum(target * log_softmax(logits), 1))`` with ``target`` a one-hot
  float32 matrix (no gather/scatter in the loss or its backward), and the gradient of every
  parameter (in ``named_parameters`` order).  The loss and the logits come out of the step
  (``torch.func.grad_and_value(..., has_aux=True)``) so that the runner can log the loss and
  the training accuracy without a second call.
* ``<model>_forward.mlir``: ``@forward(params..., x) -> logits`` at ``EVAL_BATCH`` = 1000 (the
  test set is 10 x 1000), for evaluation.  HOT rewrites only backward products, so the same
  forward serves every mode.

Route (the joint route of ``hot.fixtures``): ``make_fx(functionalize(step, remove="mutations"),
decomposition_table=torch-mlir's table)`` + ``torch_mlir.fx.stateless_fx_import(gm,
output_type="linalg-on-tensors")``; parameters stay function arguments.

Models (``MODELS``):

* ``mlp``: 784-256-256-10, ReLU, biases (``nn.Linear``).
* ``vit``: a small ViT: 28x28 -> 16 patches of 7x7 (4x4 grid, a ``nn.Linear`` patch embedding
  of the flattened patches), a learned position embedding, width 64, two pre-LN transformer
  blocks (2 heads, MLP 128, GELU), final LayerNorm, mean pool over tokens, linear head.
* ``vit_lora``: the ``vit`` fine-tuned with PEFT-style LoRA (r = 8, alpha = 16) on every
  linear layer of the blocks (qkv, proj, fc1, fc2) and a trained head; every other parameter
  is frozen.
* ``vit_probe``: the ``vit`` with only its head trained (a linear probe), the control of
  ``vit_lora``.

Frozen parameters are arguments of the step without a gradient: ``@train_step(trained...,
frozen..., x, target) -> (loss, logits, grads of the trained...)``; ``@forward`` takes the
parameters in the same order.  Parameter names and shapes are in the ``// @train_step(...)``
header lines; the results name the trained ones (``grad <name>``).  ``hot.train`` initialises
the parameters itself (PyTorch's default rules, seeded) or loads the frozen ones from a
checkpoint (``--init``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

TRAIN_BATCH = 128
EVAL_BATCH = 1000
IMAGE = 28
PATCH = 7
CLASSES = 10

COMMAND = ("PYTHONPATH=python .venv-frontend/bin/python -m hot.train_models "
           "--out test/Fixtures/train")
ROUTE = ("make_fx(functionalize(torch.func.grad_and_value(loss, has_aux=True)), torch-mlir "
         "decompositions) + torch_mlir.fx.stateless_fx_import(output_type=\"linalg-on-tensors\")")

VIT = ("ViT: 7x7 patches → 16 tokens (4x4 grid), width 64, 2 pre-LN blocks (2 heads, MLP 128, "
       "GELU), mean-pool head")
LOSS = "cross-entropy (log_softmax, one-hot target)"
DESCRIPTIONS = {
    "mlp": f"MLP 784→256→256→10, ReLU, biases; {LOSS}",
    "vit": f"{VIT}; {LOSS}",
    "vit_lora": f"{VIT}, fine-tuned: LoRA (r=8, alpha=16) on qkv, proj, fc1 and fc2 and the head "
                f"trained, the rest frozen; {LOSS}",
    "vit_probe": f"{VIT}, fine-tuned: only the head trained (linear probe); {LOSS}",
}
LORA_TARGETS = ("qkv", "proj", "fc1", "fc2")
LORA_RANK = 8


def build(name):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    from .fixtures.models import ViTBlock, with_lora

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 256)
            self.fc2 = nn.Linear(256, 256)
            self.fc3 = nn.Linear(256, 10)

        def forward(self, x):
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    class ViT(nn.Module):
        def __init__(self, dim=64, depth=2, heads=2, mlp=128):
            super().__init__()
            n = (IMAGE // PATCH) ** 2
            self.patch = nn.Linear(PATCH * PATCH, dim)
            self.pos = nn.Parameter(torch.zeros(1, n, dim))
            self.blocks = nn.ModuleList(ViTBlock(dim, heads, mlp) for _ in range(depth))
            self.norm = nn.LayerNorm(dim, eps=1e-6)
            self.head = nn.Linear(dim, CLASSES)

        def forward(self, x):
            B = x.shape[0]
            g = IMAGE // PATCH
            p = x.reshape(B, g, PATCH, g, PATCH).permute(0, 1, 3, 2, 4).reshape(
                B, g * g, PATCH * PATCH)
            t = self.patch(p) + self.pos
            for blk in self.blocks:
                t = blk(t)
            return self.head(self.norm(t).mean(dim=1))

    torch.manual_seed(0)
    if name == "mlp":
        return MLP()
    model = ViT()
    if name == "vit_lora":
        with_lora(model, LORA_TARGETS, LORA_RANK, 2.0 * LORA_RANK)
    return model


def trainable(name: str, param: str) -> bool:
    """Whether ``param`` of model ``name`` is trained (the others are frozen)."""
    if name == "vit_lora":
        from .fixtures.models import is_lora_parameter
        return is_lora_parameter(param) or param.startswith("head.")
    if name == "vit_probe":
        return param.startswith("head.")
    return True


def cross_entropy(logits, target):
    import torch
    return -(target * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()


def export(name: str):
    """(train_step text, forward text, parameter names (trained first), shapes, trained
    names)."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    from .fixtures.torch_export import decompositions, to_linalg

    model = build(name)
    named = {k: v.detach() for k, v in model.named_parameters()}
    trained = [k for k in named if trainable(name, k)]
    frozen = [k for k in named if not trainable(name, k)]
    names = trained + frozen
    g = torch.Generator().manual_seed(0)
    x = torch.rand(TRAIN_BATCH, IMAGE * IMAGE, generator=g)
    target = torch.nn.functional.one_hot(
        torch.randint(0, CLASSES, (TRAIN_BATCH,), generator=g), CLASSES).float()

    def loss_fn(p, fp, x, target):
        logits = torch.func.functional_call(model, {**p, **fp}, (x,))
        return cross_entropy(logits, target), logits

    def step(p, fp, x, target):
        grads, (loss, logits) = torch.func.grad_and_value(loss_fn, has_aux=True)(
            p, fp, x, target)
        return (loss, logits, *[grads[n] for n in trained])

    p = {k: named[k] for k in trained}
    fp = {k: named[k] for k in frozen}
    f = torch.func.functionalize(step, remove="mutations")
    gm = make_fx(f, decomposition_table=decompositions())(p, fp, x, target)
    train_text = to_linalg(gm, "train_step")

    def fwd(p, fp, x):
        return torch.func.functional_call(model, {**p, **fp}, (x,))

    xe = torch.rand(EVAL_BATCH, IMAGE * IMAGE, generator=g)
    gm = make_fx(torch.func.functionalize(fwd, remove="mutations"),
                 decomposition_table=decompositions())(p, fp, xe)
    fwd_text = to_linalg(gm, "forward")
    return train_text, fwd_text, names, [tuple(named[k].shape) for k in names], trained


def header() -> str:
    from .fixtures.torch_export import versions
    v = versions()
    return (f"// Generated by `{COMMAND}` (python/hot/train_models.py) with torch {v['torch']}, "
            f"torch-mlir {v['torch-mlir']}, Python {v['python']}: {ROUTE}. Do not edit.")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hot.train_models", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("test/Fixtures/train"))
    parser.add_argument("--models", nargs="+", default=list(DESCRIPTIONS),
                        choices=list(DESCRIPTIONS))
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from .fixtures.__main__ import _hot_opt, _write

    hot_opt = _hot_opt()
    head = header()
    for name in args.models:
        t0 = time.time()
        train_text, fwd_text, names, shapes, trained = export(name)
        shapes_s = ", ".join(f"{n}: {'x'.join(map(str, s))}" for n, s in zip(names, shapes))
        _write(args.out / f"{name}_train_step.mlir", "\n".join([
            head, f"// {DESCRIPTIONS[name]}; batch {TRAIN_BATCH}; parameters: {shapes_s}",
            f"// @train_step({', '.join(names)}, x, target) -> (loss, logits, "
            f"{', '.join('grad ' + n for n in trained)})", train_text]), hot_opt)
        _write(args.out / f"{name}_forward.mlir", "\n".join([
            head, f"// {DESCRIPTIONS[name]}; forward only, batch {EVAL_BATCH}",
            f"// @forward({', '.join(names)}, x) -> (logits)", fwd_text]), hot_opt)
        print(f"  {name}: {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
