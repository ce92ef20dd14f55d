"""The native CPU kernel of ApplyFusedEmaAdam8bitList (runtime/apply_fused_ema_adam8bit_list/native),
through _kernels on numpy buffers: bit-identical to golden8bit.emulate_entry8 on every dtype row,
every instruction set this CPU runs and every thread count, for every option; its dtype contract
and thresholds equal to the golden's."""

import dataclasses
import functools

import numpy as np
import pytest

from adam8bit_cases import (OPTIONS, QMAP_M, QMAP_V, ROW_IDS, SIZES, TIE_HYPER,
                            assert_entries_equal, attrs_of, buffer_of, copied, expected,
                            floor_entries, make_entries, raised_codes, run, same, tie_entries)
from ascend_ema_adam import _kernels, golden8bit as g8
from ascend_ema_adam._dtypes import LIST8BIT_DTYPES
from ascend_ema_adam.golden import Extras, Hyper
from kernel_cases import BEST_ISA, CPUS, ISAS

BLOCK = g8.BLOCK
run_native = functools.partial(run, _kernels.launch_native_adam8bit_list)


def _cpu_flags() -> set:
    with open("/proc/cpuinfo") as f:
        return next((set(line.split()) for line in f if line.startswith("flags")), set())


#: The AVX-512 loops decode by AVX-512 VBMI byte planes where the CPU has VBMI, else by gathers.
HAS_VBMI = BEST_ISA == "avx512" and "avx512vbmi" in _cpu_flags()

#: Thread counts for small entries: one thread runs the entry's blocks as one run (each block's
#: encode beside the next one's update, as large launches do); two split it into runs of one block
#: (each encoded on its own).
RUNS = pytest.mark.parametrize("threads", [1, 2], ids=["one-run", "block-runs"])

#: The encodes each loop file has: the maps' tables by a gather, by their byte planes (the VBMI
#: loops only) and the threshold search.
def _encodes(isa: str, byte_planes: bool) -> tuple:
    vbmi_loops = isa == "avx512" and byte_planes and HAS_VBMI
    return ("table", "planes", "search") if vbmi_loops else ("table", "search")


#: Each loop file of this CPU with each of its encodes: per instruction set, on AVX-512 both
#: decodes (byte planes: the VBMI loops where the CPU has VBMI; gathers: the loops without VBMI).
LOOPS = pytest.mark.parametrize("isa, byte_planes, encode", [
    pytest.param(isa, planes, encode, id=(isa if isa != "avx512" else
                 f"{isa}-{'planes' if planes else 'gathers'}") + f"-{encode}")
    for isa in ISAS for planes in ((True, False) if isa == "avx512" else (True,))
    for encode in _encodes(isa, planes)])


def test_contract_is_the_goldens():
    rows = _kernels.adam8bit_dtype_contract()
    assert [r[:3] for r in rows] == [row.names for row in LIST8BIT_DTYPES]
    assert len({r[3] for r in rows}) == len(rows)  # one tiling key per row


@pytest.mark.parametrize("which", ["signed", "unsigned", "random"])
def test_thresholds_are_the_goldens(rng, which):
    q = {"signed": QMAP_M, "unsigned": QMAP_V}.get(which)
    if q is None:
        q = np.sort(rng.uniform(-1, 1, 256).astype(np.float32))
        q[100:110] = q[100]  # repeated values
    out = np.empty(255, np.float32)
    _kernels.adam8bit_encode_thresholds(q, out)
    assert np.array_equal(out.view(np.uint32), g8.encode_thresholds(q).view(np.uint32))


