"""The golden model of the 8-bit operator (ascend_ema_adam.golden8bit): its maps are
bitsandbytes' / torchao's tables bit for bit, its encode is the exact nearest code (and equal to
torchao's wherever torchao's is nearest), and the update is the fp32 list op's on the decoded
state, with the documented rules for skipped steps and non-finite values."""

import warnings

import numpy as np
import pytest

from ascend_ema_adam import golden, golden8bit as g8
from ascend_ema_adam._dtypes import LIST8BIT_DTYPES, by_name
from ascend_ema_adam.golden import Extras, Hyper

BLOCK = g8.BLOCK


def torchao_quant():
    """torchao's 8-bit optimizer helpers (imported quietly: its CUDA extensions cannot load on a
    CPU machine and say so)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torchao.optim import quant_utils
    return quant_utils


# ---------------------------------------------------------------------------------------------
# Maps, thresholds, encode


@pytest.mark.parametrize("signed", [True, False], ids=["signed", "unsigned"])
def test_dynamic_map_is_torchaos_table_bit_for_bit(signed):
    torch_table = np.array(torchao_quant().create_dynamic_map(signed=signed), np.float32)
    ours = g8.dynamic_map(signed)
    assert ours.dtype == np.float32 and ours.shape == (256,)
    assert np.array_equal(ours.view(np.uint32), torch_table.view(np.uint32))
    # The facts the operator's design relies on: sorted, distinct, within [-1, 1], 0 and 1 in it.
    assert np.all(np.diff(ours) > 0) and ours[-1] == 1.0 and 0.0 in ours
    assert (ours[0] < 0) == signed


def test_dynamic_map_spacing_facts():
    """optimizer_ecosystem.md §8: smallest nonzero codes 5.5e-7 / 3.3e-7 of absmax, widest relative
    gap near 1.0: 0.7 % signed, 0.35 % unsigned."""
    signed, unsigned = g8.dynamic_map(True), g8.dynamic_map(False)
    assert np.isclose(signed[signed > 0].min(), 5.5e-7, rtol=0.01)
    assert np.isclose(unsigned[unsigned > 0].min(), 3.25e-7, rtol=0.01)
    assert np.isclose(1 - signed[-2], 0.007, rtol=0.01)
    assert np.isclose(1 - unsigned[-2], 0.0035, rtol=0.01)


def random_sorted_map(rng) -> np.ndarray:
    q = np.sort(rng.uniform(-1, 1, 256).astype(np.float32))
    q[rng.integers(0, 255, 8)] = q[rng.integers(0, 255, 8)]  # some duplicates
    return np.sort(q)


@pytest.mark.parametrize("which", ["signed", "unsigned", "random"])
def test_thresholds_are_the_exact_midpoints_rounded_up(rng, which):
    q = {"signed": g8.dynamic_map(True), "unsigned": g8.dynamic_map(False)}.get(which)
    if q is None:
        q = random_sorted_map(rng)
    t = g8.encode_thresholds(q)
    mid = (q[:-1].astype(np.float64) + q[1:].astype(np.float64)) / 2
    assert np.all(t.astype(np.float64) >= mid)
    below = np.nextafter(t, np.float32(-np.inf)).astype(np.float64)
    assert np.all(below < mid)


def nearest_by_brute_force(x, q) -> np.ndarray:
    """argmin |x - q[k]| in float64, a tie to the larger code."""
    d = np.abs(x.astype(np.float64)[:, None] - q.astype(np.float64)[None, :])
    best = d.min(axis=1, keepdims=True)
    return (255 - np.argmax((d == best)[:, ::-1], axis=1)).astype(np.uint8)


@pytest.mark.parametrize("which", ["signed", "unsigned", "random"])
def test_encode_is_the_exact_nearest_code_ties_up(rng, which):
    q = {"signed": g8.dynamic_map(True), "unsigned": g8.dynamic_map(False)}.get(which)
    if q is None:
        q = random_sorted_map(rng)
    t = g8.encode_thresholds(q)
    # The hard values: every code, every threshold and its neighbours, exact midpoints where fp32
    # holds them, and random values across the map's range on a log scale.
    hard = np.concatenate([q, t, np.nextafter(t, np.float32(-2)), np.nextafter(t, np.float32(2)),
                           ((q[:-1].astype(np.float64) + q[1:]) / 2).astype(np.float32)])
    mag = np.exp(rng.uniform(np.log(1e-9), 0, 20000)).astype(np.float32)
    x = np.concatenate([hard, mag, -mag, np.float32([0.0, -0.0, 1.0, -1.0])])
    ours, nearest = g8.encode(x, t), nearest_by_brute_force(x, q)
    if which == "random":  # a repeated map value: the code of any of its copies, same value
        assert np.array_equal(q[ours], q[nearest])
    else:
        assert np.array_equal(ours, nearest)
    assert g8.encode(np.float32([np.nan]), t)[0] == 0


def optimizer_like_blocks(rng, n_blocks):
    """m on several gradient scales (with blocks of mixed scale and heavy tails) and v = E[g^2]."""
    scale = np.exp(rng.uniform(np.log(1e-6), np.log(1e-1), (n_blocks, 1)))
    m = (rng.standard_t(3, (n_blocks, BLOCK)) * scale).astype(np.float32)
    v = ((rng.standard_normal((n_blocks, BLOCK)) * scale) ** 2 + 1e-3 * scale**2).astype(np.float32)
    return m.reshape(-1), v.reshape(-1)


@pytest.mark.parametrize("moment", ["m", "v"])
def test_quantize_equals_torchaos_encode_or_is_nearer(rng, moment):
    """torchao's scale_tensor + quantize_8bit_with_qmap on the same blocks: the scales are equal
    bit for bit, and the codes too, except where torchao's rounding test (computed in fp32 with
    two roundings) picks a code that is not the nearest. Every such element is listed, and ours is
    the strictly nearer code there (or the tie rule's)."""
    import torch
    qu = torchao_quant()
    m, v = optimizer_like_blocks(rng, 400)
    x = m if moment == "m" else v
    qmap = g8.dynamic_map(signed=moment == "m")
    ours, absmax = g8.quantize(x, qmap)
    scaled, scale = qu.scale_tensor(torch.from_numpy(x.copy()), BLOCK)
    theirs = qu.quantize_8bit_with_qmap(scaled, torch.from_numpy(qmap)).numpy()
    assert np.array_equal(absmax.view(np.uint32), scale.numpy().view(np.uint32))
    assert np.array_equal(scaled.numpy(), x / np.repeat(absmax, BLOCK))  # the same fp32 x
    differ = assert_nearer_wherever_different(scaled.numpy(), ours, theirs, qmap)
    print(f"{moment}: {differ} of {x.size} codes differ from torchao's, ours nearer in all")
    assert differ < x.size * 1e-3


def assert_nearer_wherever_different(x, ours, theirs, qmap) -> int:
    """Every element where torchao's code differs from ours: ours is one code away and exactly
    nearer to x (float64 holds these distances exactly), or equally near and the larger code."""
    differ = np.nonzero(ours != theirs)[0]
    xs, q64 = x[differ].astype(np.float64), qmap.astype(np.float64)
    ours_d, theirs_d = np.abs(xs - q64[ours[differ]]), np.abs(xs - q64[theirs[differ]])
    tie_up = (ours_d == theirs_d) & (ours[differ] > theirs[differ])
    assert np.all((ours_d < theirs_d) | tie_up), differ
    assert np.all(np.abs(ours[differ].astype(int) - theirs[differ]) == 1)
    return differ.size


@pytest.mark.parametrize("signed", [True, False], ids=["signed", "unsigned"])
def test_encode_near_every_threshold_vs_torchao(signed):
    """Every fp32 value within 64 ulps of each threshold (where a rounding decides): torchao's
    tie test (x - q[k] >= (q[k+1] - q[k]) * 0.5 in fp32) picks the farther code for a few of them,
    e.g. x = 1.9e-6 between the signed map's 5.5e-7 and 3.25e-6 (ours nearer by 1.7e-13)."""
    import torch
    q = g8.dynamic_map(signed)
    t = g8.encode_thresholds(q)
    near = (t.view(np.int32)[:, None] + np.arange(-64, 65, dtype=np.int32)).reshape(-1)
    x = near.view(np.float32)
    x = x[(x >= (-1 if signed else 0)) & (x <= 1)]
    theirs = torchao_quant().quantize_8bit_with_qmap(torch.from_numpy(x),
                                                     torch.from_numpy(q)).numpy()
    differ = assert_nearer_wherever_different(x, g8.encode(x, t), theirs, q)
    print(f"{'signed' if signed else 'unsigned'}: {differ} of {x.size} near-threshold codes "
          "differ from torchao's, ours nearer in all")
    assert differ <= x.size // 1000


def test_quantize_blocks_and_specials():
    q = g8.dynamic_map(True)
    x = np.zeros(3 * BLOCK + 5, np.float32)  # an all-zero block, then specials, then a tail
    x[BLOCK + 3], x[BLOCK + 4] = 0.5, np.inf
    x[2 * BLOCK + 1], x[2 * BLOCK + 9] = -2.0, np.nan
    x[3 * BLOCK + 2] = -7.0
    codes, absmax = g8.quantize(x, q)
    assert absmax.shape == (4,) and codes.shape == x.shape
    assert absmax[0] == 0 and np.isinf(absmax[1]) and np.isnan(absmax[2]) and absmax[3] == 7.0
    zero_code = np.searchsorted(q, 0.0)
    assert np.all(codes[:BLOCK] == zero_code)  # an all-zero block divides by 1: all zeros
    assert codes[BLOCK + 3] == zero_code       # 0.5 / inf is 0
    # A NaN scale divides by 1 (NaN > 0 is false): each value's own nearest code, NaN's code 0;
    # the block decodes to NaN whatever its codes.
    assert codes[2 * BLOCK + 9] == 0 and codes[2 * BLOCK + 1] == 0
    assert np.all(np.delete(codes[2 * BLOCK:3 * BLOCK], [1, 9]) == zero_code)
    assert q[codes[3 * BLOCK + 2]] == -1.0 * (q[0] == -1) + q[0] * (q[0] != -1)
    back = g8.decode(codes, absmax, q)
    assert np.all(back[:BLOCK] == 0) and np.isnan(back[2 * BLOCK])


def test_positive_floor_of_maps():
    """F is the threshold below the first positive entry (the smallest quotient whose nearest code
    is that entry's), 0 where nothing is to be raised: a map starting above 0, or none above 0."""
    unsigned, signed = g8.dynamic_map(False), g8.dynamic_map(True)
    assert g8.positive_floor(unsigned) == g8.encode_thresholds(unsigned)[0]
    assert unsigned[0] == 0 and np.float32(0) < g8.positive_floor(unsigned) < unsigned[1]
    first = int(np.flatnonzero(signed > 0)[0])
    assert signed[first - 1] == 0 and g8.positive_floor(signed) == signed[first] / 2
    assert g8.positive_floor(np.linspace(0.5, 1, 256).astype(np.float32)) == 0
    assert g8.positive_floor(np.linspace(-1, 0, 256).astype(np.float32)) == 0
    around = np.concatenate([np.linspace(-1, -0.5, 128), np.linspace(0.25, 1, 128)])
    assert g8.positive_floor(around.astype(np.float32)) == 0  # T = -0.125: no quotient below


def test_second_moment_quotients_above_0_take_a_positive_code():
    """quantize(..., second_moment=True): every v' > 0 of a block gets a code whose value is above
    0 (the smallest for quotients below the floor F, a quotient at F too; also a quotient that
    underflowed to 0), zeros and NaN as before; every quotient at or above F the nearest code;
    m's quantize unchanged (nearest)."""
    q = g8.dynamic_map(False)
    floor = g8.positive_floor(q)
    tiny = np.array([1e-45, 1e-30, 1e-12, floor / 2, np.nextafter(floor, np.float32(0)), floor,
                     np.nextafter(floor, np.float32(1)), 2 * floor, q[1], 1e-3], np.float32)
    x = np.zeros(3 * BLOCK, np.float32)
    x[0] = 1.0  # the block's scale: the quotients are the values
    x[1:1 + tiny.size] = tiny
    x[BLOCK + 1] = np.nan  # a NaN block: its own nearest codes, NaN's code 0
    x[BLOCK + 2] = 1e-9
    x[2 * BLOCK + 1] = np.inf  # an infinite v': the block's scale is inf, its quotient NaN
    x[2 * BLOCK + 2] = 1e-9  # 1e-9 / inf is 0, of a v' above 0: raised
    codes, absmax = g8.quantize(x, q, second_moment=True)
    nearest, same_absmax = g8.quantize(x, q)
    assert golden.bit_equal(absmax, same_absmax)
    at_least_floor = tiny >= floor
    assert np.all(codes[1:1 + tiny.size][~at_least_floor] == 1)
    assert np.array_equal(codes[1:1 + tiny.size][at_least_floor],
                          nearest[1:1 + tiny.size][at_least_floor])
    assert np.all(nearest[1:6] == 0)  # what the nearest code made of them: 0, the drift's cause
    assert np.all(codes[1 + tiny.size:BLOCK] == 0)  # zeros stay 0
    assert codes[BLOCK + 1] == 0 and codes[BLOCK + 2] == 1  # NaN's code; 1e-9 raised
    assert codes[2 * BLOCK + 1] == 0 and codes[2 * BLOCK + 2] == 1  # NaN's code; raised
    under = np.zeros(BLOCK, np.float32)
    under[:2] = 3e38, 1e-38  # 1e-38 / 3e38 underflows to 0: its v' is above 0, so raised
    assert np.array_equal(g8.quantize(under, q, second_moment=True)[0][:3], [255, 1, 0])
    raised = g8.decode(codes, absmax, q)[1:1 + tiny.size][~at_least_floor]
    assert np.all(raised >= tiny[~at_least_floor])  # never below the v' it stands for
    signed = g8.dynamic_map(True)
    m_codes, _ = g8.quantize(x[:BLOCK], signed)  # (the first block: no NaN, no inf)
    assert np.array_equal(m_codes, g8.encode(x[:BLOCK], g8.encode_thresholds(signed)))


def test_a_tiny_second_moment_does_not_make_a_giant_step(rng):
    """The drift's mechanism on one block, through emulate_entry8: one element's gradient 3e-4 of
    the block's largest, then 0. Nearest codes decode its v to 0 while its m keeps a code, and the
    second step moves it by lr * m / eps (3e4 lr here); raised, every step stays within
    Adam's bound (at most about lr)."""
    row = LIST8BIT_DTYPES[0]
    ins = entry8_inputs(rng, BLOCK, row)
    zero_m, zero_m_absmax = g8.quantize(np.zeros(BLOCK, np.float32), MAPS["qmap_m"])
    zero_v, zero_v_absmax = g8.quantize(np.zeros(BLOCK, np.float32), MAPS["qmap_v"])
    ins.update(m=zero_m, v=zero_v, m_absmax=zero_m_absmax, v_absmax=zero_v_absmax)
    grad = rng.standard_normal(BLOCK).astype(np.float32)
    grad[7] = np.abs(grad).max() * np.float32(3e-4)
    h = Hyper(lr=1e-3, weight_decay=0.0)
    first = run8({**ins, "grad": grad}, step=1, h=h)
    assert g8.decode(first.m, first.m_absmax, MAPS["qmap_m"])[7] != 0
    assert g8.decode(first.v, first.v_absmax, MAPS["qmap_v"])[7] > 0
    grad2 = grad * np.float32(0.5)
    grad2[7] = 0
    second = run8({**ins, "grad": grad2, "var": first.var, "m": first.m, "v": first.v,
                   "m_absmax": first.m_absmax, "v_absmax": first.v_absmax, "s": first.s},
                  step=2, h=h)
    moved = np.abs(second.var.astype(np.float64) - first.var)
    assert moved.max() <= 2 * h.lr, moved.max()


# ---------------------------------------------------------------------------------------------
# The update


def entry8_inputs(rng, n, row, ema=True):
    """An entry in a state the optimizer could have reached: weights N(0, 0.05), gradients on a
    random scale, the moments quantized from fp32 moments of that scale."""
    p, gd, c = row.param.numpy, row.grad.numpy, None if row.copy is None else row.copy.numpy
    sigma = float(np.exp(rng.uniform(np.log(1e-3), np.log(1e-1))))
    var = (rng.standard_normal(n) * 0.05).astype(p)
    grad = (rng.standard_normal(n) * sigma).astype(gd)
    m_codes, m_absmax = g8.quantize((rng.standard_normal(n) * sigma).astype(np.float32),
                                    g8.dynamic_map(True))
    v_codes, v_absmax = g8.quantize((rng.standard_normal(n) * sigma).astype(np.float32) ** 2,
                                    g8.dynamic_map(False))
    s = (var.astype(np.float32) + rng.standard_normal(n).astype(np.float32) * 1e-3) if ema else None
    copy = None if c is None else var.astype(c)
    return dict(grad=grad, var=var, m=m_codes, v=v_codes, m_absmax=m_absmax, v_absmax=v_absmax,
                s=s, copy=copy)


def same(a, b) -> bool:
    """Codes equal, or floats bit for bit (any NaN equal to any NaN)."""
    if np.asarray(a).dtype == np.uint8:
        return np.array_equal(a, b) and np.asarray(b).dtype == np.uint8
    return golden.bit_equal(a, b)


MAPS = dict(qmap_m=g8.dynamic_map(True), qmap_v=g8.dynamic_map(False))


def run8(ins, step=7, h=Hyper(), extras=Extras(), **kw):
    args = dict(ins)
    copy = args.pop("copy")
    return g8.emulate_entry8(**args, step=np.array([step]), **MAPS, h=h, extras=extras,
                             copy=copy, **kw)


def decoded_gap(codes, absmax, qmap, second_moment=False):
    """The rounding bound of each decoded value: half the distance to its neighbouring codes, and
    at the ends of the map the distance to the ends of the encoded range ([-1, 1] signed,
    [0, 1] unsigned: the signed map holds no -1). v's first positive code stands for every
    positive quotient below it (the positive floor): the bound there is its whole value."""
    q = qmap.astype(np.float64)
    lowest = -1.0 if q[0] < 0 else 0.0
    up = np.where(codes == 255, 0.0, (q[np.minimum(codes.astype(int) + 1, 255)] - q[codes]) / 2)
    down = np.where(codes == 0, q[0] - lowest,
                    (q[codes] - q[np.maximum(codes.astype(int) - 1, 0)]) / 2)
    if second_moment:
        first = int(np.flatnonzero(q > 0)[0])
        down = np.where(codes == first, q[first], down)
    return np.maximum(up, down) * np.repeat(absmax.astype(np.float64), BLOCK)[:codes.size]


@pytest.mark.parametrize("row", LIST8BIT_DTYPES, ids=lambda r: "-".join(
    by_name(n).short if n else "none" for n in r.names))
@pytest.mark.parametrize("mode", [0, 1])
def test_update_meets_the_precision_standard_and_the_quantization_bound(rng, row, mode):
    ins = entry8_inputs(rng, 3 * BLOCK + 77, row)
    h = Hyper(lr=1e-2, mode=mode, weight_decay=0.05)
    out = run8(ins, h=h)
    ref = g8.reference_entry8(**{k: x for k, x in ins.items()}, step=np.array([7]), **MAPS, h=h)
    assert golden.cann_precision(out.var, ref.var).passed
    assert golden.cann_precision(out.s, ref.s).passed
    if ins["copy"] is not None:
        assert golden.bit_equal(out.copy, golden.narrow(out.var.astype(np.float32),
                                                        ins["copy"].dtype))
    for codes, absmax, qmap, exact, second in (
            (out.m, out.m_absmax, MAPS["qmap_m"], ref.m, False),
            (out.v, out.v_absmax, MAPS["qmap_v"], ref.v, True)):
        # the new scale is the block maximum, and each code within half a code gap of m' / v'
        assert np.allclose(absmax, np.maximum.reduceat(np.abs(exact), np.arange(0, exact.size,
                                                                                  BLOCK)),
                           rtol=2**-20)
        # (plus the fp32 roundings of m', of x = m' / absmax' and of the decode's product)
        scale = np.repeat(absmax.astype(np.float64), BLOCK)[:exact.size]
        err = np.abs(g8.decode(codes, absmax, qmap).astype(np.float64) - exact)
        assert np.all(err <= decoded_gap(codes, absmax, qmap, second)
                      + 2**-22 * (np.abs(exact) + scale))


def test_update_is_the_fp32_ops_on_the_decoded_state(rng):
    """var' and s' are bit for bit golden.emulate_entry's on the decoded fp32 moments, and the new
    codes are quantize() of its m', v'."""
    row = LIST8BIT_DTYPES[0]
    ins = entry8_inputs(rng, 1000, row)
    h = Hyper(lr=3e-3, bias_correction=False, mode=0, weight_decay=0.01)
    ex = Extras(maximize=True, grad_scale=256.0)
    out = run8(ins, step=3, h=h, extras=ex)
    m32 = g8.decode(ins["m"], ins["m_absmax"], MAPS["qmap_m"])
    v32 = g8.decode(ins["v"], ins["v_absmax"], MAPS["qmap_v"])
    fp32 = golden.emulate_entry(ins["grad"], ins["var"], m32, v32, ins["s"], np.array([3]), h, ex)
    assert golden.bit_equal(out.var, fp32.var) and golden.bit_equal(out.s, fp32.s)
    for got, scale, x, q, second in ((out.m, out.m_absmax, fp32.m, MAPS["qmap_m"], False),
                                     (out.v, out.v_absmax, fp32.v, MAPS["qmap_v"], True)):
        codes, absmax = g8.quantize(x, q, second_moment=second)
        assert np.array_equal(got, codes) and golden.bit_equal(scale, absmax)


@pytest.mark.parametrize("found_inf", [1.0, np.nan, -3.0])
def test_skipped_step_writes_nothing(rng, found_inf):
    ins = entry8_inputs(rng, 300, LIST8BIT_DTYPES[3])
    out = run8(ins, extras=Extras(found_inf=found_inf, grad_scale=2.0))
    for name in ("var", "m", "v", "m_absmax", "v_absmax", "s", "copy"):
        assert getattr(out, name) is ins[name]


def test_found_inf_zero_updates(rng):
    ins = entry8_inputs(rng, 300, LIST8BIT_DTYPES[0])
    a, b = run8(ins, extras=Extras(found_inf=0.0)), run8(ins)
    assert golden.bit_equal(a.var, b.var) and not golden.bit_equal(a.var, ins["var"])


def test_without_the_ema_nothing_else_changes(rng):
    ins = entry8_inputs(rng, 600, LIST8BIT_DTYPES[-1])
    with_ema = run8(ins)
    without = run8({**ins, "s": None})
    assert without.s is None
    for name in ("var", "m", "v", "m_absmax", "v_absmax"):
        assert same(getattr(without, name), getattr(with_ema, name))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_gradient_follows_the_fp32_rules(rng, bad):
    """The element's var' and s' are the fp32 op's (NaN / inf); its block's scales become NaN or
    inf, so the next step decodes that block to NaN; the other blocks are untouched by it."""
    ins = entry8_inputs(rng, 3 * BLOCK, LIST8BIT_DTYPES[0])
    ins["grad"][BLOCK + 10] = bad
    out = run8(ins)
    m32 = g8.decode(ins["m"], ins["m_absmax"], MAPS["qmap_m"])
    v32 = g8.decode(ins["v"], ins["v_absmax"], MAPS["qmap_v"])
    fp32 = golden.emulate_entry(ins["grad"], ins["var"], m32, v32, ins["s"], np.array([7]))
    assert golden.bit_equal(out.var, fp32.var) and golden.bit_equal(out.s, fp32.s)
    assert np.isnan(out.var[BLOCK + 10]) and np.isnan(out.s[BLOCK + 10])
    for absmax in (out.m_absmax, out.v_absmax):
        assert not np.isfinite(absmax[1]) and np.all(np.isfinite(absmax[[0, 2]]))
    clean = {**ins, "grad": ins["grad"].copy()}
    clean["grad"][BLOCK:2 * BLOCK] = 0
    other = run8(clean)
    for name in ("m", "v"):
        keep = np.r_[0:BLOCK, 2 * BLOCK:3 * BLOCK]
        assert np.array_equal(getattr(out, name)[keep], getattr(other, name)[keep])
    nxt = run8({**ins, "grad": ins["grad"] * 0 + np.float32(1e-3), "var": out.var, "m": out.m,
                "v": out.v, "m_absmax": out.m_absmax, "v_absmax": out.v_absmax, "s": out.s})
    assert np.all(np.isnan(nxt.var[BLOCK:2 * BLOCK])) and np.all(np.isfinite(nxt.var[:BLOCK]))


def test_inputs_are_not_modified(rng):
    ins = entry8_inputs(rng, 700, LIST8BIT_DTYPES[4])
    before = {k: None if x is None else x.copy() for k, x in ins.items()}
    run8(ins, h=Hyper(mode=0, weight_decay=0.1))
    for k, x in ins.items():
        assert x is None or np.array_equal(x.view(np.uint8), before[k].view(np.uint8))


@pytest.mark.parametrize("change, message", [
    (dict(m=np.zeros(300, np.int8)), "m has dtype int8"),
    (dict(v=np.zeros(299, np.uint8)), "v has 299 elements"),
    (dict(m_absmax=np.zeros(1, np.float32)), "m_absmax has 1 elements, expected 2"),
    (dict(s=np.zeros(300, np.float16)), "s has dtype float16"),
    (dict(var=np.zeros(300, np.float16), copy=np.zeros(300, np.float16)), "no dtype row"),
])
def test_entry_contract(rng, change, message):
    ins = entry8_inputs(rng, 300, LIST8BIT_DTYPES[0])
    with pytest.raises((TypeError, ValueError), match=message):
        run8({**ins, **change})


@pytest.mark.parametrize("qmap, message", [
    (np.zeros(255, np.float32), r"float32 \[256\]"),
    (np.linspace(-1, 1, 256), r"float32 \[256\]"),
    (np.linspace(1, -1, 256, dtype=np.float32), "sorted"),
    (np.linspace(-2, 2, 256, dtype=np.float32), "within"),
])
def test_map_contract(qmap, message):
    with pytest.raises(ValueError, match=message):
        g8.check_map(qmap)
