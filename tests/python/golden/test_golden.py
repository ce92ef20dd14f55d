"""The golden models themselves: the documented reference case, the fp32 bias correction, and
why the precision comparison floors its relative-error denominator."""

import ml_dtypes
import numpy as np
import pytest

from ascend_ema_adam import golden
from ascend_ema_adam.golden import Hyper
from kernel_cases import BF16, ENTRY_DTYPES, ENTRY_IDS, FP16, FP32, entry_inputs

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


def test_list_precision_floors_each_entry_by_its_own_scale(rng):
    """A list's entries are tensors of their own scales: an entry 1000x larger than the rest,
    whose one element cancelled to near zero carries the one-ulp error of its terms, passes by its
    own floor and fails by the whole list's; a real error in the small entry still fails."""
    small = rng.normal(0, 1e-3, 10_000)
    large = rng.normal(0, 1.0, 50)
    large[7] = 1e-6
    large32 = large.astype(np.float32)
    large32[7] += np.float32(2.0**-24)  # the error of cancelling terms of size 1
    small32 = small.astype(np.float32)
    assert golden.cann_precision_of_entries([small32, large32], [small, large]).passed
    joined = golden.cann_precision(np.concatenate([small32, large32]),
                                   np.concatenate([small, large]))
    assert not joined.passed
    wrong = (small * (1 + 2.0**-10)).astype(np.float32)
    assert not golden.cann_precision_of_entries([wrong, large32], [small, large]).passed


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


# ---------------------------------------------------------------------------------------------
# The list operator's additions (golden.emulate_entry / reference_entry)


@pytest.mark.parametrize("combo", ENTRY_DTYPES, ids=ENTRY_IDS)
@pytest.mark.parametrize("amsgrad", [False, True], ids=["adam", "amsgrad"])
@pytest.mark.parametrize("mode", [0, 1])
def test_entry_emulation_meets_cann_precision(rng, combo, amsgrad, mode):
    p, s, g, c = combo
    arrays, extra = entry_inputs(rng, 4099, p, s, g, c, amsgrad)
    h = Hyper(lr=1e-3, ema_decay=0.999, mode=mode, weight_decay=0.01)
    ex = golden.Extras(maximize=bool(rng.integers(2)), grad_scale=float(rng.uniform(0.5, 4.0)))
    step = np.array([int(rng.integers(1, 1000))], np.int64)
    out = golden.emulate_entry(*arrays.values(), step, h, ex, **extra)
    ref = golden.reference_entry(*arrays.values(), step, h, ex, **extra)
    for name in ("var", "m", "v", "s", "max_v", "copy"):
        a, r = getattr(out, name), getattr(ref, name)
        assert (a is None) == (name in ("max_v", "copy") and name not in extra)
        if a is None:
            continue
        assert a.dtype == {"var": p, "copy": c}.get(name, s)
        prec = golden.cann_precision(a, r)
        assert prec.passed, f"{name}: {prec}"


def test_entry_without_extras_is_the_single_op(rng):
    for dtype in (FP32, FP16, BF16):
        arrays, _ = entry_inputs(rng, 257, dtype, dtype, dtype, None, False)
        step = np.array([7], np.int64)
        h = Hyper(mode=0, weight_decay=0.05)
        single = golden.emulate_update(*arrays.values(), step, h)
        entry = golden.emulate_entry(*arrays.values(), step, h, golden.Extras())
        for a, b in zip(single, entry.astuple()[:4]):
            assert golden.bit_equal(a, b)
        assert entry.max_v is None and entry.copy is None


def test_maximize_negates_the_gradient_first(rng):
    arrays, _ = entry_inputs(rng, 1000, FP16, FP32, FP16, None, True)
    max_v = (rng.normal(0, 0.01, 1000) ** 2).astype(FP32)
    step, h = np.array([3], np.int64), Hyper(mode=1, weight_decay=0.1)
    up = golden.emulate_entry(*arrays.values(), step, h, golden.Extras(maximize=True), max_v=max_v)
    negated = dict(arrays, grad=-arrays["grad"])
    down = golden.emulate_entry(*negated.values(), step, h, max_v=max_v)
    for a, b in zip(up.astuple(), down.astuple()):
        assert (a is None and b is None) or golden.bit_equal(a, b)


def test_grad_scale_divides_the_gradient(rng):
    """A power-of-two scale is undone exactly: (g * 2^k) / 2^k == g in fp32."""
    arrays, _ = entry_inputs(rng, 1000, FP32, FP32, FP32, None, False)
    scale = 2.0 ** int(rng.integers(1, 16))
    scaled = dict(arrays, grad=(arrays["grad"] * np.float32(scale)).astype(FP32))
    step, h = np.array([11], np.int64), Hyper()
    a = golden.emulate_entry(*scaled.values(), step, h, golden.Extras(grad_scale=scale))
    b = golden.emulate_entry(*arrays.values(), step, h)
    for x, y in zip(a.astuple()[:4], b.astuple()[:4]):
        assert golden.bit_equal(x, y)
    # Not a multiplication by the reciprocal: 3 is not a power of two and the two differ.
    g3 = golden.emulate_entry(*arrays.values(), step, h, golden.Extras(grad_scale=3.0))
    g = arrays["grad"].astype(np.float32)
    times_inverse = dict(arrays, grad=(g * (np.float32(1) / np.float32(3))).astype(FP32))
    alt = golden.emulate_entry(*times_inverse.values(), step, h)
    divided = dict(arrays, grad=(g / np.float32(3)).astype(FP32))
    exact = golden.emulate_entry(*divided.values(), step, h)
    assert golden.bit_equal(g3.m, exact.m)
    assert not golden.bit_equal(g3.m, alt.m)