@pytest.mark.parametrize("row", LIST8BIT_DTYPES, ids=ROW_IDS)
@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("byte_planes", [True, False], ids=["planes-if-vbmi", "gathers"])
@pytest.mark.parametrize("encode", ["table", "planes", "search"])
def test_every_row_and_isa_is_bit_exact(rng, row, isa, byte_planes, encode):
    entries = make_entries(rng, SIZES, row)
    h = Hyper(lr=3e-3, mode=int(rng.integers(0, 2)), weight_decay=0.02)
    if encode not in _encodes(isa, byte_planes):  # refused before anything is written
        before = copied(entries)
        with pytest.raises(ValueError, match="encode='planes' needs the AVX-512 VBMI loops"):
            run_native(entries, row, 9, h, isa=isa, threads=2, byte_planes=byte_planes,
                       encode=encode)
        for e, b in zip(entries, before):
            assert all(x is None or np.array_equal(x.view(np.uint8), b[k].view(np.uint8))
                       for k, x in e.items())
        return
    want = expected(entries, 9, h)
    result = run_native(entries, row, 9, h, isa=isa, threads=2, min_elems_per_thread=1,
                        byte_planes=byte_planes, encode=encode)
    assert result["isa"] == isa and 1 <= result["threads"] <= min(2, CPUS)
    assert result["byte_planes"] == (byte_planes and isa == "avx512" and HAS_VBMI)
    assert result["encode"] == encode
    assert_entries_equal(entries, want)


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("ema", [True, False], ids=["ema", "no-ema"])
@pytest.mark.parametrize("isa", ISAS)
def test_options_are_bit_exact(rng, option, ema, isa):
    h, extras, tensors = OPTIONS[option]
    row = LIST8BIT_DTYPES[int(rng.integers(0, len(LIST8BIT_DTYPES)))]
    entries = make_entries(rng, SIZES, row, ema=ema)
    golden_h = dataclasses.replace(h, **tensors)  # a tensor's fp32 value is the attribute's
    want = expected(entries, 4, golden_h, extras)
    run_native(entries, row, 4, h, extras, isa=isa, threads=2, min_elems_per_thread=1, **tensors)
    assert_entries_equal(entries, want)


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_thread_counts_give_the_same_bits(rng, threads):
    row = LIST8BIT_DTYPES[5]
    entries = make_entries(rng, [70_000, 3, 40_000, 0, 9_999], row)
    want = expected(entries, 2)
    result = run_native(entries, row, 2, threads=threads, min_elems_per_thread=1)
    assert result["threads"] == min(threads, CPUS) or result["threads"] <= threads
    assert_entries_equal(entries, want)


@pytest.mark.parametrize("found_inf", [1.0, float("nan"), -2.0])
def test_nonzero_found_inf_writes_nothing(rng, found_inf):
    row = LIST8BIT_DTYPES[3]
    entries = make_entries(rng, SIZES, row)
    before = copied(entries)
    result = run_native(entries, row, 3, extras=Extras(found_inf=found_inf, grad_scale=2.0))
    assert result["threads"] == 0
    for e, b in zip(entries, before):
        for k, x in e.items():
            assert x is None or np.array_equal(x.view(np.uint8), b[k].view(np.uint8))


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("isa", ISAS)
def test_non_finite_gradients_follow_the_golden(rng, special, isa):
    row = LIST8BIT_DTYPES[0]
    entries = make_entries(rng, [3 * BLOCK + 5, 40], row)
    entries[0]["grad"][[3, BLOCK + 200, 3 * BLOCK + 4]] = special
    entries[1]["grad"][0] = special
    want = expected(entries, 6)
    run_native(entries, row, 6, isa=isa, threads=2, min_elems_per_thread=1)
    assert_entries_equal(entries, want)
    assert np.isnan(entries[0]["var"][3]) and not np.isfinite(entries[0]["m_absmax"][0])


