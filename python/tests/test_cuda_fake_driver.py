"""The host side of lowered GPU modules, run for real on a machine without a GPU: the generated
host code calls libhot_cuda_runtime.so, which calls a fake CUDA driver (test/Runtime/CUDA/
Inputs/fake_driver.c, built as libcuda.so.1 and found through LD_LIBRARY_PATH). The fake loads
the real images (the kernels of each cubin and their static shared memory) and checks every
launch against the driver's documented limits (block and grid dimensions, dynamic shared memory
against the function's opt-in), but runs no kernel. What these tests check: every kernel of a
ViT-B layer's backward is found and launched, without a driver or runtime error; a call gives
back the memory it takes; a second call takes none from the driver (the runtime's cache); the
module's own buffers, which only kernels touch, are device memory, not managed memory. The
kernels' results are checked elsewhere (the simulator, and a GPU when lent)."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hot import demo, runner

ROOT = Path(__file__).resolve().parents[2]
FAKE_DRIVER = ROOT / "test" / "Runtime" / "CUDA" / "Inputs" / "fake_driver.c"
sys.path.insert(0, str(ROOT / "bench" / "gpu"))
import export  # noqa: E402  (bench/gpu/export.py: the ViT-B layer modules)

# Run in a child process, since LD_LIBRARY_PATH must be set before the driver is loaded: loads
# the compiled module, calls it twice and prints what the fake driver saw after each call. The
# arguments: random bf16 tensors of the case's shapes, or the demo's inputs of the training step.
CHILD = r"""
import ctypes, json, sys
import numpy as np
from hot import demo, runner
case = json.loads(open(sys.argv[1]).read())
module = runner.compile_module(open(case["module"]).read(), target="cuda", chip=case["chip"],
                               cache_dir=case["cache"], pipeline=case["pipeline"])
if case["inputs"] == "demo":
    names, _ = demo.header_names(demo.FIXTURE.read_text())
    args = demo.load_inputs(module.signatures[case["function"]], names)[0]
else:
    rng = np.random.default_rng(0)
    args = [runner.to_bfloat16(rng.standard_normal(shape).astype(np.float32))
            for shape in case["inputs"]]
driver = ctypes.CDLL("libcuda.so.1")
for name in ("fakeCudaLaunches", "fakeCudaDeviceAllocationCalls",
             "fakeCudaManagedAllocationCalls"):
    getattr(driver, name).restype = ctypes.c_longlong
calls = []
for _ in range(2):
    getattr(module, case["function"])(*args)
    calls.append({"launches": driver.fakeCudaLaunches(),
                  "device": driver.fakeCudaDeviceAllocationCalls(),
                  "managed": driver.fakeCudaManagedAllocationCalls(),
                  "live": driver.fakeCudaLiveAllocations(),
                  "errors": driver.fakeCudaErrors()})
