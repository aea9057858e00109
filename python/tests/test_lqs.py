"""Layer-wise quantizer selection: instrument, calibrate, apply.

Three synthetic output gradients of one torch-shaped layer ([2, 17, .] tokens, O = 48):
token magnitudes spread over a decade select per-token scales on gx; a few outlier channels
select per-channel scales on gw; a homogeneous gradient keeps per-tensor scales. The decisions
are reproducible, and hot-training-pipeline applies them.
"""

import json
import subprocess

import numpy as np
import pytest

from hot import calibrate, runner
from test_rewrite_numerics import B, I, LAYER, O, T


def layer_inputs(kind, seed=0):
    rng = np.random.default_rng(seed)
    x3 = (np.cumsum(rng.standard_normal((B, T, I)), axis=1) / np.sqrt(T)).astype(np.float32)
    w = (rng.standard_normal((O, I)) / np.sqrt(I)).astype(np.float32)
    gy3 = rng.standard_normal((B, T, O)).astype(np.float32)
    if kind == "tokens":
        gy3 *= np.exp(rng.uniform(0, np.log(8), size=(B, T, 1))).astype(np.float32)
    elif kind == "channels":
        gy3[:, :, [5, 30]] *= 50
    return [x3, w, gy3]


@pytest.mark.parametrize("kind, expected", [
    ("homogeneous", {"gx": "per_tensor", "gw": "per_tensor"}),
    ("tokens", {"gx": "per_row", "gw": "per_tensor"}),
    ("channels", {"gx": "per_tensor", "gw": "per_col"}),
])
def test_decisions(hot_opt, kind, expected):
    decisions = calibrate.calibrate(LAYER, layer_inputs(kind))
    assert decisions["layers"] == {"layer0": expected}, decisions["errors"]
    for name, errors in decisions["errors"].items():
        path = name.rsplit(".", 1)[1]
        fine = errors[calibrate.FINE[path]]
        assert (fine < 0.5 * errors["per_tensor"]) == (expected[path] != "per_tensor")
        # A finer grid never quantizes worse here.
        assert fine <= errors["per_tensor"]


def test_decisions_are_reproducible(hot_opt):
    inputs = layer_inputs("tokens")
    assert calibrate.calibrate(LAYER, inputs) == calibrate.calibrate(LAYER, inputs)


def test_instrumented_step_keeps_its_results(hot_opt):
    """The extra results come after the original ones, which do not change."""
    inputs = layer_inputs("tokens")
    plain = runner.compile_module(subprocess.run(
        [hot_opt, "--hot-training-pipeline=remarks=false"], input=LAYER, capture_output=True,
        text=True, check=True).stdout)
    instrumented = runner.compile_module(calibrate.instrument(LAYER))
    gx, gw = plain.layer(*inputs, 5)
    results = instrumented.layer(*inputs, 5)
    assert len(results) == 2 + 4
    assert np.array_equal(results[0], gx) and np.array_equal(results[1], gw)


def test_apply_through_the_pipeline_and_the_command_line(hot_opt, tmp_path):
    np.savez(tmp_path / "batch.npz", **{f"arg{i}": a for i, a in
                                       enumerate(layer_inputs("tokens"))})
    graph = tmp_path / "layer.mlir"
    graph.write_text(LAYER)
    out = tmp_path / "decisions.json"
    assert calibrate.main([str(graph), "--inputs", str(tmp_path / "batch.npz"),
                           "-o", str(out)]) == 0
    assert json.loads(out.read_text())["layers"] == {
        "layer0": {"gx": "per_row", "gw": "per_tensor"}}
    rewritten = subprocess.run(
        [hot_opt, f"--hot-training-pipeline=lqs-decisions={out} remarks=false"],
        input=LAYER, capture_output=True, text=True, check=True).stdout
    assert "bits 4 granularity per_row scale maxabs rounding stochastic" in rewritten
    assert "bits 8 granularity per_tensor scale maxabs rounding stochastic" in rewritten


def test_frozen_layer_gets_a_gx_decision_only(hot_opt):
    """A frozen layer (no gw) is calibrated on its gx alone."""
    from test_rewrite_numerics import FROZEN, I0
    rng = np.random.default_rng(3)
    x3 = rng.standard_normal((B, T, I0)).astype(np.float32)
    w = (rng.standard_normal((O, I)) / np.sqrt(I)).astype(np.float32)
    gy3 = rng.standard_normal((B, T, O)).astype(np.float32)
    gy3 *= np.exp(rng.uniform(0, np.log(8), size=(B, T, 1))).astype(np.float32)
    decisions = calibrate.calibrate(FROZEN, [x3, w, gy3])
    assert sorted(decisions["layers"]) == ["layer0", "layer1"], decisions
    assert decisions["layers"]["layer0"] == {"gx": "per_row"}, decisions["errors"]
    assert sorted(decisions["layers"]["layer1"]) == ["gw"]
