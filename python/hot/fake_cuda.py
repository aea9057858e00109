"""Runs the host side of lowered GPU modules on a machine without a GPU.

The generated host code calls ``libhot_cuda_runtime.so``, which calls the CUDA driver. Here the
driver is ``test/Runtime/CUDA/Inputs/fake_driver.c``, built as ``libcuda.so.1`` and found through
``LD_LIBRARY_PATH``: it loads the real images (the kernels of each cubin and their static shared
memory), checks every call against the driver API's documented rules (launch limits, the
shared-memory opt-in, handles, stream order) and records it, but runs no kernel. So a module's
results are garbage (poison), and what a run tells is how its host code uses the driver: which
kernels it launches and how, how much memory of which kind it takes, how many driver calls a
step makes, whether anything fails.

    folder = fake_cuda.build_driver(tmp)                      # needs cuda.h and clang
    run = fake_cuda.run(text, "sm_90a", pipeline, "layer", shapes, tmp, folder)
    run.calls[1]["device"], run.calls[1]["driver_calls"]["cuLaunchKernel"], run.kernels, ...
"""

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence, Union

from hot import runner

ROOT = Path(__file__).resolve().parents[2]
DRIVER_SOURCE = ROOT / "test" / "Runtime" / "CUDA" / "Inputs" / "fake_driver.c"


class Unavailable(RuntimeError):
    """No CUDA toolkit header or no libhot_cuda_runtime.so to run the fake driver with."""


def toolkit_include() -> Path:
    """The CUDA toolkit's include folder (ptxas's toolkit, else /usr/local/cuda)."""
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    include = Path(ptxas).resolve().parent.parent / "include"
    if not (include / "cuda.h").is_file():
        raise Unavailable(f"no cuda.h in {include}")
    return include


def build_driver(folder: Union[str, os.PathLike]) -> Path:
    """Builds the fake ``libcuda.so.1`` into ``folder``; returns the folder."""
    include = toolkit_include()
    try:
        runner.find_cuda_runtime()
    except Exception as error:  # the runtime is built only where the toolkit is
        raise Unavailable(f"no libhot_cuda_runtime.so: {error}") from error
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([runner.find_llvm_tool("clang"), "-std=c11", "-D_GNU_SOURCE", "-O1", "-fPIC",
                    "-shared", f"-I{include}", str(DRIVER_SOURCE), "-Wl,-soname,libcuda.so.1",
                    "-lpthread", "-o", str(folder / "libcuda.so.1")], check=True)
    return folder


# Runs in a child process (LD_LIBRARY_PATH must name the fake before the driver is loaded):
# loads the compiled module, calls it, and after each call prints the fake's counters and a
# marker that splits the trace into calls.
_CHILD = r"""
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
    # A rewriting pipeline appends the step's seed (runner: the last input).
    args += [np.int64(20261203)] * (len(module.signatures[case["function"]].inputs) - len(args))
driver = ctypes.CDLL("libcuda.so.1")
for name in ("fakeCudaLaunches", "fakeCudaDeviceAllocationCalls",
             "fakeCudaManagedAllocationCalls"):
    getattr(driver, name).restype = ctypes.c_longlong
driver.fakeCudaBytesInUse.restype = ctypes.c_size_t
driver.fakeCudaPeakBytes.restype = ctypes.c_size_t
driver.fakeCudaCallCounts.restype = ctypes.c_char_p
def call_counts():
    return {name: int(n) for name, n in
            (item.split("=") for item in driver.fakeCudaCallCounts().decode().split())}
calls = []
for k in range(case["calls"]):
    print(f"fake_cuda: ---- call {k} ----", file=sys.stderr, flush=True)
    before = call_counts()
    getattr(module, case["function"])(*args)
    after = call_counts()
    calls.append({"driver_calls": {name: n - before.get(name, 0) for name, n in after.items()
                                   if n != before.get(name, 0)},
                  "launches": driver.fakeCudaLaunches(),
                  "device": driver.fakeCudaDeviceAllocationCalls(),
                  "managed": driver.fakeCudaManagedAllocationCalls(),
                  "live": driver.fakeCudaLiveAllocations(),
                  "bytes": driver.fakeCudaBytesInUse(),
                  "peak": driver.fakeCudaPeakBytes(),
                  "errors": driver.fakeCudaErrors()})
    print(f"fake_cuda: ---- end {k} ----", file=sys.stderr, flush=True)
print("CALLS " + json.dumps(calls), flush=True)
"""


@dataclasses.dataclass
class Run:
    """What one child run saw."""
    returncode: int
    log: str  # the child's stderr: the fake's trace, the runtime's messages
    calls: list  # per call: the fake's counters after it (cumulative), and "driver_calls":
    #              the driver entry points it called and how often (cuMemAlloc_v2: 3, ...)
    kernels: int  # kernels in the loaded modules
    launched: list  # kernel names, in launch order, all calls

    def errors(self) -> list:
        """The failed driver calls and the runtime's error messages."""
        return [line for line in self.log.splitlines()
                if re.match(r"fake_cuda: \S+: error \d+:", line)
                or line.startswith("hot_cuda_runtime:")]


def run(text: str, chip: str, pipeline: Sequence[str], function: str,
        inputs: Union[str, Sequence[Sequence[int]]], workdir: Union[str, os.PathLike],
        driver: Union[str, os.PathLike], capability: int = 0, calls: int = 2,
        memory_bytes: int = 8 << 30) -> Run:
    """Compiles ``text`` with ``pipeline`` (here), then calls ``function`` ``calls`` times in a
    child over the fake driver of ``driver`` (a folder from ``build_driver``), on random bf16
    tensors of the ``inputs`` shapes, or ``"demo"``: the demo's inputs of the training step. The
    fake device is ``capability`` (default: the chip's), with ``memory_bytes`` of memory."""
    workdir = Path(workdir)
    module_path = workdir / "module.mlir"
    module_path.write_text(text)
    runner.compile_module(text, target="cuda", chip=chip, cache_dir=workdir, load=False,
                          pipeline=list(pipeline))
    case = {"module": str(module_path), "chip": chip, "cache": str(workdir),
            "pipeline": list(pipeline), "function": function, "inputs": inputs,
            "calls": calls}
    (workdir / "case.json").write_text(json.dumps(case))
    (workdir / "child.py").write_text(_CHILD)
    capability = capability or int(re.match(r"sm_(\d+)", chip).group(1))
    env = {**os.environ, "LD_LIBRARY_PATH": str(driver), "FAKE_CUDA_TRACE": "1",
           "FAKE_CUDA_SUMMARY": "1", "FAKE_CUDA_CC": str(capability),
           "FAKE_CUDA_MEMORY_BYTES": str(memory_bytes), "PYTHONPATH": str(ROOT / "python")}
    child = subprocess.run([sys.executable, str(workdir / "child.py"),
                            str(workdir / "case.json")],
                           capture_output=True, text=True, env=env, timeout=600)
    log = child.stderr
    counts = (json.loads(child.stdout.split("CALLS ", 1)[1])
              if "CALLS " in child.stdout else [])
    kernels = sum(int(n) for n in
                  re.findall(r"cuModuleLoadData = module\d+ with (\d+) kernels", log))
    return Run(child.returncode, log, counts, kernels,
               re.findall(r"^fake_cuda: launch (\S+) grid", log, re.M))
