"""Golden models of ApplyFusedEmaAdam (numpy, no torch).

Two tiers:

* :func:`reference_update` (tier 1) is the math in float64: what the operator approximates.
  Hyper-parameters are first narrowed to float32, as the operator contract says, so the tier-1
  error of a kernel measures its arithmetic, not the narrowing of its attributes.
* :func:`emulate_update` (tier 2) replays the kernel's exact float32 operation order, one IEEE
  rounding per vector instruction, and narrows the stored results with round-to-nearest-even.
  Both kernels (the AscendC kernel run through the CPU twin, and the native CPU kernel) must equal
  it bit for bit.

The update (fp32, each line one rounding per element), step 1-based:

    1. mode 0 only:  t = wd*var;  g = t + g
    2. a = beta1*m;  b = (1-beta1)*g;  m' = b + a
    3. m_hat = m' * (1/c1)
    4. a = beta2*v;  g2 = g*g;  b = g2*(1-beta2);  v' = b + a
    5. v_hat = v' * (1/c2);  r = sqrt(v_hat);  den = r + eps;  u = m_hat / den
    6. mode 1 only:  t = wd*var;  u = u + t
    7. u = lr*u;  var' = var - u
    8. t = (1-d)*var';  a = d*s;  s' = a + t

with c1 = 1 - beta1^step and c2 = 1 - beta2^step (both 1 without bias correction, see
:func:`bias_correction_f32` for how the kernel evaluates them); m_hat, v_hat and the EMA use the
unrounded fp32 m', v', var'.

Tier 2 models both float-overflow modes of an Ascend device (``overflow_mode``, see
:func:`narrow`): "inf_nan", IEEE, what A2/A3 run in by default and what every CPU kernel computes,
and "saturation", where the device stores a 16-bit result of inf as +-MAX and of NaN as 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ._dtypes import (COPY_DTYPES as _COPY_DTYPES, FLOAT_DTYPES, NUMPY_FLOAT_DTYPES, by_name,
                      by_numpy, grad_dtypes_of, state_dtypes_of)

SUPPORTED_DTYPES = NUMPY_FLOAT_DTYPES

#: CANN single-benchmark precision thresholds on the mean relative error (MERE);
#: the max relative error (MARE) must stay below 10x the same value (``_dtypes.FLOAT_DTYPES``).
MERE_THRESHOLD = {d.numpy: d.mere_threshold for d in FLOAT_DTYPES}


@dataclass(frozen=True)
class Hyper:
    """The operator's scalar attributes, as the caller passes them (Python floats)."""

    lr: float = 1e-3
    ema_decay: float = 0.9999
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    mode: int = 1
    bias_correction: bool = True
    weight_decay: float = 0.0


def dtype_name(dtype) -> str:
    """"float32", "float16" or "bfloat16" (the dtype table's name)."""
    return by_numpy(dtype).name


def _f32(x: float) -> np.float32:
    """Narrow a Python float to fp32 with round-to-nearest-even (what the host tiling does)."""
    return np.float32(x)


def bias_correction_f32(beta: np.float32, step: int) -> np.float32:
    """c = 1 - beta**step in fp32, without the cancellation of ``1 - powf(beta, step)``.

    Binary method over the bits of ``step`` (most significant first) on the pair
    (A, P) = (1 - beta**n, beta**n):

        doubling  n -> 2n:   A = A * (2 - A);  P = P * P
        increment n -> n+1:  A = A + P * q;    P = P * beta      (q = 1 - beta, exact in fp32)

    Every operation is well conditioned (no subtraction of nearly equal values), so A keeps a
    relative error of a few ulp even when beta**step is close to 1 (beta2 = 0.999, small step),
    where ``1 - powf`` loses up to 10 bits. The kernel runs the same fp32 sequence on the scalar
    unit, so the result is reproducible on any IEEE machine. step <= 0 gives 0 (division by zero
    downstream, as the reference does at step 0).
    """
    one, two = np.float32(1.0), np.float32(2.0)
    b = np.float32(beta)
    q = np.float32(one - b)
    a, p = np.float32(0.0), one
    n = int(step)
    if n <= 0:
        return a
    with np.errstate(over="ignore", under="ignore"):
        for bit in bin(n)[2:]:
            a = np.float32(a * np.float32(two - a))
            p = np.float32(p * p)
            if bit == "1":
                a = np.float32(a + np.float32(p * q))
                p = np.float32(p * b)
    return a


