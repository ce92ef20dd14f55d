"""The ApplyFusedEmaAdamList AscendC kernel, run unchanged on the CPU twin.

Bit-exact against golden.emulate_entry for every (P, S, G, C) combination x AMSGrad x maximize x
grad scale x mode, on the CPU preset and on the 48-core Ascend910B2 split; within CANN's precision
standard against golden.reference_entry; GM traffic exactly the minimum per core and in total;
the UB it allocates is the tiling's; found_inf stops every write; and the list equals the single
op run tensor by tensor where the single op applies."""

import math

import numpy as np
import pytest
from kernel_cases import A2, DTYPE_IDS, DTYPES

from ascend_ema_adam import _kernels, golden, kernels
from ascend_ema_adam.apps.check import (list_combos, list_traffic_per_element, random_inputs,
                                   random_list_inputs, run_list_case)
from ascend_ema_adam.golden import Extras, Hyper

COMBOS = list_combos()
COMBO_IDS = [c.name.replace("float", "f").replace("/", "-") for c in COMBOS]

#: Mixed entry sizes: empty (also first and repeated), one element, 32-byte block tails and,
#: on the CPU preset, a few chunks per core.
SWEEP_SIZES = (0, 1, 7, 16, 17, 33, 0, 1000, 12289)


def vector_calls_per_chunk(combo, hyper, extras, amsgrad, ema=True):
    """The kernel's vector instructions per chunk: the single op's 19 (17 + 2 for the weight
    decay, in either mode; 3 of them the EMA's), one per option (maximize only without a grad
    scale: with one it is the divisor's sign), the widening and narrowing casts and the model
    copy's cast."""
    states = 2 + ema + amsgrad
    wide = [np.dtype(d).itemsize == 2 for d in (combo.grad, combo.param)]
    scaled = extras.grad_scale is not None
    calls = 16 + 3 * ema + (extras.maximize and not scaled) + scaled + amsgrad
    calls += wide[0] + wide[1] + states * (combo.state.itemsize == 2)          # widen
    calls += wide[1] + states * (combo.state.itemsize == 2)                    # narrow
    return calls + (combo.copy is not None)


def assert_launch_is_minimal(result, combo, extras, amsgrad, sizes):
    """Per core: GM bytes of exactly its segments (each input read once, each output written
    once; without the EMA not one byte of it), the vector instructions of its chunks, the UB the
    tiling computed; in total the minimum. The scalar reads never count as DMA."""
    tiling, blocks = result.stats.tiling, result.stats.blocks
    ema = result.ema
    assert tiling["has_ema"] == ema
    read, written = list_traffic_per_element(combo, amsgrad, ema)
    chunk = tiling["chunk_length"]
    per_chunk = vector_calls_per_chunk(combo, result.hyper, extras, amsgrad, ema)
    ub = _kernels.list_ub_bytes_per_element(
        golden.dtype_name(combo.param), golden.dtype_name(combo.state),
        golden.dtype_name(combo.grad), golden.dtype_name(combo.copy) if combo.copy else "",
        amsgrad, extras.grad_scale is not None, ema=ema)
    assert len(blocks) == tiling["block_dim"] == len(tiling["core_segments"])
    covered = 0
    for block, segments in zip(blocks, tiling["core_segments"]):
        elems = sum(end - begin for _, begin, end in segments)
        chunks = sum(math.ceil((end - begin) / chunk) for _, begin, end in segments)
        covered += elems
        assert block["gm_read_bytes"] == elems * read
        assert block["gm_write_bytes"] == elems * written
        assert block["gm_scalar_write_bytes"] == 0
        assert block["vector_calls"] == chunks * per_chunk + (extras.grad_scale is not None)
        assert block["vector_elements"] == (elems * per_chunk
                                            + chunk * (extras.grad_scale is not None))
        assert block["ub_bytes_used"] == tiling["ub_bytes_per_core"] == ub * chunk
    assert covered == sum(sizes)
    assert result.gm_bytes == result.gm_bytes_min == sum(sizes) * (read + written)


