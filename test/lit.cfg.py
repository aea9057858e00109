# -*- Python -*-
# lit configuration of the hot project.

import glob
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "HOT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.hot_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Fixtures"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
# The hot dialect and passes as a plugin of upstream mlir-opt.
config.substitutions.append(("%hot_plugin", config.hot_plugin))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.hot_tools_dir, config.llvm_tools_dir]
tools = [
    "hot-opt",
    "not",
    "count",
    ToolSubst("mlir-runner", command="mlir-runner-22", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Upstream tools, never the project's: mlir-opt is the one that loads
# HotPlugin.so.
llvm_config.add_tool_substitutions(
    [
        ToolSubst("mlir-opt", unresolved="fatal"),
        ToolSubst("mlir-translate", unresolved="fatal"),
        ToolSubst("llvm-nm", unresolved="fatal"),
        ToolSubst("llvm-readelf", unresolved="fatal"),
    ],
    [config.llvm_tools_dir],
)

# The GPU simulator (libhot_simulator_runtime.so, built everywhere) and the
# host C compiler its tests build kernels and drivers with.
config.substitutions.append(("%hot_simulator_runtime", config.hot_simulator_runtime))
config.substitutions.append(("%host_cc", config.host_cc))

# CUDA. The host runtime (libhot_cuda_runtime.so, built where the toolkit is),
# the toolkit's tools, and the GPU execution tests: feature `cuda` only where
# a device answers, so that a machine without one reports those tests as
# unsupported.
config.substitutions.append(("%hot_cuda_runtime", config.hot_cuda_runtime))
if config.hot_cuda_runtime:
    config.available_features.add("hot-cuda-runtime")


def find_cuda_tool(name):
    """The toolkit's `name`, else one on PATH, else one from an NVIDIA wheel
    in the project's virtual environment (nvidia/cu13/bin/...)."""
    candidates = []
    for bin_dir in (config.cuda_bin_dir, "/usr/local/cuda/bin"):
        if bin_dir:
            candidates.append(os.path.join(bin_dir, name))
    on_path = shutil.which(name)
    if on_path:
        candidates.append(on_path)
    venv = os.path.dirname(os.path.dirname(config.python_executable))
    candidates += sorted(
        glob.glob(os.path.join(venv, "lib", "python3*", "site-packages",
                               "nvidia", "*", "bin", name)),
        reverse=True,
    )
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


ptxas = find_cuda_tool("ptxas")
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    lit_config.note(f"ptxas: {ptxas}")

# `cuobjdump -sass` runs nvdisasm (NVDISASM_PATH names its directory): the
# feature means both are there.
cuobjdump = find_cuda_tool("cuobjdump")
nvdisasm = find_cuda_tool("nvdisasm")
if cuobjdump and nvdisasm:
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", cuobjdump))
    config.environment["NVDISASM_PATH"] = os.path.dirname(nvdisasm)
    lit_config.note(f"cuobjdump: {cuobjdump}")

# gpu-module-to-binary (format=bin|fatbin) looks for ptxas under CUDA_ROOT.
if ptxas and "CUDA_ROOT" not in os.environ:
    config.environment["CUDA_ROOT"] = os.path.dirname(os.path.dirname(ptxas))

# Whether a GPU can run code: the runtime library itself answers, in a child
# process (a CUDA context in lit's own process would be inherited by forks).
# HOT_TEST_CUDA=0 turns the execution tests off.
_CUDA_PROBE = """
import ctypes, sys
try:
    lib = ctypes.CDLL(sys.argv[1])
except OSError:
    sys.exit(1)
major, minor = ctypes.c_int(0), ctypes.c_int(0)
count = lib.hotCudaRuntimeProbe(ctypes.byref(major), ctypes.byref(minor))
print(count, major.value, minor.value)
"""


def probe_cuda_device():
    if not config.hot_cuda_runtime or not os.path.exists(config.hot_cuda_runtime):
        return None
    if os.environ.get("HOT_TEST_CUDA", "1") == "0":
        return None
    try:
        result = subprocess.run(
            [config.python_executable, "-c", _CUDA_PROBE, config.hot_cuda_runtime],
            capture_output=True, text=True, timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    fields = result.stdout.split()
    if result.returncode != 0 or len(fields) != 3 or int(fields[0]) <= 0:
        return None
    return int(fields[1]), int(fields[2])


capability = probe_cuda_device()
if capability:
    major, minor = capability
    config.available_features.add("cuda")
    lit_config.note(f"cuda: device 0 is sm_{major}{minor}")
else:
    major, minor = 8, 0
# The chip of device 0 (sm_80 where there is none, for tests that only
# compile) and the PTX version LLVM needs to target it.
config.substitutions.append(("%cuda_chip", f"sm_{major}{minor}"))
# Its architecture-specific target where hot-opt has kernels for one (sm_90a:
# wgmma), else the same chip.
arch_chip = "sm_90a" if (major, minor) == (9, 0) else f"sm_{major}{minor}"
config.substitutions.append(("%cuda_arch_chip", arch_chip))
ptx = "+ptx87" if major >= 12 else "+ptx86" if major >= 10 else "+ptx80"
config.substitutions.append(("%cuda_ptx_features", ptx))
