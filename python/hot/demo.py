"""`make demo`: a linear layer's HOT backward compiled by hot-opt, run on the CPU.

Compiles ``examples/linear_backward.mlir`` through ``hot-opt --hot-lower-to-cpu``, runs it on
fresh random inputs, and prints, next to each other: the compiled results, the numpy reference
of the same ops (``hot.reference``, which must agree bit for bit), and the exact float64
products gx = gy·W and gw = gyᵀ·x that HOT approximates.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import numpy as np

from hot import reference as ref
from hot.runner import compile_module, default_opt_tool

EXAMPLE = Path(__file__).with_name("examples") / "linear_backward.mlir"
B, T, I, O = 2, 197, 64, 96


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


def relative_error(approx, exact) -> float:
    return float(np.linalg.norm(approx.astype(np.float64) - exact) / np.linalg.norm(exact))


def main() -> int:
    seed = secrets.randbits(63)
    rng = np.random.default_rng(seed)
    gy, x, w = make_inputs(rng)

    print(f"hot demo: {EXAMPLE.name} through {default_opt_tool()} --hot-lower-to-cpu")
    start = time.perf_counter()
    module = compile_module(EXAMPLE.read_text())
    print(f"compiled in {time.perf_counter() - start:.1f} s "
          f"(cached after the first run); input seed {seed}\n")

    step_seed = int(rng.integers(0, 2**62))
    compiled = module.linear_backward(gy, x, w, step_seed)
    expected = reference_backward(gy, x, w, step_seed)

    gx_exact = gy.reshape(B * T, O).astype(np.float64) @ w.astype(np.float64)
    gw_exact = gy.reshape(B * T, O).astype(np.float64).T @ x.reshape(B * T, I).astype(np.float64)
    names = ["gx = gy·W", "gw = gyᵀ·x", "q(Ĥ gy), 4-bit", "its per-row scales",
             "q(HLA gy), 8-bit", "its per-channel scales"]
    print(f"{'result':<24}{'shape':>12}  {'compiled == numpy reference':<30}{'rel. error vs float64':>22}")
    all_exact = True
    for name, got, want in zip(names, compiled, expected):
        same = np.array_equal(got, want, equal_nan=True)
        all_exact &= same
        verdict = "bit-exact" if same else f"DIFFERS ({np.count_nonzero(got != want)} values)"
        exact = {"gx = gy·W": gx_exact, "gw = gyᵀ·x": gw_exact}.get(name)
        error = f"{relative_error(got, exact):.4f}" if exact is not None else ""
        shape = "x".join(map(str, got.shape))
        print(f"{name:<24}{shape:>12}  {verdict:<30}{error:>22}")

    # How much of gw's error is the low-rank projection itself (no quantization)?
    p_gy = ref.lowrank(gy.astype(np.float64), 1, 16, 8, allow_tail=True).reshape(-1, O)
    p_x = ref.lowrank(x.astype(np.float64), 1, 16, 8, allow_tail=True).reshape(-1, I)
    print(f"\ngw with HLA alone (float64, no quantization): rel. error "
          f"{relative_error(p_gy.T @ p_x, gw_exact):.4f}")
    print("first gx row, compiled:", np.array2string(compiled[0][0, :6], precision=3))
    print("first gx row, exact:   ", np.array2string(gx_exact[0, :6].astype(np.float32), precision=3))
    print("\ncompiled code and numpy reference agree bit for bit" if all_exact
          else "\nMISMATCH between compiled code and numpy reference")
    return 0 if all_exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
