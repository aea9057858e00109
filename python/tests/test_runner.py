"""Tests of hot.runner: compile MLIR text to native code and call it with numpy arrays.

Every compiling test runs once per available toolchain: upstream ``mlir-opt-22`` with
``UPSTREAM_CPU_PIPELINE`` always, and hot-opt with its default pipeline (``--hot-lower-to-cpu``)
when ``$HOT_OPT`` is set or ``build/bin/hot-opt`` exists and registers that pipeline.
"""

import math
import re
import secrets
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hot import runner  # noqa: E402
from hot.runner import (  # noqa: E402
    POISON_BYTE,
    UPSTREAM_CPU_PIPELINE,
    CompileError,
    ScalarType,
    TensorType,
    compile_module,
    lower_to_llvm_ir,
    parse_signatures,
)


def _toolchain_params():
    params = [pytest.param(("mlir-opt-22", UPSTREAM_CPU_PIPELINE), id="upstream")]
    reason = None
    try:
        hot_opt = runner.find_hot_opt()
    except FileNotFoundError as e:
        hot_opt, reason = None, str(e)
    if hot_opt is None:
        reason = reason or "hot-opt not built (set HOT_OPT or build build/bin/hot-opt)"
    else:
        help_text = subprocess.run([hot_opt, "--help"], capture_output=True, text=True).stdout
        if "hot-lower-to-cpu" not in help_text:
            reason = f"{hot_opt} does not register --hot-lower-to-cpu yet"
    marks = [pytest.mark.skip(reason=reason)] if reason else []
    params.append(pytest.param((hot_opt, None), id="hot-opt", marks=marks))
    return params


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    # A fresh cache per session so that the compile path itself is exercised.
    return tmp_path_factory.mktemp("runner-cache")


@pytest.fixture(params=_toolchain_params())
def toolchain(request):
    return request.param


@pytest.fixture
def compile(toolchain, cache_dir):
    opt_tool, pipeline = toolchain

    def _compile(text):
        return compile_module(text, opt_tool=opt_tool, pipeline=pipeline, cache_dir=cache_dir)

    return _compile


def _rng():
    seed = secrets.randbits(32)
    return np.random.default_rng(seed), f"seed={seed}"


# ----------------------------------------------------------------------------------------------
# Computation
# ----------------------------------------------------------------------------------------------

