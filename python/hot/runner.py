"""Compile an MLIR module to a native shared library and call it with numpy arrays.

Usage::

    from hot.runner import compile_module
    mod = compile_module(mlir_text)            # hot-opt --hot-lower-to-cpu by default
    y = mod.fn(x, 3)                           # or mod.call("fn", x, 3)
    gpu = compile_module(mlir_text, target="cuda", chip="sm_90")   # the same, on a GPU
    sim = compile_module(mlir_text, target="simulator", chip="sm_80")  # its kernels, on the CPU

Pipeline
--------
1. *Signature discovery*: ``<opt> --mlir-print-op-generic`` (no passes) on the input; the
   ``function_type`` and ``sym_name`` properties of every public top-level ``func.func`` with a
   body are parsed from the generic form.  Supported types: ranked tensors with static shapes
   (rank 0 included) of ``i1 i8 i16 i32 i64 index f32 f64``, and scalars of the same types.
   ``f16`` is numpy's float16; ``bf16`` tensors are uint16 arrays of bfloat16 bit patterns
   (``to_bfloat16`` / ``from_bfloat16`` convert). Dynamic dimensions raise ``ValueError``;
   other types (memref, vector, encodings, ...) raise ``NotImplementedError``.
2. *Lowering*: ``<opt> <pipeline>`` down to the LLVM dialect (by default hot-opt's
   ``--hot-lower-to-cpu``; with upstream ``mlir-opt`` the equivalent ``UPSTREAM_CPU_PIPELINE``),
   ``mlir-translate --mlir-to-llvmir``, then ``clang -O2 -shared -fPIC`` linked against ``libm``
   and ``libmlir_c_runner_utils`` (for ``memrefCopy`` and friends).  A failing stage raises
   ``CompileError`` carrying the tool's stderr (with ``input.mlir:LINE:COL`` locations).
   With ``target="cuda"`` the pipeline is hot-opt's ``--hot-lower-to-nvvm`` (``cuda_pipeline``:
   kernels embedded as a fatbin for ``chip``, the same C wrappers and out-params as the CPU
   path) and the library is linked against ``libhot_cuda_runtime.so`` (``find_cuda_runtime``)
   with ``-z defs``: any undefined symbol not in the runtime or libc/libm fails the link.
   ``target="simulator"`` lowers the same way with ``simulator=1`` (``simulator_pipeline``):
   the kernels generated for ``chip`` are embedded as a host shared object (``#hot.simulator``)
   and the library is linked against ``libhot_simulator_runtime.so``
   (``find_simulator_runtime``), which runs every launch on the CPU, one fiber per GPU thread.
3. *Caching*: libraries are stored under ``cache_dir`` (default ``$HOT_CACHE_DIR`` or
   ``<repo>/build/cache/runner``) as ``<sha256>.so`` + ``<sha256>.json`` (signatures), keyed by
   the module text, the pipeline, and path/mtime/size of every tool used.  Entries are built in a
   private temporary directory and moved in with ``os.replace``, so concurrent processes never
   see partial files.

Calling convention (checked against the LLVM IR of the generated wrappers)
--------------------------------------------------------------------------
The pipeline bufferizes with identity layouts at function boundaries, turns every tensor result
into a caller-allocated out-parameter appended after the inputs (``buffer-results-to-out-params``
with ``modify-public-functions``), and requests C wrappers.  For
``func.func @f(%a: tensor<2x3xf32>, %k: i64) -> (tensor<f32>, tensor<3xi32>)`` the library
exports::

    void _mlir_ciface_f(Desc2 *a, int64_t k, Desc0 *r0, Desc1 *r1);

where ``DescN`` is the memref descriptor of rank N::

    struct DescN { void *allocated; void *aligned; int64_t offset;
                   int64_t sizes[N]; int64_t strides[N]; };   // N == 0: first three fields only

Sizes and strides are in elements.  Scalars are passed by value (i64/index -> int64_t,
i32 -> int32_t, f32 -> float, f64 -> double, i1 -> bool, ...).  Scalar results that remain after
the out-param conversion are returned by value when there is exactly one; with several, the
wrapper takes a pointer to a struct of them as its *first* argument.

Runner behaviour:

* Inputs must be numpy arrays of exactly the declared shape and dtype (``TypeError`` otherwise;
  nothing is cast).  A numpy scalar of the exact dtype is accepted for rank 0.  Python numbers
  are accepted for scalar parameters (range-checked for integers).
* Inputs are copied into fresh 64-byte-aligned buffers before every call: one-shot
  bufferization treats function arguments as writable, so compiled code may update an input
  buffer in place.
* Outputs are allocated by the runner (64-byte aligned) and poisoned beforehand -- NaN for
  floats, every byte ``0x5A`` for integers and booleans (``POISON_BYTE``) -- so that outputs the
  code never writes are visible.  For bool outputs inspect ``out.view(np.uint8)``.
* ``target="cuda"`` and ``"simulator"``: inputs and outputs live in managed memory from the runtime's
  ``mgpuMemAlloc(host_shared=true)`` (inputs copied in, outputs poisoned there, copied back into
  numpy arrays after the call, every buffer freed with ``mgpuMemFree``); the generated host code
  synchronizes each launch before it returns.  Loading needs the CUDA driver (``libcuda.so.1``);
  ``probe_cuda_device`` says whether a GPU is usable without touching this process.
* A pipeline that rewrites backward products (``hot-rewrite-backward-matmuls``, so
  ``hot-training-pipeline`` too) appends the per-step stochastic-rounding seed, an
  ``i64 {hot.seed}`` argument: the compiled function then takes it as its last input (a fresh
  seed per training step). Any other change of a function's arguments by the pipeline is a
  ``ValueError`` at compilation.
* A call returns the results in declaration order: ``None`` for none, the value itself for one,
  a tuple otherwise.  Scalar results come back as numpy scalars.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

import numpy as np

__all__ = [
    "UPSTREAM_CPU_PIPELINE",
    "HOT_CPU_PIPELINE",
    "cuda_pipeline",
    "find_cuda_runtime",
    "find_simulator_runtime",
    "simulator_pipeline",
    "probe_cuda_device",
    "POISON_BYTE",
    "CompileError",
    "ScalarType",
    "TensorType",
    "FunctionSignature",
    "CompiledFunction",
    "CompiledModule",
    "compile_module",
    "lower_to_llvm_ir",
    "parse_signatures",
    "parse_type",
    "find_hot_opt",
    "find_llvm_tool",
    "default_opt_tool",
    "default_cache_dir",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
LLVM_PREFIX = Path("/usr/lib/llvm-22")
LLVM_VERSION_SUFFIX = "-22"

# Upstream MLIR 22 passes equivalent to hot-opt's `--hot-lower-to-cpu`, as mlir-opt argv strings.
# Notes:
# * elementwise arith on whole tensors (casts, adds) becomes linalg first so that it bufferizes.
# * `modify-public-functions=1` is required: without it (the default in MLIR 22)
#   buffer-results-to-out-params leaves public functions alone and results stay returned memrefs.
# * `hoist-static-allocs=0`: with 1 a result would *be* its out-param (no copy), but MLIR 22
#   crashes when a function returns the same buffer twice (AOTAutograd forwards do).
# * `--llvm-request-c-wrappers` runs before any pass that creates function declarations
#   (math-to-libm, math-to-funcs): a wrapper requested on a libm declaration such as `erff`
#   would make calls go to a non-existent `_mlir_ciface_erff`.
# * math: ops with an LLVM intrinsic go through convert-math-to-llvm first; what is left (erf,
#   ...) becomes libm calls; ipowi/fpowi are outlined by convert-math-to-funcs (convert-to-llvm
#   alone fails on math.ipowi and leaves math.erf).
UPSTREAM_CPU_PIPELINE: list[str] = [
    "--convert-elementwise-to-linalg",
    "--one-shot-bufferize=bufferize-function-boundaries=1"
    " function-boundary-type-conversion=identity-layout-map",
    "--buffer-results-to-out-params=hoist-static-allocs=0 modify-public-functions=1",
    "--buffer-deallocation-pipeline",
    "--llvm-request-c-wrappers",
    "--convert-linalg-to-loops",
    "--expand-strided-metadata",
    "--lower-affine",
    "--convert-math-to-funcs",
    "--convert-scf-to-cf",
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--convert-to-llvm",
    "--reconcile-unrealized-casts",
]

# Pipeline used with hot-opt (a registered pass pipeline).
HOT_CPU_PIPELINE: list[str] = ["--hot-lower-to-cpu"]


def cuda_pipeline(chip: str = "sm_90", format: str = "fatbin", options: str = "") -> list[str]:
    """hot-opt's ``--hot-lower-to-nvvm`` with the calling convention of the CPU path (C
    wrappers, tensor results as caller-allocated out-params); ``options``: more of the
    pipeline's options (``"split-k=2"``, ...)."""
    return [f"--hot-lower-to-nvvm=chip={chip} format={format} c-interface=1 "
            f"results-to-out-params=1{' ' + options if options else ''}"]


