"""Golden model of ApplyFusedEmaAdam8bitList: Adam/AdamW with 8-bit blockwise moments and an fp32
EMA in one pass (numpy, no torch).

State per parameter entry of n elements (the layout bitsandbytes' and torchao's 8-bit Adam use):

* ``m``, ``v``: uint8 codes [n], one per element;
* ``m_absmax``, ``v_absmax``: fp32 [ceil(n / 256)], one scale per block of 256 elements of the
  entry (the last block may be shorter); element i decodes to ``qmap[code[i]] * absmax[i // 256]``;
* ``qmap_m``, ``qmap_v``: the 256-entry maps, one per launch (inputs of the operator, as CANN's
  qmapM / qmapV): :func:`dynamic_map` (signed for m, unsigned for v) unless the caller brings its
  own sorted map;
* ``s``: the EMA, fp32 [n] whatever the parameter's dtype (a (1-d) = 1e-4 increment is far below
  the 0.7 % spacing of an 8-bit code).

One launch, per entry (tier 2, :func:`emulate_entry8`; the kernels are held to it bit for bit):

    0. found_inf nonzero (NaN counts): nothing is written, as the fp32 list op
    1. decode:  m = qmap_m[m_code] * m_absmax[block];  v = qmap_v[v_code] * v_absmax[block]  (fp32)
    2. the fp32 list op's update on (grad, var, m, v, s) in its exact op order
       (golden.emulate_entry: maximize, grad scale, L2 or AdamW, bias correction on or off):
       m', v', var', s' in fp32
    3. new block scale:  absmax' = max |m'| over the block, a NaN anywhere in the block wins
       (the maximum of the magnitudes' bit patterns: NaN > inf > any finite)
    4. encode:  x = m' / (absmax' > 0 ? absmax' : 1)  (one IEEE division; an all-zero block
       divides by 1), code = the exactly nearest code to x, a tie to the larger code, NaN to
       code 0 (:func:`encode`); the same for v', where the x of a v' > 0 below the map's
       :func:`positive_floor` F is first taken as F (so a positive v' never decodes to 0 or less)
    5. var stored as var' rounded to var's dtype (RNE), a model copy likewise, s' stays fp32

Non-finite values follow the fp32 op: a NaN or inf gradient makes that element's var' and s'
NaN/inf exactly as the fp32 op does. The element's moments cannot be stored as NaN in a code, so
its block's absmax' becomes NaN (or inf) and on the next step the whole block decodes to NaN:
the moments of that block are lost, where the fp32 op loses only the element's (the parameter
is NaN already either way; GradScaler's found_inf skips such steps without touching anything).

AMSGrad is refused: keeping max(v) in 8 bits would re-quantize a running maximum every step,
and no 8-bit optimizer we compare with (bitsandbytes' blockwise kernels) offers it.

Why v's floor: rounded to the nearest code, a v' below half the map's smallest positive value
times its block's scale decodes to 0 on the next step while its m' (whose codes reach the square
root of v's range) keeps a code, and that step divides m by eps alone. Weights whose gradients are
nearly always 0 (inputs that are nearly always 0) then move by thousands of learning rates: the
drift torchao's AdamW8bit shows too. Raised, v decodes to at least the v' it stood for, and the
element's step is smaller than the fp32 op's instead of larger (tests/python/optim/
test_optim_8bit_drift.py trains such a model against fp32 and bitsandbytes).

Differences from the references, on purpose: bitsandbytes encodes by a binary search followed by
a one-code "sign fix"; torchao by a branchless binary search whose tie test
``x - q[k] >= (q[k+1] - q[k]) * 0.5`` rounds twice. Both can miss the nearest code by one;
this operator's encode is exact (ties up, as torchao intends), and
``tests/python/golden/test_golden8bit.py`` lists every block element where torchao's choice differs
and shows ours is the nearer one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import golden
from ._dtypes import by_numpy, LIST8BIT_DTYPES
from .golden import Extras, Hyper

#: Elements per scale block (bitsandbytes since 0.44, torchao, CANN's ApplyAdamWQuant).
BLOCK = 256
#: Entries of a map (codes are uint8).
MAP_SIZE = 256
FP32 = np.dtype(np.float32)


# ---------------------------------------------------------------------------------------------
# The maps


def _torch_linspace_f32(start: float, end: float, steps: int) -> np.ndarray:
    """torch.linspace(start, end, steps, dtype=float32) as torch computes it on an AVX2 or
    AVX-512 CPU: step = (end - start) / (steps - 1) in fp32, then each element as ONE fused
    multiply-add, start + step*i below the midpoint and end - step*(steps-1-i) from it on
    (ATen's linspace kernel, contracted by the compiler). The float64 sum of an fp32 and an fp32
    times a small integer is exact here, so rounding it to fp32 is the FMA's single rounding.
    (With ATEN_CPU_CAPABILITY=default torch rounds twice and gets 42 signed / 31 unsigned map
    entries one ulp away: the maps are inputs, so a checkpoint carries the one it was made with.)"""
    start32, end32 = np.float32(start), np.float32(end)
    step = np.float32((end32 - start32) / np.float32(steps - 1))
    i = np.arange(steps, dtype=np.float64)
    below = np.float64(start32) + np.float64(step) * i
    above = np.float64(end32) - np.float64(step) * (steps - 1 - i)
    return np.where(i < steps // 2, below, above).astype(np.float32)


def dynamic_map(signed: bool = True) -> np.ndarray:
    """bitsandbytes' ``create_dynamic_map(signed, max_exponent_bits=7, total_bits=8)`` (torchao's
    is the same function), fp32 [256], sorted: for exponents 10^-6 .. 10^0 the midpoints of a
    linspace(0.1, 1) of 2^i + 1 (signed, with their negatives) or 2^(i+1) + 1 (unsigned) points,
    plus 0 and 1. Bit-identical to both libraries' tables (tests/python/golden/test_golden8bit.py)."""
    data = []
    for i in range(7):
        points = 2**i + 1 if signed else 2**(i + 1) + 1
        bounds = _torch_linspace_f32(0.1, 1.0, points)
        means = (bounds[:-1] + bounds[1:]) / np.float32(2.0)
        scaled = np.float32(10.0 ** (i - 6)) * means
        data.append(scaled)
        if signed:
            data.append(-scaled)
    data.append(np.array([0.0, 1.0], np.float32))
    table = np.sort(np.concatenate(data).astype(np.float32))
    assert table.size == MAP_SIZE
    return table