@pytest.mark.parametrize("found_inf", [1.0, -2.5, float("nan"), float("inf")])
def test_found_inf_writes_nothing(rng, found_inf):
    arrays, extra = entry_inputs(rng, 100, FP32, FP32, FP32, BF16, True)
    out = golden.emulate_entry(*arrays.values(), np.array([5], np.int64), Hyper(),
                               golden.Extras(found_inf=found_inf), **extra)
    for got, given in zip(out.astuple(), [*arrays.values()][1:] + [extra["max_v"], extra["copy"]]):
        assert got is given


def test_found_inf_zero_updates(rng):
    arrays, _ = entry_inputs(rng, 100, FP32, FP32, FP32, None, False)
    step = np.array([5], np.int64)
    a = golden.emulate_entry(*arrays.values(), step, Hyper(), golden.Extras(found_inf=0.0))
    b = golden.emulate_entry(*arrays.values(), step, Hyper())
    assert golden.bit_equal(a.var, b.var) and not golden.bit_equal(a.var, arrays["var"])


def test_amsgrad_keeps_the_running_maximum(rng):
    arrays, extra = entry_inputs(rng, 2000, FP32, FP32, FP32, None, True)
    out = golden.emulate_entry(*arrays.values(), np.array([9], np.int64), Hyper(), **extra)
    assert np.array_equal(out.max_v, np.maximum(extra["max_v"], out.v))
    assert (out.max_v > out.v).any() and (out.max_v == out.v).any()
    # A NaN v' propagates into max_v (as torch.maximum does); a NaN stored maximum is replaced.
    arrays["grad"][0] = np.nan
    extra["max_v"][1] = np.nan
    out = golden.emulate_entry(*arrays.values(), np.array([9], np.int64), Hyper(), **extra)
    assert np.isnan(out.max_v[0])
    assert out.max_v[1] == out.v[1] and np.isfinite(out.max_v[1])


def test_model_copy_is_the_rounded_master(rng):
    arrays, extra = entry_inputs(rng, 3000, FP32, FP32, BF16, BF16, False)
    out = golden.emulate_entry(*arrays.values(), np.array([4], np.int64), Hyper(), **extra)
    assert out.copy.dtype == BF16
    assert golden.bit_equal(out.copy, out.var.astype(BF16))


def test_fp32_state_lets_a_bf16_ema_move():
    """The motivating case: at decay 0.9999 each EMA increment is below half a bf16 ulp, so a
    bf16 EMA never moves, while an fp32 EMA of a bf16 parameter follows the float64 EMA of the
    parameter's actual trajectory."""
    n = 64
    h = Hyper(lr=1e-2, ema_decay=0.9999, weight_decay=0.0)
    grad = np.full(n, 0.1, ml_dtypes.bfloat16)
    for state in (BF16, FP32):
        var = np.full(n, 1.0, ml_dtypes.bfloat16)
        m, v, s = np.zeros(n, state), np.zeros(n, state), var.astype(state)
        ema64 = var.astype(np.float64)
        for step in range(1, 201):
            out = golden.emulate_entry(grad, var, m, v, s, np.array([step]), h)
            var, m, v, s = out.var, out.m, out.v, out.s
            ema64 = 0.9999 * ema64 + (1 - 0.9999) * var.astype(np.float64)
        assert np.all(var.astype(np.float64) < 0.0)  # the parameter moved a long way
        if state == BF16:
            assert np.all(s == 1.0)  # stuck at its start
        else:
            moved = 1.0 - ema64
            assert np.all(np.abs(s.astype(np.float64) - ema64) < 1e-3 * moved)


@pytest.mark.parametrize("bad, message", [
    (dict(var=np.zeros(2, np.float64)), "var has dtype float64"),
    (dict(m=np.zeros(2, np.float16)), "state dtype must be var's"),
    (dict(v=np.zeros(2, np.float16)), "v has dtype float16 but m has float32"),
    (dict(grad=np.zeros(2, np.float16)), "grad has dtype float16"),
    (dict(copy=np.zeros(2, np.float32)), "copy has dtype float32"),
    (dict(var=np.zeros(2, np.float16), m=np.zeros(2, np.float16), v=np.zeros(2, np.float16),
          s=np.zeros(2, np.float16), grad=np.zeros(2, np.float16), copy=np.zeros(2, np.float16)),
     "needs float32 var"),
    (dict(copy=np.zeros(2, np.float16), grad=np.zeros(2, ml_dtypes.bfloat16)),
     "grad has dtype bfloat16"),
])
def test_entry_dtype_contract(bad, message):
    arrays = dict(grad=np.ones(2, np.float32), var=np.ones(2, np.float32),
                  m=np.zeros(2, np.float32), v=np.zeros(2, np.float32), s=np.ones(2, np.float32))
    arrays.update(bad)
    copy = arrays.pop("copy", None)
    with pytest.raises(TypeError, match=message):
        golden.emulate_entry(*arrays.values(), np.array([1]), Hyper(), copy=copy)
