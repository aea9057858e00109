"""The runner's CUDA target: hot ops lowered by hot-opt --hot-lower-to-nvvm, linked against
libhot_cuda_runtime.so, called with numpy arrays in managed memory.

Compiling and linking run everywhere hot-opt, the CUDA toolkit (ptxas, fatbinary) and the
runtime library are; the calls only where the runtime's probe finds a usable GPU (skipped, with
the probe's reason, elsewhere).
"""

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hot import reference, runner

ROWS, COLS, OUT = 64, 128, 48

# gy -> hadamard + quantize (per row, the fused kernel) and an i8 product rescaled to f32: the
# ops the GPU lowering turns into its own kernels.
MODULE = f"""
func.func @quantize(%x: tensor<{ROWS}x{COLS}xf32>)
    -> (tensor<{ROWS}x{COLS}xi8>, tensor<{ROWS}xf32>) {{
  %h = hot.hadamard %x along 1 block 16 : tensor<{ROWS}x{COLS}xf32>
  %q, %s = hot.quantize %h bits 8 granularity per_row scale maxabs rounding nearest
      : tensor<{ROWS}x{COLS}xf32> -> tensor<{ROWS}x{COLS}xi8>, tensor<{ROWS}xf32>
  return %q, %s : tensor<{ROWS}x{COLS}xi8>, tensor<{ROWS}xf32>
}}

func.func @quantize_stochastic(%x: tensor<{ROWS}x{COLS}xf32>, %seed: i64)
    -> (tensor<{ROWS}x{COLS}xi8>, tensor<f32>) {{
  %h = hot.hadamard %x along 1 block 16 : tensor<{ROWS}x{COLS}xf32>
  %q, %s = hot.quantize %h bits 4 granularity per_tensor scale maxabs rounding stochastic
      seed %seed : tensor<{ROWS}x{COLS}xf32> -> tensor<{ROWS}x{COLS}xi8>, tensor<f32>
  return %q, %s : tensor<{ROWS}x{COLS}xi8>, tensor<f32>
}}

func.func @matmul_rescale(%a: tensor<{ROWS}x{COLS}xi8>, %b: tensor<{OUT}x{COLS}xi8>,
                          %sa: tensor<{ROWS}xf32>, %sb: tensor<{OUT}xf32>)
    -> tensor<{ROWS}x{OUT}xf32> {{
  %acc = hot.int_matmul %a, %b transposed
      : tensor<{ROWS}x{COLS}xi8>, tensor<{OUT}x{COLS}xi8> -> tensor<{ROWS}x{OUT}xi32>
  %y = hot.rescale %acc, %sa, %sb
      : tensor<{ROWS}x{OUT}xi32>, tensor<{ROWS}xf32>, tensor<{OUT}xf32> -> tensor<{ROWS}x{OUT}xf32>
  return %y : tensor<{ROWS}x{OUT}xf32>
}}
"""


def _require_toolchain(hot_opt):
    try:
        runtime = runner.find_cuda_runtime()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    if shutil.which("ptxas") is None and not Path("/usr/local/cuda/bin/ptxas").exists():
        pytest.skip("no ptxas: the fatbin needs the CUDA toolkit")
    return runtime


@pytest.fixture(scope="module")
def device():
    """(major, minor) of device 0; skips with the probe's reason when there is no usable GPU."""
    capability, why = runner.probe_cuda_device()
    if capability is None:
        pytest.skip(f"no usable CUDA device: {why}")
    return capability


def _chip(capability=None):
    return f"sm_{capability[0]}{capability[1]}" if capability else "sm_90"


@pytest.mark.parametrize("toolkit_env", [True, False])
def test_compiles_and_links_against_the_runtime_only(hot_opt, tmp_path, monkeypatch,
                                                     toolkit_env):
    """Also without CUDA_HOME/CUDA_ROOT: the runner names the toolkit for libdevice."""
    runtime = _require_toolchain(hot_opt)
    if not toolkit_env:
        monkeypatch.delenv("CUDA_HOME", raising=False)
        monkeypatch.delenv("CUDA_ROOT", raising=False)
    mod = runner.compile_module(MODULE, target="cuda", chip="sm_90", cache_dir=tmp_path,
                                load=False)
    assert set(mod.signatures) == {"quantize", "quantize_stochastic", "matmul_rescale"}
    # -z defs already rejected anything unresolved; also check what it does need.
    undefined = subprocess.run(["nm", "-D", "--undefined-only", str(mod.library_path)],
                               capture_output=True, text=True, check=True).stdout.split()
    defined = subprocess.run(["nm", "-D", "--defined-only", str(runtime)],
                             capture_output=True, text=True, check=True).stdout.split()
    needed = {s.split("@")[0] for s in undefined if s not in ("U", "w")}
    libc = {"malloc", "free", "memcpy", "memset", "aligned_alloc", "abort", "__cxa_finalize",
            "__gmon_start__", "_ITM_registerTMCloneTable", "_ITM_deregisterTMCloneTable"}
    assert needed - set(defined) - libc == set()
    assert {"mgpuModuleLoad", "mgpuLaunchKernel", "mgpuMemAlloc"} <= needed
    # The C interface with out-params, as on the CPU.
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(mod.library_path)],
                             capture_output=True, text=True, check=True).stdout
    for name in mod.signatures:
        assert f"_mlir_ciface_{name}" in symbols