def check_map(qmap, name: str = "qmap") -> np.ndarray:
    """A map as the operator accepts it: 256 finite fp32 values, non-decreasing, within [-1, 1]
    (the encoded values x = m' / absmax' lie there). Raises ValueError otherwise."""
    q = np.asarray(qmap)
    if q.dtype != FP32 or q.shape != (MAP_SIZE,):
        raise ValueError(f"{name} must be float32 [{MAP_SIZE}], got {q.dtype} {list(q.shape)}")
    if not np.all(np.isfinite(q)) or np.any(np.abs(q) > 1):
        raise ValueError(f"{name} must hold finite values within [-1, 1]")
    if np.any(q[1:] < q[:-1]):
        raise ValueError(f"{name} must be sorted (non-decreasing)")
    return q


def encode_thresholds(qmap) -> np.ndarray:
    """fp32 [255]: T[k] = the smallest fp32 value >= (q[k] + q[k+1]) / 2, the exact midpoint.
    For an fp32 x, x >= T[k] exactly when x is at least as near to q[k+1] as to q[k], so the
    number of thresholds <= x is the nearest code with ties to the larger one.

    Computed as the kernels do (the codebook header of op_kernel/apply_fused_ema_adam8bit_list):
    the sum q[k] + q[k+1] rounded up to fp32 (float64 holds the sum of two fp32 values of the
    map's range exactly; the kernels get its error by TwoSum), then halved in fp32. Halving is
    exact unless the midpoint is subnormal (below 2^-126), where this is the rounded half of the
    rounded-up sum."""
    q = check_map(qmap).astype(np.float64)
    total = q[:-1] + q[1:]
    up = total.astype(np.float32)
    below = up.astype(np.float64) < total
    up[below] = np.nextafter(up[below], np.float32(np.inf))
    return up * np.float32(0.5)