def bias_corrections_f32(h: Hyper, step: int) -> tuple[np.float32, np.float32]:
    """(1/c1, 1/c2) exactly as the kernel computes them in fp32 (1, 1 without correction)."""
    if not h.bias_correction:
        return np.float32(1.0), np.float32(1.0)
    one = np.float32(1.0)
    with np.errstate(divide="ignore"):
        return (np.float32(one / bias_correction_f32(_f32(h.beta1), step)),
                np.float32(one / bias_correction_f32(_f32(h.beta2), step)))


def _step_value(step) -> int:
    """Element 0 of the int64 step tensor (or a Python int)."""
    arr = np.asarray(step)
    return int(arr.reshape(-1)[0])


@dataclass(frozen=True)
class Extras:
    """What the list operator (ApplyFusedEmaAdamList) adds to the single op's math. All off is
    exactly the single op.

    * ``maximize``: the gradient is negated first (gradient ascent).
    * ``grad_scale``: the value of the optional 1-element fp32 tensor; the (negated) gradient
      is divided by it in fp32 (a loss-scaler's scale, so no separate unscale pass is needed).
    * ``found_inf``: the value of the optional 1-element fp32 tensor; when nonzero (NaN counts
      as nonzero) the launch writes nothing at all.
    """

    maximize: bool = False
    grad_scale: float | None = None
    found_inf: float | None = None


@dataclass(frozen=True)
class Outputs:
    """New values of one entry's outputs. ``max_v`` and ``copy`` are None when the entry has no
    AMSGrad state / no model copy, ``s`` when the launch has no EMA (``s=None``). When nothing is
    written (``found_inf``) every field is the corresponding input itself, unchanged."""

    var: np.ndarray
    m: np.ndarray
    v: np.ndarray
    s: np.ndarray | None
    max_v: np.ndarray | None = None
    copy: np.ndarray | None = None

    def astuple(self) -> tuple:
        return (self.var, self.m, self.v, self.s, self.max_v, self.copy)


FP32 = by_name("float32").numpy
#: dtypes a model copy may have (the 16-bit weights written from an fp32 master).
COPY_DTYPES = tuple(d.numpy for d in _COPY_DTYPES)


def check_entry_dtypes(grad, var, m, v, s, max_v=None, copy=None) -> None:
    """The list operator's dtype contract (``_dtypes.LIST_DTYPES``) for one entry; raises
    TypeError naming the first argument outside it.

    var (P) is fp32, fp16 or bf16; m, v, s (and max_v) share one state dtype S, equal to P or
    fp32; grad (G) has P's dtype or fp32, or, with a model copy, the copy's dtype or fp32; a
    model copy (C, fp16 or bf16) needs an fp32 var (the master weights). ``s`` is None for a
    launch without the EMA."""
    p = np.dtype(var.dtype)
    if p not in SUPPORTED_DTYPES:
        raise TypeError(f"var has dtype {p}, expected float32, float16 or bfloat16")
    param = by_numpy(p)
    state = np.dtype(m.dtype)
    if state not in [d.numpy for d in state_dtypes_of(param)]:
        raise TypeError(f"m has dtype {state}; the state dtype must be var's ({p}) or float32")
    for name, x in (("v", v), ("s", s), ("max_v", max_v)):
        if x is not None and np.dtype(x.dtype) != state:
            raise TypeError(f"{name} has dtype {np.dtype(x.dtype)} but m has {state}: "
                            "m, v, s and max_v share one dtype")
    copy_dtype = None
    if copy is not None:
        c = np.dtype(copy.dtype)
        if c not in COPY_DTYPES:
            raise TypeError(f"copy has dtype {c}, expected float16 or bfloat16")
        copy_dtype = by_numpy(c)
    grad_ok = [d.numpy for d in grad_dtypes_of(param, by_numpy(state), copy_dtype)]
    if not grad_ok:  # (a model copy of 16-bit vars: the contract has no such row)
        raise TypeError(f"a model copy needs float32 var (the master weights), got {p}")
    if np.dtype(grad.dtype) not in grad_ok:
        raise TypeError(f"grad has dtype {np.dtype(grad.dtype)}, expected one of "
                        f"{', '.join(str(d) for d in grad_ok)}")


def amsgrad_max(max_v, v_new):
    """AMSGrad's running maximum as every kernel computes it: ``max_v > v' ? max_v : v'``
    (AscendC's and x86's vector max). A NaN v' propagates (as in torch.maximum); a NaN already
    stored in max_v is replaced by the next v' (torch would keep it; the case needs a NaN
    gradient first, which has already made var and the moments NaN)."""
    return np.where(max_v > v_new, max_v, v_new)


