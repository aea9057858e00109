"""Shared pytest fixtures of the hot test suite."""

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