ELEMENTWISE = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @ew(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %p = arith.mulf %s, %x : f32
    %q = math.absf %p : f32
    %r = math.sqrt %q : f32
    %f = math.floor %r : f32
    %d = arith.subf %r, %f : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
"""


def test_elementwise_f32(compile):
    mod = compile(ELEMENTWISE)
    rng, seed = _rng()
    a = rng.standard_normal((4, 8)).astype(np.float32) * 10
    b = rng.standard_normal((4, 8)).astype(np.float32) * 10
    r = np.sqrt(np.abs((a + b) * a))
    np.testing.assert_array_equal(mod.ew(a, b), r - np.floor(r), err_msg=seed)


MATMUL_I8 = """
func.func @mm(%a: tensor<7x13xi8>, %b: tensor<13x5xi8>) -> tensor<7x5xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<7x5xi32>
  %z = linalg.fill ins(%c0 : i32) outs(%e : tensor<7x5xi32>) -> tensor<7x5xi32>
  %r = linalg.matmul ins(%a, %b : tensor<7x13xi8>, tensor<13x5xi8>)
                     outs(%z : tensor<7x5xi32>) -> tensor<7x5xi32>
  return %r : tensor<7x5xi32>
}
"""


def test_matmul_i8_i32(compile):
    mod = compile(MATMUL_I8)
    rng, seed = _rng()
    for _ in range(3):
        a = rng.integers(-128, 128, size=(7, 13), dtype=np.int8)
        b = rng.integers(-128, 128, size=(13, 5), dtype=np.int8)
        a[0, :] = -128  # extremes: sign extension, not zero extension
        b[:, 0] = -128
        c = mod.mm(a, b)
        assert c.dtype == np.int32 and c.shape == (7, 5)
        np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64), err_msg=seed)


TWO_RESULTS = """
#id = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
func.func @stats(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<f64>) {
  %e = tensor.empty() : tensor<8xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.addf %v, %v : f32
    linalg.yield %d : f32
  } -> tensor<8xf32>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %acc = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %s = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["reduction"]}
      ins(%x : tensor<8xf32>) outs(%acc : tensor<f64>) {
  ^bb0(%v: f32, %a: f64):
    %w = arith.extf %v : f32 to f64
    %sq = arith.mulf %w, %w : f64
    %n = arith.addf %a, %sq : f64
    linalg.yield %n : f64
  } -> tensor<f64>
  return %twice, %s : tensor<8xf32>, tensor<f64>
}
"""


def test_two_results_with_rank0_reduction(compile):
    mod = compile(TWO_RESULTS)
    x = np.arange(-3, 5, dtype=np.float32) * 1.5
    twice, sumsq = mod.stats(x)
    np.testing.assert_array_equal(twice, 2 * x)
    assert sumsq.shape == () and sumsq.dtype == np.float64
    assert sumsq == np.sum(x.astype(np.float64) ** 2)


SCALAR_ARG = """
#id = affine_map<(d0) -> (d0)>
func.func @axpb(%x: tensor<5xi64>, %k: i64) -> tensor<5xi64> {
  %one = arith.constant 1 : i64
  %e = tensor.empty() : tensor<5xi64>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<5xi64>) outs(%e : tensor<5xi64>) {
  ^bb0(%v: i64, %o: i64):
    %m = arith.muli %v, %k : i64
    %a = arith.addi %m, %one : i64
    linalg.yield %a : i64
  } -> tensor<5xi64>
  return %r : tensor<5xi64>
}
"""


def test_i64_scalar_argument(compile):
    mod = compile(SCALAR_ARG)
    x = np.array([-2, -1, 0, 1, 2], dtype=np.int64)
    k = 3_000_000_007  # does not fit in 32 bits
    np.testing.assert_array_equal(mod.axpb(x, k), x * k + 1)
    np.testing.assert_array_equal(mod.axpb(x, np.int64(-5)), x * -5 + 1)


ROUND = """
#id = affine_map<(d0) -> (d0)>
func.func @rnd(%x: tensor<9xf32>) -> tensor<9xf32> {
  %e = tensor.empty() : tensor<9xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<9xf32>) outs(%e : tensor<9xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = math.round %v : f32
    linalg.yield %y : f32
  } -> tensor<9xf32>
  return %r : tensor<9xf32>
}
"""


def test_round_half_away_from_zero(compile):
    mod = compile(ROUND)
    below_half = np.nextafter(np.float32(0.5), np.float32(0))  # 0.49999997
    x = np.array([2.5, -2.5, below_half, -below_half, 0.5, -0.5, 1.5, -1.5, 8388609.0],
                 dtype=np.float32)
    expected = np.array([3, -3, 0, 0, 1, -1, 2, -2, 8388609.0], dtype=np.float32)
    np.testing.assert_array_equal(mod.rnd(x), expected)


TABLE = """
#id = affine_map<(d0) -> (d0)>
func.func @lut(%i: tensor<6xi32>) -> tensor<6xf32> {
  %t = arith.constant dense<[1.0, 2.0, 4.0, 8.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<6xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%i : tensor<6xi32>) outs(%e : tensor<6xf32>) {
  ^bb0(%x: i32, %o: f32):
    %ix = arith.index_cast %x : i32 to index
    %v = tensor.extract %t[%ix] : tensor<4xf32>
    %j = linalg.index 0 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %w = arith.addf %v, %jf : f32
    linalg.yield %w : f32
  } -> tensor<6xf32>
  return %r : tensor<6xf32>
}
"""


def test_table_lookup_in_generic(compile):
    mod = compile(TABLE)
    idx = np.array([3, 0, 1, 2, 2, 3], dtype=np.int32)
    table = np.array([1, 2, 4, 8], dtype=np.float32)
    np.testing.assert_array_equal(mod.lut(idx), table[idx] + np.arange(6, dtype=np.float32))


RESHAPE_SLICES = """
func.func @slices(%a: tensor<2x3xf32>) -> tensor<4x4xf32> {
  %c = tensor.collapse_shape %a [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %s = tensor.extract_slice %c[1] [4] [1] : tensor<6xf32> to tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %row = tensor.expand_shape %s [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
  %r = tensor.insert_slice %row into %f[2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
func.func @view(%a: tensor<6xf64>) -> tensor<2x3xf64> {
  %r = tensor.expand_shape %a [[0, 1]] output_shape [2, 3] : tensor<6xf64> into tensor<2x3xf64>
  return %r : tensor<2x3xf64>
}
"""


def test_reshapes_and_slices(compile):
    mod = compile(RESHAPE_SLICES)
    a = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    expected = np.zeros((4, 4), np.float32)
    expected[2] = a.reshape(-1)[1:5]
    np.testing.assert_array_equal(mod.slices(a), expected)
    # A result that is a view of an input is copied into the out-param.
    v = np.arange(6, dtype=np.float64)
    np.testing.assert_array_equal(mod.view(v), v.reshape(2, 3))


MATH = """
func.func @m(%x: f32, %y: f64, %n: i32) -> (f32, f32, f64, i32, f32) {
  %a = math.erf %x : f32
  %b = math.tanh %x : f32
  %c = math.exp %y : f64
  %d = math.ipowi %n, %n : i32
  %e = math.fpowi %x, %n : f32, i32
  return %a, %b, %c, %d, %e : f32, f32, f64, i32, f32
}
"""


def test_math_without_llvm_intrinsics_and_scalar_results(compile):
    # erf becomes a libm call, ipowi/fpowi outlined functions; several scalar results.
    mod = compile(MATH)
    erf, tanh, exp, ipow, fpow = mod.m(0.5, 1.25, 3)
    assert erf.dtype == np.float32 and ipow.dtype == np.int32
    assert erf == pytest.approx(math.erf(0.5), rel=1e-6)
    assert tanh == pytest.approx(math.tanh(0.5), rel=1e-6)
    assert exp == pytest.approx(math.exp(1.25), rel=1e-15)
    assert ipow == 27
    assert fpow == pytest.approx(0.125, rel=1e-6)


MIXED_RESULTS = """
func.func @mix(%k: i64, %t: tensor<2xi64>, %flag: i1) -> (i64, tensor<2xi64>, i1) {
  %true = arith.constant true
  %nf = arith.xori %flag, %true : i1
  return %k, %t, %nf : i64, tensor<2xi64>, i1
}
func.func @one(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  return %y : f64
}
func.func private @helper(%x: f64) -> f64 {
  return %x : f64
}
func.func private @external(f64) -> f64
"""


def test_scalar_and_mixed_results(compile):
    mod = compile(MIXED_RESULTS)
    assert mod.function_names == ["mix", "one"]  # private functions are not exposed
    k, t, nf = mod.mix(-9, np.array([4, 5], np.int64), True)
    assert (k, nf) == (-9, False) and isinstance(nf, np.bool_)
    np.testing.assert_array_equal(t, [4, 5])
    assert mod.call("one", 1.5) == 2.25
    with pytest.raises(AttributeError):
        mod.helper


INPLACE = """
#id = affine_map<(d0) -> (d0)>
func.func @double_in_place(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%a : tensor<4xf32>) {
  ^bb0(%o: f32):
    %s = arith.addf %o, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


def test_inputs_are_not_clobbered(compile):
    # Bufferization writes into %a's buffer in place; the runner must pass a private copy.
    mod = compile(INPLACE)
    a = np.array([1, 2, 3, 4], dtype=np.float32)
    np.testing.assert_array_equal(mod.double_in_place(a), 2 * a)
    np.testing.assert_array_equal(a, [1, 2, 3, 4])


UNTOUCHED = """
func.func @untouched() -> (tensor<3xf32>, tensor<2xi32>, tensor<i8>) {
  %a = tensor.empty() : tensor<3xf32>
  %b = tensor.empty() : tensor<2xi32>
  %c = tensor.empty() : tensor<i8>
  return %a, %b, %c : tensor<3xf32>, tensor<2xi32>, tensor<i8>
}
"""


def test_outputs_are_poisoned_before_the_call(compile):
    # The pipelines copy every result into its out-param (hoisting the result allocation
    # crashes MLIR 22 on duplicated results), so compiled code always writes its outputs;
    # the buffers it gets are poisoned beforehand.
    from hot.runner import _poisoned_output
    mod = compile(UNTOUCHED)
    a, b, c = (_poisoned_output(t) for t in mod.signatures["untouched"].results)
    assert np.isnan(a).all()
    assert (b.view(np.uint8) == POISON_BYTE).all()
    assert c.view(np.uint8) == POISON_BYTE
    mod.untouched()  # runs; tensor.empty() results are unspecified values


def test_argument_checking(compile):
    mod = compile(SCALAR_ARG)
    x = np.zeros(5, np.int64)
    with pytest.raises(TypeError, match="dtype"):
        mod.axpb(x.astype(np.int32), 1)
    with pytest.raises(TypeError, match="shape"):
        mod.axpb(np.zeros(6, np.int64), 1)
    with pytest.raises(TypeError, match="numpy array"):
        mod.axpb([0, 0, 0, 0, 0], 1)
    with pytest.raises(TypeError, match="integer"):
        mod.axpb(x, 1.5)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        mod.axpb(x)
    with pytest.raises(OverflowError):
        mod.axpb(x, 1 << 64)
    # Non-contiguous input of the right dtype/shape is fine (copied).
    np.testing.assert_array_equal(mod.axpb(np.arange(10, dtype=np.int64)[::2], 2),
                                  np.arange(10)[::2] * 2 + 1)


# ----------------------------------------------------------------------------------------------
# ABI, caching, errors
# ----------------------------------------------------------------------------------------------

ABI = """
func.func @f(%a: tensor<2x3xf32>, %k: i64) -> (tensor<f32>, tensor<3xi32>) {
  %e0 = tensor.empty() : tensor<f32>
  %e1 = tensor.empty() : tensor<3xi32>
  return %e0, %e1 : tensor<f32>, tensor<3xi32>
}
"""


def test_c_wrapper_abi(toolchain):
    """The ABI the runner assumes: descriptors by pointer, scalars by value, out-params last."""
    opt_tool, pipeline = toolchain
    ir = lower_to_llvm_ir(ABI, opt_tool=opt_tool, pipeline=pipeline)
    m = re.search(r"define void @_mlir_ciface_f\((.*)\)", ir)
    assert m, ir
    assert re.fullmatch(r"ptr [^,]+, i64 [^,]+, ptr [^,]+, ptr [^,]+", m.group(1)), m.group(1)
    body = ir[m.end():ir.index("\n}", m.end())]
    loads = re.findall(r"load (\{[^}]*\}), ptr", body)
    assert loads == ["{ ptr, ptr, i64, [2 x i64], [2 x i64] }",
                     "{ ptr, ptr, i64 }",
                     "{ ptr, ptr, i64, [1 x i64], [1 x i64] }"]


def test_cache_hit_runs_no_tools(toolchain, tmp_path, monkeypatch):
    opt_tool, pipeline = toolchain
    first = compile_module(SCALAR_ARG, opt_tool=opt_tool, pipeline=pipeline, cache_dir=tmp_path)
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".so"]

    def no_subprocess(*args, **kwargs):
        raise AssertionError("cache hit expected, but a tool was run")

    monkeypatch.setattr(runner.subprocess, "run", no_subprocess)
    second = compile_module(SCALAR_ARG, opt_tool=opt_tool, pipeline=pipeline, cache_dir=tmp_path)
    assert second.library_path == first.library_path
    assert second.signatures == first.signatures
    np.testing.assert_array_equal(second.axpb(np.ones(5, np.int64), 2), np.full(5, 3))


LIBC_NAMES = """
func.func @NAME(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %gy: tensor<4x4xf32>,
                %gx0: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>) {
  %cst = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x4xf32>
  %wt = linalg.transpose ins(%w : tensor<4x8xf32>) outs(%e0 : tensor<8x4xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<4x4xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<4x8xf32>, tensor<8x4xf32>)
      outs(%z1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %gx = linalg.matmul ins(%gy, %w : tensor<4x4xf32>, tensor<4x8xf32>)
      outs(%gx0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %gx : tensor<4x4xf32>, tensor<4x8xf32>
}
"""


@pytest.mark.parametrize("name", ["step", "exp"])
def test_functions_named_like_libc_functions(compile, name):
    """A function named like a libc or libm one (`step` is glibc's regexp function): the C
    wrapper calls the module's own (it used to call glibc's `step`, which crashed, and libm's
    `exp`, which left the results unwritten)."""
    module = compile(LIBC_NAMES.replace("NAME", name))
    rng, seed_note = _rng()
    x, w, gy, gx0 = (rng.standard_normal(s).astype(np.float32)
                     for s in ((4, 8), (4, 8), (4, 4), (4, 8)))
    y, gx = getattr(module, name)(x, w, gy, gx0)
    np.testing.assert_allclose(y, x @ w.T, rtol=1e-5, atol=1e-5, err_msg=seed_note)
    np.testing.assert_allclose(gx, gx0 + gy @ w, rtol=1e-5, atol=1e-5, err_msg=seed_note)


LAYER_BACKWARD = """
func.func @layer(%x: tensor<64x32xf32>, %w: tensor<16x32xf32>, %gy: tensor<64x16xf32>)
    -> (tensor<64x32xf32>, tensor<16x32xf32>) attributes {llvm.emit_c_interface} {
  %cst = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64x32xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %gx = linalg.matmul ins(%gy, %w : tensor<64x16xf32>, tensor<16x32xf32>)
      outs(%z1 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<16x64xf32>
  %gyt = linalg.transpose ins(%gy : tensor<64x16xf32>) outs(%e2 : tensor<16x64xf32>)
      permutation = [1, 0]
  %e3 = tensor.empty() : tensor<16x32xf32>
  %z3 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<16x64xf32>, tensor<64x32xf32>)
      outs(%z3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %gx, %gw : tensor<64x32xf32>, tensor<16x32xf32>
}
"""


def test_rewriting_pipeline_appends_the_seed(tmp_path):
    """hot-rewrite-backward-matmuls inside the pipeline appends the step's seed: the compiled
    function takes it as its last input, exactly as if the rewritten text had been compiled;
    a call without it is refused (it used to run with whatever the seed register held)."""
    hot_opt = runner.find_hot_opt()
    if hot_opt is None:
        pytest.skip("hot-opt not built")
    inside = compile_module(LAYER_BACKWARD, pipeline=["--hot-rewrite-backward-matmuls",
                                                      *runner.HOT_CPU_PIPELINE],
                            cache_dir=tmp_path)
    assert inside.signatures["layer"].inputs[-1] == ScalarType("i64")
    assert len(inside.signatures["layer"].inputs) == 4
    rewritten = subprocess.run([hot_opt, "--hot-rewrite-backward-matmuls"], input=LAYER_BACKWARD,
                               capture_output=True, text=True, check=True).stdout
    before = compile_module(rewritten, cache_dir=tmp_path)
    assert before.signatures["layer"] == inside.signatures["layer"]

    rng, seed_note = _rng()
    x, w, gy = (rng.standard_normal(s).astype(np.float32) for s in ((64, 32), (16, 32), (64, 16)))
    seed = int(rng.integers(1 << 40))
    for a, b in zip(inside.layer(x, w, gy, seed), before.layer(x, w, gy, seed)):
        np.testing.assert_array_equal(a, b, err_msg=seed_note)
    # Stochastic rounding follows the seed: another seed, another gx.
    assert not np.array_equal(inside.layer(x, w, gy, seed)[0], inside.layer(x, w, gy, seed + 1)[0])
    with pytest.raises(TypeError, match="takes 4 arguments, got 3"):
        inside.layer(x, w, gy)


def test_pipeline_changing_arguments_is_refused(tmp_path):
    """A pipeline whose C wrapper takes other arguments than the input's signature makes (here:
    results returned through a struct, not out-parameters last) is an error at compilation."""
    if runner.find_hot_opt() is None:
        pytest.skip("hot-opt not built")
    with pytest.raises(ValueError, match=r"changed the arguments of @layer: "
                                         r"_mlir_ciface_layer takes 4, .* makes 5"):
        compile_module(LAYER_BACKWARD, pipeline=["--hot-lower-to-cpu=results-to-out-params=0"],
                       cache_dir=tmp_path)


MALFORMED = """
func.func @bad(%a: f32) -> f32 {
  %r = arith.addf %a, %undefined : f32
  return %r : f32
}
"""


def test_malformed_mlir_raises_compile_error_with_location(toolchain, tmp_path):
    opt_tool, pipeline = toolchain
    with pytest.raises(CompileError) as info:
        compile_module(MALFORMED, opt_tool=opt_tool, pipeline=pipeline, cache_dir=tmp_path)
    err = info.value
    assert "input.mlir:3:" in err.stderr and "undefined" in err.stderr
    assert "input.mlir:3:" in str(err)
    assert not any(tmp_path.iterdir())  # nothing half-written is left behind


DYNAMIC = """
func.func @dyn(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %a : tensor<?x4xf32>
}
"""


def test_dynamic_shape_rejected(toolchain, tmp_path):
    opt_tool, pipeline = toolchain
    with pytest.raises(ValueError, match=r"dynamic dimension.*tensor<\?x4xf32>.*@dyn argument #0"):
        compile_module(DYNAMIC, opt_tool=opt_tool, pipeline=pipeline, cache_dir=tmp_path)


@pytest.mark.parametrize("ty", ["tensor<4xf8E4M3FN>", "memref<4xf32>", "tensor<4xcomplex<f32>>"])
def test_unsupported_types_raise_not_implemented(ty):
    with pytest.raises(NotImplementedError):
        runner.parse_type(ty)


def test_parse_signatures_generic_form():
    generic = r'''#map = affine_map<(d0) -> (d0)>
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "ext", sym_visibility = "private"}> ({
  }) : () -> ()
  "func.func"() <{arg_attrs = [{foo.bar = "x)>{\""}], function_type = (tensor<4xf32>, index, tensor<i1>) -> (), sym_name = "g"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: index, %arg2: tensor<i1>):
    "func.return"() : () -> ()
  }) {llvm.emit_c_interface} : () -> ()
  "builtin.module"() ({
    "func.func"() <{function_type = () -> (), sym_name = "nested"}> ({
      "func.return"() : () -> ()
    }) : () -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> (i64, tensor<2x3xindex>), sym_name = "h"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
'''
    sigs = parse_signatures(generic)
    assert list(sigs) == ["g", "h"]
    assert sigs["g"].inputs == (TensorType((4,), "f32"), ScalarType("index"), TensorType((), "i1"))
    assert sigs["g"].results == ()
    assert sigs["h"].results == (ScalarType("i64"), TensorType((2, 3), "index"))


def test_bf16_and_f16_tensors(compile):
    from hot.runner import from_bfloat16, to_bfloat16
    mod = compile("""
func.func @widen(%a: tensor<4xbf16>, %b: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xbf16>) {
  %x = arith.extf %a : tensor<4xbf16> to tensor<4xf32>
  %y = arith.extf %b : tensor<4xf16> to tensor<4xf32>
  %s = arith.addf %x, %y : tensor<4xf32>
  %t = arith.truncf %s : tensor<4xf32> to tensor<4xbf16>
  return %x, %t : tensor<4xf32>, tensor<4xbf16>
}""")
    a = np.array([1.5, -3.25, 0.1, 7.0], np.float32)
    b = np.array([0.5, 0.25, -2.0, 1024.0], np.float16)
    x, t = mod.widen(to_bfloat16(a), b)
    assert np.array_equal(x, from_bfloat16(to_bfloat16(a)))
    assert np.array_equal(from_bfloat16(t), from_bfloat16(to_bfloat16(x + b.astype(np.float32))))
    # Round to nearest even, and the exact values in between.
    assert to_bfloat16(np.float32(1.0) + np.float32(2.0**-8)) == to_bfloat16(np.float32(1.0))
    assert to_bfloat16(np.float32(1.0) + np.float32(3 * 2.0**-8)) == 0x3F82