#: The float-overflow modes of an Ascend device (aclrtFloatOverflowMode, set by
#: aclrtSetDeviceSatMode; the runtime loads it into the AI cores' CTRL[48] for every task).
OVERFLOW_MODES = ("inf_nan", "saturation")


def narrow(x, dtype, overflow_mode: str = "inf_nan") -> np.ndarray:
    """fp32 results stored as ``dtype`` with round-to-nearest-even, as the kernel stores them.

    In "saturation" mode a 16-bit (fp16 / bf16) result that rounds to +-inf is stored as +-MAX
    and a NaN as +0 (asc-devkit's SetCtrlSpr, CTRL[48]; fp32 results keep inf and NaN in both
    modes). The kernel does all its arithmetic in fp32 and narrows only what it stores, so this
    is the whole of the mode's effect on it."""
    if overflow_mode not in OVERFLOW_MODES:
        raise ValueError(f"overflow_mode must be one of {OVERFLOW_MODES}, got {overflow_mode!r}")
    with np.errstate(over="ignore"):
        out = np.asarray(x).astype(dtype)
    if overflow_mode == "saturation" and np.dtype(dtype).itemsize == 2:
        wide = out.astype(np.float32)
        biggest = np.float32(ml_dtypes.finfo(dtype).max)
        wide = np.where(np.isinf(wide), np.copysign(biggest, wide), wide)
        out = np.where(np.isnan(wide), np.float32(0.0), wide).astype(dtype)
    return out


def writes_nothing(extras: Extras) -> bool:
    """True when found_inf is given and nonzero (NaN included): the launch writes nothing."""
    return extras.found_inf is not None and np.float32(extras.found_inf) != 0


def emulate_entry(grad, var, m, v, s, step, h: Hyper = Hyper(), extras: Extras = Extras(), *,
                  max_v=None, copy=None, overflow_mode: str = "inf_nan") -> Outputs:
    """Tier 2 for one entry of the list operator (and, with no extras, max_v or copy, the single
    op): the kernel's float32 op order, RNE narrowing of every stored value. The inputs are not
    modified. ``copy`` is the model copy's current array (only its dtype is used, unless nothing
    is written). Order, one rounding per line:

        0. found_inf nonzero: nothing is written
        1. g = widen(grad);  maximize: g = -g;  grad_scale: g = g / scale
        2. the single op's steps 1-5 (see the module docstring), except that with max_v:
           max_v' = max_v > v' ? max_v : v'  and  v_hat = max_v' * (1/c2)
        3. the single op's steps 6-8; copy = narrow(var')
    The EMA follows the unrounded fp32 var' (the master's, with a model copy). ``s=None`` is a
    launch without the EMA (its ``Outputs.s`` is None; nothing else changes). lr and the EMA
    decay given as one-element fp32 tensors need no variant: ``h`` takes their values.
    ``overflow_mode``: the device's float-overflow mode the stored values follow
    (:func:`narrow`)."""
    check_entry_dtypes(grad, var, m, v, s, max_v, copy)
    if writes_nothing(extras):
        return Outputs(var, m, v, s, max_v, copy)
    f32 = np.float32
    lr, d, b1, b2, eps, wd = (_f32(x) for x in (h.lr, h.ema_decay, h.beta1, h.beta2, h.eps,
                                                 h.weight_decay))
    one = f32(1.0)
    one_minus_b1, one_minus_b2, one_minus_d = one - b1, one - b2, one - d
    inv_c1, inv_c2 = bias_corrections_f32(h, _step_value(step))

    g = np.asarray(grad).astype(f32)
    p = np.asarray(var).astype(f32)
    m32 = np.asarray(m).astype(f32)
    v32 = np.asarray(v).astype(f32)
    s32 = None if s is None else np.asarray(s).astype(f32)

    with np.errstate(all="ignore"):
        if extras.maximize:
            g = -g
        if extras.grad_scale is not None:
            g = g / f32(extras.grad_scale)
        if h.mode == 0:
            g = (wd * p) + g
        m_new = (one_minus_b1 * g) + (b1 * m32)
        m_hat = m_new * inv_c1
        v_new = ((g * g) * one_minus_b2) + (b2 * v32)
        max_new = None
        if max_v is not None:
            max_new = amsgrad_max(np.asarray(max_v).astype(f32), v_new)
            v_hat = max_new * inv_c2
        else:
            v_hat = v_new * inv_c2
        u = m_hat / (np.sqrt(v_hat) + eps)
        if h.mode == 1:
            u = u + (wd * p)
        p_new = p - (lr * u)
        s_new = None if s32 is None else (d * s32) + (one_minus_d * p_new)
        state = np.dtype(m.dtype)

        def store(x, dtype):
            return None if x is None else narrow(x, dtype, overflow_mode)

        return Outputs(
            var=store(p_new, var.dtype), m=store(m_new, state), v=store(v_new, state),
            s=store(s_new, state), max_v=store(max_new, state),
            copy=None if copy is None else store(p_new, copy.dtype))