print("CALLS " + json.dumps(calls), flush=True)
"""


def _toolkit_include():
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    include = Path(ptxas).resolve().parent.parent / "include"
    return include if (include / "cuda.h").is_file() else None


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    """The folder holding the fake libcuda.so.1."""
    include = _toolkit_include()
    if include is None:
        pytest.skip("no CUDA toolkit (cuda.h)")
    try:
        runner.find_cuda_runtime()
    except Exception as error:  # the runtime is built only where the toolkit is
        pytest.skip(f"no libhot_cuda_runtime.so: {error}")
    folder = tmp_path_factory.mktemp("fake_driver")
    subprocess.run([runner.find_llvm_tool("clang"), "-std=c11", "-D_GNU_SOURCE", "-O1",
                    "-fPIC", "-shared", f"-I{include}", str(FAKE_DRIVER),
                    "-Wl,-soname,libcuda.so.1", "-lpthread", "-o",
                    str(folder / "libcuda.so.1")], check=True)
    return folder


def _run_on_fake_driver(fake_driver, tmp_path, text, chip, capability, pipeline, function,
                        inputs):
    """Compiles ``text`` here, runs it twice in a child over the fake driver, checks that no
    driver call failed and that no runtime error was printed; returns the child's counts after
    each call, the number of kernels the modules loaded and the kernels launched, in order."""
    module_path = tmp_path / "module.mlir"
    module_path.write_text(text)
    # Compiled here; the child finds the library in the cache.
    runner.compile_module(text, target="cuda", chip=chip, cache_dir=tmp_path, load=False,
                          pipeline=pipeline)
    case = {"module": str(module_path), "chip": chip, "cache": str(tmp_path),
            "pipeline": pipeline, "function": function, "inputs": inputs}
    (tmp_path / "case.json").write_text(json.dumps(case))
    (tmp_path / "child.py").write_text(CHILD)
    env = {**os.environ, "LD_LIBRARY_PATH": str(fake_driver), "FAKE_CUDA_TRACE": "1",
           "FAKE_CUDA_SUMMARY": "1", "FAKE_CUDA_CC": str(capability),
           "FAKE_CUDA_MEMORY_BYTES": str(8 << 30), "PYTHONPATH": str(ROOT / "python")}
    child = subprocess.run([sys.executable, str(tmp_path / "child.py"),
                            str(tmp_path / "case.json")],
                           capture_output=True, text=True, env=env, timeout=600)
    log = child.stderr
    assert child.returncode == 0, log[-4000:]
    assert "hot_cuda_runtime:" not in log, log[-4000:]
    assert not re.search(r"^fake_cuda: \S+: error \d+:", log, re.M), log[-4000:]
    assert re.search(r"^fake_cuda: summary: \d+ launches, 0 errors,", log, re.M), log[-4000:]
    kernels = sum(int(n) for n in re.findall(r"cuModuleLoadData = module\d+ with (\d+) kernels",
                                             log))
    launched = re.findall(r"^fake_cuda: launch (\S+) grid", log, re.M)
    calls = json.loads(child.stdout.split("CALLS ", 1)[1])
    assert calls[0]["errors"] == calls[1]["errors"] == 0
    return calls, kernels, launched, log


# (layer, chip, compute capability): the wgmma kernels (129 KiB of dynamic shared memory,
# opted in) and a split-K product on sm_90a; mma.sync with s4 operands on sm_80.
CASES = [("fc1", "sm_90a", 90), ("fc1", "sm_80", 80), ("proj", "sm_90a", 90)]


@pytest.mark.parametrize("layer,chip,capability", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_layer_host_code_on_fake_driver(fake_driver, tmp_path, layer, chip, capability):
    """One bf16 ViT-B layer's HOT backward (bench/gpu/export.py's module)."""
    o, i = next((o, i) for name, o, i in export.LAYERS if name == layer)
    inputs = [[export.BATCH, export.TOKENS, i], [o, i], [export.BATCH, export.TOKENS, o]]
    (first, second), kernels, launched, log = _run_on_fake_driver(
        fake_driver, tmp_path, export.layer_module("layer", o, i, "bf16"), chip, capability,
        ["--hot-rewrite-backward-matmuls", *runner.cuda_pipeline(chip)], "layer", inputs)
    # As many launches per call as the modules have kernels, the same ones in both calls.
    assert kernels > 0
    assert (first["launches"], second["launches"]) == (kernels, 2 * kernels)
    assert len(launched) == 2 * kernels
    assert sorted(launched[:kernels]) == sorted(launched[kernels:])
    # The tensor-core products ran with the shared memory they asked for.
    if chip == "sm_90a":
        assert re.search(r"cuFuncSetAttribute\(hot_int_mma_wgmma_\S+, 8, 132096\)", log)
    # The runner's buffers (the arguments and the results, which the host writes or reads) are
    # managed memory; every buffer of the module's own, which only its kernels touch, is device
    # memory (hot-gpu-device-buffers).
    assert first["managed"] == len(inputs) + 2
    assert first["device"] > 0
    # What the first call took from the driver is kept for the second, which takes nothing.
    assert first["live"] == second["live"]
    assert (second["device"], second["managed"]) == (first["device"], first["managed"])


def test_training_step_host_code_on_fake_driver(fake_driver, tmp_path):
    """The bundled ViT block's whole training step (hot-training-pipeline; test_gpu_execution's
    test_training_step_on_gpu runs its kernels on the simulator) on sm_90a: some 200 kernels,
    most of them the generic linalg mapping's, each in a module of its own."""
    text = subprocess.run([runner.find_hot_opt(), str(demo.FIXTURE),
                           "--hot-training-pipeline=remarks=false"],
                          capture_output=True, text=True, check=True).stdout
    (first, second), kernels, launched, _ = _run_on_fake_driver(
        fake_driver, tmp_path, text, "sm_90a", 90, runner.cuda_pipeline("sm_90a"), "train_step",
        "demo")
    assert kernels > 100
    # Each call launches every kernel at least once and the same kernels as the other call.
    assert first["launches"] >= kernels
    assert second["launches"] == 2 * first["launches"]
    assert sorted(launched[:first["launches"]]) == sorted(launched[first["launches"]:])
    # Most buffers are device memory; the second call takes nothing from the driver.
    assert first["device"] > first["managed"] > 0
    assert (second["device"], second["managed"], second["live"]) == \
        (first["device"], first["managed"], first["live"])