def test_trajectory_of_twenty_steps(rng):
    """The state a launch writes is what the next reads: 20 steps with model copies and a grad
    scale stay bit-identical to the golden stepped the same way."""
    row = LIST8BIT_DTYPES[7]  # fp32 masters, fp16 gradients, bf16 copies
    entries = make_entries(rng, [BLOCK * 3 + 7, 300], row)
    state = copied(entries)
    h = Hyper(lr=1e-2, weight_decay=0.01)
    for step in range(1, 21):
        extras = Extras(grad_scale=float(2 ** int(rng.integers(0, 8))))
        grads = [(rng.standard_normal(e["var"].size) * 1e-2).astype(e["grad"].dtype)
                 for e in entries]
        for e, st, g in zip(entries, state, grads):
            e["grad"], st["grad"] = g, g.copy()
        run_native(entries, row, step, h, extras, threads=2, min_elems_per_thread=1)
        for st, out in zip(state, expected(state, step, h, extras)):
            st.update(var=out.var, m=out.m, v=out.v, m_absmax=out.m_absmax,
                      v_absmax=out.v_absmax, s=out.s, copy=out.copy)
    for e, st in zip(entries, state):
        for k in ("var", "m", "v", "m_absmax", "v_absmax", "s", "copy"):
            assert same(e[k], st[k]), k


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_chunks_cover_every_block_once_in_order(threads):
    numels = [0, 5, 3 * BLOCK, 0, 100_000, BLOCK + 1, 0]
    chunks = _kernels.native_adam8bit_list_chunks(numels, threads)
    blocks = [(e, b) for e, n in enumerate(numels) for b in range(g8.blocks(n))]
    walked = []
    for entry, block, count in chunks:
        assert count > 0
        while count:
            if block >= g8.blocks(numels[entry]):
                entry, block = entry + 1, 0
                continue
            walked.append((entry, block))
            block, count = block + 1, count - 1
    assert walked == blocks
    if threads == 1:
        assert len(chunks) == 1


def refused(rng, message, row=LIST8BIT_DTYPES[0], change=None, **launch):
    """A launch of changed entries is refused with `message` and touches nothing."""
    entries = make_entries(rng, [300, 40], row)
    if change is not None:
        change(entries)
    before = copied(entries)
    with pytest.raises(ValueError, match=message):
        run_native(entries, row, launch.pop("step", 1), **launch)
    for e, b in zip(entries, before):
        for k, x in e.items():
            assert x is None or np.array_equal(x.view(np.uint8), b[k].view(np.uint8))


@pytest.mark.parametrize("isa", ISAS)
def test_encode_is_the_environments_or_the_faster_one(rng, monkeypatch, isa):
    """ASCEND_EMA_ADAM_8BIT_ENCODE picks the encode (read per launch; each gives the golden's
    codes; 'planes' where the loops are not the VBMI ones is refused); unset, AVX-512 launches take
    the fastest, measured once by the first launch that may (so later launches agree), other
    instruction sets the table; an unknown value is refused before anything is written."""
    row = LIST8BIT_DTYPES[0]
    monkeypatch.setenv("ASCEND_EMA_ADAM_ISA", isa)
    if "planes" not in _encodes(isa, True):
        monkeypatch.setenv("ASCEND_EMA_ADAM_8BIT_ENCODE", "planes")
        refused(rng, "ASCEND_EMA_ADAM_8BIT_ENCODE='planes' needs the AVX-512 VBMI loops")
    for name in _encodes(isa, True):
        monkeypatch.setenv("ASCEND_EMA_ADAM_8BIT_ENCODE", name)
        entries = make_entries(rng, [3 * BLOCK + 7], row)
        want = expected(entries, 2)
        assert run_native(entries, row, 2)["encode"] == name
        assert_entries_equal(entries, want)
        assert _kernels.adam8bit_native_path()["encode_chosen_by"] == "environment"
    monkeypatch.setenv("ASCEND_EMA_ADAM_8BIT_ENCODE", "gather")
    refused(rng, "ASCEND_EMA_ADAM_8BIT_ENCODE='gather': expected 'table', 'planes' or 'search'")
    with pytest.raises(ValueError, match="ASCEND_EMA_ADAM_8BIT_ENCODE='gather'"):
        _kernels.adam8bit_native_path()
    monkeypatch.delenv("ASCEND_EMA_ADAM_8BIT_ENCODE")
    chosen = {run_native(make_entries(rng, [BLOCK * 9], row), row, 2)["encode"]
              for _ in range(3)}
    path = _kernels.adam8bit_native_path()
    assert chosen == {path["encode"]} and path["isa"] == isa
    assert path["encode_chosen_by"] == ("measurement" if isa == "avx512" else "default")
    if isa != "avx512":
        assert chosen == {"table"}


