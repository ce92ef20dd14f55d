"""The golden models themselves: the documented reference case, the fp32 bias correction, and
why the precision comparison floors its relative-error denominator."""

import numpy as np
import pytest

from ascend_ema_adam import golden
from ascend_ema_adam.golden import Hyper

# CANN's documented aclnn example (op doc): five fp32 tensors holding x = 1..8, step 10,
# lr 1e-3, ema_decay 0.5, weight decay 0.5, mode 1; expected values from a double golden.
DOC_VAR = [0.9993468, 1.9987835, 2.9982349, 3.9976941, 4.9971581, 5.9966257, 6.9960959, 7.9955682]
DOC_S = [0.9996734, 1.9993917, 2.9991175, 3.9988470, 4.9985791, 5.9983128, 6.9980480, 7.9977841]
DOC_HYPER = Hyper(lr=1e-3, ema_decay=0.5, beta1=0.9, beta2=0.999, eps=1e-8, mode=1,
                  bias_correction=True, weight_decay=0.5)


@pytest.mark.parametrize("tier", ["reference", "emulate"])
def test_documented_cann_example(tier):
    x = np.arange(1, 9, dtype=np.float32).reshape(2, 2, 2)
    fn = golden.reference_update if tier == "reference" else golden.emulate_update
    var, m, v, s = fn(x, x, x, x, x, np.array([10], dtype=np.int64), DOC_HYPER)
    np.testing.assert_allclose(np.asarray(var, np.float64).ravel(), DOC_VAR, rtol=0, atol=6e-7)
    np.testing.assert_allclose(np.asarray(s, np.float64).ravel(), DOC_S, rtol=0, atol=6e-7)
    np.testing.assert_allclose(np.asarray(m, np.float64).ravel(), x.ravel(), rtol=1e-6)
    xd = x.ravel().astype(np.float64)
    np.testing.assert_allclose(np.asarray(v, np.float64).ravel(), 0.999 * xd + 0.001 * xd**2,
                               rtol=1e-6)


def test_emulation_does_not_modify_inputs(rng):
    ins = [rng.standard_normal(33).astype(np.float32) for _ in range(5)]
    before = [a.copy() for a in ins]
    golden.emulate_update(*ins, np.array([3]), Hyper(mode=0, weight_decay=0.1))
    for a, b in zip(ins, before):
        assert golden.bit_equal(a, b)


@pytest.mark.parametrize("beta", [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999])
def test_bias_correction_is_accurate_where_one_minus_pow_cancels(beta):
    """c = 1 - beta^n from the (A, P) recurrences keeps a few-ulp relative error; the naive fp32
    1 - powf(beta, n) loses up to ~10 bits when beta^n is close to 1."""
    b32 = np.float32(beta)
    worst = 0.0
    for n in list(range(1, 70)) + [100, 255, 256, 1000, 4097, 10000, 123457, 2**31 - 1]:
        with np.errstate(divide="ignore"):
            exact = -np.expm1(n * np.log(np.float64(b32)))
        got = np.float64(golden.bias_correction_f32(b32, n))
        if exact > 0:
            worst = max(worst, abs(got - exact) / exact)
    assert worst < 2.0**-24 * 48, worst  # a few dozen ulp at most, over ~30 roundings


def test_bias_correction_edge_steps():
    assert golden.bias_correction_f32(np.float32(0.9), 0) == 0.0
    assert golden.bias_correction_f32(np.float32(0.9), -5) == 0.0
    assert golden.bias_correction_f32(np.float32(0.9), 1) == np.float32(1) - np.float32(0.9)
    assert golden.bias_correction_f32(np.float32(0.0), 7) == 1.0
    assert golden.bias_correction_f32(np.float32(0.9), 2**62) == 1.0


def test_bias_correction_off_is_exactly_one():
    inv_c1, inv_c2 = golden.bias_corrections_f32(Hyper(bias_correction=False), 10)
    assert inv_c1 == 1.0 and inv_c2 == 1.0


def test_bit_equal_semantics():
    a = np.array([1.0, np.nan, -0.0], dtype=np.float32)
    b = np.array([1.0, np.nan, -0.0], dtype=np.float32)
    assert golden.bit_equal(a, b)
    assert not golden.bit_equal(a, np.array([1.0, np.nan, 0.0], dtype=np.float32))  # sign of 0
    assert not golden.bit_equal(a, np.array([1.0, 1.0, -0.0], dtype=np.float32))
    assert not golden.bit_equal(a, a.astype(np.float16))


def test_fixed_floor_fails_even_the_correctly_rounded_result(rng):
    """Why cann_precision floors the denominator at the dtype's small value instead of ATK's
    fixed 1e-7: near-zero outputs stored in 16 bits fail the fixed floor even when they are the
    float64 golden rounded once, i.e. the best any kernel can return."""
    golden64 = rng.normal(0.0, 1e-3, 200_000)
    best = golden64.astype(np.float16)
    fixed = golden.cann_precision(best, golden64, floor=1e-7)
    assert not fixed.passed
    assert golden.cann_precision(best, golden64).passed


def test_fixed_floor_fails_fp32_cancellation_that_the_scaled_floor_accepts(rng):
    """An fp32 sum of two large terms that cancel carries ~2^-24 of the terms as absolute error;
    the scale-aware floor judges those elements by that absolute error."""
    a = rng.uniform(-1, 1, 500_000)
    b = rng.uniform(-1, 1, a.size)
    cancel = rng.random(a.size) < 0.01  # 1 % of the sums cancel to ~1e-6
    b[cancel] = -a[cancel] + rng.normal(0, 1e-6, cancel.sum())
    golden64 = a + b
    fp32 = (a.astype(np.float32) + b.astype(np.float32))
    assert not golden.cann_precision(fp32, golden64, floor=1e-7).passed
    assert golden.cann_precision(fp32, golden64).passed


def test_precision_detects_a_real_error(rng):
    g = rng.normal(0, 1, 10_000)
    a = (g * (1 + 2.0**-10)).astype(np.float32)  # 8x the fp32 MERE threshold
    assert not golden.cann_precision(a, g).passed


def test_precision_nan_inf_positions():
    g = np.array([1.0, np.nan, np.inf, -np.inf, 2.0])
    ok = np.array([1.0, np.nan, np.inf, -np.inf, 2.0], dtype=np.float32)
    assert golden.cann_precision(ok, g).passed
    wrong_sign = np.array([1.0, np.nan, -np.inf, -np.inf, 2.0], dtype=np.float32)
    assert not golden.cann_precision(wrong_sign, g).passed
    nan_for_inf = np.array([1.0, np.nan, np.nan, -np.inf, 2.0], dtype=np.float32)
    assert not golden.cann_precision(nan_for_inf, g).passed
    # Beyond fp16's range the golden counts as +Inf for an fp16 output.
    assert golden.cann_precision(np.array([np.inf], dtype=np.float16), np.array([7e4])).passed
