#!/usr/bin/env python3
# ===- export.py - Lower the benchmark's HOT modules for bench/gpu --------===#
#
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
#
# ===----------------------------------------------------------------------===#
"""Writes bench/gpu/kernels/: for each ViT-B linear layer, its modules with
hot ops (the backward GEMMs, the layer's backward in f32 and in bf16, the fused
hadamard + quantize of gy) lowered by `hot-opt --hot-lower-to-nvvm` (kernels
embedded as a fatbin, host code as x86-64 Linux shared objects that call
libhot_cuda_runtime.so's mgpu* functions) and a `key = value` description of
each (README.md).

Run it on a machine with LLVM 22 and the CUDA toolkit (not on the GPU
machine):  bench/gpu/export.py [--hot-opt build/bin/hot-opt] [--chip sm_90a]
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

import traffic

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent

# ViT-B, a batch of 64 images of 197 tokens; HLA keeps 8 of each 16 tokens
# (12 blocks and a tail of 5 -> 101 rows per image).
BATCH, TOKENS, HLA_TOKENS = 64, 197, 101
HQ_BLOCK, HQ_BITS = 16, 4
LAYERS = [("qkv", 2304, 768), ("proj", 768, 768), ("fc1", 3072, 768),
          ("fc2", 768, 3072)]


def gemm_module(name, m, n, k):
    """C[M,N] = A[M,K] · B[N,K]ᵀ on i8 -> i32: the harness's TN layout."""
    return f"""
func.func @{name}(%a: tensor<{m}x{k}xi8>, %b: tensor<{n}x{k}xi8>)
    -> tensor<{m}x{n}xi32> attributes {{llvm.emit_c_interface}} {{
  %c = hot.int_matmul %a, %b transposed
      : tensor<{m}x{k}xi8>, tensor<{n}x{k}xi8> -> tensor<{m}x{n}xi32>
  return %c : tensor<{m}x{n}xi32>
}}
"""


def layer_module(name, o, i, dtype="f32"):
    """A linear layer's backward (gx = gy·W, gw = gyᵀ·x) in f32, for
    hot-rewrite-backward-matmuls to rewrite as HOT does by default. With
    dtype "bf16", a bf16 training graph's: x, W, gy and the results in bf16,
    each product a linalg.matmul of the bf16 operands into f32 (f32
    accumulation), then truncated to bf16 by a linalg.generic."""
    n, t = BATCH * TOKENS, dtype
    if t == "f32":
        results = f"%gx, %gw : tensor<{n}x{i}xf32>, tensor<{o}x{i}xf32>"
        truncations = ""
    else:
        results = f"%gxt, %gwt : tensor<{n}x{i}x{t}>, tensor<{o}x{i}x{t}>"
        truncations = "".join(f"""
  %t{k} = tensor.empty() : tensor<{rows}x{i}x{t}>
  %{v}t = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}} ins(%{v} : tensor<{rows}x{i}xf32>) outs(%t{k} : tensor<{rows}x{i}x{t}>) {{
  ^bb0(%in: f32, %out: {t}):
    %v = arith.truncf %in : f32 to {t}
    linalg.yield %v : {t}
  }} -> tensor<{rows}x{i}x{t}>""" for k, v, rows in ((1, "gx", n), (2, "gw", o)))
    return f"""
func.func @{name}(%x3: tensor<{BATCH}x{TOKENS}x{i}x{t}>, %w: tensor<{o}x{i}x{t}>,
                  %gy3: tensor<{BATCH}x{TOKENS}x{o}x{t}>)
    -> (tensor<{n}x{i}x{t}>, tensor<{o}x{i}x{t}>) attributes {{llvm.emit_c_interface}} {{
  %cst = arith.constant 0.0 : f32
  %x = tensor.collapse_shape %x3 [[0, 1], [2]] : tensor<{BATCH}x{TOKENS}x{i}x{t}> into tensor<{n}x{i}x{t}>
  %gy = tensor.collapse_shape %gy3 [[0, 1], [2]] : tensor<{BATCH}x{TOKENS}x{o}x{t}> into tensor<{n}x{o}x{t}>
  %e2 = tensor.empty() : tensor<{n}x{i}xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<{n}x{i}xf32>) -> tensor<{n}x{i}xf32>
  %gx = linalg.matmul ins(%gy, %w : tensor<{n}x{o}x{t}>, tensor<{o}x{i}x{t}>) outs(%z2 : tensor<{n}x{i}xf32>) -> tensor<{n}x{i}xf32>
  %e3 = tensor.empty() : tensor<{o}x{n}x{t}>
  %gyt = linalg.transpose ins(%gy : tensor<{n}x{o}x{t}>) outs(%e3 : tensor<{o}x{n}x{t}>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<{o}x{i}xf32>
  %z4 = linalg.fill ins(%cst : f32) outs(%e4 : tensor<{o}x{i}xf32>) -> tensor<{o}x{i}xf32>
  %gw = linalg.matmul ins(%gyt, %x : tensor<{o}x{n}x{t}>, tensor<{n}x{i}x{t}>) outs(%z4 : tensor<{o}x{i}xf32>) -> tensor<{o}x{i}xf32>{truncations}
  return {results}
}}
"""


