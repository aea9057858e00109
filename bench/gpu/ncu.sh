#!/usr/bin/env bash
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
#
# Nsight Compute on a few of our kernels, for a lent GPU machine: why a
# kernel runs at the rate the benchmark shows (occupancy, warp stalls, issue
# slots, memory throughput). It runs the benchmark harness on a subset of the
# modules of bench/gpu/kernels and profiles the launches whose names match.
#   bench/gpu/ncu.sh 'KERNEL_REGEX' MODULE... (module names without .so)
# e.g.
#   bench/gpu/ncu.sh 'lowrank_64x197x3072.*quantize|hadamard_quantize_row' \
#     layer_fc1_bf16 layer_fc1_bf16_nearest hq_fc1
# Writes $OUT/ncu.txt (or bench/gpu/build/ncu.txt): the first matching launch
# of each module. ncu needs a runtime that
# exposes the hardware counters (KINDS.md: Firecracker machines do, gVisor
# ones did not); where it cannot, the file says why.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$here/build}"
mkdir -p "$out"
[ $# -ge 2 ] || { sed -n 5,15p "$0" >&2; exit 2; }
regex="$1"
shift
ncu="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | tail -1)"
[ -n "$ncu" ] || { echo "ncu.sh: no ncu" | tee "$out/ncu.txt"; exit 1; }
cuda="${CUDA_HOME:-/usr/local/cuda}"
build="${HOT_GPU_BUILD:-$here/build}"
: > "$out/ncu.txt"
status=0
for module in "$@"; do
  # One module at a time: the harness runs its steps in one child process,
  # and ncu's launch count is the process's.
  subset="$(mktemp -d)"
  cp "$here/kernels/$module.so" "$here/kernels/$module.txt" "$subset/" || exit 1
  HOT_GPU_BUILD_ONLY=1 "$here/run.sh" "$subset" > "$out/ncu-build.txt" 2>&1 ||
    { cat "$out/ncu-build.txt"; exit 1; }
  echo "=== $module" >> "$out/ncu.txt"
  # The first launch of each matching kernel (the checked call), the clocks
  # left as they are (METHOD.md).
  # The sections' tables, plus what WarpStateStats only charts: the cycles a
  # warp spends in each stall reason per issued instruction. An ncu that does
  # not take the regex gets a second run without it.
  profile() {
    LD_LIBRARY_PATH="$build:$cuda/lib64:${LD_LIBRARY_PATH:-}" HOT_GPU_BREAKDOWN=none \
      timeout 120 "$ncu" --clock-control none --target-processes all \
      -k "regex:$regex" --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section SchedulerStats --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
      "$@" "$build/hot-gpu-bench" "$subset" >> "$out/ncu.txt" 2>&1
  }
  profile --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' ||
    { echo "ncu.sh: again without the stall metrics" >> "$out/ncu.txt"; profile; } ||
    status=1
done
echo "ncu.sh: exit $status, $(grep -c '^  hot_' "$out/ncu.txt") kernel reports in $out/ncu.txt"
exit $status