def test_wrong_sizes_and_dtypes_are_refused(rng):
    def scale_short(e):
        e[0]["m_absmax"] = np.zeros(1, np.float32)  # 300 elements have 2 blocks
    refused(rng, r"mAbsmaxesRef\[0\] has shape \[1\], expected \[2\]", change=scale_short)

    def float_codes(e):
        e[1]["v"] = e[1]["v"].astype(np.float32)
    refused(rng, r"vsRef\[1\] has dtype ACL_FLOAT \(0\) but vsRef\[0\] has ACL_UINT8",
            change=float_codes)

    def fp16_ema(e):
        for x in e:
            x["s"] = x["s"].astype(np.float16)
    refused(rng, r"ssRef\[0\] has dtype ACL_FLOAT16 \(1\), expected ACL_FLOAT \(0\): the EMA "
                 "is kept in fp32", change=fp16_ema)

    def short_var(e):
        e[1]["var"] = e[1]["var"][:39]
    refused(rng, r"varsRef\[1\] has shape \[39\] but grads\[1\] has shape \[40\]",
            change=short_var)

    copies = LIST8BIT_DTYPES[3]  # fp32 masters of fp16 copies; fp16 "masters" have no row

    def fp16_masters(e):
        for x in e:
            x["var"] = x["var"].astype(np.float16)
    refused(rng, "modelCopiesRef needs fp32 varsRef", row=copies, change=fp16_masters)


@pytest.mark.parametrize("case, message", [
    ("step", r"step has dtype ACL_INT32 \(3\), expected ACL_INT64"),
    ("grad_scale", r"gradScaleOptional has shape \[2\] \(2 elements\), expected exactly one"),
    ("map_unsorted", r"qmapM\[4\] is .*below qmapM\[3\]"),
    ("map_nan", r"qmapV\[7\] is nan, expected a finite value within \[-1, 1\]"),
    ("beta1", "beta1 is 1"),
])
def test_bad_scalars_maps_and_attributes_are_refused(rng, case, message):
    row = LIST8BIT_DTYPES[0]
    entries = make_entries(rng, [300], row)
    before = copied(entries)
    args = dict(step=np.array([1], np.int64), grad_scale=None, qmap_m=QMAP_M, qmap_v=QMAP_V,
                h=Hyper())
    if case == "step":
        args["step"] = np.array([1], np.int32)
    elif case == "grad_scale":
        args["grad_scale"] = np.ones(2, np.float32)
    elif case == "map_unsorted":
        args["qmap_m"] = QMAP_M.copy()
        args["qmap_m"][4] = args["qmap_m"][2]
    elif case == "map_nan":
        args["qmap_v"] = QMAP_V.copy()
        args["qmap_v"][7] = np.nan
    else:
        args["h"] = Hyper(beta1=1.0)
    lists = {k: [buffer_of(e[k]) for e in entries] for k in entries[0]}
    with pytest.raises(ValueError, match=message):
        _kernels.launch_native_adam8bit_list(
            lists["grad"], lists["var"], lists["m"], lists["v"], lists["m_absmax"],
            lists["v_absmax"], lists["s"], None, [300], args["qmap_m"], args["qmap_v"],
            args["step"], args["grad_scale"], None, "float32", "float32", "",
            attrs_of(args["h"]), False)
    for e, b in zip(entries, before):
        for k, x in e.items():
            assert x is None or np.array_equal(x.view(np.uint8), b[k].view(np.uint8))


def test_exact_ties_encode_to_the_larger_code(rng):
    """m' on the thresholds themselves (adam8bit_cases.tie_entries): the kernel's search takes a
    tie to the larger code, as the golden does."""
    row = LIST8BIT_DTYPES[0]
    entries = [tie_entries(rng, row, QMAP_M, g8.encode_thresholds(QMAP_M))]
    want = expected(entries, 1, TIE_HYPER)
    run_native(entries, row, 1, TIE_HYPER)
    assert_entries_equal(entries, want)
    assert np.array_equal(entries[0]["m"], g8.encode(entries[0]["grad"], g8.encode_thresholds(QMAP_M)))