def test_the_fused_kernel_is_used(hot_opt):
    """The runner's pipeline keeps hot-opt's fused hadamard + quantize kernels."""
    proc = subprocess.run([hot_opt, *runner.cuda_pipeline("sm_90", "isa"), "-o", "/dev/null"],
                          input=MODULE, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "fused hadamard (block 16) + per_row quantize kernel" in proc.stderr
    assert "fused hadamard (block 16) + per_tensor quantize" in proc.stderr


FAKE_RUNTIME = (Path(__file__).resolve().parents[2] / "bench" / "gpu" / "abicheck"
                / "fake_runtime.cpp")


def test_managed_buffers_without_a_gpu(hot_opt, tmp_path, monkeypatch):
    """The cuda target's calling machinery against the bench's host-only stand-in of the
    runtime (allocations in host memory, launches recorded, not run): the call goes through,
    the outputs keep the runner's poison (no kernel ran), the inputs reach the kernels, and
    every buffer (the runner's and the step's) is freed."""
    _require_toolchain(hot_opt)
    cxx = shutil.which("c++") or shutil.which("clang++-22")
    if cxx is None:
        pytest.skip("no C++ compiler for the stand-in runtime")
    fake_dir = tmp_path / "fake"
    fake_dir.mkdir()
    probe = fake_dir / "probe.cpp"
    probe.write_text('#include <stddef.h>\n#include "fake_runtime.h"\n'
                     'extern "C" size_t fakeLive() { return liveAllocations.size(); }\n'
                     'extern "C" size_t fakeLaunches() { return launchParams.size(); }\n'
                     'extern "C" uint64_t fakeParam(size_t l, size_t i) {\n'
                     '  return i < launchParams[l].size() ? launchParams[l][i] : 0; }\n')
    fake = fake_dir / "libhot_cuda_runtime.so"
    subprocess.run([cxx, "-std=c++17", "-shared", "-fPIC", f"-I{FAKE_RUNTIME.parent}",
                    str(FAKE_RUNTIME), str(probe), "-o", str(fake)], check=True)
    monkeypatch.setenv("HOT_CUDA_RUNTIME", str(fake))
    mod = runner.compile_module(MODULE, target="cuda", chip="sm_90", cache_dir=tmp_path)
    lib = ctypes.CDLL(str(fake))
    lib.fakeLive.restype = lib.fakeLaunches.restype = ctypes.c_size_t
    lib.fakeParam.restype = ctypes.c_uint64
    lib.fakeParam.argtypes = [ctypes.c_size_t, ctypes.c_size_t]

    x = np.ones((ROWS, COLS), np.float32)
    q, s = mod.quantize_stochastic(x, 5)
    assert q.shape == (ROWS, COLS) and q.dtype == np.int8 and s.shape == ()
    assert (q.view(np.uint8) == runner.POISON_BYTE).all()
    # The rank-0 scale is copied on the host (a load and a store of managed memory), from the
    # step's temporary, which the stand-in fills with 0xAB bytes.
    assert s.view(np.uint32) == 0xABABABAB
    assert lib.fakeLive() == 0
    launches = lib.fakeLaunches()
    assert launches >= 2  # the fused kernels, then the copies into the out-params
    params = {lib.fakeParam(k, i) for k in range(launches) for i in range(24)}
    # The kernels were given the input's managed copy, not the numpy array itself.
    assert x.ctypes.data not in params


def test_gpu_matches_cpu(hot_opt, device, tmp_path):
    _require_toolchain(hot_opt)
    gpu = runner.compile_module(MODULE, target="cuda", chip=_chip(device), cache_dir=tmp_path)
    cpu = runner.compile_module(MODULE, cache_dir=tmp_path)
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((ROWS, COLS)) * (1 + np.arange(ROWS)[:, None] % 5)).astype(
        np.float32)
    x[3] = 0  # an all-zero row: scale 0, q 0

    q, s = gpu.quantize(x)
    q_cpu, s_cpu = cpu.quantize(x)
    np.testing.assert_array_equal(q, q_cpu)
    np.testing.assert_array_equal(s.view(np.uint32), s_cpu.view(np.uint32))
    q_ref, s_ref = reference.quantize(reference.hadamard(x, 1, 16), 8, "per_row",
                                      "maxabs", "nearest")
    np.testing.assert_array_equal(q, q_ref)

    for seed in (1234, -3):
        q, s = gpu.quantize_stochastic(x, seed)
        q_cpu, s_cpu = cpu.quantize_stochastic(x, seed)
        np.testing.assert_array_equal(q, q_cpu)
        assert s.view(np.uint32) == s_cpu.view(np.uint32)

    a = rng.integers(-127, 128, (ROWS, COLS), dtype=np.int8)
    b = rng.integers(-127, 128, (OUT, COLS), dtype=np.int8)
    sa = rng.random(ROWS, dtype=np.float32)
    sb = rng.random(OUT, dtype=np.float32)
    y = gpu.matmul_rescale(a, b, sa, sb)
    np.testing.assert_array_equal(y.view(np.uint32),
                                  cpu.matmul_rescale(a, b, sa, sb).view(np.uint32))