def positive_floor(qmap) -> np.float32:
    """The map's positive floor F (the codebook header's ApplyFusedEmaAdam8bitListPositiveFloor):
    T[k - 1] for the first k >= 1 with q[k] > 0, the smallest quotient whose code is at least k;
    0 where nothing is to be raised: q[0] is above 0 already, no entry is, or T[k - 1] <= 0."""
    q = check_map(qmap)
    positive = np.flatnonzero(q > 0)
    if positive.size == 0 or positive[0] == 0:
        return np.float32(0.0)
    floor = encode_thresholds(q)[positive[0] - 1]
    return floor if floor > 0 else np.float32(0.0)


def raise_positive(x, value, floor) -> np.ndarray:
    """v's quotients x = value / divisor before their encode: where value > 0 and x < F, F (the
    kernels' compare-and-select: a NaN x compares false and stays; an x that underflowed to 0
    is raised, as its v' is above 0)."""
    x, value = np.asarray(x, np.float32), np.asarray(value, np.float32)
    with np.errstate(invalid="ignore"):
        return np.where((value > 0) & (x < floor), np.float32(floor), x).astype(np.float32)


def encode(x, thresholds) -> np.ndarray:
    """uint8 codes of fp32 values: the count of thresholds <= x (the nearest code, ties up); NaN
    gives code 0 (it compares false with every threshold, as in the kernels' binary search)."""
    x = np.asarray(x, np.float32)
    codes = np.searchsorted(np.asarray(thresholds, np.float32), x, side="right")
    codes[np.isnan(x)] = 0
    return codes.astype(np.uint8)