# ------------------------------------------------------------------------------------------
# The sweep: every combination x options x mode, on the CPU preset and the 48-core split


@pytest.mark.parametrize("platform", ["cpu", A2])
@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("grad_scale", [None, 256.0], ids=["noscale", "scale"])
@pytest.mark.parametrize("maximize", [False, True], ids=["min", "max"])
@pytest.mark.parametrize("amsgrad", [False, True], ids=["adam", "amsgrad"])
@pytest.mark.parametrize("combo", COMBOS, ids=COMBO_IDS)
def test_sweep(rng, combo, amsgrad, maximize, grad_scale, mode, platform):
    hyper = Hyper(lr=1e-3, ema_decay=0.999, mode=mode, weight_decay=0.01)
    extras = Extras(maximize=maximize, grad_scale=grad_scale)
    result = run_list_case(rng, combo, hyper, extras, SWEEP_SIZES, step=int(rng.integers(1, 500)),
                           amsgrad=amsgrad, platform=platform)
    assert result.stats.tiling["tiling_key"] == combo.tiling_key
    expected_outputs = {"var", "m", "v", "s"} | ({"max_v"} if amsgrad else set()) \
        | ({"copy"} if combo.copy is not None else set())
    assert set(result.bit_exact) == expected_outputs == set(result.precision)
    assert all(result.bit_exact.values()), result.bit_exact
    for name, p in result.precision.items():
        assert p.passed, f"{name}: {p}"
    assert_launch_is_minimal(result, combo, extras, amsgrad, SWEEP_SIZES)


@pytest.mark.parametrize("combo", COMBOS, ids=COMBO_IDS)
def test_large_tensor_many_chunks(rng, combo):
    """A tensor of more than 2^20 elements beside small ones: many chunks per core, chunks
    limited by the UB, cores spanning tensor boundaries, on both presets."""
    sizes = (3, 2**20 + 5, 768, 0, 50_001)
    for mode, platform in enumerate(("cpu", A2)):
        extras = Extras(maximize=bool(mode), grad_scale=float(rng.uniform(1.0, 4096.0)))
        hyper = Hyper(lr=1e-3, ema_decay=0.9999, mode=mode, weight_decay=0.05)
        result = run_list_case(rng, combo, hyper, extras, sizes, step=1000, amsgrad=True,
                               platform=platform)
        assert all(result.bit_exact.values()), (platform, result.bit_exact)
        assert all(p.passed for p in result.precision.values()), (platform, result.precision)
        assert_launch_is_minimal(result, combo, extras, True, sizes)
        tiling = result.stats.tiling
        assert max(sum(e - b for _, b, e in segs) for segs in tiling["core_segments"]) \
            > 2 * tiling["chunk_length"]


def test_many_small_tensors(rng):
    """2048 entries of 0-300 elements (a model's biases and norms) in one launch on 48 cores:
    every core spans many tensors."""
    sizes = tuple(int(n) for n in rng.integers(0, 300, 2048))
    combo = next(c for c in COMBOS if c.name == "float32/float32/float32")
    extras = Extras(maximize=True, grad_scale=2.0)
    result = run_list_case(rng, combo, Hyper(mode=1, weight_decay=0.1), extras, sizes, step=3,
                           amsgrad=True, platform=A2)
    assert all(result.bit_exact.values()), result.bit_exact
    assert_launch_is_minimal(result, combo, extras, True, sizes)
    assert min(len(segs) for segs in result.stats.tiling["core_segments"]) > 10


# ------------------------------------------------------------------------------------------
# Issue 12: launches without the EMA, lr and the EMA decay as one-element tensors