# The tensor-core kernel on shapes that are no multiple of its tiles (M, N predicated, K padded),
# with every operand layout; 4-bit operands (from 4-bit quantizes) take the packed s4 MMA on
# sm_80/86/89 and s8 on sm_90.
SHAPES = [(1, 1, 1), (1, 17, 33), (197, 33, 65), (130, 129, 200), (256, 128, 128)]


def _int_matmul_module(m, n, k, ta, tb, bits):
    a_shape = f"{k}x{m}" if ta else f"{m}x{k}"
    b_shape = f"{n}x{k}" if tb else f"{k}x{n}"
    return f"""
func.func @product(%a: tensor<{a_shape}xf32>, %b: tensor<{b_shape}xf32>) -> tensor<{m}x{n}xi32> {{
  %qa, %sa = hot.quantize %a bits {bits} granularity per_tensor scale maxabs rounding nearest
      : tensor<{a_shape}xf32> -> tensor<{a_shape}xi8>, tensor<f32>
  %qb, %sb = hot.quantize %b bits {bits} granularity per_tensor scale maxabs rounding nearest
      : tensor<{b_shape}xf32> -> tensor<{b_shape}xi8>, tensor<f32>
  %acc = hot.int_matmul %qa{' transposed' if ta else ''}, %qb{' transposed' if tb else ''}
      : tensor<{a_shape}xi8>, tensor<{b_shape}xi8> -> tensor<{m}x{n}xi32>
  return %acc : tensor<{m}x{n}xi32>
}}
"""


@pytest.mark.parametrize("bits", [8, 4])
@pytest.mark.parametrize("ta,tb", [(False, True), (False, False), (True, False), (True, True)])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_int_matmul_shapes_on_gpu(hot_opt, device, tmp_path, m, n, k, ta, tb, bits):
    _require_toolchain(hot_opt)
    text = _int_matmul_module(m, n, k, ta, tb, bits)
    gpu = runner.compile_module(text, target="cuda", chip=_chip(device), cache_dir=tmp_path)
    rng = np.random.default_rng([m, n, k, ta, tb, bits])
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    qa, _ = reference.quantize(a, bits, "per_tensor", "maxabs", "nearest")
    qb, _ = reference.quantize(b, bits, "per_tensor", "maxabs", "nearest")
    lhs = qa.astype(np.int64).T if ta else qa.astype(np.int64)
    rhs = qb.astype(np.int64).T if tb else qb.astype(np.int64)
    np.testing.assert_array_equal(gpu.product(a, b), lhs @ rhs)


@pytest.mark.parametrize("chip,bits,mma", [("sm_80", 4, "m16n8k64"), ("sm_90", 4, "m16n8k32"),
                                           ("sm_90", 8, "m16n8k32")])
@pytest.mark.parametrize("ta,tb", [(False, True), (False, False), (True, False), (True, True)])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_int_matmul_shapes_lower(hot_opt, m, n, k, ta, tb, chip, bits, mma):
    """What the GPU test above runs lowers to PTX with the MMA the chip calls for (here,
    without a GPU)."""
    proc = subprocess.run([hot_opt, *runner.cuda_pipeline(chip, "isa"), "-o", "-"],
                          input=_int_matmul_module(m, n, k, ta, tb, bits),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"mma.sync.aligned.{mma}.row.col" in proc.stdout
    other = "m16n8k32" if mma == "m16n8k64" else "m16n8k64"
    assert f"mma.sync.aligned.{other}" not in proc.stdout