def simulator_pipeline(chip: str = "sm_80", options: str = "") -> list[str]:
    """``cuda_pipeline(chip)`` with every gpu.module also compiled for the SIMT simulator, whose
    object is the one embedded (the PTX is generated too; no ptxas run)."""
    return [f"--hot-lower-to-nvvm=chip={chip} format=isa simulator=1 c-interface=1 "
            f"results-to-out-params=1{' ' + options if options else ''}"]


CLANG_FLAGS: list[str] = ["-O2", "-shared", "-fPIC", "-Wno-override-module",
                          # Calls inside the library go to its own functions, never to a
                          # libc or libm function of the same name (a step called `step`).
                          "-Wl,-Bsymbolic"]
LINK_FLAGS: list[str] = [
    f"-L{LLVM_PREFIX / 'lib'}",
    "-lmlir_c_runner_utils",
    f"-Wl,-rpath,{LLVM_PREFIX / 'lib'}",
    "-lm",
]

TARGETS = ("cpu", "cuda", "simulator")
# The targets whose kernels run through the mgpu* functions of a runtime library.
GPU_TARGETS = ("cuda", "simulator")

POISON_BYTE = 0x5A
ALIGNMENT = 64
TOOL_TIMEOUT_S = 600
_CACHE_FORMAT = "hot-runner-v2"
# A directory of GPU libraries built elsewhere: with it set, compile_module(target="cuda")
# copies each library it builds there (named by what it computes, not by the tools), and where
# there is no hot-opt (a GPU machine without LLVM) it loads them from there instead.
PREBUILT_ENV = "HOT_PREBUILT_DIR"


# --------------------------------------------------------------------------------------------
# Errors and tool discovery
# --------------------------------------------------------------------------------------------


class CompileError(RuntimeError):
    """A compilation stage failed; ``stderr`` holds the tool's diagnostics."""

    def __init__(self, stage: str, command: Sequence[str], returncode: int, stderr: str):
        self.stage = stage
        self.command = list(command)
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(
            f"{stage} failed ({Path(self.command[0]).name} exited with {returncode}):\n"
            f"{stderr.rstrip()}\ncommand: {shlex.join(self.command)}"
        )


def _resolve_executable(tool: Union[str, os.PathLike]) -> str:
    tool = os.fspath(tool)
    if os.sep in tool:
        if not (os.path.isfile(tool) and os.access(tool, os.X_OK)):
            raise FileNotFoundError(f"tool not found or not executable: {tool}")
        return os.path.abspath(tool)
    found = shutil.which(tool)
    if found is None:
        # `mlir-opt-22` may only exist as /usr/lib/llvm-22/bin/mlir-opt.
        base = tool[: -len(LLVM_VERSION_SUFFIX)] if tool.endswith(LLVM_VERSION_SUFFIX) else tool
        candidate = LLVM_PREFIX / "bin" / base
        if candidate.is_file():
            return str(candidate)
        raise FileNotFoundError(f"tool not found on PATH: {tool}")
    return found


