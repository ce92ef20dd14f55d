"""ApplyFusedEmaAdam8bitList's AscendC kernel (op_kernel/apply_fused_ema_adam8bit_list) on the CPU
twin with the 910B rules, through _kernels.launch_adam8bit_list: bit-identical to
golden8bit.emulate_entry8 on every dtype row, option and platform preset, in both float-overflow
modes; the GM traffic is exactly one read of each input and one write of each output."""

import dataclasses
import functools

import numpy as np
import pytest

from adam8bit_cases import (OPTIONS, QMAP_M, QMAP_V, ROW_IDS, TIE_HYPER, assert_entries_equal,
                            copied, expected, floor_entries, make_entries, raised_codes, run,
                            tie_entries)
from ascend_ema_adam import _kernels, golden8bit as g8
from ascend_ema_adam._dtypes import LIST8BIT_DTYPES
from ascend_ema_adam.golden import Extras, Hyper

BLOCK = g8.BLOCK
run_twin = functools.partial(run, _kernels.launch_adam8bit_list)
# Entries for several chunks per core on the "cpu" preset (a core per hardware thread), tails of
# every kind and empty entries.
SIZES = [0, 1, 17, BLOCK, BLOCK + 1, 5000, 40 * BLOCK + 3]


@pytest.mark.parametrize("row", LIST8BIT_DTYPES, ids=ROW_IDS)
@pytest.mark.parametrize("platform", ["cpu", "Ascend910B2"])
def test_every_row_is_bit_exact(rng, row, platform):
    entries = make_entries(rng, SIZES, row)
    h = Hyper(lr=3e-3, mode=int(rng.integers(0, 2)), weight_decay=0.02)
    want = expected(entries, 9, h)
    result = run_twin(entries, row, 9, h, platform=platform)
    assert_entries_equal(entries, want)
    tiling = result["tiling"]
    assert tiling["tiling_key"] == _kernels.adam8bit_dtype_contract()[LIST8BIT_DTYPES.index(row)][3]
    assert 1 <= tiling["chunk_blocks"] <= 16 and tiling["ub_bytes_per_core"] <= 184 * 1024


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("ema", [True, False], ids=["ema", "no-ema"])
def test_options_are_bit_exact(rng, option, ema):
    h, extras, tensors = OPTIONS[option]
    row = LIST8BIT_DTYPES[int(rng.integers(0, len(LIST8BIT_DTYPES)))]
    entries = make_entries(rng, SIZES, row, ema=ema)
    want = expected(entries, 4, dataclasses.replace(h, **tensors), extras)
    run_twin(entries, row, 4, h, extras, **tensors)
    assert_entries_equal(entries, want)


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_non_finite_gradients_follow_the_golden(rng, special):
    row = LIST8BIT_DTYPES[0]
    entries = make_entries(rng, [3 * BLOCK + 5, 40], row)
    entries[0]["grad"][[3, BLOCK + 200, 3 * BLOCK + 4]] = special
    entries[1]["grad"][0] = special
    want = expected(entries, 6)
    run_twin(entries, row, 6)
    assert_entries_equal(entries, want)


@pytest.mark.parametrize("overflow_mode", ["inf_nan", "saturation"])
def test_overflowing_16bit_results_follow_the_device_mode(rng, overflow_mode):
    row = LIST8BIT_DTYPES[10]  # fp16 params, fp16 gradients
    entries = make_entries(rng, [700], row)
    entries[0]["var"][:50] = np.float16(65000.0)
    h = Hyper(lr=2000.0)  # pushes those past fp16's largest value
    want = expected(entries, 3, h, overflow_mode=overflow_mode)
    run_twin(entries, row, 3, h, overflow_mode=overflow_mode)
    assert_entries_equal(entries, want)
    assert np.isinf(want[0].var[:50]).any() == (overflow_mode == "inf_nan")


def test_gm_traffic_is_one_read_and_one_write_of_each_tensor(rng):
    row = LIST8BIT_DTYPES[7]  # fp32 masters, fp16 gradients, bf16 copies
    entries = make_entries(rng, SIZES, row)
    result = run_twin(entries, row, 2)
    n = sum(e["var"].size for e in entries)
    blocks = sum(g8.blocks(e["var"].size) for e in entries)
    read = sum(b["gm_read_bytes"] for b in result["blocks"])
    written = sum(b["gm_write_bytes"] for b in result["blocks"])
    assert read == n * (2 + 4 + 1 + 1 + 4) + blocks * 0  # grad, var, codes, EMA (DMA)
    assert written == n * (4 + 1 + 1 + 4 + 2) + blocks * 2 * 4  # var, codes, EMA, copy; scales
    # the old scales are read on the scalar unit, once per block and moment (with the maps)
    scalar = sum(b["gm_scalar_read_bytes"] for b in result["blocks"])
    assert scalar >= blocks * 2 * 4


@pytest.mark.parametrize("found_inf", [1.0, float("nan")])
def test_nonzero_found_inf_moves_no_tensor_byte(rng, found_inf):
    row = LIST8BIT_DTYPES[0]
    entries = make_entries(rng, SIZES, row)
    before = copied(entries)
    result = run_twin(entries, row, 2, extras=Extras(found_inf=found_inf))
    assert all(b["gm_read_bytes"] == 0 and b["gm_write_bytes"] == 0 for b in result["blocks"])
    assert all(b["gm_scalar_read_bytes"] == 4 for b in result["blocks"])
    for e, b in zip(entries, before):
        for k, x in e.items():
            assert x is None or np.array_equal(x.view(np.uint8), b[k].view(np.uint8))


