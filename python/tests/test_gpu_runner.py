"""The runner's CUDA target: hot ops lowered by hot-opt --hot-lower-to-nvvm, linked against
libhot_cuda_runtime.so, called with numpy arrays in managed memory.

Everything here runs without a GPU: compiling and linking (where hot-opt, the CUDA toolkit and
the runtime library are), the calling machinery against a host-only stand-in of the runtime,
and the lowering of the GPU tests' modules to PTX. The calls on a real GPU are in
test_gpu_execution.py.
"""

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hot import runner
from gpu_cases import (COLS, MODULE, ROWS, SHAPES, _chip, _int_matmul_module,  # noqa: F401
                       _require_toolchain)


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


def test_prebuilt_libraries_load_without_hot_opt(hot_opt, tmp_path, monkeypatch):
    """$HOT_PREBUILT_DIR: a cuda library built here is copied there under a name that depends
    on the module and the lowering only; where there is no hot-opt (a GPU machine without
    LLVM) the same call loads it from there, and a module never built is a clear error."""
    _require_toolchain(hot_opt)
    prebuilt = tmp_path / "prebuilt"
    monkeypatch.setenv(runner.PREBUILT_ENV, str(prebuilt))
    built = runner.compile_module(MODULE, target="cuda", chip="sm_90a",
                                  cache_dir=tmp_path / "cache", load=False)
    libraries = sorted(prebuilt.glob("*.so"))
    assert len(libraries) == 1
    assert libraries[0].read_bytes() == built.library_path.read_bytes()

    monkeypatch.setattr(runner, "find_hot_opt", lambda: None)
    loaded = runner.compile_module(MODULE, target="cuda", chip="sm_90a",
                                   cache_dir=tmp_path / "elsewhere", load=False)
    assert loaded.library_path == libraries[0]
    assert set(loaded.signatures) == set(built.signatures)
    with pytest.raises(FileNotFoundError, match="no hot-opt here and no prebuilt library"):
        runner.compile_module(MODULE, target="cuda", chip="sm_90", load=False)


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


MMA_SYNC_S8 = r"mma\.sync\.aligned\.m16n8k32\.row\.col"
MMA_SYNC_S4 = r"mma\.sync\.aligned\.m16n8k64\.row\.col"
# N is the kernel's tile-n: 128, or 64 where automatic tiles halve it.
WGMMA_S8 = r"wgmma\.mma_async\.sync\.aligned\.m64n(64|128)k32\.s32\.s8\.s8"


@pytest.mark.parametrize("chip,bits,mma", [("sm_80", 4, MMA_SYNC_S4), ("sm_90", 4, MMA_SYNC_S8),
                                           ("sm_90", 8, MMA_SYNC_S8), ("sm_90a", 4, WGMMA_S8),
                                           ("sm_90a", 8, WGMMA_S8)])
@pytest.mark.parametrize("ta,tb", [(False, True), (False, False), (True, False), (True, True)])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_int_matmul_shapes_lower(hot_opt, m, n, k, ta, tb, chip, bits, mma):
    """What the GPU test above runs lowers to PTX with the MMA the chip calls for (here,
    without a GPU): one kind of MMA instruction per kernel, never another."""
    proc = subprocess.run([hot_opt, *runner.cuda_pipeline(chip, "isa"), "-o", "-"],
                          input=_int_matmul_module(m, n, k, ta, tb, bits),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert re.search(mma, proc.stdout)
    for other in {MMA_SYNC_S8, MMA_SYNC_S4, WGMMA_S8} - {mma}:
        assert not re.search(other, proc.stdout)
