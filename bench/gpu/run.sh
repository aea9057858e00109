#!/usr/bin/env bash
# The GPU benchmark of the hot project, for a lent NVIDIA GPU (built for an
# H200, sm_90): builds the harness with nvcc, then runs it once and prints one
# markdown table (README.md explains the rows). About a minute.
#
# On the GPU machine, from the repository root, the one command is:
#   bench/gpu/run.sh 2>&1 | tee bench-gpu.txt
# It needs only the CUDA toolkit (nvcc, cuBLAS) and the committed
# bench/gpu/kernels/ (made beforehand, where LLVM 22 is, by
#   bench/gpu/export.py --hot-opt build/bin/hot-opt
# and checked there with HOT_GPU_BUILD_ONLY=1 bench/gpu/run.sh).
#
# Usage: bench/gpu/run.sh [KERNEL_DIR]
#   KERNEL_DIR  the project's lowered modules (*.so + *.txt written by
#               bench/gpu/export.py); default bench/gpu/kernels.
# Environment: CUDA_HOME (default /usr/local/cuda), HOT_GPU_ARCH (default
# sm_90), HOT_GPU_BUILD (build directory, default bench/gpu/build),
# HOT_CUDA_RUNTIME (a prebuilt libhot_cuda_runtime.so; default: built here
# from lib/Runtime/CUDA with nvcc's host compiler, needing only cuda.h),
# HOT_GPU_BUILD_ONLY=1 (build, don't run).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cuda="${CUDA_HOME:-/usr/local/cuda}"
arch="${HOT_GPU_ARCH:-sm_90}"
build="${HOT_GPU_BUILD:-$here/build}"
kernels="${1:-$here/kernels}"
nvcc="$cuda/bin/nvcc"
[ -x "$nvcc" ] || { echo "run.sh: no nvcc at $nvcc (set CUDA_HOME)" >&2; exit 1; }

mkdir -p "$build"
root="$(cd "$here/../.." && pwd)"
# The mgpu* runtime the lowered modules call: prebuilt, or built here.
runtime="${HOT_CUDA_RUNTIME:-$build/libhot_cuda_runtime.so}"
if [ -z "${HOT_CUDA_RUNTIME:-}" ] && { [ ! -f "$runtime" ] ||
    [ -n "$(find "$root/lib/Runtime/CUDA" "$root/include/hot/Runtime" -newer "$runtime" -print -quit)" ]; }; then
  # The soname: a library linked against the runtime (DT_NEEDED
  # libhot_cuda_runtime.so, as the prebuilt test libraries are) then binds to
  # this copy once it is loaded, wherever it lies.
  echo "run.sh: building $runtime" >&2
  "$nvcc" -O2 -std=c++17 -shared -Xcompiler -fPIC,-fvisibility=hidden \
    -I"$root/include" "$root"/lib/Runtime/CUDA/*.cpp -o "$runtime" \
    -L"$cuda/lib64/stubs" -lcuda -Xlinker -z,defs \
    -Xlinker -soname,libhot_cuda_runtime.so
fi
runtime_dir="$(cd "$(dirname "$runtime")" && pwd)"

sources=("$here"/src/*.cu "$here"/src/*.cpp)
binary="$build/hot-gpu-bench"
# Rebuild when a source is newer than the binary.
if [ ! -x "$binary" ] || [ -n "$(find "$here/src" "$runtime" -newer "$binary" -print -quit)" ]; then
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
  # --export-dynamic: the modules bind to the harness's interposed
  # mgpuMemAlloc/mgpuLaunchKernel, which forward to the runtime.
  "$nvcc" -arch="$arch" "${objects[@]}" -o "$binary" \
    -L"$cuda/lib64" -L"$cuda/lib64/stubs" -L"$runtime_dir" \
    -l:"$(basename "$runtime")" -lcublasLt -lcublas -lcuda -ldl \
    -Xlinker --export-dynamic -Xlinker -rpath="$runtime_dir"
fi
# The modules' undefined symbols must all be in the runtime or libc.
for so in "$kernels"/*.so; do
  [ -f "$so" ] || continue
  missing="$(nm -D --undefined-only "$so" | awk '{print $2}' | sed 's/@.*//' |
    grep -v -x -F -f <(nm -D --defined-only "$runtime" | awk '{print $3}') |
    grep -v -E '^(malloc|free|memcpy|memset|abort|__cxa_finalize|__gmon_start__|_ITM_.*)$' || true)"
  [ -z "$missing" ] || { echo "run.sh: $so needs: $missing" >&2; exit 1; }
done

# The harness's view of the modules' C interface (src/memref.h), checked on
# the host against stand-in mgpu* functions: seconds, and no GPU needed.
abicheck="$build/abi-check"
if [ ! -x "$abicheck" ] || [ -n "$(find "$here/abicheck" "$here/src/memref.h" -newer "$abicheck" -print -quit)" ]; then
  "${CXX:-c++}" -O1 -std=c++17 "$here"/abicheck/*.cpp -o "$abicheck" -ldl -rdynamic
fi
if compgen -G "$kernels/*.txt" > /dev/null; then
  report="$("$abicheck" "$kernels")" || { echo "$report" >&2; exit 1; }
  echo "${report##*$'\n'}" >&2
fi

[ "${HOT_GPU_BUILD_ONLY:-0}" = 1 ] && exit 0
LD_LIBRARY_PATH="$runtime_dir:$cuda/lib64:${LD_LIBRARY_PATH:-}" "$binary" "$kernels"