def test_twenty_steps_equal_the_native_kernel(rng):
    """The twin's state feeds its next launch as the native kernel's feeds its own: 20 steps of
    both from the same start stay bit-identical."""
    row = LIST8BIT_DTYPES[12]  # bf16 params, fp32 gradients
    on_twin = make_entries(rng, [3 * BLOCK + 7, 300], row)
    native = copied(on_twin)
    for step in range(1, 21):
        for a, b in zip(on_twin, native):
            a["grad"] = (rng.standard_normal(a["var"].size) * 1e-2).astype(a["grad"].dtype)
            b["grad"] = a["grad"].copy()
        run_twin(on_twin, row, step, Hyper(lr=1e-2))
        run(_kernels.launch_native_adam8bit_list, native, row, step, Hyper(lr=1e-2))
    for a, b in zip(on_twin, native):
        for k in a:
            assert a[k] is None or np.array_equal(a[k].view(np.uint8), b[k].view(np.uint8)), k


def test_exact_ties_encode_to_the_larger_code(rng):
    """m' on the thresholds themselves (adam8bit_cases.tie_entries): the kernel's search takes a
    tie to the larger code, as the golden does."""
    row = LIST8BIT_DTYPES[0]
    entries = [tie_entries(rng, row, QMAP_M, g8.encode_thresholds(QMAP_M))]
    want = expected(entries, 1, TIE_HYPER)
    run_twin(entries, row, 1, TIE_HYPER)
    assert_entries_equal(entries, want)
    assert np.array_equal(entries[0]["m"], g8.encode(entries[0]["grad"], g8.encode_thresholds(QMAP_M)))


@pytest.mark.parametrize("maps", ["dynamic", "all-positive"])
def test_second_moment_below_its_floor_takes_the_first_positive_code(rng, maps):
    """v' quotients at, above and below v's positive floor (adam8bit_cases.floor_entries): the
    kernel's compares and selects before the search raise each positive one below the floor to
    the first positive code, as the golden; a map whose entries are all above 0 has no floor
    (its nearest codes are already positive)."""
    row = LIST8BIT_DTYPES[0]
    qmap_v = QMAP_V if maps == "dynamic" else np.linspace(1e-3, 1, 256).astype(np.float32)
    entries = [floor_entries(rng, row, qmap_v)]
    if maps == "dynamic":
        assert raised_codes(entries[0], qmap_v) >= 50
    want = expected(entries, 1, TIE_HYPER, maps=(QMAP_M, qmap_v))
    run_twin(entries, row, 1, TIE_HYPER, maps=(QMAP_M, qmap_v))
    assert_entries_equal(entries, want)
    if maps == "dynamic":
        g = entries[0]["grad"]
        assert np.all((qmap_v[entries[0]["v"]] > 0) == (g * g > 0))  # v' > 0: a positive code


@pytest.mark.parametrize("platform", ["cpu", "Ascend910B2"])
def test_cores_share_the_blocks_within_one(rng, platform):
    """The tiling's core table: every core starts at a block of the global sequence, the shares
    differ by at most one block, and together they are every block once."""
    row = LIST8BIT_DTYPES[0]
    sizes = [0, 3, 70_000, 0, 257, 1_000_003 // 97, 9]
    entries = make_entries(rng, sizes, row)
    tiling = run_twin(entries, row, 1, platform=platform)["tiling"]
    prefix = np.concatenate([[0], np.cumsum([g8.blocks(n) for n in sizes])])
    starts = [prefix[t] + b for t, b in tiling["core_starts"]]
    shares = np.diff(starts)
    assert starts[0] == 0 and starts[-1] == prefix[-1] and np.all(shares >= 1)
    assert shares.max() - shares.min() <= 1
    if platform == "Ascend910B2":  # 48 vector cores
        assert tiling["used_core_num"] == min(prefix[-1], 48)


def test_check_command_sweeps_the_8bit_kernel_and_gives_one_verdict():
    """`check --quick` covers the 8-bit operator (a row per dtype row and option set, each
    bit-exact with golden8bit, within CANN's standard, at minimal traffic) and ends with one
    verdict for the three operators."""
    import io

    from ascend_ema_adam.apps import check

    out = io.StringIO()
    assert check.main(quick=True, out=out) == 0
    text = out.getvalue()
    section = text[text.index("ApplyFusedEmaAdam8bitList: the 8-bit kernel"):]
    rows = [line for line in section.splitlines() if line.endswith(("PASS", "FAIL"))
            and " m= v= m_absmax= v_absmax=" in line]
    expected = len(LIST8BIT_DTYPES) * len(check.LIST8_OPTIONS)
    assert len(rows) == expected and all(line.endswith("min  PASS") for line in rows)
    assert f"{expected}/{expected} PASS" in section
    assert text.rstrip().splitlines()[-1].startswith("check: PASS: ApplyFusedEmaAdam, ")


def test_check_command_fails_on_a_wrong_8bit_code(monkeypatch):
    """One code of one entry off by one in the kernel's output: that row FAILs (m marked X), and
    so do the verdict and the exit status."""
    import io

    from ascend_ema_adam import kernels
    from ascend_ema_adam.apps import check

    real = kernels.apply_fused_ema_adam8bit_list

    def off_by_one(grads, vars, ms, *args, **kwargs):
        stats = real(grads, vars, ms, *args, **kwargs)
        ms[-1][-1] ^= 1
        return stats

    monkeypatch.setattr(kernels, "apply_fused_ema_adam8bit_list", off_by_one)
    out = io.StringIO()
    assert check.main(quick=True, out=out) == 1
    text = out.getvalue()
    assert " mX " in text and "FAIL" in text
    expected = len(LIST8BIT_DTYPES) * len(check.LIST8_OPTIONS)
    assert text.rstrip().splitlines()[-1].startswith(f"check: FAIL ({expected} cases)")