def find_llvm_tool(base: str) -> str:
    """Locate an LLVM 22 tool (``mlir-opt``, ``mlir-translate``, ``clang``)."""
    return _resolve_executable(base + LLVM_VERSION_SUFFIX)


def find_hot_opt() -> Optional[str]:
    """``$HOT_OPT`` if set (must exist), else ``<repo>/build/bin/hot-opt`` if built, else None."""
    env = os.environ.get("HOT_OPT")
    if env:
        return _resolve_executable(env)
    built = REPO_ROOT / "build" / "bin" / "hot-opt"
    if built.is_file() and os.access(built, os.X_OK):
        return str(built)
    return None


def default_opt_tool() -> str:
    """hot-opt when available, otherwise upstream ``mlir-opt-22``."""
    return find_hot_opt() or find_llvm_tool("mlir-opt")


def _find_runtime(env_var: str, name: str, what: str, build_hint: str) -> Path:
    """``$env_var`` if set, else ``<repo>/build/lib/lib<name>.so``; it must exist."""
    env = os.environ.get(env_var)
    path = Path(env) if env else REPO_ROOT / "build" / "lib" / f"lib{name}.so"
    if not path.is_file():
        raise FileNotFoundError(f"{what} runtime library not found: {path} (set {env_var} or "
                                f"{build_hint})")
    return path.resolve()


def find_cuda_runtime() -> Path:
    """``$HOT_CUDA_RUNTIME`` if set, else ``<repo>/build/lib/libhot_cuda_runtime.so`` (must
    exist: build it where the CUDA toolkit is)."""
    return _find_runtime("HOT_CUDA_RUNTIME", "hot_cuda_runtime", "CUDA",
                         "build the project with the CUDA toolkit")


def find_simulator_runtime() -> Path:
    """``$HOT_SIMULATOR_RUNTIME`` if set, else ``<repo>/build/lib/libhot_simulator_runtime.so``
    (built with the project on every machine)."""
    return _find_runtime("HOT_SIMULATOR_RUNTIME", "hot_simulator_runtime", "simulator",
                         "build the project")


_CUDA_PROBE = """
import ctypes, sys
try:
    lib = ctypes.CDLL(sys.argv[1])
except OSError as e:
    print("cannot load the runtime:", e)
    sys.exit(1)
major, minor = ctypes.c_int(0), ctypes.c_int(0)
count = lib.hotCudaRuntimeProbe(ctypes.byref(major), ctypes.byref(minor))
print(count, major.value, minor.value)
"""


def probe_cuda_device(runtime: Union[None, str, os.PathLike] = None
                      ) -> tuple[Optional[tuple[int, int]], str]:
    """``((major, minor), "")`` of device 0 when a GPU is usable, else ``(None, why)``.

    Asks the runtime's ``hotCudaRuntimeProbe`` in a child process (as test/lit.cfg.py does), so
    that no CUDA context is created in this one.
    """
    try:
        lib = Path(runtime) if runtime is not None else find_cuda_runtime()
    except FileNotFoundError as e:
        return None, str(e)
    import sys
    try:
        proc = subprocess.run([sys.executable, "-c", _CUDA_PROBE, str(lib)],
                              capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"the CUDA probe did not run: {e}"
    fields = proc.stdout.split()
    if proc.returncode != 0:
        return None, proc.stdout.strip() or proc.stderr.strip() or "the CUDA probe failed"
    if len(fields) != 3 or int(fields[0]) <= 0:
        return None, "hotCudaRuntimeProbe found no usable CUDA device"
    return (int(fields[1]), int(fields[2])), ""


def default_cache_dir() -> Path:
    env = os.environ.get("HOT_CACHE_DIR")
    return Path(env) if env else REPO_ROOT / "build" / "cache" / "runner"


def _is_upstream_opt(tool: str) -> bool:
    return Path(tool).name.startswith("mlir-opt")


def _resolve_pipeline(opt_tool: str, pipeline: Union[None, str, Iterable[str]]) -> list[str]:
    if pipeline is None:
        return list(UPSTREAM_CPU_PIPELINE if _is_upstream_opt(opt_tool) else HOT_CPU_PIPELINE)
    if isinstance(pipeline, str):
        return shlex.split(pipeline)
    return [str(p) for p in pipeline]


def _run(cmd: Sequence[str], *, stage: str, input: Optional[str] = None,
         cwd: Optional[Path] = None, env: Optional[dict[str, str]] = None) -> str:
    proc = subprocess.run(list(cmd), input=input, capture_output=True, text=True, cwd=cwd,
                          timeout=TOOL_TIMEOUT_S, env=env)
    if proc.returncode != 0:
        raise CompileError(stage, cmd, proc.returncode, proc.stderr)
    return proc.stdout


# --------------------------------------------------------------------------------------------
# Types and signatures
# --------------------------------------------------------------------------------------------

# MLIR type -> (numpy dtype, ctypes type used for scalars passed by value)
_ELEMENT_TYPES: dict[str, tuple[np.dtype, type]] = {
    "i1": (np.dtype(np.bool_), ctypes.c_bool),
    "i8": (np.dtype(np.int8), ctypes.c_int8),
    "i16": (np.dtype(np.int16), ctypes.c_int16),
    "i32": (np.dtype(np.int32), ctypes.c_int32),
    "i64": (np.dtype(np.int64), ctypes.c_int64),
    "index": (np.dtype(np.int64), ctypes.c_int64),
    "f32": (np.dtype(np.float32), ctypes.c_float),
    "f64": (np.dtype(np.float64), ctypes.c_double),
    "f16": (np.dtype(np.float16), ctypes.c_uint16),
    # numpy has no bfloat16: bf16 values travel as their 16-bit patterns
    # (see to_bfloat16 / from_bfloat16).
    "bf16": (np.dtype(np.uint16), ctypes.c_uint16),
}
_INT_BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "index": 64}


