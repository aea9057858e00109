#!/usr/bin/env python3
# ===- traffic.py - Bytes each kernel of a layer's backward touches -------===#
#
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
#
# ===----------------------------------------------------------------------===#
"""A static traffic model of one ViT-B linear layer's HOT backward on the GPU: the layer module
of export.py through `hot-rewrite-backward-matmuls` and `convert-hot-to-gpu{chip=...}`, and for
every `gpu.launch_func` the bytes of the buffers it is given (each counted once: read or
written; a GEMM's re-reads of operand tiles, which L2 mostly serves, are not counted; a GEMM
split along K counts its workspace once, though the last block of each tile reads back what the
others wrote, mostly from L2). Memory
bound kernels move about that much; the table compares the lowering as generated with
`share-statistics=0` (every per-tensor quantize's max in a pass of its own), with LQS's finer
scales (per token on gx, per output channel on gw) and, for the bf16 graph (bf16 x, W, gy and
results; products accumulated in f32, then truncated), the lowering as generated (the kernels
read the bf16 operands and the products' epilogues store bf16) against a model of the same graph
without that fusion: the f32 kernels plus a cast kernel for each of gy, x, W (bf16 read, f32
written) and each of gx, gw (f32 read, bf16 written).

An op on tensors that convert-hot-to-gpu leaves in the host code (an `arith.extf`, a
`linalg.generic`, ...) is counted as one generic kernel of its own: it reads its tensor operands
(a linalg op's `ins`) and writes its tensor results, as a kernel of the generic path would.
Views (collapse/expand shapes, tensor.empty) move nothing; a hot op left there, or another tensor
op, stops the model (it cannot say what that would cost).

    .venv/bin/python bench/gpu/traffic.py [--layers fc1 qkv] [--chip sm_90a]
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

ELEMENT_BYTES = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "f16": 2, "bf16": 2, "i8": 1,
                 "i1": 1}
LAUNCH = re.compile(r"gpu\.launch_func\s+@hot_kernels::@(\w+).*?args\((.*)\)\s*$")
MEMREF = re.compile(r"memref<([0-9x]*)(f64|i64|f32|i32|f16|bf16|i8)>")
TENSOR = re.compile(r"tensor<[^<>]*>")
STATIC_TENSOR = re.compile(r"tensor<((?:\d+x)*)(f64|i64|f32|i32|f16|bf16|i8|i1)>")
# The first token of an op: its results, then its name (pretty or generic form).
OP_START = re.compile(r'^\s*(?:(%[^=]*?)\s*=\s*)?"?([a-z_]\w*\.[\w.]+|return|module)\b')
CONTAINERS = {"module", "builtin.module", "func.func", "gpu.module"}
# Tensor ops that only reinterpret a buffer (or make an empty one) move nothing.
TENSOR_VIEWS = {"tensor.collapse_shape", "tensor.expand_shape", "tensor.empty", "tensor.cast",
                "tensor.dim"}


def memref_bytes(shape, element):
    count = 1
    for size in filter(None, shape.split("x")):
        count *= int(size)
    return count * ELEMENT_BYTES[element]


def tensor_bytes(text, element=None):
    """The bytes of each tensor type in `text`, in order (with `element`, of a tensor of its
    shape and that element type instead); ValueError for one the model cannot size (a dynamic
    shape, an encoding, another element type)."""
    sizes = []
    for written in TENSOR.findall(text):
        m = STATIC_TENSOR.fullmatch(written)
        if not m:
            raise ValueError(f"cannot size {written}")
        sizes.append(memref_bytes(m.group(1), element or m.group(2)))
    return sizes


def statements(host):
    """(op name, results, text) of each op of the host code, with its continuation lines and
    regions (the ops inside a linalg.generic's body belong to it); module and function bodies are
    walked into."""
    found, depth, held = [], 0, None  # held: the depth the last statement started at
    for line in host.splitlines():
        code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
        m = OP_START.match(code)
        if held is not None and depth > held:
            found[-1][2] += "\n" + line  # inside its region, braces or parentheses
        elif m and m.group(2) not in CONTAINERS:
            found.append([m.group(2), m.group(1) or "", line])
            held = depth
        elif m:
            held = None
        elif held is not None and depth == held and code.strip() and \
                not code.strip().startswith("}"):
            found[-1][2] += "\n" + line  # e.g. the ins(...) outs(...) line of a generic
        depth += sum(code.count(c) for c in "{([") - sum(code.count(c) for c in "})]")
    return [tuple(s) for s in found]


def balanced(text, start):
    """The text inside the parentheses that open at text[start]."""
    depth = 0
    for end in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0:
            return text[start + 1:end]
    raise ValueError("unbalanced parentheses")


def generic_bytes(name, results, text):
    """The bytes one generic kernel of a host op on tensors reads and writes."""
    count = int(results.split(":")[1]) if ":" in results else results.count("%")
    if name.startswith("linalg."):
        ins, outs = re.search(r"\bins\(", text), re.search(r"\bouts\(", text)
        if not outs:
            raise ValueError("no outs(...)")
        read = sum(tensor_bytes(balanced(text, ins.end() - 1))) if ins else 0
        # On tensors, a linalg op's results are its outs' types.
        return read + (sum(tensor_bytes(balanced(text, outs.end() - 1))) if count else 0)
    # arith/math: `%r = arith.op %a, %b {attrs} : T` or a cast's `: T to U`, on one line.
    line = text.splitlines()[0]
    if " : " not in line:
        raise ValueError("no type signature")
    head, signature = line.rsplit(" : ", 1)
    operands = len(re.findall(r"%[\w.$#-]+", head[head.index(name) + len(name):]))
    if " to " in signature:
        source, target = signature.split(" to ", 1)
        return sum(tensor_bytes(source)) * operands + sum(tensor_bytes(target)) * count
    types = tensor_bytes(signature)
    if name == "arith.select" and len(types) == 2:  # an i1 tensor, then the values' type
        return types[0] + 2 * types[1] + types[1] * count
    if name.startswith("arith.cmp"):  # operands of the type, results i1
        return types[0] * operands + tensor_bytes(signature, "i1")[0] * count
    return types[0] * operands + types[0] * count


def host_op_cost(name, results, text):
    """("generic <op>", bytes) for a host op on tensors, None for one that moves nothing;
    ValueError for one the model cannot count."""
    dialect = name.split(".")[0]
    if dialect == "hot":
        raise ValueError("a hot op left for the generic path")
    if "tensor<" not in text or name in TENSOR_VIEWS or name == "arith.constant" or \
            dialect in ("bufferization", "gpu", "memref", "func", "return"):
        return None
    if dialect in ("arith", "math", "linalg"):
        return f"generic {name}", generic_bytes(name, results, text)
    raise ValueError("a tensor op the model does not count")


LQS = " gx-granularity=per_row gw-granularity=per_col"


def launches(hot_opt, text, chip, options="", rewrite=""):
    """(kernel name, bytes of its buffer arguments) of each launch, and ("generic <op>", bytes)
    of each host op on tensors left for the generic path, in program order; and the names of the
    ops the model cannot count (a hot op the lowering left, another tensor op). `options`: more
    convert-hot-to-gpu options (" share-statistics=0", ...)."""
    rewritten = subprocess.run([hot_opt, f"--hot-rewrite-backward-matmuls=remarks=false{rewrite}"],
                               input=text, capture_output=True, text=True, check=True).stdout
    lowered = subprocess.run(
        [hot_opt, f"--convert-hot-to-gpu=chip={chip}{options}"],
        input=rewritten, capture_output=True, text=True, check=True).stdout
    found, leftover = [], set()
    for name, results, op in statements(lowered.split("gpu.module")[0]):
        m = LAUNCH.search(op) if name == "gpu.launch_func" else None
        if m:
            found.append((m.group(1), sum(memref_bytes(s, e)
                                          for s, e in MEMREF.findall(m.group(2)))))
            continue
        try:
            cost = host_op_cost(name, results, op)
        except ValueError as why:
            leftover.add(f"{name} ({why})")
            continue
        if cost:
            found.append(cost)
    return found, sorted(leftover)


def separate_casts(o, i, tokens):
    """What the bf16 graph's casts cost as kernels of their own (the model of the lowering
    without its fusion): gy, x and W read in bf16 and written in f32, gx and gw read in f32 and
    written in bf16."""
    return [(f"cast {what}", elements * (ELEMENT_BYTES["bf16"] + ELEMENT_BYTES["f32"]))
            for what, elements in (("gy", tokens * o), ("x", tokens * i), ("W", o * i),
                                   ("gx", tokens * i), ("gw", o * i))]


def kind(name):
    """The kernel's family, without its shape suffixes."""
    for prefix in ("int_mma_wgmma", "int_mma", "transpose", "block_hadamard", "zero_i32",
                   "hadamard_quantize_row", "hadamard_quantize_tensor", "hadamard_absmax",
                   "hadamard_scale"):
        if name.startswith("hot_" + prefix):
            return prefix
    for family in ("lowrank", "column"):
        if name.startswith(f"hot_{family}_"):
            for stage in ("stats", "quantize"):
                if f"_{stage}" in name:
                    return f"{family} ({stage})"
    if name.startswith("hot_lowrank"):
        return "lowrank (+ maxima)" if "max" in name else "lowrank"
    if name.startswith("cast "):
        return "cast (model)"
    return name


