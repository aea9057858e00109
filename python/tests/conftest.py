"""Shared pytest fixtures of the hot test suite."""

import shutil
import subprocess

import pytest

from hot import runner


@pytest.fixture(scope="session")
def hot_opt():
    """Path of hot-opt; FAIL if $HOT_OPT is set but unusable (ctest sets it), skip only if
    nothing is built."""
    try:
        path = runner.find_hot_opt()
    except FileNotFoundError as e:
        pytest.fail(f"HOT_OPT is set but unusable: {e}", pytrace=False)
    if path is None:
        pytest.skip("hot-opt not found: set HOT_OPT or build build/bin/hot-opt")
    return path


@pytest.fixture(scope="session")
def host_program(tmp_path_factory):
    """A builder of host-only C++ test programs: ``host_program(name, source, sources=(),
    includes=(), flags=())`` compiles the text ``source`` with the files ``sources`` (C++17,
    -O1) and returns the executable. Skips without a C++ compiler."""
    cxx = shutil.which("c++") or shutil.which("clang++-22")
    if cxx is None:
        pytest.skip("no C++ compiler")

    def build(name, source, sources=(), includes=(), flags=()):
        work = tmp_path_factory.mktemp(name)
        (work / "driver.cpp").write_text(source)
        exe = work / "driver"
        subprocess.run([cxx, "-O1", "-std=c++17", *flags, *(f"-I{d}" for d in includes),
                        str(work / "driver.cpp"), *map(str, sources), "-o", str(exe)],
                       check=True)
        return exe

    return build