@pytest.mark.parametrize("platform", ["cpu", A2])
@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("amsgrad", [False, True], ids=["adam", "amsgrad"])
@pytest.mark.parametrize("combo", COMBOS, ids=COMBO_IDS)
def test_no_ema(rng, combo, amsgrad, mode, platform):
    """No EMA list: var, m, v (, max_v) (, copy) bit-exact with golden.emulate_entry(s=None), and
    not one byte of EMA traffic (the per-core GM counters are the minimum without S; the twin
    aborts on any access outside the registered tensors, and the EMA list is not registered)."""
    hyper = Hyper(lr=1e-3, ema_decay=0.999, mode=mode, weight_decay=0.01)
    extras = Extras(maximize=mode == 1, grad_scale=512.0 if amsgrad else None)
    result = run_list_case(rng, combo, hyper, extras, SWEEP_SIZES, step=int(rng.integers(1, 500)),
                           amsgrad=amsgrad, platform=platform, ema=False)
    expected_outputs = {"var", "m", "v"} | ({"max_v"} if amsgrad else set()) \
        | ({"copy"} if combo.copy is not None else set())
    assert set(result.bit_exact) == expected_outputs == set(result.precision)
    assert all(result.bit_exact.values()), result.bit_exact
    assert all(p.passed for p in result.precision.values()), result.precision
    assert_launch_is_minimal(result, combo, extras, amsgrad, SWEEP_SIZES)


@pytest.mark.parametrize("combo", COMBOS, ids=COMBO_IDS)
def test_no_ema_gets_the_freed_unified_buffer(combo):
    """Without the S slots the chunk grows by the UB they took (same formula as the kernel's)."""
    names = [golden.dtype_name(d) if d is not None else ""
             for d in (combo.param, combo.state, combo.grad, combo.copy)]
    for amsgrad in (False, True):
        with_ema, without = (
            kernels.compute_list_tiling([2**24], combo.param, combo.state, combo.grad, combo.copy,
                                     amsgrad=amsgrad, ema=ema, platform=A2)
            for ema in (True, False))
        assert (with_ema["has_ema"], without["has_ema"]) == (1, 0)
        assert without["chunk_length"] > with_ema["chunk_length"]
        per_element = _kernels.list_ub_bytes_per_element(*names, amsgrad, False, ema=False)
        assert per_element < _kernels.list_ub_bytes_per_element(*names, amsgrad, False, ema=True)
        assert without["ub_bytes_per_core"] == without["chunk_length"] * per_element


@pytest.mark.parametrize("ema", [True, False], ids=["ema", "noema"])
@pytest.mark.parametrize("combo", COMBOS, ids=COMBO_IDS)
def test_lr_and_decay_tensors(rng, combo, ema):
    """lr and the EMA decay read from one-element fp32 tensors (attributes set to other numbers):
    the bits of golden.emulate_entry with the tensors' values as attributes, GM traffic still
    exactly the minimum (the two scalar reads are not DMA)."""
    hyper = Hyper(lr=float(rng.uniform(1e-4, 1e-2)), ema_decay=float(rng.uniform(0.9, 0.9999)),
                  mode=int(rng.integers(0, 2)), weight_decay=0.02)
    extras = Extras(grad_scale=8.0)
    for platform in ("cpu", A2):
        result = run_list_case(rng, combo, hyper, extras, SWEEP_SIZES, step=17, amsgrad=True,
                               platform=platform, ema=ema, tensor_scalars=True)
        assert all(result.bit_exact.values()), (platform, result.bit_exact)
        assert "s" in result.bit_exact or not ema
        assert result.stats.tiling["has_lr_tensor"] == result.stats.tiling[
            "has_ema_decay_tensor"] == 1
        assert_launch_is_minimal(result, combo, extras, True, SWEEP_SIZES)


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("target", ["grads", "vars", "ms", "vs", "ss", "max_vs"])
@pytest.mark.parametrize("combo", [COMBOS[0], COMBOS[2], COMBOS[7], COMBOS[10]],
                         ids=[COMBO_IDS[0], COMBO_IDS[2], COMBO_IDS[7], COMBO_IDS[10]])