def emulate_update(grad, var, m, v, s, step, h: Hyper = Hyper(), *,
                   overflow_mode: str = "inf_nan"):
    """Tier 2 of the single op: the kernel's float32 op order and RNE narrowing (in the device's
    float-overflow mode, :func:`narrow`). Returns new (var, m, v, s) arrays in the input dtype;
    the inputs are not modified."""
    dtype = np.dtype(var.dtype)
    if dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"unsupported dtype {dtype}")
    return emulate_entry(grad, var, m, v, s, step, h,
                         overflow_mode=overflow_mode).astuple()[:4]


def reference_entry(grad, var, m, v, s, step, h: Hyper = Hyper(), extras: Extras = Extras(), *,
                    max_v=None, copy=None) -> Outputs:
    """Tier 1 for one entry of the list operator: float64 math (hyper-parameters and the grad
    scale narrowed to fp32 first, powers exact). Returns float64 arrays; ``copy`` is the float64
    var' (what a correctly rounded copy approximates). When nothing is written, the inputs.
    float64 inputs are accepted as they are (a float64 trajectory carries its own float64 state);
    otherwise the dtypes follow :func:`check_entry_dtypes`. ``s=None``: no EMA (``Outputs.s`` is
    None)."""
    given = [np.asarray(x) for x in (grad, var, m, v, s, max_v, copy) if x is not None]
    if all(x.dtype != np.float64 for x in given):
        check_entry_dtypes(grad, var, m, v, s, max_v, copy)
    if writes_nothing(extras):
        return Outputs(var, m, v, s, max_v, copy)
    f64 = np.float64
    lr, d, b1, b2, eps, wd = (f64(_f32(x)) for x in (h.lr, h.ema_decay, h.beta1, h.beta2, h.eps,
                                                      h.weight_decay))
    n = _step_value(step)
    with np.errstate(all="ignore"):
        c1 = 1.0 - b1 ** max(n, 0) if h.bias_correction else 1.0
        c2 = 1.0 - b2 ** max(n, 0) if h.bias_correction else 1.0
        g, p, m64, v64 = (np.asarray(x).astype(f64) for x in (grad, var, m, v))
        if extras.maximize:
            g = -g
        if extras.grad_scale is not None:
            g = g / f64(_f32(extras.grad_scale))
        if h.mode == 0:
            g = g + wd * p
        m_new = b1 * m64 + (1.0 - b1) * g
        v_new = b2 * v64 + (1.0 - b2) * g * g
        max_new = None if max_v is None else amsgrad_max(np.asarray(max_v).astype(f64), v_new)
        u = (m_new / c1) / (np.sqrt((v_new if max_new is None else max_new) / c2) + eps)
        if h.mode == 1:
            u = u + wd * p
        p_new = p - lr * u
        s_new = None if s is None else d * np.asarray(s).astype(f64) + (1.0 - d) * p_new
    return Outputs(p_new, m_new, v_new, s_new, max_new, None if copy is None else p_new)


def reference_update(grad, var, m, v, s, step, h: Hyper = Hyper()):
    """Tier 1 of the single op: the same update in float64 (scalars narrowed to fp32 first,
    powers exact). Returns float64 arrays (var, m, v, s)."""
    return reference_entry(grad, var, m, v, s, step, h).astuple()[:4]


# ---------------------------------------------------------------------------------------------
# Comparisons