def _maps():
    """Map pairs (m's, v's) for both encodes of the vector loops: the standard maps and linear ones
    have an encode table (at most one threshold per bucket of the table's key), keyed by the signed
    value or, for a map whose thresholds are all above 0, by the value's bits as an int32 ("swapped":
    m's negative quotients all below such a map's thresholds, its ties on them); a zero threshold,
    equal thresholds or a subnormal one leave the map without one (the threshold search)."""
    zero_threshold = QMAP_M.copy()
    at_zero = int(np.flatnonzero(zero_threshold == 0)[0])
    zero_threshold[at_zero + 1] = 0.0  # two zeros: the threshold between them is 0
    crowded = np.sort(np.random.default_rng(5).uniform(-1, 1, 256)).astype(np.float32)
    crowded[100:110] = crowded[100]  # equal thresholds
    subnormal = QMAP_V.copy()
    subnormal[1] = np.float32(1e-40)
    linear_m = np.append(np.linspace(-1, 1, 255), 1.0).astype(np.float32)
    linear_v = np.linspace(0, 1, 256).astype(np.float32)
    return {"standard": (QMAP_M, QMAP_V), "linear": (linear_m, linear_v),
            "swapped": (QMAP_V, QMAP_M), "linear-swapped": (linear_v, linear_m),
            "zero-threshold": (zero_threshold, QMAP_V), "crowded": (crowded, subnormal)}


MAPS = _maps()


def test_which_maps_have_encode_tables_and_planes():
    """The maps whose encode the loops look up (the table; its byte planes for the VBMI loops'
    'planes') and those that fall back: the standard and linear maps have both (so the planes
    rows of these tests run the planes), the zero-threshold and crowded maps neither."""
    have = {name: (_kernels.adam8bit_encode_tables(m), _kernels.adam8bit_encode_tables(v))
            for name, (m, v) in MAPS.items()}
    for name in ("standard", "linear", "swapped", "linear-swapped"):
        for t in have[name]:
            assert t["table"] and t["unit"] and t["planes"], (name, t)
    assert not have["zero-threshold"][0]["table"] and not have["zero-threshold"][0]["planes"]
    assert not any(t["table"] or t["planes"] for t in have["crowded"])


@pytest.mark.parametrize("maps", list(MAPS))
@pytest.mark.parametrize("isa, encode", [(isa, encode) for isa in ISAS
                                         for encode in _encodes(isa, True)])
def test_every_map_kind_encodes_exactly(rng, maps, isa, encode):
    """Each map kind, on every instruction set: m' on the map's thresholds and their fp32
    neighbours (adam8bit_cases.tie_entries: ties go to the larger code), beside ordinary entries,
    a block holding a NaN gradient and v' around the v map's positive floor
    (adam8bit_cases.floor_entries), equal to the golden with the same maps."""
    qmap_m, qmap_v = MAPS[maps]
    row = LIST8BIT_DTYPES[0]
    entries = [tie_entries(rng, row, qmap_m, g8.encode_thresholds(qmap_m))]
    entries += make_entries(rng, [3 * BLOCK + 5, 40], row)
    entries[1]["grad"][BLOCK + 7] = np.nan
    entries.append(floor_entries(rng, row, qmap_v))
    want = [g8.emulate_entry8(e["grad"], e["var"], e["m"], e["v"], e["m_absmax"], e["v_absmax"],
                              e["s"], np.array([1]), qmap_m, qmap_v, TIE_HYPER, Extras())
            for e in entries]
    lists = {k: [e[k] for e in entries]
             for k in ("grad", "var", "m", "v", "m_absmax", "v_absmax", "s")}
    _kernels.launch_native_adam8bit_list(
        lists["grad"], lists["var"], lists["m"], lists["v"], lists["m_absmax"], lists["v_absmax"],
        lists["s"], None, [e["var"].size for e in entries], qmap_m, qmap_v,
        np.array([1], np.int64), None, None, "float32", "float32", "", attrs_of(TIE_HYPER), False,
        threads=2, isa=isa, min_elems_per_thread=1, encode=encode)
    assert_entries_equal(entries, want)


