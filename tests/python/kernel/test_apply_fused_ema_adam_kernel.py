"""The AscendC kernel, run unchanged on the CPU twin, against both golden tiers.

Bit-exact against the dtype-faithful emulation (tier 2) everywhere; within CANN's precision
standard against the float64 golden (tier 1) on optimizer-like data; minimal GM traffic."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from kernel_cases import (A2, DTYPE_IDS, DTYPES, SHAPES, SIZES, assert_bit_exact,
                          assert_cann_precision)

from ascend_ema_adam import golden, kernels
from ascend_ema_adam.apps.check import random_inputs, run_case
from ascend_ema_adam.golden import Hyper


def run_both(inputs, step, hyper, platform="cpu"):
    """(twin outputs, tier-2 outputs, tier-1 outputs, launch stats) for one update."""
    step_arr = np.array([step], dtype=np.int64)
    expected = golden.emulate_update(*inputs, step_arr, hyper)
    reference = golden.reference_update(*inputs, step_arr, hyper)
    grad, var, m, v, s = (x.copy() for x in inputs)
    stats = kernels.apply_fused_ema_adam(grad, var, m, v, s, step_arr, hyper, platform=platform)
    return (var, m, v, s), expected, reference, stats


# ------------------------------------------------------------------------------------------
# Golden sweep over dtypes x modes x bias correction x sizes

@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("platform", ["cpu", A2])
def test_sweep_sizes(rng, platform, dtype, mode, bias, size):
    hyper = Hyper(lr=1e-3, ema_decay=0.999, mode=mode, bias_correction=bias, weight_decay=0.01)
    result = run_case(rng, dtype, hyper, (size,), step=10, platform=platform)
    assert all(result.bit_exact.values()), result.bit_exact
    for name, p in result.precision.items():
        assert p.passed, f"{name}: {p}"
    assert result.gm_bytes == result.gm_bytes_min


@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_sweep_large(rng, dtype, mode):
    """>= 2^21 + 3 elements: many chunks per core on both the CPU and the A2 split."""
    for platform in ("cpu", A2):
        hyper = Hyper(lr=1e-3, ema_decay=0.9999, mode=mode, weight_decay=0.05)
        result = run_case(rng, dtype, hyper, (2**21 + 3,), step=10000, platform=platform)
        assert all(result.bit_exact.values()), (platform, result.bit_exact)
        assert all(p.passed for p in result.precision.values()), (platform, result.precision)


# ------------------------------------------------------------------------------------------
# Ranks, steps and decays

@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"rank{len(s)}")
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_ranks(rng, dtype, shape):
    inputs = random_inputs(rng, shape, dtype)
    actual, expected, reference, _ = run_both(inputs, 3, Hyper(mode=1, weight_decay=0.1))
    assert all(a.shape == shape for a in actual)
    assert_bit_exact(actual, expected)
    assert_cann_precision(actual, reference)


@pytest.mark.parametrize("step", [1, 10, 10000])
@pytest.mark.parametrize("decay", [0.0, 0.5, 0.9999, 1.0])
@pytest.mark.parametrize("betas", [(0.9, 0.999), (0.0, 0.0), (0.5, 0.9999)])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_steps_decays_betas(rng, dtype, betas, decay, step):
    hyper = Hyper(lr=1e-3, ema_decay=decay, beta1=betas[0], beta2=betas[1], mode=1,
                  weight_decay=0.01)
    inputs = random_inputs(rng, (1031,), dtype)
    actual, expected, reference, _ = run_both(inputs, step, hyper, platform=A2)
    assert_bit_exact(actual, expected)
    assert_cann_precision(actual, reference)
    # Equal as numbers (a -0 input plus the +0 term gives +0, as IEEE says).
    if decay == 1.0:  # s' = 1*s + 0*var' = s
        assert np.array_equal(actual[3].astype(np.float32), inputs[4].astype(np.float32))
    if decay == 0.0:  # s' = 0*s + 1*var' = var'
        assert np.array_equal(actual[3].astype(np.float32), actual[0].astype(np.float32))


def test_step_zero_with_bias_correction_divides_by_zero(rng):
    """Like the reference at step 0: c = 0, 1/c = inf, and the non-finite results are the
    emulation's, position for position."""
    inputs = random_inputs(rng, (100,), np.float32)
    actual, expected, _, _ = run_both(inputs, 0, Hyper())
    assert_bit_exact(actual, expected)
    assert not np.isfinite(actual[0]).all()


# ------------------------------------------------------------------------------------------
# NaN / Inf propagation


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("tensor", range(5), ids=["grad", "var", "m", "v", "s"])
@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_nan_inf_injection(rng, dtype, mode, tensor, special):
    inputs = list(random_inputs(rng, (777,), dtype))
    hit = rng.choice(777, size=9, replace=False)
    inputs[tensor] = inputs[tensor].copy()
    inputs[tensor][hit] = special
    hyper = Hyper(mode=mode, weight_decay=0.02, ema_decay=0.9)
    actual, expected, reference, _ = run_both(inputs, 5, hyper, platform=A2)
    assert_bit_exact(actual, expected)
    assert_cann_precision(actual, reference)  # includes identical NaN/Inf positions
    untouched = np.setdiff1d(np.arange(777), hit)
    assert all(np.isfinite(a[untouched].astype(np.float32)).all() for a in actual)


