"""The Python dtype tables (``ascend_ema_adam/_dtypes.py``) against the C++ ones and against
what they claim: the list operator's contract equals what the C++ check accepts (asked over every
combination of the C++ dtype table), the golden's entry check follows the same table, and the
narrowing limits are where the dtypes round."""

import itertools
import math

import ml_dtypes
import numpy as np
import pytest

from ascend_ema_adam import _dtypes, _kernels, golden
from ascend_ema_adam._dtypes import FLOAT_DTYPES, LIST_DTYPES


def test_list_contract_has_13_distinct_rows_of_float_dtypes():
    assert len(LIST_DTYPES) == 13
    assert len({row.names for row in LIST_DTYPES}) == 13
    for row in LIST_DTYPES:
        assert {row.param, row.state, row.grad} <= set(FLOAT_DTYPES)


def test_list_contract_equals_the_cpp_check():
    """``list_dtype_contract`` runs CheckApplyFusedEmaAdamList (the check both aclnn layers and
    the CANN tiling use) over every (param, state, grad, copy or none) of the C++ dtype table,
    int64 included, and returns what it accepts."""
    cpp = _kernels.list_dtype_contract()
    assert len(cpp) == len(set(cpp))
    assert sorted(cpp, key=str) == sorted((row.names for row in LIST_DTYPES), key=str)


def test_list_contract_is_in_the_order_of_the_tiling_keys():
    keys = [(c["param"], c["state"], c["grad"], c["copy"])
            for c in _kernels.list_dtype_combinations()]
    assert keys == [row.names for row in LIST_DTYPES]


def test_golden_entry_check_accepts_exactly_the_contract():
    accepted = set()
    floats = [d.numpy for d in FLOAT_DTYPES]
    for p, s, g, c in itertools.product(floats, floats, floats, [None] + floats):
        one = {d: np.zeros(1, d) for d in floats}
        try:
            golden.check_entry_dtypes(one[g], one[p], one[s], one[s], one[s], one[s],
                                      copy=None if c is None else one[c])
        except TypeError:
            continue
        accepted.add(tuple(None if d is None else _dtypes.by_numpy(d).name
                           for d in (p, s, g, c)))
    assert accepted == {row.names for row in LIST_DTYPES}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: d.short)
def test_narrowing_limits_are_half_an_ulp_past_the_ends(dtype):
    """overflow_from is the largest finite value plus half its ulp (ties round to even: inf),
    one_from is 1 minus half the ulp below 1 (ties round to even: 1.0)."""
    info = ml_dtypes.finfo(dtype.numpy) if dtype.name == "bfloat16" else np.finfo(dtype.numpy)
    eps = float(info.eps)  # the ulp of 1; the largest finite value is 2**maxexp * (1 - eps/2)
    assert dtype.overflow_from == math.ldexp(1 - eps / 4, int(info.maxexp))
    assert dtype.one_from == 1.0 - eps / 4


@pytest.mark.parametrize("name", ["float32", "float16"])
def test_narrowing_limits_round_as_documented(name):
    """numpy narrows float64 to float32 and float16 directly (bfloat16 goes through float32,
    rounding twice, so it is checked by the formula above only)."""
    dtype = _dtypes.by_name(name)
    below = np.nextafter(dtype.overflow_from, 0.0)
    with np.errstate(over="ignore"):
        assert np.isinf(np.array(dtype.overflow_from).astype(dtype.numpy))
    assert np.isfinite(np.array(below).astype(dtype.numpy))
    assert np.array(dtype.one_from).astype(dtype.numpy) == 1.0
    assert np.array(np.nextafter(dtype.one_from, 0.0)).astype(dtype.numpy) < 1.0


def test_golden_thresholds_come_from_the_table():
    for d in FLOAT_DTYPES:
        assert golden.MERE_THRESHOLD[d.numpy] == d.mere_threshold
        assert golden.SMALL_VALUE[d.numpy] == d.small_value
