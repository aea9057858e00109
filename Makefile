# The two user commands of the hot project:
#   make demo    installs what is missing, builds, runs the bundled example
#   make check   installs what is missing, builds, runs the whole test suite
BUILD  ?= build
VENV   := .venv
LLVM   := /usr/lib/llvm-22
JOBS   ?= $(shell nproc)

.PHONY: demo check setup configure build
.DEFAULT_GOAL := check

setup:
	@scripts/setup.sh

$(BUILD)/build.ninja: CMakeLists.txt | setup
	cmake -G Ninja -S . -B $(BUILD) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
	  -DLLVM_USE_LINKER=lld \
	  -DMLIR_DIR=$(LLVM)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LLVM)/bin/lit \
	  -DMLIR_LINK_MLIR_DYLIB=ON \
	  -DPython3_EXECUTABLE=$(CURDIR)/$(VENV)/bin/python

configure: setup $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	PYTHONPATH=python HOT_OPT=$(BUILD)/bin/hot-opt $(VENV)/bin/python -m hot.demo