def hq_module(name, n, o, granularity):
    """The fused hadamard + quantize of gy[N,O] (block 16 along rows, 4 bits,
    maxabs, stochastic): what HOT does to gy before both backward GEMMs."""
    scale = f"tensor<{n}xf32>" if granularity == "per_row" else "tensor<f32>"
    return f"""
func.func @{name}(%gy: tensor<{n}x{o}xf32>, %seed: i64)
    -> (tensor<{n}x{o}xi8>, {scale}) attributes {{llvm.emit_c_interface}} {{
  %h = hot.hadamard %gy along 1 block {HQ_BLOCK} : tensor<{n}x{o}xf32>
  %q, %s = hot.quantize %h bits {HQ_BITS} granularity {granularity} scale maxabs
      rounding stochastic seed %seed
      : tensor<{n}x{o}xf32> -> tensor<{n}x{o}xi8>, {scale}
  return %q, %s : tensor<{n}x{o}xi8>, {scale}
}}
"""


def gemm_variants(chip, product):
    """(file suffix, extra hot-lower-to-nvvm options) of each GEMM module: the
    chip's default kernel (tiles and K split as the lowering's model chooses
    them) and, on sm_90a, fixed wgmma tilings and the mma.sync kernel (what
    sm_90 gets) for comparison. For gw (few output tiles, K = the tokens),
    also 128x128 tiles unsplit and split in 3. These rows calibrate the
    model."""
    variants = [("", "")]
    if chip == "sm_90a":
        # 128x128 and 128x256 tiles (K split as the model chooses); 64-byte K
        # tiles in 6 stages (99 KiB: two blocks per SM); the mma.sync kernel.
        variants += [("_n128", " tile-m=128 tile-n=128"), ("_n256", " tile-n=256"),
                     ("_k64", " tile-k=64 stages=6"), ("_mma", " wgmma=0")]
    if product == "gw":
        variants += [("_nosplit", " tile-m=128 tile-n=128 split-k=1"),
                     ("_split3", " tile-m=128 tile-n=128 split-k=3")]
    return variants


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"export.py: {' '.join(map(str, cmd))} failed:\n"
                 f"{result.stderr[-4000:]}")
    return result.stdout


