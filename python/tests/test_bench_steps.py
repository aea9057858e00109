"""bench/gpu/src/steps.cpp: the GPU bench runs its steps in child processes, so that a kernel
that faults, hangs or fails a CUDA call costs its own rows only. Checked here with host-only steps
(no GPU): rows and lines come back intact, later steps read earlier results, a crash, an exit and
a hang each fail their own step alone, a failed setup fails every step, and steps past the total
limit are reported as not run."""

import subprocess
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "bench" / "gpu" / "src"

DRIVER = r"""
#include "steps.h"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>

static int setups = 0;

static Step rowStep(const char *label, double ms) {
  return {label, [=](const std::vector<StepResult> &) {
            StepResult r;
            Row row;
            row.group = label;
            row.shape = "a\x1f" "b\nc|d";
            row.impl = "impl";
            row.ms = ms;
            row.rate = 1.0 / 3.0;
            row.rateUnit = "GB/s";
            row.unwritten = 1234567890123LL;
            row.note = std::string("pid ") + std::to_string(getpid()) +
                       " setups " + std::to_string(setups);
            r.rows.push_back(row);
            r.lines.push_back(std::string("line of ") + label);
            return r;
          }};
}

int main(int argc, char **argv) {
  std::string mode = argv[1];
  std::vector<Step> steps;
  StepLimits limits;
  limits.setup = 5;
  limits.step = 1;
  limits.total = 30;
  steps.push_back(rowStep("first", 0.25));
  if (mode == "crash")
    steps.push_back({"crash", [](auto &) -> StepResult { std::abort(); }});
  if (mode == "exit")
    steps.push_back({"exit", [](auto &) -> StepResult { std::exit(1); }});
  if (mode == "hang")
    steps.push_back({"hang", [](auto &) -> StepResult {
                       std::this_thread::sleep_for(std::chrono::seconds(100));
                       return {};
                     }});
  if (mode == "slow") {
    limits.total = 1.5;
    for (int i = 0; i < 6; ++i)
      steps.push_back({"slow", [](auto &) {
                         std::this_thread::sleep_for(
                             std::chrono::milliseconds(400));
                         return StepResult{};
                       }});
  }
  // Reads the first step's row: what a later step knows of earlier ones.
  steps.push_back({"reader", [](const std::vector<StepResult> &done) {
                     StepResult r;
                     Row row;
                     row.group = "reader";
                     row.ms = done[0].rows.empty() ? -2 : done[0].rows[0].ms * 2;
                     r.rows.push_back(row);
                     return r;
                   }});
  steps.push_back(rowStep("last", 2.5));
  auto setup = [&] {
    ++setups;
    if (mode == "setup")
      std::exit(7);
  };
  std::vector<StepResult> results = runSteps(steps, setup, limits);
  for (size_t i = 0; i < results.size(); ++i) {
    std::printf("step %zu %s: %s\n", i, steps[i].label.c_str(),
                results[i].failure.empty() ? "ok" : results[i].failure.c_str());
    for (const Row &r : results[i].rows)
      std::printf("  %s\n  unwritten %lld rate %.17g\n", formatRow(r).c_str(),
                  r.unwritten, r.rate);
    for (const std::string &l : results[i].lines)
      std::printf("  line: %s\n", l.c_str());
  }
  std::printf("parent setups %d\n", setups);
}
"""


@pytest.fixture(scope="module")
def driver(host_program):
    return host_program("bench_steps", DRIVER, [SRC / "steps.cpp", SRC / "table.cpp"], [SRC])


def run(driver, mode):
    proc = subprocess.run([str(driver), mode], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def status(stdout, label):
    lines = [l for l in stdout.splitlines() if l.startswith("step ") and f" {label}: " in l]
    assert len(lines) == 1, stdout
    return lines[0].split(": ", 1)[1]


def test_rows_and_lines_come_back_intact(driver):
    out, err = run(driver, "plain")
    assert status(out, "first") == "ok" and status(out, "last") == "ok"
    # Separators inside a field become spaces; numbers round-trip exactly.
    assert "| first | a b c|d | impl | 0.250 | 0.3 GB/s |" in out
    assert "unwritten 1234567890123 rate 0.33333333333333331" in out
    assert "line: line of first" in out and "line: line of last" in out
    # The reader saw the first step's row (0.25 * 2), in the same child.
    assert "| reader |  |  | 0.500 |" in out
    # All steps in one child, which ran its setup once; the parent never does.
    pids = {l.split("pid ")[1].split()[0] for l in out.splitlines() if "pid " in l}
    assert len(pids) == 1
    assert "setups 1" in out and "parent setups 0" in out
    # The progress log has every row as it arrived.
    assert "| first | a b c|d | impl | 0.250 |" in err and "[3/3] last" in err


@pytest.mark.parametrize("mode,why", [
    ("crash", "killed by signal 6"),
    ("exit", "exited with status 1"),
    ("hang", "timed out after 1 s"),
])
def test_a_failing_step_costs_its_own_rows_only(driver, mode, why):
    out, err = run(driver, mode)
    assert status(out, mode).startswith(why), out
    assert f"{mode}: FAILED: {why}" in err
    assert status(out, "first") == "ok" and status(out, "last") == "ok"
    # A fresh child went on, and the reader still saw the first step's row (from the parent).
    assert "| reader |  |  | 0.500 |" in out
    pids = {l.split("pid ")[1].split()[0] for l in out.splitlines() if "pid " in l}
    assert len(pids) == 2


def test_a_failed_setup_fails_every_step(driver):
    out, _ = run(driver, "setup")
    for label in ("first", "reader", "last"):
        assert status(out, label) == "the child process failed in its setup: exited with status 7"


def test_steps_past_the_total_limit_are_not_run(driver):
    out, _ = run(driver, "slow")
    statuses = [l.split(": ", 1)[1] for l in out.splitlines() if l.startswith("step ")]
    ran = [s for s in statuses if s == "ok"]
    not_run = [s for s in statuses if s.startswith("not run: the benchmark's limit of 1 s")]
    assert statuses[0] == "ok" and statuses[-1].startswith("not run")
    assert len(ran) >= 3 and len(not_run) >= 2 and len(ran) + len(not_run) == len(statuses)