def test_maps_changed_in_place_are_used_at_once(rng):
    """The driver keeps the last launch's codebooks (per thread) while the maps are the same bits:
    maps rewritten in place between launches, in the same buffers, are used by the next launch
    (a stale codebook decodes and encodes by the old maps)."""
    row = LIST8BIT_DTYPES[0]
    qmap_m, qmap_v = QMAP_M.copy(), QMAP_V.copy()
    for kind in ["standard", "linear", "standard", "crowded", "crowded"]:
        qmap_m[:], qmap_v[:] = MAPS[kind]
        entries = make_entries(rng, [4 * BLOCK + 9, 300], row)
        want = [g8.emulate_entry8(e["grad"], e["var"], e["m"], e["v"], e["m_absmax"],
                                  e["v_absmax"], e["s"], np.array([3]), qmap_m, qmap_v, Hyper(),
                                  Extras()) for e in entries]
        lists = {k: [e[k] for e in entries]
                 for k in ("grad", "var", "m", "v", "m_absmax", "v_absmax", "s")}
        _kernels.launch_native_adam8bit_list(
            lists["grad"], lists["var"], lists["m"], lists["v"], lists["m_absmax"],
            lists["v_absmax"], lists["s"], None, [e["var"].size for e in entries], qmap_m, qmap_v,
            np.array([3], np.int64), None, None, "float32", "float32", "", attrs_of(Hyper()),
            False, threads=1)
        assert_entries_equal(entries, want)


def scaled_entry(rng, row, thresholds, exponents):
    """One entry (with TIE_HYPER: m' = g, v' = g * g) whose blocks have scales other than 1: block b
    holds its scale a = (1 + u) * 2^exponents[b], the quotients' neighbourhoods of the thresholds
    (fp32 T * a and 2 ulps either side) and magnitudes from a * 2^-30 down to a * 2^-70."""
    blocks = []
    for e in exponents:
        a = np.float32(np.ldexp(1.0 + rng.uniform(0, 1), e))
        near = (thresholds.astype(np.float64) * a).astype(np.float32)
        for _ in range(2):
            near = np.concatenate([near, np.nextafter(near, np.float32(-np.inf)),
                                   np.nextafter(near, np.float32(np.inf))])
        tiny = np.ldexp(a, -rng.integers(30, 71, 64)).astype(np.float32) * rng.choice([-1, 1], 64)
        values = np.concatenate([rng.choice(near[np.abs(near) <= a], BLOCK - 1 - 64), tiny])
        blocks.append(np.concatenate([[a], rng.permutation(values)]).astype(np.float32))
    grad = np.concatenate(blocks)
    [entry] = make_entries(rng, [grad.size], row)
    entry["grad"] = grad.astype(row.grad.numpy)
    return entry


@RUNS
@LOOPS
def test_scaled_blocks_encode_exactly(rng, isa, byte_planes, encode, threads):
    """Quotients m' / scale and v' / scale with scales other than 1 (the tie tests' scales are 1):
    blocks with scales from 2^-75 to 2^62 (v' = g * g: 2^-150 to 2^124), their quotients around
    every m threshold and far below them, a partial last block, equal to the golden."""
    row = LIST8BIT_DTYPES[0]
    exponents = [-75, -61, -60, -45, -20, -3, -1, 0, 5, 31, 49, 50, 62]
    entry = scaled_entry(rng, row, g8.encode_thresholds(QMAP_M), exponents)
    for name in ("grad", "var", "m", "v", "s"):  # a partial last block of 200
        entry[name] = entry[name][:-56].copy()
    entry["m_absmax"] = entry["m_absmax"].copy()
    entry["v_absmax"] = entry["v_absmax"].copy()
    entries = [entry]
    want = expected(entries, 1, TIE_HYPER)
    run_native(entries, row, 1, TIE_HYPER, isa=isa, threads=threads, min_elems_per_thread=1,
               byte_planes=byte_planes, encode=encode)
    assert_entries_equal(entries, want)
    scales = entries[0]["m_absmax"]
    assert np.all(np.frexp(scales[:-1])[1] - 1 == exponents[:-1])  # the blocks kept their scales


