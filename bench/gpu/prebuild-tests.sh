#!/usr/bin/env bash
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
#
# Builds the libraries of python/tests/test_gpu_execution.py for an H200
# (sm_90 and sm_90a) into bench/gpu/prebuilt/, here where LLVM and hot-opt are,
# so that the tests run on a GPU machine without LLVM (bench/gpu/device.sh).
#   bench/gpu/prebuild-tests.sh [out-dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/bench/gpu/prebuilt}"
rm -rf "$out"
mkdir -p "$out"
cd "$root"
# Every test builds its library, copies it to $out and skips.
HOT_GPU_PREBUILD=1 HOT_PREBUILT_DIR="$out" PYTHONPATH=python \
  .venv/bin/python -m pytest -q -p no:cacheprovider -rN python/tests/test_gpu_execution.py
echo "prebuild-tests.sh: $(ls "$out"/*.so | wc -l) libraries, $(du -sh "$out" | cut -f1), in $out"
