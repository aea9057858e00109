#!/usr/bin/env python3
# ===- ptxas_report.py - Registers, spills and SASS of the GPU kernels ---===#
#
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
#
# ===----------------------------------------------------------------------===#
"""What can be measured of the GPU kernels without a GPU: for one ViT-B linear layer's HOT
backward (the `layer_<name>` module of export.py: gy Hadamard + 4-bit quantize, the gx
product, HLA, 8-bit quantize, the gw product, rescales), lowered by
`hot-opt --hot-lower-to-nvvm{chip=...}` for each chip, ptxas -v's registers, spill bytes and
shared memory of every kernel of our own (`hot_*`; the generic linalg kernels are summed up in
one row) and, where cuobjdump is available, the tensor-core instructions in the SASS.

    .venv/bin/python bench/gpu/ptxas_report.py [--layers qkv fc2] [--chips sm_80 sm_90a]
        [--dtype bf16] [--rewrite " rounding=nearest"] [--mix]

--mix adds, per kernel, the static SASS instruction mix: what a kernel that is bound by
instruction issue (as the transform kernels were on an H200, bench/RESULTS.md) spends its
instructions on. Static counts: straight-line code counts once, a loop's body once.
"""

import argparse
import collections
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "test" / "Integration" / "GPU"))

import export  # noqa: E402

extract_ptx = __import__("extract-ptx")


def find_tool(name):
    for d in ("/usr/local/cuda/bin",):
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    found = sorted((ROOT / ".venv").glob(f"lib/python3*/site-packages/nvidia/*/bin/{name}"))
    return str(found[-1]) if found else shutil.which(name)


def lower_to_ptx(hot_opt, text, chip, rewrite="", lower=""):
    rewritten = subprocess.run([hot_opt, "--hot-rewrite-backward-matmuls=remarks=false" + rewrite],
                               input=text, capture_output=True, text=True, check=True).stdout
    lowered = subprocess.run([hot_opt, f"--hot-lower-to-nvvm=chip={chip} format=isa" + lower],
                             input=rewritten, capture_output=True, text=True, check=True).stdout
    ptx = re.findall(r'gpu\.binary @hot_kernels[^\n]*?assembly = "((?:[^"\\]|\\.)*)"', lowered)
    generic = re.findall(r'gpu\.binary @(?!hot_kernels)[\w$.]+[^\n]*?assembly = '
                         r'"((?:[^"\\]|\\.)*)"', lowered)
    return ([extract_ptx.unescape(p) for p in ptx], [extract_ptx.unescape(p) for p in generic],
            launches(lowered))


def launches(lowered):
    """Per kernel of @hot_kernels that the lowered host code launches: its grid's blocks,
    threads per block and dynamic shared memory bytes (the launch's constant operands)."""
    consts = dict(re.findall(r"(%\d+) = llvm\.mlir\.constant\((\d+) : (?:index|i\d+)\)", lowered))
    value = lambda v: int(consts[v]) if v in consts else None
    out = {}
    for m in re.finditer(r"gpu\.launch_func\s+<[^>]*>\s+@hot_kernels::@(\w+) blocks in "
                         r"\(([^)]*)\) threads in \(([^)]*)\) : i64"
                         r"(?: dynamic_shared_memory_size (%\d+))?", lowered):
        grid = [value(v.strip()) for v in m.group(2).split(",")]
        block = [value(v.strip()) for v in m.group(3).split(",")]
        if None in grid or None in block:
            continue
        dynamic = value(m.group(4)) if m.group(4) else 0
        out[m.group(1)] = (grid[0] * grid[1] * grid[2], block[0] * block[1] * block[2],
                           dynamic or 0)
    return out


# Per chip: a typical part's SMs (as getTypicalSMCount in LaunchModel.cpp), and an SM's
# threads, blocks and shared memory (KiB, for blocks) at most.
SM_LIMITS = {"sm_80": (108, 2048, 32, 164), "sm_86": (84, 1536, 16, 100),
             "sm_89": (128, 1536, 24, 100), "sm_90": (132, 2048, 32, 228),
             "sm_90a": (132, 2048, 32, 228)}