def test_nan_inf_injection(rng, combo, target, special):
    """Non-finite values in any input propagate exactly as in the emulation, AMSGrad's maximum
    included (a NaN v' wins, a NaN max_v loses to the next v')."""
    sizes = (33, 1000, 0, 4099)
    lists = random_list_inputs(rng, sizes, combo, amsgrad=True, grad_scale=4.0)
    for a in lists[target]:
        if a.size:
            a[rng.choice(a.size, size=min(a.size, 7), replace=False)] = special
    step = np.array([9], np.int64)
    hyper, extras = Hyper(mode=1, weight_decay=0.02), Extras(maximize=True, grad_scale=4.0)
    expected = [golden.emulate_entry(*(lists[n][i] for n in ("grads", "vars", "ms", "vs", "ss")),
                                     step, hyper, extras, max_v=lists["max_vs"][i],
                                     copy=None if combo.copy is None else lists["copies"][i])
                for i in range(len(sizes))]
    kernels.apply_fused_ema_adam_list(lists["grads"], lists["vars"], lists["ms"], lists["vs"],
                                   lists["ss"], step, hyper, extras, max_vs=lists["max_vs"],
                                   model_copies=lists["copies"], platform=A2)
    names = ("vars", "ms", "vs", "ss", "max_vs", "copies")
    for i, e in enumerate(expected):
        for name, want in zip(names, e.astuple()):
            if want is not None:
                assert golden.bit_equal(lists[name][i], want), f"{name}[{i}]"


# ------------------------------------------------------------------------------------------
# found_inf


def launch_lists(rng, combo, sizes, extras, *, platform=A2, amsgrad=True,
                 hyper=Hyper(mode=0, weight_decay=0.01)):
    """(inputs, the arrays the kernel updated, launch stats) of one launch."""
    lists = random_list_inputs(rng, sizes, combo, amsgrad=amsgrad, grad_scale=extras.grad_scale)
    work = {k: None if v is None else [a.copy() for a in v] for k, v in lists.items()}
    stats = kernels.apply_fused_ema_adam_list(
        work["grads"], work["vars"], work["ms"], work["vs"], work["ss"],
        np.array([5], np.int64), hyper, extras, max_vs=work["max_vs"], model_copies=work["copies"],
        platform=platform)
    return lists, work, stats


@pytest.mark.parametrize("found_inf", [1.0, -2.5, 1e-40, np.inf, np.nan],
                         ids=["one", "negative", "denormal", "inf", "nan"])
@pytest.mark.parametrize("combo", [COMBOS[0], COMBOS[3], COMBOS[9]],
                         ids=[COMBO_IDS[0], COMBO_IDS[3], COMBO_IDS[9]])
def test_found_inf_nonzero_writes_nothing(rng, combo, found_inf):
    """Every byte of every list (model copies included) unchanged; each core reads found_inf
    (4 B) and nothing else: no DMA byte, no vector instruction, no UB."""
    sizes = (5, 0, 4099, 33, 70_000)
    extras = Extras(maximize=True, grad_scale=8.0, found_inf=found_inf)
    before, after, stats = launch_lists(rng, combo, sizes, extras)
    for name, arrays in before.items():
        if arrays is not None:
            for i, (a, b) in enumerate(zip(arrays, after[name])):
                assert a.tobytes() == b.tobytes(), f"{name}[{i}] changed"
    assert stats.tiling["block_dim"] == 48
    for block in stats.blocks:
        assert block["gm_read_bytes"] == block["gm_write_bytes"] == 0
        assert block["gm_scalar_read_bytes"] == 4
        assert block["vector_calls"] == 0 and block["ub_bytes_used"] == 0


@pytest.mark.parametrize("found_inf", [0.0, -0.0], ids=["zero", "negzero"])
def test_found_inf_zero_updates(rng, found_inf):
    combo = COMBOS[1]
    extras = Extras(grad_scale=64.0, found_inf=found_inf)
    result = run_list_case(rng, combo, Hyper(), extras, (17, 4099, 0, 1), step=2, amsgrad=True,
                           platform=A2)
    assert all(result.bit_exact.values()) and result.passed
    assert_launch_is_minimal(result, combo, extras, True, (17, 4099, 0, 1))


