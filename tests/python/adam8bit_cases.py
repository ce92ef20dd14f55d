"""What the 8-bit operator's kernel tests share: entries in a state an optimizer could reach,
a launch through either CPU kernel, and the golden's expectation (golden8bit.emulate_entry8)."""

import dataclasses

import ml_dtypes
import numpy as np

from ascend_ema_adam import _kernels, golden, golden8bit as g8
from ascend_ema_adam._dtypes import LIST8BIT_DTYPES, by_name
from ascend_ema_adam.golden import Extras, Hyper

BLOCK = g8.BLOCK
ROW_IDS = ["-".join(by_name(n).short if n else "none" for n in row.names)
           for row in LIST8BIT_DTYPES]
SIZES = [0, 1, 17, BLOCK, BLOCK + 1, 1000, 4 * BLOCK + 33]
QMAP_M, QMAP_V = g8.dynamic_map(True), g8.dynamic_map(False)


def attrs_of(h: Hyper):
    attrs = _kernels.Attrs()
    for field in dataclasses.fields(Hyper):
        setattr(attrs, field.name, getattr(h, field.name))
    return attrs


def make_entries(rng, sizes, row, ema=True):
    """Entries in a state an optimizer could reach (golden8bit's test draws them the same way)."""
    p, gd = row.param.numpy, row.grad.numpy
    out = []
    for n in sizes:
        sigma = float(np.exp(rng.uniform(np.log(1e-3), np.log(1e-1))))
        var = (rng.standard_normal(n) * 0.05).astype(p)
        m, m_absmax = g8.quantize((rng.standard_normal(n) * sigma).astype(np.float32), QMAP_M)
        v, v_absmax = g8.quantize((rng.standard_normal(n) * sigma).astype(np.float32) ** 2,
                                  QMAP_V)
        out.append(dict(
            grad=(rng.standard_normal(n) * sigma).astype(gd), var=var, m=m, v=v,
            m_absmax=m_absmax, v_absmax=v_absmax,
            s=(var.astype(np.float32) + rng.standard_normal(n).astype(np.float32) * 1e-3)
            if ema else None,
            copy=None if row.copy is None else np.zeros(n, row.copy.numpy)))
    return out


def copied(entries):
    return [{k: None if x is None else x.copy() for k, x in e.items()} for e in entries]


def f32(x):
    return None if x is None else np.array([x], np.float32)


def buffer_of(x):
    """A buffer the bindings take: bf16 (which numpy cannot export) through its bits, in place."""
    return x.view(np.uint16) if x is not None and x.dtype == ml_dtypes.bfloat16 else x


def run(launch, entries, row, step, h=Hyper(), extras=Extras(), *, lr=None, ema_decay=None,
        maps=(QMAP_M, QMAP_V), **options):
    """One launch in place on `entries` through `launch` (_kernels.launch_native_adam8bit_list or
    _kernels.launch_adam8bit_list; lr / ema_decay: one-element tensors replacing h's; maps: m's and
    v's); returns its result dict."""
    names = row.names
    lists = {k: [buffer_of(e[k]) for e in entries] for k in entries[0]} if entries else {}
    col = (lambda k: lists.get(k, []))
    ema = bool(entries) and entries[0]["s"] is not None
    return launch(
        col("grad"), col("var"), col("m"), col("v"), col("m_absmax"), col("v_absmax"),
        col("s") if ema else None, col("copy") if names[2] else None,
        [e["var"].size for e in entries], *maps, np.array([step], np.int64),
        f32(extras.grad_scale), f32(extras.found_inf), names[0], names[1], names[2] or "",
        attrs_of(h), extras.maximize, lr=f32(lr), ema_decay=f32(ema_decay), **options)


def expected(entries, step, h=Hyper(), extras=Extras(), overflow_mode="inf_nan",
             maps=(QMAP_M, QMAP_V)):
    return [g8.emulate_entry8(e["grad"], e["var"], e["m"], e["v"], e["m_absmax"], e["v_absmax"],
                              e["s"], np.array([step]), *maps, h, extras,
                              copy=e["copy"], overflow_mode=overflow_mode) for e in entries]


def same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if np.asarray(a).dtype == np.uint8:
        return np.array_equal(a, b) and np.asarray(b).dtype == np.uint8
    return golden.bit_equal(a, b)


def assert_entries_equal(actual, want):
    for i, (a, w) in enumerate(zip(actual, want)):
        for name in ("var", "m", "v", "m_absmax", "v_absmax", "s", "copy"):
            assert same(a[name], getattr(w, name)), f"entry {i} ({a['var'].size}): {name}"


