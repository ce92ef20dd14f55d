"""The device's float-overflow mode (docs/ACLNN.md, "The float-overflow mode").

An A2/A3 AI core stores a half/bf16 result of inf as +-MAX and of NaN as 0 when the device runs
in saturation mode (CTRL[48] clear), and keeps them (IEEE) in INF_NAN mode, the default of CANN's
runtime and of torch_npu on these chips. The kernel follows the device's mode as CANN's own
operators do; the golden models both (``golden.narrow``) and the twin runs a launch in either
(``overflow_mode``). The inputs here make the IEEE results overflow: gradients whose squares pass
the 16-bit maximum, +-inf and NaN gradients, fp32 master weights beyond fp16's range.
"""

import ml_dtypes
import numpy as np
import pytest

from ascend_ema_adam import golden, kernels
from kernel_cases import A2

SIXTEEN_BIT = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)]
HYPER = golden.Hyper(lr=1e-2, ema_decay=0.9, weight_decay=0.01)


def _max(dtype) -> float:
    return float(ml_dtypes.finfo(dtype).max)


def _overflowing_grad(rng, n, dtype, scale_dtype=None):
    """Random gradients in ``dtype``: most of size 1, every fifth one large enough that its square
    overflows ``scale_dtype`` (default ``dtype``), and at random places +inf, -inf and NaN (as
    many of them as fit)."""
    big = np.sqrt(_max(scale_dtype or dtype)) * 4
    g = rng.standard_normal(n).astype(np.float32)
    g[::5] *= np.float32(min(big, 1e30))
    specials = np.array([np.inf, -np.inf, np.nan], np.float32)[:n]
    g[rng.choice(n, size=specials.size, replace=False)] = specials
    return g.astype(dtype)


def _state(rng, n, dtype):
    var = rng.standard_normal(n).astype(dtype)
    m = (rng.standard_normal(n) * 0.1).astype(dtype)
    v = (rng.random(n) * 0.1).astype(dtype)
    return var, m, v, (var.astype(np.float32) + rng.standard_normal(n).astype(np.float32)
                       * np.float32(0.01)).astype(dtype)


def _nonfinite(a) -> np.ndarray:
    return ~np.isfinite(np.asarray(a).astype(np.float32))


def _assert_modes_differ_only_by_the_rule(ieee, saturated, dtype, what):
    """The saturation result is the IEEE one with every inf replaced by +-MAX and NaN by 0."""
    ieee32, sat32 = ieee.astype(np.float32), saturated.astype(np.float32)
    finite = np.isfinite(ieee32)
    assert np.array_equal(ieee.view(np.uint16)[finite], saturated.view(np.uint16)[finite]), \
        f"{what}: the modes differ where the IEEE result is finite"
    inf = np.isinf(ieee32)
    assert np.array_equal(sat32[inf], np.copysign(np.float32(_max(dtype)), ieee32[inf])), \
        f"{what}: an inf is not saturated to +-MAX"
    nan = np.isnan(ieee32)
    assert np.array_equal(saturated.view(np.uint16)[nan], np.zeros(nan.sum(), np.uint16)), \
        f"{what}: a NaN is not saturated to +0"


def test_narrow_rule():
    """golden.narrow in both modes on values at and beyond each 16-bit range."""
    for dtype in SIXTEEN_BIT:
        top = _max(dtype)
        beyond = min(top * 4, float(np.finfo(np.float32).max))  # rounds to inf in dtype
        x = np.array([np.inf, -np.inf, np.nan, beyond, -beyond, top, 1.5, -0.0], np.float32)
        ieee = golden.narrow(x, dtype).astype(np.float32)
        sat = golden.narrow(x, dtype, "saturation").astype(np.float32)
        assert np.isinf(ieee[[0, 1, 3, 4]]).all() and np.isnan(ieee[2])
        assert list(sat[:6]) == [top, -top, 0.0, top, -top, top]
        assert not np.signbit(sat[2]), "NaN saturates to +0"
        assert list(sat[6:]) == [1.5, 0.0] and np.signbit(sat[7])
    x = np.array([np.inf, np.nan], np.float32)
    assert golden.bit_equal(golden.narrow(x, np.float32, "saturation"), x), "fp32 keeps inf/NaN"
    with pytest.raises(ValueError, match="overflow_mode"):
        golden.narrow(x, np.float16, "saturate")


@pytest.mark.parametrize("dtype", SIXTEEN_BIT + [np.dtype(np.float32)], ids=lambda d: d.name)
def test_single_op_follows_the_mode(rng, dtype):
    n = 3 * 1024 + 37
    grad = _overflowing_grad(rng, n, dtype)
    state = _state(rng, n, dtype)
    step = np.array([rng.integers(1, 50)], np.int64)
    results = {}
    for mode in golden.OVERFLOW_MODES:
        out = [a.copy() for a in state]
        kernels.apply_fused_ema_adam(grad, *out, step, HYPER, platform=A2, overflow_mode=mode)
        want = golden.emulate_update(grad, *state, step, HYPER, overflow_mode=mode)
        for name, a, e in zip(("var", "m", "v", "s"), out, want):
            assert golden.bit_equal(a, e), f"{mode}: {name} differs from the golden"
        results[mode] = out
    ieee, sat = results["inf_nan"], results["saturation"]
    assert sum(_nonfinite(a).sum() for a in ieee) > 0, "the inputs make no inf/NaN result"
    for name, a, b in zip(("var", "m", "v", "s"), ieee, sat):
        if dtype == np.float32:
            assert golden.bit_equal(a, b), f"fp32 {name} depends on the mode"
        else:
            assert not _nonfinite(b).any(), f"saturation left an inf/NaN in {name}"
            _assert_modes_differ_only_by_the_rule(a, b, dtype, name)