# ------------------------------------------------------------------------------------------
# Scalar GM reads: the launch scalars once per core, the descriptors of the tensors it touches


def test_scalar_reads_are_the_launch_scalars_and_descriptors(rng):
    """Without bias correction, grad scale and found_inf a core reads only list descriptors: per
    list it opens 16 B at Init (word 0 and tensor 0's header); per tensor it walks the vars
    list's descriptor of that tensor (its data pointer and 1-D shape, 16 B); per tensor it
    updates the data pointer in each list (8 B). Each launch scalar adds its bytes once."""
    combo = COMBOS[0]
    sizes = (100, 0, 0, 300, 5000, 0)
    no_step = Hyper(bias_correction=False)
    _, _, plain = launch_lists(rng, combo, sizes, Extras(), amsgrad=False, hyper=no_step)
    lists = 9  # grads, vars, ms, vs, ss and the four outputs
    starts = plain.tiling["core_starts"]
    for core, (block, segments) in enumerate(zip(plain.blocks, plain.tiling["core_segments"])):
        (first, _), (last, last_block) = starts[core], starts[core + 1]
        walked = last + (last_block > 0) - first
        assert block["gm_scalar_read_bytes"] == 16 * lists + 16 * walked + 8 * lists * \
            len(segments), (core, block)
    _, _, extra = launch_lists(rng, combo, sizes, Extras(grad_scale=2.0, found_inf=0.0),
                               amsgrad=False)
    for a, b in zip(plain.blocks, extra.blocks):
        assert b["gm_scalar_read_bytes"] == a["gm_scalar_read_bytes"] + 4 + 4 + 8


# ------------------------------------------------------------------------------------------
# The list and the single op


@pytest.mark.parametrize("platform", ["cpu", A2])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_list_equals_single_op_per_tensor(rng, dtype, platform):
    """Where the single op applies (P = S = G, no options), one list launch is bit-identical to
    one single-op launch per tensor, over mixed sizes including 0, 1, tails and > 2^20."""
    sizes = (0, 1, 15, 17, 2**20 + 9, 0, 4096, 33)
    hyper = Hyper(lr=1e-3, ema_decay=0.99, mode=0, weight_decay=0.02)
    step = np.array([11], np.int64)
    entries = [random_inputs(rng, (n,), dtype) for n in sizes]
    listed = [[x.copy() for x in e] for e in entries]
    kernels.apply_fused_ema_adam_list(*([e[k] for e in listed] for k in range(5)), step, hyper,
                                   platform=platform)
    for i, e in enumerate(entries):
        single = [x.copy() for x in e]
        kernels.apply_fused_ema_adam(*single, step, hyper, platform=platform)
        for name, a, b in zip(("var", "m", "v", "s"), listed[i][1:], single[1:]):
            assert golden.bit_equal(a, b), f"entry {i} ({sizes[i]} elements): {name}"


def test_single_op_instruction_sequence_is_unchanged(rng):
    """The single op calls the shared update core with no options: still 19 vector instructions
    per fp32 chunk, 28 per 16-bit chunk (5 widening and 4 narrowing casts)."""
    for dtype, per_chunk in zip(DTYPES, (19, 28, 28)):
        inputs = [x.copy() for x in random_inputs(rng, (10_000,), dtype)]
        stats = kernels.apply_fused_ema_adam(*inputs, np.array([3], np.int64), Hyper(mode=0))
        chunk = stats.tiling["chunk_length"]
        for (begin, end), block in zip(stats.tiling["core_ranges"], stats.blocks):
            assert block["vector_calls"] == math.ceil((end - begin) / chunk) * per_chunk
            assert block["vector_elements"] == (end - begin) * per_chunk


# ------------------------------------------------------------------------------------------
# Shapes and the wrapper's checks