def main():
    sys.path.insert(0, str(HERE))
    import export  # noqa: E402 (export.py imports this module for launches())

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hot-opt", default=str(ROOT / "build" / "bin" / "hot-opt"))
    parser.add_argument("--chip", default="sm_90a")
    parser.add_argument("--layers", nargs="*", default=[name for name, _, _ in export.LAYERS])
    args = parser.parse_args()

    mb = 1e6
    n = export.BATCH * export.TOKENS
    print(f"chip {args.chip}; N = {export.BATCH}·{export.TOKENS} tokens; MB = 10^6 bytes; "
          "bf16 model: the f32 kernels + a cast kernel for each of gy, x, W, gx, gw\n")
    print("| layer | kernels (shared) | MB (shared) | kernels (unshared) | MB (unshared) "
          "| shared / unshared | kernels (LQS scales) | MB (LQS scales) "
          "| kernels (bf16 as generated) | MB (bf16 as generated) "
          "| kernels (bf16, transpose kernels) | MB (bf16, transpose kernels) "
          "| kernels (bf16 model: f32 kernels + separate casts) "
          "| MB (bf16 model: f32 kernels + separate casts) | bf16 / model |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    details = []
    for layer, o, i in export.LAYERS:
        if layer not in args.layers:
            continue
        text = export.layer_module(f"layer_{layer}", o, i)
        bf16_text = export.layer_module(f"layer_{layer}_bf16", o, i, "bf16")
        shared, left_s = launches(args.hot_opt, text, args.chip)
        unshared, left_u = launches(args.hot_opt, text, args.chip, " share-statistics=0")
        lqs, left_l = launches(args.hot_opt, text, args.chip, "", LQS)
        bf16, left_b = launches(args.hot_opt, bf16_text, args.chip)
        bf16_t, left_t = launches(args.hot_opt, bf16_text, args.chip, " fuse-transposes=0")
        left = left_s or left_u or left_l or left_b or left_t
        if left:
            sys.exit(f"traffic.py: {layer}: ops the model cannot count ({left})")
        # The bf16 graph without the cast fusion: the f32 kernels, their
        # operands' transposes as generated for f32, and the casts.
        model = shared + separate_casts(o, i, n)
        total_s = sum(b for _, b in shared)
        total_u = sum(b for _, b in unshared)
        total_l = sum(b for _, b in lqs)
        total_b = sum(b for _, b in bf16)
        total_t = sum(b for _, b in bf16_t)
        total_m = sum(b for _, b in model)
        print(f"| {layer} (O {o}, I {i}) | {len(shared)} | {total_s / mb:,.1f} | "
              f"{len(unshared)} | {total_u / mb:,.1f} | {total_s / total_u:.2f} | "
              f"{len(lqs)} | {total_l / mb:,.1f} | {len(bf16)} | {total_b / mb:,.1f} | "
              f"{len(bf16_t)} | {total_t / mb:,.1f} | "
              f"{len(model)} | {total_m / mb:,.1f} | {total_b / total_m:.2f} |")
        details.append((layer, (shared, unshared, bf16, model)))

    for layer, columns in details:
        print(f"\n{layer}: MB per kind of kernel\n")
        print("| kernel | launches (shared) | MB (shared) | launches (unshared) "
              "| MB (unshared) | launches (bf16) | MB (bf16) | launches (bf16 model) "
              "| MB (bf16 model) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        kinds = {}
        for column, found in enumerate(columns):
            for name, size in found:
                entry = kinds.setdefault(kind(name), [0, 0.0] * len(columns))
                entry[2 * column] += 1
                entry[2 * column + 1] += size
        for k, entry in kinds.items():
            cells = " | ".join(f"{entry[c]} | {entry[c + 1] / mb:,.1f}"
                               for c in range(0, len(entry), 2))
            print(f"| {k} | {cells} |")


if __name__ == "__main__":
    main()