def bit_equal(a, b) -> bool:
    """Same shape and the same bit patterns, except that any NaN equals any NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    nan_a, nan_b = np.isnan(a.astype(np.float32)), np.isnan(b.astype(np.float32))
    if not np.array_equal(nan_a, nan_b):
        return False
    ua = a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint16)
    ub = b.view(np.uint32 if b.dtype.itemsize == 4 else np.uint16)
    return bool(np.array_equal(ua[~nan_a], ub[~nan_b]))


#: Small-value floors of the relative-error denominator (Ascend msprobe's benchmark standard).
#: ATK's single_bm divides by |golden| + 1e-7; an output that cancels to almost zero then fails
#: even when it is the correctly rounded golden itself (a fp16 result near 1e-6 is stored with an
#: absolute step of 6e-8). Flooring the denominator at the dtype's small value judges such
#: elements by absolute error instead. tests/python/golden/test_golden.py shows both effects.
SMALL_VALUE = {d.numpy: d.small_value for d in FLOAT_DTYPES}


@dataclass(frozen=True)
class Precision:
    """CANN single-benchmark comparison of one output against the float64 golden."""

    mere: float
    mare: float
    threshold: float
    special_match: bool  # NaN positions and same-sign Inf positions identical

    @property
    def passed(self) -> bool:
        return self.special_match and self.mere < self.threshold and self.mare < 10 * self.threshold


def small_value_floor(golden64, dtype) -> float:
    """The relative-error denominator floor for one output tensor: the dtype's small value, or
    2^-10 of the tensor's mean magnitude if that is larger (an fp32 result formed by cancelling
    terms of size X carries an absolute error of about 2^-24 X whatever its own size)."""
    g = np.abs(np.asarray(golden64, dtype=np.float64))
    g = g[np.isfinite(g)]
    scale = float(g.mean()) if g.size else 0.0
    return max(SMALL_VALUE[np.dtype(dtype)], scale * 2.0**-10)


def relative_errors(actual, golden64, floor) -> np.ndarray:
    """|a - g| / max(|g|, floor) over the elements where both are finite (``floor``: a number
    or one per element)."""
    a = np.asarray(actual).astype(np.float64).reshape(-1)
    g = np.asarray(golden64, dtype=np.float64).reshape(-1)
    finite = np.isfinite(a) & np.isfinite(g)
    if np.ndim(floor):
        floor = np.asarray(floor, dtype=np.float64).reshape(-1)[finite]
    return np.abs(a[finite] - g[finite]) / np.maximum(np.abs(g[finite]), floor)


def cann_precision(actual, golden64, floor=None) -> Precision:
    """CANN single-benchmark standard: pass iff MERE < thr, MARE < 10*thr and the NaN/Inf
    positions match (same-sign Inf). ``floor`` (a number, or one per element) defaults to
    :func:`small_value_floor` of the golden."""
    actual = np.asarray(actual)
    dtype = np.dtype(actual.dtype)
    threshold = MERE_THRESHOLD[dtype]
    a = actual.astype(np.float64).reshape(-1)
    g = np.asarray(golden64, dtype=np.float64).reshape(-1)
    # Special values are compared with the golden as the output dtype can hold it: a float64
    # value beyond fp16's range is an Inf in any fp16 result.
    with np.errstate(over="ignore", invalid="ignore"):
        g_in_dtype = g.astype(dtype).astype(np.float64)
    special_match = bool(
        np.array_equal(np.isnan(a), np.isnan(g_in_dtype))
        and np.array_equal(np.isposinf(a), np.isposinf(g_in_dtype))
        and np.array_equal(np.isneginf(a), np.isneginf(g_in_dtype)))
    if floor is None:
        floor = small_value_floor(g, dtype)
    rel = relative_errors(a, g, floor)
    if rel.size == 0:
        return Precision(0.0, 0.0, threshold, special_match)
    return Precision(float(rel.mean()), float(rel.max()), threshold, special_match)


def cann_precision_of_entries(actuals, goldens64) -> Precision:
    """:func:`cann_precision` of a list operator's output, its entries concatenated, each
    element's denominator floored by :func:`small_value_floor` of its own entry: the entries are
    separate tensors of different scales (one floor for the whole list judged an entry whose
    moments were 15 times the list's mean by that mean: its cancellations' one-ulp errors failed,
    seed 2048350920051582081 of test_large_tensor_many_chunks)."""
    goldens64 = [np.asarray(g, dtype=np.float64).reshape(-1) for g in goldens64]
    actual = np.concatenate([np.asarray(a).reshape(-1) for a in actuals])
    floors = np.concatenate([np.full(g.size, small_value_floor(g, actual.dtype))
                             for g in goldens64])
    return cann_precision(actual, np.concatenate(goldens64), floor=floors)