# ------------------------------------------------------------------------------------------
# Multi-step trajectories


@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_trajectory_120_steps(rng, dtype, mode):
    """120 steps with fresh gradients: the twin equals the emulation at every step; in fp32 the
    whole trajectory also stays within CANN's precision of a float64 trajectory."""
    n = 4099
    hyper = Hyper(lr=1e-3, ema_decay=0.99, mode=mode, weight_decay=0.05)
    grad, var, m, v, s = random_inputs(rng, (n,), dtype)
    m[:] = 0
    v[:] = 0
    s[:] = var
    exp_state = [x.copy() for x in (var, m, v, s)]
    ref_state = [x.astype(np.float64) for x in (var, m, v, s)]
    for step in range(1, 121):
        grad = rng.normal(0, 0.01, n).astype(dtype)
        step_arr = np.array([step], dtype=np.int64)
        kernels.apply_fused_ema_adam(grad, var, m, v, s, step_arr, hyper, platform=A2)
        exp_state = list(golden.emulate_update(grad, *exp_state, step_arr, hyper))
        ref_state = list(golden.reference_update(grad, *ref_state, step_arr, hyper))
        assert_bit_exact((var, m, v, s), exp_state)
    if np.dtype(dtype) == np.float32:
        assert_cann_precision((var, m, v, s), ref_state)


# ------------------------------------------------------------------------------------------
# Property test: any shape, hyper-parameters and data, bit-exact with the emulation


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(),
       shape=st.lists(st.integers(1, 9), min_size=0, max_size=5),
       dtype=st.sampled_from(DTYPES),
       mode=st.sampled_from([0, 1]),
       bias=st.booleans(),
       step=st.integers(1, 10**7),
       lr=st.floats(0.0, 1.0), decay=st.floats(0.0, 1.0),
       beta1=st.floats(0.0, 0.99999), beta2=st.floats(0.0, 0.99999),
       eps=st.floats(0.0, 1e-2), wd=st.floats(0.0, 1.0),
       platform=st.sampled_from(["cpu", A2, "Ascend910B3"]))
def test_property_bit_exact(data, shape, dtype, mode, bias, step, lr, decay, beta1, beta2, eps,
                            wd, platform):
    shape = tuple(shape)
    numel = int(np.prod(shape, dtype=np.int64))
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    r = np.random.default_rng(seed)
    scale = 10.0 ** r.uniform(-6, 2)
    grad, var, m, s = (r.normal(0, scale, numel).reshape(shape).astype(dtype) for _ in range(4))
    v = (r.normal(0, scale, numel) ** 2).reshape(shape).astype(dtype)
    hyper = Hyper(lr=lr, ema_decay=decay, beta1=beta1, beta2=beta2, eps=eps, mode=mode,
                  bias_correction=bias, weight_decay=wd)
    actual, expected, _, _ = run_both((grad, var, m, v, s), step, hyper, platform=platform)
    assert_bit_exact(actual, expected)


# ------------------------------------------------------------------------------------------
# GM traffic


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("numel", [1, 33, 48 * 16 + 1, 300_001])
@pytest.mark.parametrize("platform", ["cpu", A2])
def test_gm_traffic_is_minimal(rng, platform, dtype, numel):
    """Each core reads each input once and writes each output once; step is one scalar read."""
    inputs = random_inputs(rng, (numel,), dtype)
    _, _, _, stats = run_both(inputs, 7, Hyper(), platform=platform)
    itemsize = np.dtype(dtype).itemsize
    for (begin, end), block in zip(stats.tiling["core_ranges"], stats.blocks):
        assert block["gm_read_bytes"] == 5 * (end - begin) * itemsize
        assert block["gm_write_bytes"] == 4 * (end - begin) * itemsize
        assert block["gm_scalar_read_bytes"] == 8  # step[0]
        assert block["gm_scalar_write_bytes"] == 0
        assert block["ub_bytes_used"] <= stats.tiling["ub_bytes_per_core"]
    assert stats.total("gm_read_bytes") + stats.total("gm_write_bytes") == 9 * numel * itemsize


def test_bias_correction_off_reads_no_step(rng):
    inputs = random_inputs(rng, (100,), np.float32)
    _, _, _, stats = run_both(inputs, 7, Hyper(bias_correction=False))
    assert stats.total("gm_scalar_read_bytes") == 0


# ------------------------------------------------------------------------------------------
# The numpy wrapper's own input checks


def test_wrapper_rejects_bad_input(rng):
    grad, var, m, v, s = random_inputs(rng, (10,), np.float32)
    step = np.array([1], dtype=np.int64)
    with pytest.raises(ValueError, match="m is float16"):
        kernels.apply_fused_ema_adam(grad, var, m.astype(np.float16), v, s, step)
    with pytest.raises(ValueError, match="all five must match"):
        kernels.apply_fused_ema_adam(grad, var, m[:5], v, s, step)
    with pytest.raises(TypeError, match="step must be an int64"):
        kernels.apply_fused_ema_adam(grad, var, m, v, s, np.array([1.0]))
    with pytest.raises(TypeError, match="float64"):
        kernels.apply_fused_ema_adam(*(x.astype(np.float64) for x in (grad, var, m, v, s)), step)
    with pytest.raises(ValueError, match="C-contiguous"):
        big = np.zeros(20, np.float32)
        kernels.apply_fused_ema_adam(grad, big[::2], m, v, s, step)