@dataclass(frozen=True)
class ScalarType:
    """A scalar (non-shaped) MLIR type, passed by value."""

    mlir: str

    @property
    def dtype(self) -> np.dtype:
        return _ELEMENT_TYPES[self.mlir][0]

    @property
    def ctype(self) -> type:
        return _ELEMENT_TYPES[self.mlir][1]

    def __str__(self) -> str:
        return self.mlir


@dataclass(frozen=True)
class TensorType:
    """A statically shaped ranked tensor, passed as a memref descriptor."""

    shape: tuple[int, ...]
    element: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        return _ELEMENT_TYPES[self.element][0]

    def __str__(self) -> str:
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + self.element + ">"


MlirType = Union[ScalarType, TensorType]


@dataclass(frozen=True)
class FunctionSignature:
    name: str
    inputs: tuple[MlirType, ...]
    results: tuple[MlirType, ...]

    @property
    def tensor_results(self) -> tuple[TensorType, ...]:
        return tuple(t for t in self.results if isinstance(t, TensorType))

    @property
    def scalar_results(self) -> tuple[ScalarType, ...]:
        return tuple(t for t in self.results if isinstance(t, ScalarType))

    def __str__(self) -> str:
        ins = ", ".join(map(str, self.inputs))
        outs = ", ".join(map(str, self.results))
        return f"@{self.name}({ins}) -> ({outs})"

    def to_json(self) -> dict:
        return {"name": self.name, "inputs": [str(t) for t in self.inputs],
                "results": [str(t) for t in self.results]}

    @classmethod
    def from_json(cls, d: dict) -> "FunctionSignature":
        return cls(d["name"], tuple(parse_type(t) for t in d["inputs"]),
                   tuple(parse_type(t) for t in d["results"]))


_TENSOR_RE = re.compile(r"tensor<(.*)>", re.S)
_DIMS_RE = re.compile(r"((?:(?:\d+|\?)x)*)(.+)", re.S)


def parse_type(text: str, where: str = "") -> MlirType:
    """Parse one MLIR type of the supported subset (see the module docstring)."""
    t = text.strip()
    ctx = f" ({where})" if where else ""
    if t in _ELEMENT_TYPES:
        return ScalarType(t)
    m = _TENSOR_RE.fullmatch(t)
    if m is None:
        raise NotImplementedError(f"unsupported type {t!r}{ctx}: only static tensors and "
                                  f"scalars of {', '.join(_ELEMENT_TYPES)} are supported")
    body = m.group(1).strip()
    if body.startswith("*"):
        raise ValueError(f"unranked tensor type {t!r}{ctx}: the runner needs static shapes")
    if "," in body:
        raise NotImplementedError(f"tensor encodings are not supported: {t!r}{ctx}")
    dm = _DIMS_RE.fullmatch(body)
    assert dm is not None
    dims = [d for d in dm.group(1).split("x") if d]
    element = dm.group(2).strip()
    if "?" in dims:
        raise ValueError(f"dynamic dimension in {t!r}{ctx}: the runner needs static shapes")
    if element not in _ELEMENT_TYPES:
        raise NotImplementedError(f"unsupported tensor element type {element!r} in {t!r}{ctx}")
    return TensorType(tuple(int(d) for d in dims), element)


_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = set(_OPEN.values())


def _skip_string(text: str, i: int) -> int:
    """``text[i]`` is a double quote: return the index just past the closing quote."""
    i += 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        i += 1
    raise ValueError("unterminated string in generic MLIR")