def resident_blocks(chip, threads, regs, smem):
    """Blocks of `threads` threads with `regs` registers each and `smem` shared memory bytes
    that an SM of `chip` holds at once (registers allocated per warp in units of 256, 1 KiB
    of shared memory reserved per block)."""
    _, max_threads, max_blocks, smem_kib = SM_LIMITS[chip]
    warps = -(-threads // 32)
    per_warp = -(-max(regs, 1) * 32 // 256) * 256
    by_regs = (65536 // per_warp) // warps
    by_smem = (smem_kib * 1024) // (smem + 1024)
    return min(max_blocks, max_threads // threads, by_regs, by_smem)


def ptxas(ptxas_bin, ptx, chip, work):
    src, cubin = work / "k.ptx", work / "k.cubin"
    src.write_text(ptx)
    out = subprocess.run([ptxas_bin, f"-arch={chip}", "-v", str(src), "-o", str(cubin)],
                         capture_output=True, text=True, check=True).stderr
    kernels, name = {}, None
    for line in out.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            name = m.group(1)
            kernels[name] = {"regs": 0, "spill": 0, "smem": 0}
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and name:
            kernels[name]["spill"] = int(m.group(1)) + int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m and name:
            kernels[name]["regs"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            kernels[name]["smem"] = int(s.group(1)) if s else 0
    return kernels, cubin


def sass_by_kernel(cuobjdump, cubin):
    """Per kernel: the lines of its SASS ({} without cuobjdump)."""
    if cuobjdump is None:
        return {}
    env = dict(os.environ)
    nvdisasm = find_tool("nvdisasm")
    if nvdisasm:
        env["PATH"] = os.path.dirname(nvdisasm) + os.pathsep + env.get("PATH", "")
    text = subprocess.run([cuobjdump, "-sass", str(cubin)], capture_output=True, text=True,
                          check=True, env=env).stdout
    out, name = {}, None
    for line in text.splitlines():
        m = re.search(r"Function : (\w+)", line)
        if m:
            name = m.group(1)
            out[name] = []
        elif name:
            out[name].append(line)
    return out


def sass_mma(sass):
    """Per kernel of `sass` (sass_by_kernel): the counts of integer tensor-core instructions
    (mma.sync's IMMA, wgmma's IGMMA) by shape and type."""
    pattern = re.compile(r"\b(IMMA\.\d+\.[SU]\d\.[SU]\d|IGMMA\.\d+x\d+x\d+\.[SU]\d\.[SU]\d)")
    return {name: collections.Counter(m.group(1) for line in lines
                                      for m in [pattern.search(line)] if m)
            for name, lines in sass.items()}


# SASS opcodes by what they spend: the integer ALU (the stochastic hash is multiplies, shifts
# and xors), floating point, the IEEE division's check and slow path (FCHK, one per division),
# warp shuffles, and global and shared memory.
MIX_CLASSES = {
    "integer": {"IMAD", "IADD3", "VIADD", "LOP3", "SHF", "LEA", "IMNMX", "ISETP", "PRMT", "I2FP",
                "F2I", "IABS", "POPC", "FLO", "BREV", "SEL"},
    "float": {"FADD", "FMUL", "FFMA", "FMNMX", "FSEL", "FSETP", "FRND", "MUFU", "HFMA2", "F2F",
              "HADD2", "HMUL2"},
    "divisions (FCHK)": {"FCHK"},
    "shuffles": {"SHFL"},
    "memory": {"LDG", "STG", "LDS", "STS", "LDSM", "LDGSTS", "ATOMG", "RED", "LD", "ST"},
}


def sass_mix(sass):
    """Per kernel of `sass` (sass_by_kernel): a Counter of its SASS opcodes (static)."""
    pattern = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)")
    return {name: collections.Counter(m.group(1) for line in lines
                                      for m in [pattern.search(line)] if m)
            for name, lines in sass.items()}


def mix_row(counts):
    total = sum(counts.values())
    cells = [f"{sum(n for op, n in counts.items() if op in ops)}" for ops in MIX_CLASSES.values()]
    top = ", ".join(f"{op} {n}" for op, n in counts.most_common(6))
    return f"{total} | " + " | ".join(cells) + f" | {top}"


def short(name):
    """hot_int_mma_s8_768x768x6464_t128x... -> int_mma_s8 768x768x6464."""
    m = re.match(r"hot_(int_mma_(?:wgmma_)?s[48])_(\d+x\d+x\d+)", name)
    if m:
        return f"{m.group(1)} {m.group(2)}"
    m = re.match(r"hot_([a-z_]+?)_(\d+x\d+(?:x\d+)?)", name)
    if not m:
        return name
    # The lowrank family's stage and statistics (see LowRankKernelSpec).
    stage = re.search(r"_(stats|scales|quantize)(?:_|$)", name)
    extra = [stage.group(1)] if stage else []
    extra += [s for s in ("inmax", "outmaxcol", "outmax") if f"_{s}" in name][:1]
    suffix = f" ({', '.join(extra)})" if extra and m.group(1) in (
        "lowrank", "matrix", "block_hadamard") else ""
    return f"{m.group(1)} {m.group(2)}{suffix}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hot-opt", default=str(ROOT / "build" / "bin" / "hot-opt"))
    p.add_argument("--layers", nargs="+", default=[l[0] for l in export.LAYERS])
    p.add_argument("--chips", nargs="+", default=["sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"])
    p.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    p.add_argument("--rewrite", default="", help="more hot-rewrite-backward-matmuls options")
    p.add_argument("--lower", default="", help="more hot-lower-to-nvvm options")
    p.add_argument("--hq", action="store_true",
                   help="the layers' fused hadamard + quantize modules (hq_<layer> per row and "
                        "hq_<layer>_tensor) instead of their backward")
    p.add_argument("--mix", action="store_true", help="the SASS instruction mix per kernel")
    p.add_argument("--waves", action="store_true",
                   help="per kernel: its grid against the blocks a typical part of the chip "
                        "holds at once (rounds of resident blocks, and how full the last is)")
    a = p.parse_args(argv)
    ptxas_bin, cuobjdump = find_tool("ptxas"), find_tool("cuobjdump")
    if ptxas_bin is None:
        sys.exit("ptxas_report.py: no ptxas (CUDA toolkit)")

    print("| layer | chip | kernel | registers | spill bytes | static smem bytes | "
          "SASS tensor-core ops |")
    print("|---|---|---|---|---|---|---|")
    mixes, waves = [], []
    for name, o, i in export.LAYERS:
        if name not in a.layers:
            continue
        modules = ([(name, export.hq_module(f"hq_{name}", export.BATCH * export.TOKENS, o,
                                            "per_row")),
                    (f"{name} per_tensor",
                     export.hq_module(f"hq_{name}_tensor", export.BATCH * export.TOKENS, o,
                                      "per_tensor"))] if a.hq
                   else [(name, export.layer_module(f"layer_{name}", o, i, a.dtype))])
        for (name, text), chip in itertools.product(modules, a.chips):
            ours, generic, grids = lower_to_ptx(a.hot_opt, text, chip, a.rewrite, a.lower)
            with tempfile.TemporaryDirectory() as tmp:
                work = Path(tmp)
                kernels, cubin = ptxas(ptxas_bin, "".join(ours), chip, work)
                sass = sass_by_kernel(cuobjdump, cubin)
                mma = sass_mma(sass)
                if a.mix:
                    mixes += [(name, chip, short(k), c) for k, c in sass_mix(sass).items()]
                if a.waves:
                    waves += [(name, chip, k, grids[k], kernels[k]) for k in kernels
                              if k in grids]
                for k, r in kernels.items():
                    ops = ", ".join(f"{n}× {op}" for op, n in sorted(mma.get(k, {}).items()))
                    print(f"| {name} | {chip} | {short(k)} | {r['regs']} | {r['spill']} | "
                          f"{r['smem']} | {ops or '-' if cuobjdump else 'n/a'} |")
                gen = {}
                for idx, ptx in enumerate(generic):   # one gpu.module per outlined launch
                    ks, _ = ptxas(ptxas_bin, ptx, chip, work)
                    gen.update({(idx, k): r for k, r in ks.items()})
                if gen:
                    print(f"| {name} | {chip} | {len(gen)} generic linalg kernels | "
                          f"≤ {max(r['regs'] for r in gen.values())} | "
                          f"{sum(r['spill'] for r in gen.values())} | "
                          f"≤ {max(r['smem'] for r in gen.values())} | - |")
    if waves:
        print("\n| layer | chip | kernel | blocks x threads | registers | resident per SM | "
              "rounds (blocks / resident) | last round full |")
        print("|---|---|---|---|---:|---:|---:|---:|")
        for name, chip, kernel, (blocks, threads, dynamic), r in waves:
            per_sm = resident_blocks(chip, threads, r["regs"], r["smem"] + dynamic)
            slots = SM_LIMITS[chip][0] * per_sm
            rounds = blocks / slots
            last = rounds - (-(-blocks // slots) - 1)
            print(f"| {name} | {chip} | {short(kernel)} | {blocks} x {threads} | {r['regs']} | "
                  f"{per_sm} | {rounds:.2f} | {100 * last:.0f} % |")
    if mixes:
        print("\n| layer | chip | kernel | SASS instructions | " + " | ".join(MIX_CLASSES) +
              " | most frequent |")
        print("|---|---|---|---:|" + "---:|" * len(MIX_CLASSES) + "---|")
        for name, chip, kernel, counts in mixes:
            print(f"| {name} | {chip} | {kernel} | {mix_row(counts)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