OPTIONS = {
    "l2": (Hyper(mode=0, weight_decay=0.1), Extras(), {}),
    "no-bias-correction": (Hyper(bias_correction=False, weight_decay=0.01), Extras(), {}),
    "maximize": (Hyper(), Extras(maximize=True), {}),
    "grad-scale": (Hyper(), Extras(grad_scale=1024.0), {}),
    "maximize-grad-scale-found-inf-0": (Hyper(mode=0, weight_decay=0.05),
                                        Extras(maximize=True, grad_scale=0.25, found_inf=0.0),
                                        {}),
    "lr-and-decay-tensors": (Hyper(lr=5.0, ema_decay=0.0), Extras(),
                             dict(lr=2e-3, ema_decay=0.995)),
}


def tie_entries(rng, row, qmap, thresholds):
    """One entry whose m' hits the encode thresholds exactly: with beta1 = 0 (TIE_HYPER) m' is the
    gradient, every block holds a 1.0 (its scale is 1, so x = m' / 1 = m'), and the other values
    are the thresholds and their fp32 neighbours (gradients and var in fp32 hold them exactly)."""
    values = np.concatenate([thresholds, np.nextafter(thresholds, np.float32(-2)),
                             np.nextafter(thresholds, np.float32(2)), qmap])
    values = values[np.abs(values) <= 1]
    blocks = -(-values.size // (g8.BLOCK - 1))
    grad = np.zeros(blocks * g8.BLOCK, np.float32)
    for b in range(blocks):
        part = values[b * (g8.BLOCK - 1):(b + 1) * (g8.BLOCK - 1)]
        grad[b * g8.BLOCK] = 1.0
        grad[b * g8.BLOCK + 1:b * g8.BLOCK + 1 + part.size] = part
    [entry] = make_entries(rng, [grad.size], row)
    entry["grad"] = grad.astype(row.grad.numpy)
    return entry


def floor_entries(rng, row, qmap_v, exponents=(0, -20, 15)):
    """One entry whose v' quotients straddle v's positive floor F (golden8bit.positive_floor): with
    TIE_HYPER v' = g * g; each block holds a gradient of 2^e (its v scale is 2^2e, a power of two,
    so x = v' / 2^2e is the square of the unscaled value), and the others are 2^e times the
    square roots of F (each a few ulps either way, so the squares land on both sides of F), of
    the thresholds around it, of tiny positives down to subnormal squares, and zeros (also 1e-30,
    whose square underflows to 0), for each e of `exponents`."""
    floor = np.float32(g8.positive_floor(qmap_v))
    t = g8.encode_thresholds(qmap_v)
    roots = [np.sqrt(np.float32(x)) for x in (floor, *t[:4], 1e-12, 1e-20, 2e-45) if x > 0]
    values = []
    for r in roots:
        r = np.float32(r)
        for _ in range(4):
            r = np.nextafter(r, np.float32(0))
        for _ in range(9):
            values += [r, -r]
            r = np.nextafter(r, np.float32(1))
    values = np.array(values + [0.0, 1e-30, -1e-30], np.float32)
    per = -(-values.size // (g8.BLOCK - 1))
    grad = np.zeros(len(exponents) * per * g8.BLOCK, np.float32)
    for k, e in enumerate(exponents):
        for b in range(per):
            at = (k * per + b) * g8.BLOCK
            part = values[b * (g8.BLOCK - 1):(b + 1) * (g8.BLOCK - 1)] * np.float32(2.0**e)
            grad[at] = np.float32(2.0**e)
            grad[at + 1:at + 1 + part.size] = part
    [entry] = make_entries(rng, [grad.size], row)
    entry["grad"] = grad.astype(row.grad.numpy)
    return entry


def raised_codes(entry, qmap_v) -> int:
    """How many of floor_entries' v codes the positive floor raised (the nearest code is <= 0's)."""
    g = entry["grad"].astype(np.float32)
    scale = np.repeat(g8.block_absmax(g * g), g8.BLOCK)[:g.size]
    x = (g * g) / np.where(scale > 0, scale, np.float32(1))
    nearest = g8.encode(x, g8.encode_thresholds(qmap_v))
    return int(np.sum((x > 0) & (qmap_v[nearest] <= 0)))


#: beta1 = 0 and beta2 = 0 (m' = g, v' = g*g), no bias correction: m' is the gradient exactly.
TIE_HYPER = Hyper(beta1=0.0, beta2=0.0, bias_correction=False)
