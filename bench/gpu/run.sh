#!/usr/bin/env bash
# The GPU benchmark of the hot project, for a lent NVIDIA GPU (built for an
# H200, sm_90): builds the harness with nvcc, then runs it once and prints one
# markdown table (README.md explains the rows). About a minute.
#
# Usage: bench/gpu/run.sh [KERNEL_DIR]
#   KERNEL_DIR  directory of the project's kernels (*.json + PTX/cubin made by
#               `hot-opt --hot-lower-to-nvvm`); default bench/gpu/kernels.
# A plain CUDA kernel (selftest/) always runs through the same slot.
# Environment: CUDA_HOME (default /usr/local/cuda), HOT_GPU_ARCH (default
# sm_90), HOT_GPU_BUILD (build directory, default bench/gpu/build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cuda="${CUDA_HOME:-/usr/local/cuda}"
arch="${HOT_GPU_ARCH:-sm_90}"
build="${HOT_GPU_BUILD:-$here/build}"
kernels="${1:-$here/kernels}"
nvcc="$cuda/bin/nvcc"
[ -x "$nvcc" ] || { echo "run.sh: no nvcc at $nvcc (set CUDA_HOME)" >&2; exit 1; }

mkdir -p "$build"
sources=("$here"/src/*.cu "$here"/src/*.cpp)
binary="$build/hot-gpu-bench"
# Rebuild when a source is newer than the binary.
if [ ! -x "$binary" ] || [ -n "$(find "$here/src" -newer "$binary" -print -quit)" ]; then
  echo "run.sh: building with $("$nvcc" --version | tail -1)" >&2
  objects=()
  pids=()
  for src in "${sources[@]}"; do
    obj="$build/$(basename "$src").o"
    objects+=("$obj")
    "$nvcc" -O3 -std=c++17 -arch="$arch" -lineinfo -c "$src" -o "$obj" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  "$nvcc" -arch="$arch" "${objects[@]}" -o "$binary" \
    -L"$cuda/lib64" -L"$cuda/lib64/stubs" -lcublasLt -lcublas -lcuda
fi
# The slot's self-test: a plain CUDA kernel, as PTX with its description.
selftest="$build/selftest"
mkdir -p "$selftest"
cp "$here/selftest/naive_int8_tn.json" "$selftest/"
"$nvcc" -arch="$arch" -ptx "$here/selftest/naive_int8_tn.cu" -o "$selftest/naive_int8_tn.ptx"

[ "${HOT_GPU_BUILD_ONLY:-0}" = 1 ] && exit 0
LD_LIBRARY_PATH="$cuda/lib64:${LD_LIBRARY_PATH:-}" "$binary" "$kernels" "$selftest"