def short_copy(entry, n):
    """The first n elements of an entry (its first block's), as an entry of its own."""
    out = {k: None if x is None else x[:n].copy() for k, x in entry.items()}
    out["m_absmax"], out["v_absmax"] = entry["m_absmax"][:1].copy(), entry["v_absmax"][:1].copy()
    return out


@RUNS
@LOOPS
def test_second_moment_below_its_floor_takes_the_first_positive_code(rng, isa, byte_planes,
                                                                     encode, threads):
    """v' quotients at, above and below v's positive floor (adam8bit_cases.floor_entries), in
    blocks whose scales are 1, 2^-40 and 2^30, and in a 37-element entry (the scalar tail): equal
    to the golden, which raises each positive one below the floor to the first positive code."""
    row = LIST8BIT_DTYPES[0]
    entry = floor_entries(rng, row, QMAP_V)
    entries = [entry, short_copy(entry, 37)]
    assert raised_codes(entries[0], QMAP_V) >= 50 and raised_codes(entries[1], QMAP_V) >= 10
    want = expected(entries, 1, TIE_HYPER)
    run_native(entries, row, 1, TIE_HYPER, isa=isa, threads=threads, min_elems_per_thread=1,
               byte_planes=byte_planes, encode=encode)
    assert_entries_equal(entries, want)
    g = entry["grad"]
    assert np.all((QMAP_V[entry["v"]] > 0) == (g * g > 0))  # v' > 0: a positive code


def _neighbours(x, ulps):
    """Finite fp32 x and the fp32 values up to `ulps` steps either side of each."""
    bits = np.asarray(x, np.float32).view(np.int32)
    return np.concatenate([(bits + k).view(np.float32) for k in range(-ulps, ulps + 1)])


def _product_misses(numerators, scale, thresholds):
    """The numerators x (|x| <= scale) whose quotient x / scale has another code than the product
    x * (1 / scale) (both rounded in fp32): where a division by multiplying with the reciprocal,
    unless corrected, encodes wrong."""
    x = numerators[np.isfinite(numerators) & (np.abs(numerators) <= scale) & (numerators != 0)]
    exact = x / scale
    product = x * (np.float32(1) / scale)
    return x[g8.encode(exact, thresholds) != g8.encode(product, thresholds)]


def reciprocal_miss_entry(rng, row, exponents):
    """One entry (with TIE_HYPER: m' = g, v' = g * g) of two blocks per scale exponent e: block a
    has |g| <= a = (1 + u) * 2^e with a first, and every g next to a threshold of m's map whose
    product m' * (1 / a) encodes differently from m' / a; block b likewise for v' against its
    scale a * a. Returns the entry and how many such lanes it holds."""
    blocks, misses = [], 0
    t_m, t_v = g8.encode_thresholds(QMAP_M), g8.encode_thresholds(QMAP_V)
    for e in exponents:
        a = np.float32(np.ldexp(1.0 + rng.uniform(0, 1), e))
        near = _neighbours((t_m.astype(np.float64) * a).astype(np.float32), 6)
        m_lanes = _product_misses(near, a, t_m)
        roots = np.sqrt(t_v[t_v > 0].astype(np.float64)) * a
        g = _neighbours(roots.astype(np.float32), 6)
        g = g[(g > 0) & (g <= a)]
        v_scale = a * a
        v_lanes = g[np.isin(g * g, _product_misses(g * g, v_scale, t_v))]
        for lanes in (m_lanes, v_lanes):
            lanes = rng.permutation(lanes)[:BLOCK - 1]
            misses += lanes.size
            fill = (rng.uniform(-1, 1, BLOCK - 1 - lanes.size) * a).astype(np.float32)
            blocks.append(np.concatenate([[a], rng.permutation(np.concatenate([lanes, fill]))]))
    grad = np.concatenate(blocks).astype(np.float32)
    [entry] = make_entries(rng, [grad.size], row)
    entry["grad"] = grad.astype(row.grad.numpy)
    return entry, misses


