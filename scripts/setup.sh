#!/usr/bin/env bash
# Installs what `make demo` and `make check` need on a fresh Debian 12 machine:
# LLVM/MLIR 22, the build tools and Fashion-MNIST (dataset-fashion-mnist, for
# python/hot/train.py and its smoke test) from Debian's packages, and a Python
# virtual environment (.venv) with the packages of python/requirements.txt
# (and of python/requirements-cuda.txt where a CUDA toolkit is installed).
# Idempotent: a second run installs nothing and takes a second.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build llvm-22-dev libmlir-22-dev mlir-22-tools clang-22 lld-22
          dataset-fashion-mnist)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
python="${PYTHON:-python3}"
if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  missing+=(python3-venv)
  python=/usr/bin/python3
fi
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

venv=.venv
stamp=$venv/.requirements
if [ ! -x $venv/bin/python ]; then
  echo "setup: creating $venv with $("$python" --version)"
  "$python" -m venv $venv
fi
if ! cmp -s python/requirements.txt "$stamp"; then
  echo "setup: pip install -r python/requirements.txt"
  $venv/bin/python -m pip install -q --disable-pip-version-check -r python/requirements.txt
  cp python/requirements.txt "$stamp"
fi

# Where a CUDA toolkit is installed (ptxas on PATH or in /usr/local/cuda), the
# tools it lacks, from PyPI (python/requirements-cuda.txt). Optional: without
# network (a lent GPU machine) the tests that need them are unsupported.
if command -v ptxas >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/ptxas ]; then
  cuda_stamp=$venv/.requirements-cuda
  if ! cmp -s python/requirements-cuda.txt "$cuda_stamp"; then
    echo "setup: pip install -r python/requirements-cuda.txt"
    if $venv/bin/python -m pip install -q --disable-pip-version-check \
        -r python/requirements-cuda.txt; then
      cp python/requirements-cuda.txt "$cuda_stamp"
    else
      echo "setup: warning: python/requirements-cuda.txt not installed;" \
           "tests that need cuobjdump will be unsupported" >&2
    fi
  fi
fi