LIST_CASES = {
    # name: (param, state, grad, copy, amsgrad)
    "fp16": (np.float16, np.float16, np.float16, None, True),
    "bf16": (ml_dtypes.bfloat16, ml_dtypes.bfloat16, ml_dtypes.bfloat16, None, False),
    "fp32_master_fp16_copies": (np.float32, np.float32, np.float16, np.float16, False),
    "fp32_master_bf16_copies_fp32_grads": (np.float32, np.float32, np.float32, ml_dtypes.bfloat16,
                                           True),
}


@pytest.mark.parametrize("v2", [False, True], ids=["V1", "V2"])
@pytest.mark.parametrize("case", list(LIST_CASES))
def test_list_op_follows_the_mode(rng, case, v2):
    *dtypes, amsgrad = LIST_CASES[case]
    param, state_dt, grad_dt, copy_dt = (None if d is None else np.dtype(d) for d in dtypes)
    numels = [1, 515, 2048 + 3, 77]
    grads, vars_, ms, vs, ss, max_vs, copies = [], [], [], [], [], [], []
    for n in numels:
        grads.append(_overflowing_grad(rng, n, grad_dt, copy_dt or state_dt))
        var, m, v, s = (a.astype(state_dt) for a in _state(rng, n, np.float32))
        if copy_dt is not None:  # master weights beyond the copy's range on every third element
            beyond = min(_max(copy_dt) * 3, float(np.finfo(np.float32).max))
            var[::3] = np.copysign(np.float32(beyond), var[::3])
        vars_.append(var.astype(param))
        ms.append(m)
        vs.append(v)
        ss.append(s)
        max_vs.append((rng.random(n) * 0.1).astype(state_dt))
        copies.append(np.zeros(n, copy_dt) if copy_dt is not None else None)
    step = np.array([rng.integers(1, 50)], np.int64)
    kwargs = {"lr_tensor": np.float32(HYPER.lr), "ema_decay_tensor": np.float32(0.95)} if v2 else {}
    hyper = golden.Hyper(**{**HYPER.__dict__, "ema_decay": 0.95}) if v2 else HYPER
    results = {}
    for mode in golden.OVERFLOW_MODES:
        lists = [[a.copy() for a in x] for x in (vars_, ms, vs, ss, max_vs)]
        outs = [c.copy() for c in copies] if copy_dt is not None else None
        kernels.apply_fused_ema_adam_list(
            grads, *lists[:4], step, hyper, max_vs=lists[4] if amsgrad else None,
            model_copies=outs, platform=A2, overflow_mode=mode, **kwargs)
        got = []
        for i in range(len(numels)):
            want = golden.emulate_entry(
                grads[i], vars_[i], ms[i], vs[i], ss[i], step, hyper,
                max_v=max_vs[i] if amsgrad else None,
                copy=copies[i] if copy_dt is not None else None, overflow_mode=mode)
            entry = (lists[0][i], lists[1][i], lists[2][i], lists[3][i],
                     lists[4][i] if amsgrad else None, outs[i] if outs else None)
            for name, a, e in zip(("var", "m", "v", "s", "max_v", "copy"), entry, want.astuple()):
                if e is not None:
                    assert golden.bit_equal(a, e), f"{mode}: entry {i} {name} differs from the golden"
            got.append([a for a in entry if a is not None])
        results[mode] = got
    sixteen = [a for a in (state_dt, copy_dt) if a is not None and a.itemsize == 2]
    assert sixteen
    flat_ieee = [a for entry in results["inf_nan"] for a in entry if a.dtype.itemsize == 2]
    flat_sat = [a for entry in results["saturation"] for a in entry if a.dtype.itemsize == 2]
    assert sum(_nonfinite(a).sum() for a in flat_ieee) > 0, "the inputs make no 16-bit inf/NaN"
    for i, (a, b) in enumerate(zip(flat_ieee, flat_sat)):
        assert not _nonfinite(b).any()
        _assert_modes_differ_only_by_the_rule(a, b, a.dtype, f"16-bit output {i}")
    flat32 = [(a, b) for ea, eb in zip(results["inf_nan"], results["saturation"])
              for a, b in zip(ea, eb) if a.dtype.itemsize == 4]
    for a, b in flat32:
        assert golden.bit_equal(a, b), "an fp32 output depends on the mode"


def test_twin_rejects_an_unknown_mode(rng):
    var, m, v, s = _state(rng, 8, np.float16)
    with pytest.raises(ValueError, match="overflow_mode"):
        kernels.apply_fused_ema_adam(var.copy(), var, m, v, s, np.array([1], np.int64),
                                  overflow_mode="saturate")