def test_entries_of_any_rank(rng):
    """Entries keep their shapes; the kernel sees them as 1-D [numel] (CANN's flattened lists)."""
    combo = COMBOS[5]  # fp16 everywhere
    shapes = [(3, 5), (), (2, 1, 4), (7,), (0, 3)]
    lists = {name: [] for name in ("grads", "vars", "ms", "vs", "ss")}
    for shape in shapes:
        for name, x in zip(lists, random_inputs(rng, shape, combo.param)):
            lists[name].append(x)
    step = np.array([4], np.int64)
    expected = [golden.emulate_entry(*(lists[n][i] for n in lists), step) for i in
                range(len(shapes))]
    kernels.apply_fused_ema_adam_list(*lists.values(), step)
    for i, shape in enumerate(shapes):
        for k, name in enumerate(("vars", "ms", "vs", "ss")):
            assert lists[name][i].shape == shape
            assert golden.bit_equal(lists[name][i], expected[i].astuple()[k])


def test_empty_lists_launch_nothing(rng):
    stats = kernels.apply_fused_ema_adam_list([], [], [], [], [], np.array([1], np.int64))
    assert stats.tiling["block_dim"] == 0 and stats.blocks == []
    empty = [np.zeros(0, np.float32) for _ in range(3)]
    stats = kernels.apply_fused_ema_adam_list(*([a.copy() for a in empty] for _ in range(5)),
                                           np.array([1], np.int64))
    assert stats.tiling["block_dim"] == 0 and stats.tiling["core_starts"] == [(3, 0)]


def test_wrapper_rejects_bad_input(rng):
    combo = COMBOS[0]
    lists = random_list_inputs(rng, (4, 8), combo, amsgrad=False)
    step = np.array([1], np.int64)
    args = [lists[n] for n in ("grads", "vars", "ms", "vs", "ss")]
    before = [[a.copy() for a in x] for x in args]
    with pytest.raises(ValueError, match="ms has 1 entries, grads has 2"):
        kernels.apply_fused_ema_adam_list(args[0], args[1], args[2][:1], args[3], args[4], step)
    with pytest.raises(ValueError, match=r"vs\[1\] has shape \[3\]"):
        kernels.apply_fused_ema_adam_list(*args[:3], [args[3][0], args[3][1][:3]], args[4], step)
    with pytest.raises(TypeError, match="every tensor of a list has one dtype"):
        kernels.apply_fused_ema_adam_list(*args[:4], [args[4][0], args[4][1].astype(np.float16)],
                                       step)
    with pytest.raises(TypeError, match="model copy needs float32 var"):
        kernels.apply_fused_ema_adam_list(
            [g.astype(np.float16) for g in args[0]], *([a.astype(np.float16) for a in x]
                                                       for x in args[1:]),
            step, model_copies=[np.zeros(4, np.float16), np.zeros(8, np.float16)])
    with pytest.raises(ValueError, match="C-contiguous"):
        kernels.apply_fused_ema_adam_list(*args[:4], [args[4][0], np.zeros(16, np.float32)[::2]],
                                       step)
    with pytest.raises(TypeError, match="step must be an int64"):
        kernels.apply_fused_ema_adam_list(*args, np.array([1.0]))
    for x, y in zip(args, before):  # a refused call writes nothing
        assert all(a.tobytes() == b.tobytes() for a, b in zip(x, y))


def test_check_command_has_passing_list_rows():
    """`python -m ascend_ema_adam check --quick` sweeps the list kernel too: a row per dtype
    combination and option set, every one bit-exact, within precision and at minimal traffic."""
    import io

    from ascend_ema_adam.apps import check

    out = io.StringIO()
    assert check.main(quick=True, out=out) == 0
    text = out.getvalue()
    assert "ApplyFusedEmaAdamList" in text
    rows = [line for line in text.splitlines()
            if line.startswith(tuple(c.name + " " for c in COMBOS))]
    expected = len(check.LIST_OPTIONS) * len(COMBOS)  # 3 option sets since issue 12 (was 2)
    assert len(check.LIST_OPTIONS) == 3
    assert len(rows) == expected and all(line.endswith("PASS") for line in rows)
    assert f"{expected}/{expected} PASS" in text