def lower(args, source, passes, out_so, tmp, remark=None):
    """hot-opt -> mlir-translate -> clang: a shared object with the host code
    and the embedded kernel images. With `remark`, hot-opt must say it (the
    rewrite really happened) and its remark line is returned too."""
    mlir = tmp / (out_so.stem + ".mlir")
    mlir.write_text(source)
    llvm_mlir = tmp / (out_so.stem + ".llvm.mlir")
    cmd = [args.hot_opt, mlir, *passes, "--mlir-disable-threading", "-o",
           llvm_mlir]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"export.py: {' '.join(map(str, cmd))} failed:\n"
                 f"{result.stderr[-4000:]}")
    said = [line.split("remark: ", 1)[1] for line in result.stderr.splitlines()
            if "remark: " in line]
    if remark is not None and not any(remark in line for line in said):
        sys.exit(f"export.py: {out_so.name}: no '{remark}' remark from "
                 f"hot-opt (the generic path?):\n{result.stderr[-4000:]}")
    ll = tmp / (out_so.stem + ".ll")
    run([args.mlir_translate, "--mlir-to-llvmir", llvm_mlir, "-o", ll])
    obj = tmp / (out_so.stem + ".o")
    run([args.clang, "-O2", "-fPIC", "-c", "-x", "ir", ll, "-o", obj])
    # The mgpu* functions come from libhot_cuda_runtime.so, loaded by the
    # harness before this object; everything else must resolve in libc.
    run([args.clang, "-shared", "-fuse-ld=lld", obj, "-o", out_so])
    undefined = run(["nm", "-D", "--undefined-only", out_so]).split()
    names = [s for s in undefined if s not in ("U", "w")]
    unknown = [s for s in names if not s.startswith("mgpu")
               and s.split("@")[0] not in ("malloc", "free", "memcpy",
                                           "memset", "abort", "aligned_alloc",
                                           "__cxa_finalize",
                                           "_ITM_registerTMCloneTable",
                                           "_ITM_deregisterTMCloneTable",
                                           "__gmon_start__")]
    if unknown:
        sys.exit(f"export.py: {out_so.name} needs unexpected symbols: "
                 f"{unknown}")
    needs = sorted(set(s.split("@")[0] for s in names))
    if remark is None:
        return needs
    return needs, next(line for line in said if remark in line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hot-opt", default=os.environ.get(
        "HOT_OPT", str(ROOT / "build" / "bin" / "hot-opt")))
    parser.add_argument("--mlir-translate", default="mlir-translate-22")
    parser.add_argument("--clang", default="clang-22")
    parser.add_argument("--chip", default="sm_90a")
    parser.add_argument("--format", default="fatbin",
                        choices=["isa", "bin", "fatbin"])
    parser.add_argument("--out", default=str(HERE / "kernels"))
    parser.add_argument("--only", default="",
                        help="comma-separated layer names (default: all)")
    args = parser.parse_args()

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for stale in list(out.glob("*.so")) + list(out.glob("*.txt")):
        stale.unlink()
    lower_to_nvvm = (f"--hot-lower-to-nvvm=chip={args.chip} "
                     f"format={args.format}")
    only = set(filter(None, args.only.split(",")))
    n, n_hla = BATCH * TOKENS, BATCH * HLA_TOKENS
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = pathlib.Path(tmp_dir)
        for layer, o, i in LAYERS:
            if only and layer not in only:
                continue
            entries = [
                ("gx", (n, i, o), "gx = gy·W"),
                ("gw", (o, i, n_hla), "gw = gyᵀ·x after HLA"),
            ]
            variants = [(entry, variant) for entry in entries
                        for variant in gemm_variants(args.chip, entry[0])]
            for (product, (m, nn, k), what), (suffix, extra) in variants:
                name = f"{product}_{layer}"
                so = out / f"{name}{suffix}.so"
                pipeline = lower_to_nvvm + extra
                needs, remark = lower(args, gemm_module(name, m, nn, k),
                                      [pipeline], so, tmp,
                                      remark="tensor-core kernel @")
                (out / f"{name}{suffix}.txt").write_text(
                    f"# {what}: hot.int_matmul lowered by hot-opt "
                    f"{pipeline}\n# hot-opt: {remark}\n"
                    f"kind = gemm\nlayer = {layer}\n"
                    f"library = {so.name}\nsymbol = _mlir_ciface_{name}\n"
                    f"m = {m}\nn = {nn}\nk = {k}\n"
                    f"kernel = {remark.split(': ', 1)[1]}\n"
                    f"needs = {' '.join(needs)}\n")
                print(f"export.py: {so.name} {so.stat().st_size} bytes")
            # As hot-lower-to-nvvm generates it, and with share-statistics=0
            # (every per-tensor quantize's max in a pass of its own): what
            # sharing the lowrank kernel's statistics saves, in one run.
            # And with LQS's finer scales (per token on gx, per output
            # channel on gw), which take other kernels. And the bf16 graph
            # as generated: its kernels read the bf16 operands and the
            # products' epilogues store bf16 (no cast kernel may be left);
            # and that graph with the gw operands' transpose kernels (not
            # written K-major by their quantize kernels): whether the
            # quantize kernels' 8-byte K-major stores beat them. On sm_90a,
            # the bf16 graph with mma.sync products too: the layer's figure
            # even if the wgmma kernel fails on the device. And the bf16
            # graph without K splits: what they bring to the layer. And the
            # bf16 graph with nearest rounding (no stochastic hash): against
            # _bf16, what the hash costs the transform kernels. And W's
            # hadamard along dim 0 as a kernel of its own (not computed by
            # its quantize kernels as they load the rows): which is faster.
            # And the lowrank quantize kernels at other channels per thread
            # than the defaults (1 per tensor, 4 with LQS's per-channel
            # scales). And with sm-count=170: on an H200 the lowrank quantize
            # kernel of gy then gets about the grid it had before grids were
            # sized to the resident blocks (fc1: 12x84, 1008 blocks, 1.27
            # rounds of 792; it was 12x85); the products' tiles are chosen
            # for 170 SMs too, so compare that kernel in the breakdown, not
            # the layer.
            layer_variants = [
                ("", "", "", "f32"),
                ("_wsplit", " fuse-column-hadamard=0", "", "f32"),
                ("_v2", " quantize-channels-per-thread=2", "", "f32"),
                ("_lqs_v1", " quantize-channels-per-thread=1", traffic.LQS, "f32"),
                ("_lqs_v2", " quantize-channels-per-thread=2", traffic.LQS, "f32"),
                ("_sm170", " sm-count=170", "", "f32"),
                ("_unshared", " share-statistics=0", "", "f32"),
                ("_lqs", "", traffic.LQS, "f32"),
                ("_bf16", "", "", "bf16"),
                ("_bf16_transposed", " fuse-transposes=0", "", "bf16"),
                ("_bf16_nosplit", " split-k=1", "", "bf16"),
                ("_bf16_t128", " tile-m=128 tile-n=128", "", "bf16"),
                ("_bf16_nearest", "", " rounding=nearest", "bf16")]
            if args.chip == "sm_90a":
                layer_variants.append(("_bf16_mma", " wgmma=0", "", "bf16"))
            for suffix, extra, rewrite, dtype in layer_variants:
                name = f"layer_{layer}{suffix}"
                so = out / f"{name}.so"
                pipeline = lower_to_nvvm + extra
                text = layer_module(name, o, i, dtype)
                found, leftover = traffic.launches(
                    args.hot_opt, text, args.chip, extra, rewrite)
                generic = [k for k, _ in found if not k.startswith("hot_")]
                if leftover or generic:
                    sys.exit(f"export.py: {name}: ops left for the generic "
                             f"path: {leftover + generic}")
                rewrite = f"--hot-rewrite-backward-matmuls=remarks=false{rewrite}"
                needs = lower(args, text, [rewrite, pipeline], so, tmp)
                (out / f"{name}.txt").write_text(
                    f"# one layer's backward (gx, gw) in {dtype}, rewritten by "
                    f"hot-opt {rewrite}, lowered by "
                    f"hot-opt {pipeline}\n"
                    f"kind = layer\nlayer = {layer}\n"
                    f"library = {so.name}\nsymbol = _mlir_ciface_{name}\n"
                    f"batch = {BATCH}\ntokens = {TOKENS}\n"
                    f"out = {o}\nin = {i}\ndtype = {dtype}\n"
                    f"traffic_bytes = {sum(b for _, b in found)}\n"
                    f"launches = {' '.join(f'{k}:{b}' for k, b in found)}\n"
                    f"needs = {' '.join(needs)}\n")
                print(f"export.py: {so.name} {so.stat().st_size} bytes")
            # The per-row kernel keeps each row in registers (read once);
            # `_twice` is the kernel that transforms it twice, for
            # comparison in the same run. Per tensor, the same option turns
            # off the loads of whole rows ahead in both kernels
            # (`_tensor_twice`).
            for granularity, suffix, extra in (
                    ("per_row", "", ""),
                    ("per_row", "_twice", " row-values-in-registers=0"),
                    ("per_tensor", "_tensor", ""),
                    ("per_tensor", "_tensor_twice", " row-values-in-registers=0")):
                name = f"hq_{layer}{suffix}"
                so = out / f"{name}.so"
                needs, remark = lower(
                    args, hq_module(name, n, o, granularity),
                    [lower_to_nvvm + extra], so, tmp,
                    remark=f"fused hadamard (block {HQ_BLOCK}) + "
                    f"{granularity} quantize")
                (out / f"{name}.txt").write_text(
                    f"# hot.quantize(hot.hadamard(gy)) lowered by hot-opt "
                    f"{lower_to_nvvm}{extra}\n# hot-opt: {remark}\n"
                    f"kind = hq\nlayer = {layer}\n"
                    f"library = {so.name}\nsymbol = _mlir_ciface_{name}\n"
                    f"rows = {n}\ncols = {o}\nblock = {HQ_BLOCK}\n"
                    f"bits = {HQ_BITS}\ngranularity = {granularity}\n"
                    f"scale = maxabs\nrounding = stochastic\n"
                    f"needs = {' '.join(needs)}\n")
                print(f"export.py: {so.name} {so.stat().st_size} bytes")


if __name__ == "__main__":
    main()
