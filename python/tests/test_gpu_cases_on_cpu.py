"""The transform-kernel checks of test_gpu_execution.py, run on the CPU path: the CPU path equals
the numpy reference (test_ops_execution.py), so these show that the GPU tests' modules, seeds and
expectations are right, and a failure on a device is the kernels'. They need hot-opt, not a
GPU."""

import pytest

from gpu_cases import (LOOP_TRIPS, ROW_HADAMARD_QUANTIZES, ROW_HADAMARD_SHAPES,
                       check_column_hadamard_quantize, check_gw_given_x,
                       check_row_hadamard_quantize,
                       check_loop_iter_args,
                       COLUMN_HADAMARD_QUANTIZES, COLUMN_HADAMARD_SHAPES, NARROW_LAYER_GRANULARITIES, NARROW_LAYER_SHAPES, PAIR_SHAPES,
                       PER_COL_SHAPES, SHARED_GY_SHAPES, check_narrow_layer,
                       check_per_col_quantize, check_quantize_pair, check_shared_statistics)
from hot import runner


@pytest.fixture(scope="module")
def compile(hot_opt):
    return lambda text: runner.compile_module(text, opt_tool=hot_opt)


@pytest.mark.parametrize("keep_projection", [True, False], ids=["kept", "not-stored"])
@pytest.mark.parametrize("data", ["random", "zeros", "nan"])
@pytest.mark.parametrize("samples,tokens,channels,block", SHARED_GY_SHAPES)
def test_shared_statistics_on_cpu(compile, samples, tokens, channels, block, data,
                                  keep_projection):
    check_shared_statistics(compile, samples, tokens, channels, block, data, keep_projection)


@pytest.mark.parametrize("rounding", ["nearest", "stochastic"])
@pytest.mark.parametrize("m,n", PER_COL_SHAPES)
def test_per_col_quantize_on_cpu(compile, m, n, rounding):
    check_per_col_quantize(compile, m, n, rounding)


@pytest.mark.parametrize("product", [False, True], ids=["q", "gw"])
@pytest.mark.parametrize("granularity", ["per_tensor", "per_col"])
@pytest.mark.parametrize("m,n,block", PAIR_SHAPES)
def test_quantize_pair_on_cpu(compile, m, n, block, granularity, product):
    check_quantize_pair(compile, m, n, block, granularity, product)


@pytest.mark.parametrize("granularity", NARROW_LAYER_GRANULARITIES, ids=["tensor", "lqs"])
@pytest.mark.parametrize("element", ["bf16", "f16"])
@pytest.mark.parametrize("shape", NARROW_LAYER_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_narrow_layer_on_cpu(compile, shape, element, granularity):
    check_narrow_layer(compile, shape, element, granularity)


def test_gw_4_bit_on_cpu(compile):
    check_narrow_layer(compile, NARROW_LAYER_SHAPES[0], "bf16", NARROW_LAYER_GRANULARITIES[0],
                       gw_bits=4)


def test_gw_natural_order_with_tails_on_cpu(compile):
    check_gw_given_x(compile)


@pytest.mark.parametrize("granularity,scale,rounding", COLUMN_HADAMARD_QUANTIZES)
@pytest.mark.parametrize("m,n,block,element", COLUMN_HADAMARD_SHAPES)
def test_column_hadamard_quantize_on_cpu(compile, m, n, block, element, granularity, scale,
                                         rounding):
    check_column_hadamard_quantize(compile, m, n, block, element, granularity, scale, rounding)


@pytest.mark.parametrize("trips", LOOP_TRIPS)
def test_loop_iter_args_on_cpu(compile, trips):
    check_loop_iter_args(compile, trips)


@pytest.mark.parametrize("scale,rounding", ROW_HADAMARD_QUANTIZES)
@pytest.mark.parametrize("m,n,block,element", ROW_HADAMARD_SHAPES)
def test_row_hadamard_quantize_on_cpu(compile, m, n, block, element, scale, rounding):
    check_row_hadamard_quantize(compile, m, n, block, element, scale, rounding)
