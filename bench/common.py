"""Shared helpers of the benchmarks in bench/ (no dependencies beyond the standard library)."""

from __future__ import annotations

import datetime
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FRONTEND_PY = REPO / ".venv-frontend/bin/python"


def sh(cmd, **kw) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def tool_version(tool: str) -> str:
    try:
        out = sh([tool, "--version"])
    except (OSError, subprocess.CalledProcessError) as e:
        return f"unavailable ({e})"
    m = re.search(r"LLVM version (\S+)", out)
    return m.group(1) if m else out.strip().splitlines()[0]


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def snapshot_binary(path: Path, tmp: Path) -> Path:
    """A private copy of ``path`` so that a rebuild of build/bin during the run cannot swap the
    binary between measurements (hot-opt links only shared system libraries)."""
    dst = tmp / Path(path).name
    shutil.copy2(path, dst)
    return dst


def git_state() -> str:
    try:
        head = sh(["git", "rev-parse", "--short", "HEAD"], cwd=REPO).strip()
        dirty = sh(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO).rstrip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    if not dirty:
        return head + " (clean working tree)"
    paths = [line[3:] for line in dirty.splitlines()]
    shown = ", ".join(paths[:6]) + (f", ... ({len(paths)} files)" if len(paths) > 6 else "")
    return f"{head} + uncommitted changes in {shown}"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_lines(binaries: dict) -> list:
    """Markdown bullet lines: date, machine, tools, binary hashes, load."""
    lines = [
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"- machine: {cpu_model()}, {os.cpu_count()} logical CPUs, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}",
        f"- git: {git_state()}",
    ]
    for label, (path, original) in binaries.items():
        lines.append(f"- {label}: {original} (LLVM {tool_version(str(path))}, "
                     f"sha256 {sha256(path)[:16]})")
    lines.append(f"- load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return lines


def run_timed_rc(cmd):
    """Run ``cmd`` (stdout discarded); return (wall s, CPU s of the child, stderr text, exit
    status; negative: killed by that signal)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        rc = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
    return wall, ru.ru_utime + ru.ru_stime, text, rc


def run_timed(cmd):
    """:func:`run_timed_rc` that fails on a non-zero exit status."""
    wall, cpu, text, rc = run_timed_rc(cmd)
    if rc != 0:
        raise SystemExit(f"failed ({rc}): {' '.join(map(str, cmd))}\n{text[-4000:]}")
    return wall, cpu, text


_TIMING_ROW = re.compile(r"^\s*(\d+\.\d+) \(\s*[\d.]+%\)(\s+)(\S.*?)\s*$")


def parse_mlir_timing(text: str) -> dict:
    """Top-level rows of ``--mlir-timing`` (tree display): name -> wall seconds.  Nested rows
    (analyses, nested pass managers) are already included in their parent's time."""
    rows = []
    in_report = False
    for line in text.splitlines():
        if "Wall Time" in line and "Name" in line:
            in_report = True
            continue
        if not in_report:
            continue
        m = _TIMING_ROW.match(line)
        if m:
            rows.append((len(m.group(2)), m.group(3), float(m.group(1))))
    if not rows:
        raise ValueError("no --mlir-timing report in the output")
    top = min(r[0] for r in rows)
    out = {}
    for indent, name, secs in rows:
        if indent == top:
            out[name] = out.get(name, 0.0) + secs
    return out


NON_PASS_ROWS = {"Parser", "Output", "Rest", "Total"}


def pass_seconds(timing: dict) -> float:
    """Seconds spent in passes: the top-level rows other than parse, print, rest and total."""
    return sum(v for k, v in timing.items() if k not in NON_PASS_ROWS)


def ensure_frontend():
    if not FRONTEND_PY.exists():
        raise SystemExit(f"{FRONTEND_PY} is missing: create the frontend environment "
                         "(test/Fixtures/README.md) or pass existing graphs")


def generate(args: list) -> None:
    """``PYTHONPATH=python .venv-frontend/bin/python -m hot.fixtures ARGS``."""
    ensure_frontend()
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    cmd = [str(FRONTEND_PY), "-m", "hot.fixtures", *args]
    print(f"generating: PYTHONPATH=python {' '.join(cmd[0:1])} -m hot.fixtures {' '.join(args)}",
          file=sys.stderr)
    subprocess.run(cmd, check=True, cwd=REPO, env=env, stdout=sys.stderr)


def md_table(header: list, rows: list, align: str | None = None) -> str:
    align = align or "l" + "r" * (len(header) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)