@RUNS
@LOOPS
def test_quotients_a_reciprocal_would_round_wrong_encode_exactly(rng, isa, byte_planes, encode, threads):
    """The AVX-512 loops take a block's quotients from its scale's reciprocal with Markstein's
    correction (no division): quotients next to m's and v's thresholds where the uncorrected
    product x * (1 / scale) has another code, with scales inside and outside the range that
    correction is taken for (v's scale a * a: 2^-50 to 2^48), equal to the golden."""
    row = LIST8BIT_DTYPES[0]
    entry, misses = reciprocal_miss_entry(rng, row, [-25, -19, -7, -1, 0, 4, 19, 24])
    entries = [entry]
    want = expected(entries, 1, TIE_HYPER)
    run_native(entries, row, 1, TIE_HYPER, isa=isa, threads=threads, min_elems_per_thread=1,
               byte_planes=byte_planes, encode=encode)
    assert_entries_equal(entries, want)
    assert misses > 200  # the case is exercised


@RUNS
@LOOPS
def test_thresholds_far_below_one_encode_exactly(rng, isa, byte_planes, encode, threads):
    """A map spaced by a constant ratio from 2^-120 to 1 (for m and v): its encode table keys
    quotients down to its thresholds near 2^-120, whose numerators in blocks of small scales are
    subnormal, where a reciprocal's correction no longer holds (the loops divide for such maps):
    quotients next to every threshold, equal to the golden."""
    qmap = np.exp2(np.linspace(-120, 0, 256)).astype(np.float32)
    thresholds = g8.encode_thresholds(qmap)
    row = LIST8BIT_DTYPES[0]
    blocks = []
    for e in [-39, -35, -30, -20, -10, 0]:
        a = np.float32(np.ldexp(1.0 + rng.uniform(0, 1), e))
        near = _neighbours((thresholds.astype(np.float64) * a).astype(np.float32), 3)
        near = rng.permutation(near[(near > 0) & (near <= a)])
        for start in range(0, near.size, BLOCK - 1):
            part = near[start:start + BLOCK - 1]
            fill = (rng.uniform(0, 1, BLOCK - 1 - part.size) * a).astype(np.float32)
            blocks.append(np.concatenate([[a], part, fill]))
    [entry] = make_entries(rng, [BLOCK * len(blocks)], row)
    entry["grad"] = np.concatenate(blocks).astype(np.float32)
    entries = [entry]
    want = expected(entries, 1, TIE_HYPER, maps=(qmap, qmap))
    run_native(entries, row, 1, TIE_HYPER, isa=isa, threads=threads, min_elems_per_thread=1,
               maps=(qmap, qmap), byte_planes=byte_planes, encode=encode)
    assert_entries_equal(entries, want)


@RUNS
@LOOPS
def test_negative_scales_encode_exactly(rng, isa, byte_planes, encode, threads):
    """Scales below 0 (a hand-made or corrupted state: scales are data, nothing refuses them)
    decode m and v with flipped signs, so v' / scale is negative in blocks whose new scale is finite
    and above 0: the unsigned map's table keys such quotients below all its thresholds (code 0),
    as the golden's comparison of x with each threshold does."""
    row = LIST8BIT_DTYPES[0]
    [entry] = make_entries(rng, [6 * BLOCK + 40], row)
    entry["m_absmax"] = -entry["m_absmax"]
    entry["v_absmax"][::2] *= np.float32(-1e3)  # b2 * v below 0 outweighs (1 - b2) * g * g
    entries = [entry]
    want = expected(entries, 3)
    run_native(entries, row, 3, isa=isa, threads=threads, min_elems_per_thread=1,
               byte_planes=byte_planes, encode=encode)
    assert_entries_equal(entries, want)
    negated = np.concatenate([want[0].v[b * BLOCK:(b + 1) * BLOCK] for b in range(0, 6, 2)])
    assert np.mean(negated == 0) > 0.5  # the case is exercised: most of those quotients are < 0