def _match_bracket(text: str, i: int) -> int:
    """``text[i]`` is one of ``([{``: return the index of the matching closer (strings skipped;
    angle brackets are not counted, since ``->`` and comparisons make them unreliable)."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i = _skip_string(text, i)
            continue
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unbalanced brackets in generic MLIR")


def _split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside any brackets (``()[]{}<>``, ``->`` excluded) and strings."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i = _skip_string(text, i)
            continue
        if c in "([{<":
            depth += 1
        elif c in ")]}" or (c == ">" and not (i > 0 and text[i - 1] == "-")):
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _parse_type_list(text: str, where: str) -> list[MlirType]:
    text = text.strip()
    if text.startswith("(") and _match_bracket(text, 0) == len(text) - 1:
        items = [p for p in _split_top_level(text[1:-1]) if p]
    else:
        items = [text]
    return [parse_type(p, f"{where} #{k}") for k, p in enumerate(items)]


def _parse_function_type(text: str, name: str) -> tuple[list[MlirType], list[MlirType]]:
    parts = _split_top_level(text, "->")
    if len(parts) != 2:
        raise ValueError(f"cannot parse function_type of @{name}: {text!r}")
    return (_parse_type_list(parts[0], f"@{name} argument"),
            _parse_type_list(parts[1], f"@{name} result"))


_FUNC_MARKER = '"func.func"() <{'


def parse_signatures(generic_text: str) -> dict[str, FunctionSignature]:
    """Signatures of the public ``func.func`` ops with a body at the top level of a module
    printed with ``--mlir-print-op-generic`` (nested modules and private functions skipped)."""
    sigs: dict[str, FunctionSignature] = {}
    text, depth, i = generic_text, 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            # Top-level ops sit inside `"builtin.module"() ({`, i.e. at bracket depth 2.
            if depth == 2 and text.startswith(_FUNC_MARKER, i):
                i = _parse_func_op(text, i, sigs)
            else:
                i = _skip_string(text, i)
            continue
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        i += 1
    return sigs


def _parse_func_op(text: str, i: int, sigs: dict[str, FunctionSignature]) -> int:
    """Parse the func.func starting at ``text[i]``; return the index just past its region."""
    props_open = i + len(_FUNC_MARKER) - 1
    props_close = _match_bracket(text, props_open)
    props: dict[str, str] = {}
    for entry in _split_top_level(text[props_open + 1:props_close]):
        key, eq, value = entry.partition("=")
        if eq:
            props[key.strip()] = value.strip()
    j = props_close + 1
    assert text[j] == ">", "expected '}>' after func.func properties"
    j += 1
    while text[j].isspace():
        j += 1
    assert text[j] == "(", "expected the region list of func.func"
    region_close = _match_bracket(text, j)
    region = text[j + 1:region_close].strip()
    has_body = region.startswith("{") and region[1:-1].strip() != ""

    name = json.loads(props["sym_name"])
    visibility = json.loads(props.get("sym_visibility", '"public"'))
    if has_body and visibility == "public":
        inputs, results = _parse_function_type(props["function_type"], name)
        sigs[name] = FunctionSignature(name, tuple(inputs), tuple(results))
    return region_close + 1


# --------------------------------------------------------------------------------------------
# Compilation
# --------------------------------------------------------------------------------------------


def _tool_fingerprint(path: str) -> str:
    st = os.stat(path)
    return f"{path}:{st.st_mtime_ns}:{st.st_size}"


def _cache_key(mlir_text: str, tools: Sequence[str], pipeline: Sequence[str],
               link_flags: Sequence[str]) -> str:
    h = hashlib.sha256()
    for part in [_CACHE_FORMAT, mlir_text, *map(_tool_fingerprint, tools), *pipeline,
                 *CLANG_FLAGS, *link_flags]:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _c_interface_arguments(llvm_dialect: str, name: str) -> Optional[list[str]]:
    """The arguments of ``_mlir_ciface_<name>`` in lowered text, each as printed
    (``%arg4: i64 {hot.seed}``); None where the pipeline made no C wrapper."""
    m = re.search(rf"llvm\.func @_mlir_ciface_{re.escape(name)}\(", llvm_dialect)
    if m is None:
        return None
    close = _match_bracket(llvm_dialect, m.end() - 1)
    return [a for a in _split_top_level(llvm_dialect[m.end():close]) if a]


def _as_lowered(sig: FunctionSignature, llvm_dialect: str) -> FunctionSignature:
    """``sig`` (parsed before the pipeline) as the compiled wrapper takes it. A pipeline that
    rewrites backward products (``hot-rewrite-backward-matmuls``, ``hot-training-pipeline``)
    appends the per-step seed, an ``i64 {hot.seed}`` argument, after the inputs: it becomes
    the last input. Any other change of the argument count is an error here rather than a call
    with arguments missing."""
    arguments = _c_interface_arguments(llvm_dialect, sig.name)
    if arguments is None:
        return sig
    first = 1 if len(sig.scalar_results) > 1 else 0
    expected = first + len(sig.inputs) + len(sig.tensor_results)
    after_inputs = first + len(sig.inputs)
    seeds = 0
    while (after_inputs + seeds < len(arguments)
           and re.search(r":\s*i64\s*\{[^}]*\bhot\.seed\b",
                         arguments[after_inputs + seeds])):
        seeds += 1
    if len(arguments) == expected + seeds:
        return FunctionSignature(sig.name, sig.inputs + (ScalarType("i64"),) * seeds,
                                 sig.results)
    raise ValueError(
        f"the pipeline changed the arguments of @{sig.name}: _mlir_ciface_{sig.name} takes "
        f"{len(arguments)}, the input's signature {sig} makes {expected}; run the passes that "
        f"change it before compiling, and compile their output")


def _lower_in(workdir: Path, opt: str, pipeline: Sequence[str], translate: str,
              env: Optional[dict[str, str]] = None
              ) -> tuple[dict[str, FunctionSignature], str]:
    """Run signature discovery, lowering and translation on ``workdir/input.mlir``."""
    generic = _run([opt, "--mlir-print-op-generic", "--mlir-elide-elementsattrs-if-larger=16",
                    "input.mlir"], stage="parsing", cwd=workdir)
    sigs = parse_signatures(generic)
    llvm_dialect = _run([opt, *pipeline, "input.mlir"], stage="lowering", cwd=workdir,
                        env=env)
    sigs = {name: _as_lowered(sig, llvm_dialect) for name, sig in sigs.items()}
    llvm_ir = _run([translate, "--mlir-to-llvmir"], stage="translation to LLVM IR",
                   input=llvm_dialect, cwd=workdir)
    return sigs, llvm_ir


def lower_to_llvm_ir(mlir_text: str, *, opt_tool: Optional[str] = None,
                     pipeline: Union[None, str, Iterable[str]] = None) -> str:
    """Lower ``mlir_text`` and return the LLVM IR (no caching); for inspection and tests."""
    opt = _resolve_executable(opt_tool) if opt_tool else default_opt_tool()
    with tempfile.TemporaryDirectory(prefix="hot-runner-") as tmp:
        (Path(tmp) / "input.mlir").write_text(mlir_text)
        _, llvm_ir = _lower_in(Path(tmp), opt, _resolve_pipeline(opt, pipeline),
                               find_llvm_tool("mlir-translate"))
    return llvm_ir


def _cuda_toolkit_env() -> Optional[dict[str, str]]:
    """The environment for gpu-module-to-binary: it finds ptxas on PATH but libdevice (needed
    for ``__nv_*`` math calls) only under CUDA_ROOT/CUDA_HOME, so name the toolkit when neither
    is set (ptxas's parent, else /usr/local/cuda)."""
    if os.environ.get("CUDA_ROOT") or os.environ.get("CUDA_HOME"):
        return None
    ptxas = shutil.which("ptxas")
    root = Path(ptxas).resolve().parent.parent if ptxas else Path("/usr/local/cuda")
    return {**os.environ, "CUDA_ROOT": str(root)}


def _cuda_link_flags(runtime: Path) -> list[str]:
    """Link against the runtime only; ``-z defs`` turns any other undefined symbol (beyond
    libc/libm) into a link error."""
    return [f"-L{runtime.parent}", f"-l:{runtime.name}", f"-Wl,-rpath,{runtime.parent}",
            "-Wl,-z,defs", "-lm"]


def compile_module(mlir_text: str, *, opt_tool: Optional[str] = None,
                   pipeline: Union[None, str, Iterable[str]] = None,
                   cache_dir: Union[None, str, os.PathLike] = None,
                   target: str = "cpu", chip: str = "sm_90",
                   load: bool = True) -> "CompiledModule":
    """Compile ``mlir_text`` to a shared library (cached) and load it.

    ``opt_tool``: path or name of the opt tool (default: hot-opt if found, else mlir-opt-22;
    ``target="cuda"`` needs hot-opt).
    ``pipeline``: argv strings (or one shell-quoted string) lowering to the LLVM dialect
    (default: ``HOT_CPU_PIPELINE`` for hot-opt, ``UPSTREAM_CPU_PIPELINE`` for mlir-opt,
    ``cuda_pipeline(chip)`` for ``target="cuda"``).
    ``cache_dir``: where libraries are cached (default: ``default_cache_dir()``).
    ``target``: ``"cpu"``, ``"cuda"`` (kernels for ``chip``, linked against
    ``find_cuda_runtime()``) or ``"simulator"`` (the kernels for ``chip`` run on the CPU by
    ``find_simulator_runtime()``). ``load=False`` compiles and links only: the module's functions
    cannot be called, but no GPU or CUDA driver is needed.

    With ``$HOT_PREBUILT_DIR`` set, a cuda library is also copied there, and on a machine with
    no hot-opt (a GPU machine without LLVM) it is loaded from there: build the libraries with
    the same text and chip where LLVM is, carry the directory along.
    """
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    prebuilt = os.environ.get(PREBUILT_ENV)
    if target in GPU_TARGETS:
        default_pipeline, find_runtime = ((cuda_pipeline, find_cuda_runtime) if target == "cuda"
                                          else (simulator_pipeline, find_simulator_runtime))
        opt = _resolve_executable(opt_tool) if opt_tool else find_hot_opt()
        if target == "cuda" and opt is None and prebuilt and not opt_tool:
            # A machine with the GPU but no LLVM: the library was built elsewhere.
            passes = cuda_pipeline(chip) if pipeline is None else _resolve_pipeline("", pipeline)
            return _load_prebuilt(Path(prebuilt), mlir_text, passes, target, load)
        if opt is None or _is_upstream_opt(opt):
            raise ValueError(f"target={target!r} needs hot-opt (its --hot-lower-to-nvvm "
                             "pipeline)")
        passes = default_pipeline(chip) if pipeline is None else _resolve_pipeline(opt, pipeline)
        runtime: Optional[Path] = find_runtime()
        link_flags = _cuda_link_flags(runtime)
        tools = [opt, str(runtime)]
    else:
        opt = _resolve_executable(opt_tool) if opt_tool else default_opt_tool()
        passes = _resolve_pipeline(opt, pipeline)
        runtime, link_flags, tools = None, LINK_FLAGS, [opt]
    env = _cuda_toolkit_env() if target in GPU_TARGETS else None
    translate = find_llvm_tool("mlir-translate")
    clang = find_llvm_tool("clang")
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()

    key = _cache_key(mlir_text, [*tools, translate, clang], passes, link_flags)
    lib_path, meta_path = cache / f"{key}.so", cache / f"{key}.json"

    def loaded(sigs: dict[str, FunctionSignature]) -> "CompiledModule":
        return CompiledModule(lib_path, sigs, runtime=runtime, load=load)

    def exported(module: "CompiledModule") -> "CompiledModule":
        if prebuilt and target == "cuda":
            _export_prebuilt(Path(prebuilt), mlir_text, passes, target, lib_path, meta_path)
        return module

    if lib_path.is_file() and meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        sigs = {d["name"]: FunctionSignature.from_json(d) for d in meta["functions"]}
        return exported(loaded(sigs))

    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=f".tmp-{key[:16]}-") as tmp:
        work = Path(tmp)
        (work / "input.mlir").write_text(mlir_text)
        sigs, llvm_ir = _lower_in(work, opt, passes, translate, env)
        _run([clang, *CLANG_FLAGS, "-x", "ir", "-", "-o", "lib.so", *link_flags],
             stage="native compilation", input=llvm_ir, cwd=work)
        meta = {"format": _CACHE_FORMAT, "opt_tool": opt, "pipeline": passes,
                "target": target, "functions": [s.to_json() for s in sigs.values()]}
        (work / "meta.json").write_text(json.dumps(meta, indent=1))
        # Metadata first: a present .so implies present metadata.
        os.replace(work / "meta.json", meta_path)
        os.replace(work / "lib.so", lib_path)
    return exported(loaded(sigs))