def blocks(n: int) -> int:
    """The number of scale blocks of an n-element entry."""
    return -(-int(n) // BLOCK)


def decode(codes, absmax, qmap) -> np.ndarray:
    """fp32 values of codes: qmap[code] * absmax[block], one rounding."""
    codes = np.asarray(codes, np.uint8).reshape(-1)
    scale = np.repeat(np.asarray(absmax, np.float32), BLOCK)[:codes.size]
    with np.errstate(all="ignore"):
        return np.asarray(qmap, np.float32)[codes] * scale


def block_absmax(x) -> np.ndarray:
    """fp32 [blocks]: each block's largest magnitude, taken as the largest bit pattern of |x|, so a
    NaN in a block wins over inf, and inf over any finite value (the kernels' integer max)."""
    bits = np.asarray(x, np.float32).reshape(-1).view(np.uint32) & np.uint32(0x7FFFFFFF)
    pad = blocks(bits.size) * BLOCK - bits.size
    padded = np.concatenate([bits, np.zeros(pad, np.uint32)]).reshape(-1, BLOCK)
    return padded.max(axis=1).astype(np.uint32).view(np.float32)


def quantize(x, qmap, *, second_moment: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Blockwise (codes, absmax) of fp32 values: steps 3 and 4 of the update (``second_moment``:
    the quotients of values above 0 raised to the map's positive floor first, as v's)."""
    x = np.asarray(x, np.float32).reshape(-1)
    absmax = block_absmax(x)
    divisor = np.where(absmax > 0, absmax, np.float32(1.0))
    with np.errstate(all="ignore"):
        scaled = x / np.repeat(divisor, BLOCK)[:x.size]
    if second_moment:
        scaled = raise_positive(scaled, x, positive_floor(qmap))
    return encode(scaled, encode_thresholds(qmap)), absmax


# ---------------------------------------------------------------------------------------------
# The update


@dataclass(frozen=True)
class Outputs8:
    """New values of one entry's outputs (the inputs themselves when nothing is written); ``s``
    is None without the EMA, ``copy`` without a model copy."""

    var: np.ndarray
    m: np.ndarray
    v: np.ndarray
    m_absmax: np.ndarray
    v_absmax: np.ndarray
    s: np.ndarray | None
    copy: np.ndarray | None = None


def check_entry8(grad, var, m, v, m_absmax, v_absmax, s=None, copy=None) -> None:
    """The operator's contract for one entry (``_dtypes.LIST8BIT_DTYPES``); raises TypeError or
    ValueError naming the first argument outside it."""
    p = by_numpy(np.asarray(var).dtype)
    c = None if copy is None else by_numpy(np.asarray(copy).dtype)
    g = by_numpy(np.asarray(grad).dtype)
    if not any((row.param, row.grad, row.copy) == (p, g, c) for row in LIST8BIT_DTYPES):
        raise TypeError(f"no dtype row for var {p.name}, grad {g.name}, copy "
                        f"{None if c is None else c.name} (a model copy needs float32 var)")
    n = np.asarray(var).size
    for name, x, dtype, size in (("grad", grad, None, n), ("m", m, np.uint8, n),
                                 ("v", v, np.uint8, n), ("m_absmax", m_absmax, FP32, blocks(n)),
                                 ("v_absmax", v_absmax, FP32, blocks(n)), ("s", s, FP32, n),
                                 ("copy", copy, None, n)):
        if x is None:
            continue
        x = np.asarray(x)
        if dtype is not None and x.dtype != dtype:
            raise TypeError(f"{name} has dtype {x.dtype}, expected {np.dtype(dtype)}")
        if x.size != size:
            raise ValueError(f"{name} has {x.size} elements, expected {size}")


def emulate_entry8(grad, var, m, v, m_absmax, v_absmax, s, step, qmap_m, qmap_v,
                   h: Hyper = Hyper(), extras: Extras = Extras(), *, copy=None,
                   overflow_mode: str = "inf_nan") -> Outputs8:
    """Tier 2 for one entry (the module docstring's steps, the kernels' fp32 op order). The
    inputs are not modified; ``s=None`` is a launch without the EMA. Shapes follow var (codes and
    EMA of var's size, scales flat)."""
    check_entry8(grad, var, m, v, m_absmax, v_absmax, s, copy)
    check_map(qmap_m, "qmap_m")
    check_map(qmap_v, "qmap_v")
    if golden.writes_nothing(extras):
        return Outputs8(var, m, v, m_absmax, v_absmax, s, copy)
    shape = np.shape(var)
    m32 = decode(m, m_absmax, qmap_m)
    v32 = decode(v, v_absmax, qmap_v)
    # golden.emulate_entry is the fp32 list op; with fp32 state it narrows nothing, so its m', v',
    # s' are this update's unrounded fp32 values. It widens the gradient to fp32 first, so handing
    # it the exactly widened gradient (a row its own contract has for every var and copy dtype)
    # changes nothing.
    out = golden.emulate_entry(np.asarray(grad).astype(np.float32).reshape(-1),
                               np.asarray(var).reshape(-1), m32, v32,
                               None if s is None else np.asarray(s, np.float32).reshape(-1),
                               step, h, extras,
                               copy=None if copy is None else np.asarray(copy).reshape(-1),
                               overflow_mode=overflow_mode)
    m_codes, m_scale = quantize(out.m, qmap_m)
    v_codes, v_scale = quantize(out.v, qmap_v, second_moment=True)
    return Outputs8(
        var=out.var.reshape(shape), m=m_codes.reshape(np.shape(m)),
        v=v_codes.reshape(np.shape(v)), m_absmax=m_scale, v_absmax=v_scale,
        s=None if out.s is None else out.s.reshape(np.shape(s)),
        copy=None if out.copy is None else out.copy.reshape(np.shape(copy)))


def reference_entry8(grad, var, m, v, m_absmax, v_absmax, s, step, qmap_m, qmap_v,
                     h: Hyper = Hyper(), extras: Extras = Extras(), *, copy=None):
    """Tier 1: the update in float64 from the same decoded state (decoding in float64 too), before
    any quantization: golden.Outputs of float64 arrays (m and v the unquantized m', v'). What the
    8-bit state loses is then measured separately, as the distance of the decoded new codes from
    these m', v'."""
    check_entry8(grad, var, m, v, m_absmax, v_absmax, s, copy)
    scale_m = np.repeat(np.asarray(m_absmax, np.float64), BLOCK)[:np.size(m)]
    scale_v = np.repeat(np.asarray(v_absmax, np.float64), BLOCK)[:np.size(v)]
    m64 = np.asarray(qmap_m, np.float64)[np.asarray(m).reshape(-1)] * scale_m
    v64 = np.asarray(qmap_v, np.float64)[np.asarray(v).reshape(-1)] * scale_v
    as64 = (lambda x: None if x is None else np.asarray(x).astype(np.float64).reshape(-1))
    return golden.reference_entry(as64(grad), as64(var), m64, v64, as64(s), step, h, extras,
                                  copy=as64(copy))
