#!/usr/bin/env python3
"""Saved activations, peak live tensors and backward BOPs before/after hot-training-pipeline.

    .venv/bin/python bench/memory.py [--json out.json] [GRAPH.mlir ...]

Runs ``hot-opt G --hot-training-pipeline="remarks=false" --hot-report="format=json ..."`` on
the ViT-B batch-64 12-block joint graph and the 32-block Llama-style joint graph
(build/fixtures-large, generated with ``hot.fixtures --large`` when missing, ~50 s) or on the
graphs given, and prints per graph:

* the totals of hot-report: saved bytes of the linear layers' inputs x (what the backward's
  gw = gyᵀ·x needs) before and after activation compression, with the issue's >= 75 %
  criterion; the function's peak live tensor bytes (liveness in program order over every
  tensor of the joint graph, not just the saved ones); the BOPs of the backward products of
  the linear layers (gx and gw; attention's batched products are not linear layers and not
  counted); b1 x b2-bit multiply-add = b1·b2, float = 32·32;
* the same per kind of layer (one row per position in the block);
* the saved inputs counted once per tensor: hot-report counts x once per layer, so an x read by
  several layers (Llama's q/k/v projections, gate/up) counts several times; here the distinct
  x tensors are read from the compiled IR (the operand of each layer's compression chain,
  ops tagged ``hot.saved_activation``), with the bytes of the compressed copies as compiled
  and as they would be if the layers reading the same x shared one copy.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import OrderedDict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import REPO, md_table  # noqa: E402

PIPELINE = "--hot-training-pipeline=remarks=false"
LARGE = REPO / "build/fixtures-large"
DEFAULT_GRAPHS = [LARGE / "vit_b12_b64_joint.mlir", LARGE / "llama32_d256_joint.mlir"]
# Linear layers of one block in forward order (hot-report names them in program order).
BLOCK_LAYERS = {
    "vit_b12_b64": ["attn.qkv", "attn.proj", "mlp.fc1", "mlp.fc2"],
    "llama32_d256": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                     "down_proj"],
}
THRESHOLD = 0.75


def mib(b):
    return f"{b / 2**20:,.2f}"


def gib(b):
    return f"{b / 2**30:,.3f}"


def pct(before, after):
    return f"{100 * (before - after) / before:.1f} %" if before else "-"


def tensor_bytes(ty: str) -> int:
    """Bytes of ``tensor<AxBxf32>`` (as hot's getTensorBytes: at least one byte per element)."""
    body = ty[len("tensor<"):-1]
    *dims, elem = body.split("x") if "x" in body else [body]
    n = 1
    for d in dims:
        n *= int(d)
    m = re.match(r"[a-z]+(\d+)", elem)
    bits = int(m.group(1)) if m else 32
    return n * max(1, bits // 8)


_LAYER = re.compile(r'#hot\.layer<name = "([^"]+)"')
_LOWRANK = re.compile(r"= hot\.lowrank (%[\w.$-]+) .* : (tensor<[^>]*>) -> (tensor<[^>]*>)")
_QUANT = re.compile(r"= hot\.quantize (%[\w.$-]+) .* -> (tensor<[^>]*>), (tensor<[^>]*>)")


def compressed_chains(ir: str):
    """Per layer: (root SSA value, root type, compressed bytes) of its saved-activation chain."""
    roots, compressed = {}, {}
    for line in ir.splitlines():
        if "hot.saved_activation" not in line:
            continue
        lm = _LAYER.search(line)
        if not lm:
            continue
        layer = lm.group(1)
        m = _LOWRANK.search(line)
        if m:
            roots.setdefault(layer, (m.group(1), m.group(2)))
            continue
        m = _QUANT.search(line)
        if m and "hot.compressed" in line:
            compressed[layer] = tensor_bytes(m.group(2)) + tensor_bytes(m.group(3))
            # No HLA: the quantize reads x (or a view of it) directly.
            roots.setdefault(layer, (m.group(1), None))
    return roots, compressed


def analyse(hot_opt: Path, graph: Path, tmp: Path) -> dict:
    report = tmp / (graph.stem + ".report.json")
    out_ir = tmp / (graph.stem + ".hot.mlir")
    wall, _, _ = common.run_timed([hot_opt, graph, PIPELINE,
                                   f"--hot-report=format=json output={report}", "-o", out_ir])
    data = json.loads(report.read_text())
    funcs = data["functions"]
    if len(funcs) != 1:
        raise SystemExit(f"{graph}: expected one function with linear layers, got {len(funcs)}")
    f = funcs[0]
    ir = out_ir.read_text()
    roots, compressed = compressed_chains(ir)
    return {"graph": graph, "function": f["function"], "layers": f["layers"],
            "totals": f["totals"], "peak_before": f["peak_live_bytes_before"],
            "peak_after": f["peak_live_bytes_after"], "roots": roots, "compressed": compressed,
            "wall_s": wall}


def model_key(graph: Path) -> str:
    key = graph.stem.removesuffix("_joint")
    # build/fixtures-scaling/llama<N>_d256: the same blocks as the 32-block stack.
    return "llama32_d256" if re.fullmatch(r"llama\d+_d256", key) else key


def per_kind(r: dict):
    names = BLOCK_LAYERS.get(model_key(r["graph"]))
    layers = r["layers"]
    groups = OrderedDict()
    for i, l in enumerate(layers):
        if names and len(layers) % len(names) == 0:
            key = names[i % len(names)]
        else:
            key = f"O={l['O']} I={l['I']}"
        groups.setdefault(key, []).append(l)
    rows = []
    for key, ls in groups.items():
        shapes = {(l["N"], l["O"], l["I"], l["gx"], l["gw"]) for l in ls}
        if len(shapes) != 1:   # the labels by position do not fit: fall back to shapes
            return None
        (n, o, i, gx, gw), = shapes
        sb = sum(l["saved_bytes_before"] for l in ls)
        sa = sum(l["saved_bytes_after"] for l in ls)
        bb = sum(l["backward_bops_before"] for l in ls)
        ba = sum(l["backward_bops_after"] for l in ls)
        rows.append([key, len(ls), f"{n}x{o}x{i}", gx, gw, mib(sb), mib(sa), pct(sb, sa),
                     f"{bb / 1e12:,.1f}", f"{ba / 1e12:,.2f}", f"{bb / ba:.1f}x"])
    return rows


def dedup(r: dict):
    """Saved x counted once per distinct tensor."""
    layers = {l["name"]: l for l in r["layers"]}
    by_root = OrderedDict()
    for name, l in layers.items():
        root = r["roots"].get(name)
        key = root[0] if root else f"<uncompressed {name}>"
        by_root.setdefault(key, []).append(name)
    before = after_compiled = after_shared = 0
    for key, names in by_root.items():
        before += layers[names[0]]["saved_bytes_before"]
        copies = [r["compressed"].get(n, layers[n]["saved_bytes_after"]) for n in names]
        after_compiled += sum(copies)
        after_shared += max(copies)
    shared = sum(1 for names in by_root.values() if len(names) > 1)
    return {"distinct_x": len(by_root), "layers": len(layers), "x_read_by_several": shared,
            "before": before, "after_compiled": after_compiled, "after_shared": after_shared}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graphs", type=Path, nargs="*", default=None)
    ap.add_argument("--hot-opt", type=Path, default=REPO / "build/bin/hot-opt")
    ap.add_argument("--no-generate", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    graphs = a.graphs or DEFAULT_GRAPHS
    if not a.hot_opt.exists():
        raise SystemExit(f"{a.hot_opt} not found: build first")
    missing = [g for g in graphs if not g.exists()]
    if missing:
        if a.graphs or a.no_generate:
            raise SystemExit(f"missing: {', '.join(map(str, missing))}")
        common.generate(["--large"])

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        hot_opt = common.snapshot_binary(a.hot_opt, tmp)
        print("# Saved activations, peak live tensors and backward BOPs\n")
        print("\n".join(common.machine_lines({"hot-opt": (hot_opt, a.hot_opt)})))
        args = " ".join(argv if argv is not None else sys.argv[1:])
        print(f"- command: `{' '.join(['.venv/bin/python bench/memory.py', args]).strip()}`")
        print(f"- per graph: `hot-opt G {PIPELINE} "
              f"--hot-report=\"format=json output=R\" -o OUT` (hot-report's own table: "
              f"`format=table`)\n")
        for g in graphs:
            results.append(analyse(hot_opt, g, tmp))

    print("## Totals (hot-report)\n")
    rows = []
    for r in results:
        t = r["totals"]
        sb, sa = t["saved_bytes_before"], t["saved_bytes_after"]
        red = (sb - sa) / sb if sb else 0.0
        n_gx = sum(1 for l in r["layers"] if not l["gx"].startswith(("fp", "absent")))
        n_gw = sum(1 for l in r["layers"] if not l["gw"].startswith(("fp", "absent")))
        # Frozen layers (no gw: LoRA's base weights) have their gx rewritten only.
        n_frozen = sum(1 for l in r["layers"] if l["gw"] == "absent")
        frozen = f"; {n_frozen} frozen" if n_frozen else ""
        rows.append([f"`{r['graph'].name}`", f"{len(r['layers'])} ({n_gx} / {n_gw}{frozen})",
                     mib(sb), mib(sa), f"{100 * red:.1f} % "
                     f"({'meets' if red >= THRESHOLD else 'FAILS'} >= 75 %)",
                     gib(r["peak_before"]), gib(r["peak_after"]),
                     pct(r["peak_before"], r["peak_after"]),
                     f"{t['backward_bops_before'] / 1e12:,.1f}",
                     f"{t['backward_bops_after'] / 1e12:,.1f}",
                     f"{pct(t['backward_bops_before'], t['backward_bops_after'])} "
                     f"({t['backward_bops_before'] / t['backward_bops_after']:.1f}x)"])
    print(md_table(["graph", "linear layers (gx / gw rewritten)", "saved x before MiB",
                    "after MiB", "saved reduction", "peak live before GiB", "after GiB",
                    "peak reduction", "backward TBOPs before", "after", "BOPs reduction"],
                   rows))
    print()

    for r in results:
        rows = per_kind(r)
        if not rows:
            continue
        print(f"### Per kind of layer: `{r['graph'].name}`\n")
        print(md_table(["layer", "count", "N x O x I", "gx", "gw", "saved before MiB",
                        "after MiB", "reduction", "TBOPs before", "after", "factor"],
                       rows, align="lrlllrrrrrr"))
        print()

    print("## Saved x counted once per tensor (from the compiled IR)\n")
    rows = []
    for r in results:
        d = dedup(r)
        r["dedup"] = d
        rows.append([f"`{r['graph'].name}`", d["layers"], d["distinct_x"],
                     d["x_read_by_several"], mib(d["before"]), mib(d["after_compiled"]),
                     pct(d["before"], d["after_compiled"]), mib(d["after_shared"]),
                     pct(d["before"], d["after_shared"])])
    print(md_table(["graph", "layers", "distinct x", "x read by several layers",
                    "before MiB", "after as compiled MiB", "reduction",
                    "after if shared MiB", "reduction"], rows))
    print()
    for r in results:
        d = r["dedup"]
        if d["after_compiled"] != d["after_shared"]:
            print(f"- `{r['graph'].name}`: {d['layers'] - d['distinct_x']} of the "
                  f"{d['layers']} compressed copies duplicate another layer's (same x, same "
                  f"HLA/INT8 chain, distinct `hot.layer` tag, so CSE keeps both): "
                  f"{mib(d['after_compiled'] - d['after_shared'])} MiB more than needed.")
    print()
    if a.json:
        a.json.write_text(json.dumps([{k: (str(v) if isinstance(v, Path) else v)
                                       for k, v in r.items()} for r in results], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