def _prebuilt_key(mlir_text: str, passes: Sequence[str], target: str) -> str:
    """The name of a prebuilt library: what it computes and how it was lowered, nothing of the
    machine that built it (the tools there are not here)."""
    h = hashlib.sha256()
    for part in [_CACHE_FORMAT, "prebuilt", target, mlir_text, *passes]:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _export_prebuilt(directory: Path, mlir_text: str, passes: Sequence[str], target: str,
                     lib_path: Path, meta_path: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    key = _prebuilt_key(mlir_text, passes, target)
    shutil.copyfile(meta_path, directory / f"{key}.json")
    shutil.copyfile(lib_path, directory / f"{key}.so")


def _load_prebuilt(directory: Path, mlir_text: str, passes: Sequence[str], target: str,
                   load: bool) -> "CompiledModule":
    key = _prebuilt_key(mlir_text, passes, target)
    lib_path, meta_path = directory / f"{key}.so", directory / f"{key}.json"
    if not (lib_path.is_file() and meta_path.is_file()):
        raise FileNotFoundError(
            f"no hot-opt here and no prebuilt library {lib_path.name} in {directory}: build it "
            f"where LLVM is with {PREBUILT_ENV}={directory} set")
    meta = json.loads(meta_path.read_text())
    sigs = {d["name"]: FunctionSignature.from_json(d) for d in meta["functions"]}
    return CompiledModule(lib_path, sigs, runtime=find_cuda_runtime(), load=load)


# --------------------------------------------------------------------------------------------
# Calling
# --------------------------------------------------------------------------------------------

_DESCRIPTOR_TYPES: dict[int, type] = {}


def _descriptor_type(rank: int) -> type:
    """ctypes struct of a rank-``rank`` memref descriptor."""
    if rank not in _DESCRIPTOR_TYPES:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                  ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _DESCRIPTOR_TYPES[rank] = type(f"MemRefDescriptor{rank}", (ctypes.Structure,),
                                       {"_fields_": fields})
    return _DESCRIPTOR_TYPES[rank]


def _descriptor(arr: np.ndarray) -> ctypes.Structure:
    """Descriptor of a C-contiguous array (row-major strides computed from the shape)."""
    desc = _descriptor_type(arr.ndim)()
    desc.allocated = desc.aligned = arr.ctypes.data
    desc.offset = 0
    if arr.ndim:
        strides, acc = [], 1
        for d in reversed(arr.shape):
            strides.append(acc)
            acc *= d
        desc.sizes[:] = list(arr.shape)
        desc.strides[:] = strides[::-1]
    return desc


def _aligned_empty(shape: tuple[int, ...], dtype: np.dtype,
                   fill_byte: Optional[int] = None) -> np.ndarray:
    """C-contiguous array whose data is ``ALIGNMENT``-byte aligned; uninitialised unless every
    byte is set to ``fill_byte``."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    if fill_byte is not None:
        raw.fill(fill_byte)
    start = (-raw.ctypes.data) % ALIGNMENT
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def _poisoned_output(t: TensorType) -> np.ndarray:
    if t.dtype.kind == "f":
        out = _aligned_empty(t.shape, t.dtype)
        out.fill(np.nan)
        return out
    return _aligned_empty(t.shape, t.dtype, fill_byte=POISON_BYTE)


def _prepare_input(value, t: TensorType, where: str) -> np.ndarray:
    if isinstance(value, np.generic) and t.rank == 0:
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{where}: expected a numpy array {t.shape} {t.dtype} for {t}, "
                        f"got {type(value).__name__}")
    if value.dtype != t.dtype:
        raise TypeError(f"{where}: expected dtype {t.dtype} for {t}, got {value.dtype}")
    if value.shape != t.shape:
        raise TypeError(f"{where}: expected shape {t.shape} for {t}, got {value.shape}")
    buf = _aligned_empty(t.shape, t.dtype)
    np.copyto(buf, value)
    return buf


def _convert_scalar(value, t: ScalarType, where: str):
    if t.mlir == "i1":
        if isinstance(value, (bool, np.bool_)) or (
                isinstance(value, (int, np.integer)) and int(value) in (0, 1)):
            return ctypes.c_bool(bool(value))
        raise TypeError(f"{where}: expected a bool for i1, got {value!r}")
    if t.mlir in _INT_BITS:
        if not isinstance(value, (int, np.integer, np.bool_)):
            raise TypeError(f"{where}: expected an integer for {t}, got {type(value).__name__}")
        bits, v = _INT_BITS[t.mlir], int(value)
        if not -(1 << (bits - 1)) <= v < (1 << bits):
            raise OverflowError(f"{where}: {v} does not fit in {t}")
        if v >= 1 << (bits - 1):  # signless: accept the unsigned range, pass two's complement
            v -= 1 << bits
        return t.ctype(v)
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
        raise TypeError(f"{where}: expected a real number for {t}, got {type(value).__name__}")
    return t.ctype(float(value))


class _HostBuffers:
    """Arguments and results of one call in 64-byte-aligned host memory (the CPU target)."""

    def input(self, value, t: TensorType, where: str) -> np.ndarray:
        return _prepare_input(value, t, where)

    def output(self, t: TensorType) -> np.ndarray:
        return _poisoned_output(t)

    def result(self, out: np.ndarray) -> np.ndarray:
        return out

    def release(self) -> None:
        pass


class _ManagedBuffers(_HostBuffers):
    """The same in managed memory from the runtime's ``mgpuMemAlloc`` (the GPU targets):
    inputs copied in, outputs poisoned there and copied back, everything freed afterwards."""

    def __init__(self, runtime: ctypes.CDLL):
        self._runtime = runtime
        self._pointers: list[int] = []

    def _managed(self, t: TensorType) -> np.ndarray:
        nbytes = int(np.prod(t.shape, dtype=np.int64)) * t.dtype.itemsize
        if nbytes == 0:  # the driver rejects empty allocations; nothing is read or written
            return _aligned_empty(t.shape, t.dtype)
        ptr = self._runtime.mgpuMemAlloc(nbytes, None, True)
        self._pointers.append(ptr)
        raw = (ctypes.c_uint8 * nbytes).from_address(ptr)
        return np.frombuffer(raw, dtype=t.dtype).reshape(t.shape)

    def input(self, value, t: TensorType, where: str) -> np.ndarray:
        checked = _prepare_input(value, t, where)
        buf = self._managed(t)
        np.copyto(buf, checked)
        return buf

    def output(self, t: TensorType) -> np.ndarray:
        buf = self._managed(t)
        np.copyto(buf, _poisoned_output(t))
        return buf

    def result(self, out: np.ndarray) -> np.ndarray:
        copy = _aligned_empty(out.shape, out.dtype)
        np.copyto(copy, out)
        return copy

    def release(self) -> None:
        for ptr in self._pointers:
            self._runtime.mgpuMemFree(ptr, None)
        self._pointers.clear()


def _load_gpu_runtime(path: Path) -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise RuntimeError(f"cannot load the GPU runtime {path}: {e} (a CUDA module needs the "
                           f"CUDA driver; probe_cuda_device() says why none is usable)") from e
    lib.mgpuMemAlloc.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_bool]
    lib.mgpuMemAlloc.restype = ctypes.c_void_p
    lib.mgpuMemFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.mgpuMemFree.restype = None
    return lib


class CompiledFunction:
    """A callable wrapper of ``_mlir_ciface_<name>`` (see the module docstring for the ABI)."""

    def __init__(self, lib: ctypes.CDLL, signature: FunctionSignature,
                 runtime: Optional[ctypes.CDLL] = None):
        self.signature = signature
        self._runtime = runtime
        try:
            self._cfunc = lib["_mlir_ciface_" + signature.name]
        except AttributeError as e:
            raise RuntimeError(f"compiled library lacks _mlir_ciface_{signature.name}: was the "
                               f"module lowered with C wrappers requested?") from e
        scalars = signature.scalar_results
        argtypes: list[type] = []
        self._result_struct: Optional[type] = None
        if len(scalars) > 1:
            self._result_struct = type("Results", (ctypes.Structure,), {"_fields_": [
                (f"r{k}", _result_ctype(t)) for k, t in enumerate(scalars)]})
            argtypes.append(ctypes.POINTER(self._result_struct))
        for t in signature.inputs:
            argtypes.append(t.ctype if isinstance(t, ScalarType)
                            else ctypes.POINTER(_descriptor_type(t.rank)))
        for t in signature.tensor_results:
            argtypes.append(ctypes.POINTER(_descriptor_type(t.rank)))
        self._cfunc.argtypes = argtypes
        self._cfunc.restype = _result_ctype(scalars[0]) if len(scalars) == 1 else None

    @property
    def name(self) -> str:
        return self.signature.name

    def __repr__(self) -> str:
        return f"<CompiledFunction {self.signature}>"

    def __call__(self, *args):
        sig = self.signature
        if len(args) != len(sig.inputs):
            raise TypeError(f"@{sig.name} takes {len(sig.inputs)} arguments, got {len(args)}")
        buffers = (_HostBuffers() if self._runtime is None
                   else _ManagedBuffers(self._runtime))
        try:
            return self._call(args, buffers)
        finally:
            buffers.release()

    def _call(self, args, buffers: _HostBuffers):
        sig = self.signature
        keep_alive: list = []
        cargs: list = []
        results_struct = None
        if self._result_struct is not None:
            results_struct = self._result_struct()
            cargs.append(ctypes.byref(results_struct))
        for k, (t, value) in enumerate(zip(sig.inputs, args)):
            where = f"@{sig.name} argument #{k}"
            if isinstance(t, ScalarType):
                cargs.append(_convert_scalar(value, t, where))
            else:
                arr = buffers.input(value, t, where)
                desc = _descriptor(arr)
                keep_alive += [arr, desc]
                cargs.append(ctypes.byref(desc))
        outputs = []
        for t in sig.tensor_results:
            out = buffers.output(t)
            desc = _descriptor(out)
            outputs.append(out)
            keep_alive.append(desc)
            cargs.append(ctypes.byref(desc))

        ret = self._cfunc(*cargs)

        if results_struct is not None:
            scalar_values = [getattr(results_struct, f"r{k}")
                             for k in range(len(sig.scalar_results))]
        else:
            scalar_values = [ret] if sig.scalar_results else []
        scalar_iter, out_iter = iter(scalar_values), iter(outputs)
        results = []
        for t in sig.results:
            if isinstance(t, TensorType):
                results.append(buffers.result(next(out_iter)))
            else:
                v = next(scalar_iter)
                results.append(t.dtype.type(bool(v & 1) if t.mlir == "i1" else v))
        del keep_alive
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)


def _result_ctype(t: ScalarType) -> type:
    # An i1 comes back in a register whose upper bits LLVM leaves undefined: read a byte, mask.
    return ctypes.c_uint8 if t.mlir == "i1" else t.ctype


class CompiledModule:
    """A loaded library; call its functions as ``mod.name(*args)`` or ``mod.call(name, ...)``."""

    def __init__(self, library_path: Union[str, os.PathLike],
                 signatures: dict[str, FunctionSignature], *,
                 runtime: Union[None, str, os.PathLike] = None, load: bool = True):
        """``runtime``: the runtime (CUDA or simulator) a GPU module is linked against (loaded first; calls
        then use managed memory). ``load=False``: no dlopen (compile-only checks)."""
        self.library_path = Path(library_path)
        self.signatures = dict(signatures)
        self.runtime_path = Path(runtime) if runtime is not None else None
        self._runtime = None
        self._lib = None
        if load:
            if self.runtime_path is not None:
                self._runtime = _load_gpu_runtime(self.runtime_path)
            # A GPU library binds its mgpu* calls to the runtime it was linked against even
            # where another runtime (CUDA, simulator) was loaded first into this process.
            mode = os.RTLD_DEEPBIND if self.runtime_path is not None else ctypes.DEFAULT_MODE
            self._lib = ctypes.CDLL(str(self.library_path), mode=mode)
        self._functions: dict[str, CompiledFunction] = {}

    @property
    def function_names(self) -> list[str]:
        return list(self.signatures)

    def function(self, name: str) -> CompiledFunction:
        if name not in self.signatures:
            raise KeyError(f"no public function @{name} in module "
                           f"(available: {', '.join(self.signatures) or 'none'})")
        if self._lib is None:
            raise RuntimeError(f"{self.library_path.name} was compiled with load=False")
        if name not in self._functions:
            self._functions[name] = CompiledFunction(self._lib, self.signatures[name],
                                                     self._runtime)
        return self._functions[name]

    def call(self, name: str, *args):
        return self.function(name)(*args)

    def __getattr__(self, name: str):
        sigs = self.__dict__.get("signatures")
        if name.startswith("_") or sigs is None or name not in sigs:
            raise AttributeError(f"{type(self).__name__!s} has no attribute or function {name!r}")
        return self.function(name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.signatures))

    def __repr__(self) -> str:
        fns = ", ".join(str(s) for s in self.signatures.values())
        return f"<CompiledModule {self.library_path.name}: {fns}>"


def to_bfloat16(values) -> np.ndarray:
    """float32 values -> uint16 bfloat16 bit patterns, rounded to nearest even (NaN kept)."""
    bits = np.array(values, dtype=np.float32).view(np.uint32)  # keeps rank 0
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    return np.where(nan, np.uint16(0x7FC0), rounded.astype(np.uint16))


def from_bfloat16(bits) -> np.ndarray:
    """uint16 bfloat16 bit patterns -> float32 (exact)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
