#!/usr/bin/env bash
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
#
# The one command for a lent GPU machine (CUDA toolkit, Python with numpy and
# pytest, no LLVM): the benchmark (bench/gpu/run.sh; each of its steps in a
# child process, src/steps.h), then the GPU execution tests on the libraries
# of bench/gpu/prebuild-tests.sh (HOT_GPU_TEST_LIMIT_S, default 240 s). The
# benchmark goes first: its table is what a short lease is for, and it checks
# every row against a host reference itself. Writes
# gpu-tests.txt and bench-gpu.txt to $OUT (or to bench/gpu/build).
#   device tool: run(command="bench/gpu/device.sh",
#                     carry=["bench/gpu/kernels", "bench/gpu/prebuilt"])
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${OUT:-$root/bench/gpu/build}"
mkdir -p "$out"
cd "$root"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
# run.sh builds the runtime (with nvcc) before anything else runs.
HOT_GPU_BUILD_ONLY=1 bench/gpu/run.sh > "$out/build.txt" 2>&1 || { cat "$out/build.txt"; exit 1; }
export HOT_CUDA_RUNTIME="${HOT_CUDA_RUNTIME:-$root/bench/gpu/build/libhot_cuda_runtime.so}"
timeout 300 bench/gpu/run.sh 2>&1 | tee "$out/bench-gpu.txt"
bench=${PIPESTATUS[0]}
# A test whose kernel faults (the runtime aborts on a failed CUDA call) or
# hangs fails alone where pytest-xdist and pytest-timeout are there (the
# device image has both): its worker process dies and a fresh one goes on.
isolate=()
if python3 -c "import xdist, pytest_timeout" 2> /dev/null; then
  isolate=(-n 8 --timeout=90 --timeout-method=thread)
fi
HOT_CUDA_ABORT_ON_ERROR=1 HOT_PREBUILT_DIR="$root/bench/gpu/prebuilt" \
  PYTHONPATH=python PYTHONUNBUFFERED=1 \
  timeout "${HOT_GPU_TEST_LIMIT_S:-240}" python3 -m pytest -q -p no:cacheprovider -p no:benchmark --tb=short ${isolate[@]+"${isolate[@]}"} \
  python/tests/test_gpu_execution.py 2>&1 | tee "$out/gpu-tests.txt"
tests=${PIPESTATUS[0]}
echo "device.sh: tests exit $tests, benchmark exit $bench"
exit $(( tests != 0 || bench != 0 ))
