"""The native CPU kernel of ApplyFusedEmaAdamList against golden.emulate_entry, bit for bit: every
dtype combination x AMSGrad x maximize x grad_scale x mode x found_inf, on every instruction set
this CPU runs, over lists mixing empty, tiny, tail-heavy and multi-chunk entries; the list equals
the single op entry by entry; one pool launch per call over balanced chunks; a nonzero found_inf
writes nothing."""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from kernel_cases import CPUS, ENTRY_DTYPES, ENTRY_IDS, ISAS, entry_inputs

from ascend_ema_adam import golden, kernels
from ascend_ema_adam.golden import Extras, Hyper

#: Entries of one launch: empty, single elements, every tail length around a vector and a
#: 64-element grain, several chunks' worth.
SIZES = [0, 1, 3, 16, 17, 31, 33, 63, 0, 64, 65, 127, 1031, 2 * 4096 + 5]
LISTS = ("grads", "vars", "ms", "vs", "ss", "max_vs", "model_copies")
UPDATED = LISTS[1:]


def make_entries(rng, sizes, combo, amsgrad):
    """One launch's lists (a dict by list name; max_vs/model_copies only when used)."""
    p, s, g, c = combo
    keys = dict(zip(LISTS, ("grad", "var", "m", "v", "s", "max_v", "copy")))
    if not amsgrad:
        del keys["max_vs"]
    if c is None:
        del keys["model_copies"]
    lists = {name: [] for name in keys}
    for n in sizes:
        arrays, extra = entry_inputs(rng, n, p, s, g, c, amsgrad)
        for name, key in keys.items():
            lists[name].append(arrays[key] if key in arrays else extra[key])
    return lists


def copied(lists):
    return {name: [a.copy() for a in entries] for name, entries in lists.items()}


def run_list(lists, step, hyper, extras=Extras(), **options):
    """The native list kernel on copies of `lists`; returns (the updated copies, its result)."""
    out = copied(lists)
    result = kernels.apply_fused_ema_adam_list_native(
        out["grads"], out["vars"], out["ms"], out["vs"], out.get("ss"), np.array([step], np.int64),
        hyper, extras, max_vs=out.get("max_vs"), model_copies=out.get("model_copies"), **options)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(out["grads"], lists["grads"])), \
        "grads were written"
    return out, result


def expected_lists(lists, step, hyper, extras=Extras()):
    """golden.emulate_entry for every entry, as lists by name."""
    expected = {name: [] for name in lists if name != "grads"}
    for i in range(len(lists["grads"])):
        out = golden.emulate_entry(
            lists["grads"][i], lists["vars"][i], lists["ms"][i], lists["vs"][i],
            lists["ss"][i] if "ss" in lists else None,
            np.array([step], np.int64), hyper, extras,
            max_v=lists["max_vs"][i] if "max_vs" in lists else None,
            copy=lists["model_copies"][i] if "model_copies" in lists else None)
        for name, value in zip(UPDATED, out.astuple()):
            if name in expected:
                expected[name].append(value)
    return expected


def assert_lists_equal(actual, expected, what="golden.emulate_entry"):
    for name, entries in expected.items():
        for i, (a, e) in enumerate(zip(actual[name], entries)):
            assert golden.bit_equal(a, e), f"{name}[{i}] ({a.size} elements) differs from {what}"


# ------------------------------------------------------------------------------------------
# The golden sweep: every combination of dtypes and options, every instruction set


@pytest.mark.parametrize("found_inf", [None, 0.0], ids=["no-found-inf", "found-inf-0"])
@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("grad_scale", [None, 1024.0, 0.375], ids=["noscale", "scale1024",
                                                                    "scale0.375"])
@pytest.mark.parametrize("maximize", [False, True], ids=["min", "max"])
@pytest.mark.parametrize("amsgrad", [False, True], ids=["adam", "amsgrad"])
@pytest.mark.parametrize("combo", ENTRY_DTYPES, ids=ENTRY_IDS)
@pytest.mark.parametrize("isa", ISAS)
def test_sweep(rng, isa, combo, amsgrad, maximize, grad_scale, mode, found_inf):
    """Two threads, chunks as small as one grain: cuts fall inside entries and chunks span
    several entries; the loops for cache-resident and for streaming launches alike."""
    lists = make_entries(rng, SIZES, combo, amsgrad)
    if grad_scale is not None:  # scaled gradients, as a loss scaler produces them
        lists["grads"] = [(g.astype(np.float32) * grad_scale).astype(g.dtype)
                          for g in lists["grads"]]
    hyper = Hyper(lr=1e-3, ema_decay=0.99, mode=mode, weight_decay=0.01)
    extras = Extras(maximize=maximize, grad_scale=grad_scale, found_inf=found_inf)
    expected = expected_lists(lists, 10, hyper, extras)
    for streaming_bytes in (None, 0):
        actual, result = run_list(lists, 10, hyper, extras, isa=isa, threads=2,
                                  min_elems_per_thread=1, streaming_bytes=streaming_bytes)
        assert result["isa"] == isa and 1 <= result["threads"] <= min(2, CPUS)
        assert_lists_equal(actual, expected, f"golden.emulate_entry (streaming_bytes "
                                             f"{streaming_bytes})")


@pytest.mark.parametrize("tensors", [False, True], ids=["attrs", "lr-decay-tensors"])
@pytest.mark.parametrize("ema", [True, False], ids=["ema", "noema"])
@pytest.mark.parametrize("amsgrad", [False, True], ids=["adam", "amsgrad"])
@pytest.mark.parametrize("combo", ENTRY_DTYPES, ids=ENTRY_IDS)
@pytest.mark.parametrize("isa", ISAS)
def test_no_ema_and_tensor_scalars(rng, isa, combo, amsgrad, ema, tensors):
    """Issue 12: launches without the EMA (no ss list at all: the kernel gets no pointer to it)
    and lr / EMA decay from one-element fp32 tensors (the attributes then hold other numbers),
    bit-exact with golden.emulate_entry (s=None; the tensors' values as attributes), both
    modes, the cache-resident and the streaming loops."""
    lists = make_entries(rng, SIZES, combo, amsgrad)
    if not ema:
        del lists["ss"]
    for mode in (0, 1):
        hyper = Hyper(lr=float(rng.uniform(1e-4, 1e-2)), ema_decay=float(rng.uniform(0.9, 1.0)),
                      mode=mode, weight_decay=0.01)
        extras = Extras(maximize=bool(mode), grad_scale=2.0 if amsgrad else None)
        expected = expected_lists(lists, 7, hyper, extras)
        launch_hyper, scalars = hyper, {}
        if tensors:
            launch_hyper = Hyper(lr=0.5, ema_decay=0.0, mode=mode, weight_decay=0.01)
            scalars = {"lr_tensor": np.float32(hyper.lr),
                       "ema_decay_tensor": np.float32(hyper.ema_decay)}
        for streaming_bytes in (None, 0):
            actual, result = run_list(lists, 7, launch_hyper, extras, isa=isa, threads=2,
                                      min_elems_per_thread=1, streaming_bytes=streaming_bytes,
                                      **scalars)
            assert result["threads"] >= 1
            assert ("ss" in actual) == ema
            assert_lists_equal(actual, expected)


def test_contract_has_thirteen_combinations():
    """The sweep's combinations are exactly the golden contract's (P, S, G, C) tuples."""
    floats = [np.dtype(np.float32), np.dtype(np.float16), golden.COPY_DTYPES[-1]]
    accepted = []
    for p, s, g, c in itertools.product(floats, floats, floats, floats + [None]):
        one = [np.zeros(1, d) for d in (g, p, s, s, s)]
        try:
            golden.check_entry_dtypes(*one, copy=None if c is None else np.zeros(1, c))
        except TypeError:
            continue
        accepted.append((p, s, g, c))
    assert sorted(map(str, accepted)) == sorted(map(str, ENTRY_DTYPES)) and len(accepted) == 13


# ------------------------------------------------------------------------------------------
# NaN / Inf: AMSGrad's max operand order, the prologue, the narrowing


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("target", ["grads", "vars", "ms", "vs", "ss", "max_vs"])
@pytest.mark.parametrize("combo", ENTRY_DTYPES, ids=ENTRY_IDS)
@pytest.mark.parametrize("isa", ISAS)
def test_nan_inf_injection(rng, isa, combo, target, special):
    """A NaN already in max_v is replaced by v' (max_v > v' is false), a NaN v' propagates: the
    vector max must keep the golden's operand order."""
    lists = make_entries(rng, [777, 40, 5], combo, amsgrad=True)
    for entry in lists[target]:
        hit = rng.choice(entry.size, size=max(1, entry.size // 50), replace=False)
        entry[hit] = special
    hyper = Hyper(mode=0, weight_decay=0.02, ema_decay=0.9)
    extras = Extras(maximize=True, grad_scale=2.0)
    expected = expected_lists(lists, 5, hyper, extras)
    for streaming_bytes in (None, 0):
        actual, _ = run_list(lists, 5, hyper, extras, isa=isa, threads=2, min_elems_per_thread=1,
                             streaming_bytes=streaming_bytes)
        assert_lists_equal(actual, expected)


@pytest.mark.parametrize("scale", [0.0, -4.0, np.inf, np.nan, 1e-40, 3e38],
                         ids=["zero", "negative", "inf", "nan", "subnormal", "huge"])
@pytest.mark.parametrize("maximize", [False, True], ids=["min", "max"])
@pytest.mark.parametrize("isa", ISAS)
def test_grad_scale_edge_values(rng, isa, maximize, scale):
    """Division by 0, Inf, NaN, a negative or a subnormal scale: true fp32 division, with
    maximize folded into the divisor's sign exactly as the golden negates first."""
    combo = ENTRY_DTYPES[0]
    lists = make_entries(rng, [100, 37], combo, amsgrad=False)
    lists["grads"][0][:4] = [0.0, -0.0, np.inf, -np.inf]
    hyper = Hyper(mode=1, weight_decay=0.01)
    extras = Extras(maximize=maximize, grad_scale=scale)
    actual, _ = run_list(lists, 3, hyper, extras, isa=isa)
    assert_lists_equal(actual, expected_lists(lists, 3, hyper, extras))


# ------------------------------------------------------------------------------------------
# found_inf: nothing written


@pytest.mark.parametrize("found_inf", [1.0, -2.0, np.inf, np.nan], ids=["one", "neg", "inf", "nan"])
@pytest.mark.parametrize("combo", [ENTRY_DTYPES[0], ENTRY_DTYPES[3], ENTRY_DTYPES[11]],
                         ids=[ENTRY_IDS[0], ENTRY_IDS[3], ENTRY_IDS[11]])
def test_nonzero_found_inf_writes_nothing(rng, combo, found_inf):
    lists = make_entries(rng, [2**17 + 3, 5, 0, 1000], combo, amsgrad=True)
    before = launches = kernels.native_pool_launches()
    actual, result = run_list(lists, 0, Hyper(), Extras(found_inf=found_inf, grad_scale=1.0),
                              threads=2, min_elems_per_thread=1)
    assert result["threads"] == 0 and kernels.native_pool_launches() == launches == before
    for name, entries in lists.items():
        for i, (a, e) in enumerate(zip(actual[name], entries)):
            assert a.tobytes() == e.tobytes(), f"{name}[{i}] was written"


def test_found_inf_negative_zero_updates(rng):
    """-0.0 == 0: the step runs (as the golden and the torch semantics of found_inf say)."""
    lists = make_entries(rng, [300], ENTRY_DTYPES[0], amsgrad=False)
    extras = Extras(found_inf=-0.0)
    actual, result = run_list(lists, 2, Hyper(), extras)
    assert result["threads"] == 1
    assert_lists_equal(actual, expected_lists(lists, 2, Hyper(), extras))
    assert not golden.bit_equal(actual["vars"][0], lists["vars"][0])


# ------------------------------------------------------------------------------------------
# The list equals the single op, entry by entry; large lists through the pool


@pytest.mark.parametrize("combo", [c for c in ENTRY_DTYPES if c[0] == c[1] == c[2] and c[3] is None],
                         ids=lambda c: golden.dtype_name(c[0]))
@pytest.mark.parametrize("isa", ISAS)
def test_list_equals_single_op_per_entry(rng, isa, combo):
    sizes = [0, 1, 7, 64, 1000, 2**20 + 9, 3, 2**16 - 1]
    lists = make_entries(rng, sizes, combo, amsgrad=False)
    hyper = Hyper(lr=2e-3, ema_decay=0.999, mode=0, weight_decay=0.03)
    step = np.array([123], np.int64)
    actual, result = run_list(lists, 123, hyper, isa=isa, threads=2)
    assert 1 <= result["threads"] <= min(2, CPUS)
    single = copied(lists)
    for i in range(len(sizes)):
        kernels.apply_fused_ema_adam_native(single["grads"][i], single["vars"][i], single["ms"][i],
                                         single["vs"][i], single["ss"][i], step, hyper, isa=isa)
    assert_lists_equal(actual, {k: v for k, v in single.items() if k != "grads"},
                       "the single op")


@pytest.mark.parametrize("combo", [ENTRY_DTYPES[1], ENTRY_DTYPES[7], ENTRY_DTYPES[12]],
                         ids=[ENTRY_IDS[1], ENTRY_IDS[7], ENTRY_IDS[12]])
def test_large_list_default_threshold(rng, combo):
    """> 2^21 elements with the default small-launch threshold: the pool takes part."""
    lists = make_entries(rng, [2**21 + 3, 17, 2**19, 0, 768], combo, amsgrad=True)
    hyper = Hyper(mode=1, weight_decay=0.05, ema_decay=0.9999)
    extras = Extras(maximize=False, grad_scale=65536.0)
    actual, result = run_list(lists, 10000, hyper, extras)
    assert 1 <= result["threads"] <= CPUS
    assert_lists_equal(actual, expected_lists(lists, 10000, hyper, extras))


def test_trajectory_with_copies_and_amsgrad(rng):
    """60 in-place steps of fp32 masters with bf16 copies, AMSGrad and a loss scale equal the
    golden's trajectory at every step."""
    combo = ENTRY_DTYPES[3]  # fp32 master, fp32 state, bf16 grads, bf16 copies
    sizes = [1000, 33, 4096]
    lists = make_entries(rng, sizes, combo, amsgrad=True)
    for name in ("ms", "vs", "max_vs"):
        for a in lists[name]:
            a[:] = 0
    hyper = Hyper(lr=1e-2, ema_decay=0.99, mode=1, weight_decay=0.01)
    expected = copied(lists)
    for step in range(1, 61):
        grads = [rng.normal(0, 0.01 * 512, n).astype(combo[2]) for n in sizes]
        extras = Extras(grad_scale=512.0)
        lists["grads"] = grads
        kernels.apply_fused_ema_adam_list_native(
            grads, lists["vars"], lists["ms"], lists["vs"], lists["ss"],
            np.array([step], np.int64), hyper, extras, max_vs=lists["max_vs"],
            model_copies=lists["model_copies"], threads=2, min_elems_per_thread=256)
        expected["grads"] = grads
        expected.update(expected_lists(expected, step, hyper, extras))
        assert_lists_equal(lists, {k: v for k, v in expected.items() if k != "grads"})


# ------------------------------------------------------------------------------------------
# One pool launch per call, balanced chunks


def test_one_pool_launch_per_call(rng):
    """300 entries on 2 threads: one pool launch for the whole list (the single op on the same
    entries launches once per entry)."""
    sizes = [int(n) for n in rng.integers(129, 4096, 300)]  # > 1 grain: the single op launches
    lists = make_entries(rng, sizes, ENTRY_DTYPES[0], amsgrad=False)
    before = kernels.native_pool_launches()
    _, result = run_list(lists, 3, Hyper(), threads=2, min_elems_per_thread=1)
    assert kernels.native_pool_launches() - before == 1
    assert 1 <= result["threads"] <= min(2, CPUS)
    before = kernels.native_pool_launches()
    step = np.array([3], np.int64)
    for i in range(len(sizes)):
        kernels.apply_fused_ema_adam_native(lists["grads"][i], lists["vars"][i], lists["ms"][i],
                                         lists["vs"][i], lists["ss"][i], step, threads=2,
                                         min_elems_per_thread=1)
    assert kernels.native_pool_launches() - before == len(sizes)


def test_one_thread_no_pool_launch(rng):
    lists = make_entries(rng, [5000, 3, 100], ENTRY_DTYPES[0], amsgrad=False)
    before = kernels.native_pool_launches()
    _, result = run_list(lists, 3, Hyper(), threads=1, min_elems_per_thread=1)
    assert result["threads"] == 1 and kernels.native_pool_launches() == before


def test_empty_lists_run_nothing(rng):
    before = kernels.native_pool_launches()
    for sizes in ([], [0], [0, 0, 0]):
        lists = make_entries(rng, sizes, ENTRY_DTYPES[0], amsgrad=False)
        _, result = run_list(lists, 1, Hyper(), threads=2, min_elems_per_thread=1)
        assert result["threads"] == 0
    assert kernels.native_pool_launches() == before


GPT2_SMALL = ([50257 * 768, 1024 * 768]
              + [768, 768, 768 * 2304, 2304, 768 * 768, 768, 768, 768, 768 * 3072, 3072,
                 3072 * 768, 768] * 12 + [768, 768])


def check_chunks(numels, threads):
    """The chunks cover every element once, in order; cuts fall on 64-element grains of their
    entry (or its end); all but the last chunk are within one grain of the target size."""
    chunks = kernels.native_list_chunks(numels, threads)
    total = sum(numels)
    starts = np.concatenate([[0], np.cumsum(numels)])
    position = 0
    for tensor, offset, count in chunks:
        assert count > 0 and 0 <= offset < numels[tensor]
        assert starts[tensor] + offset == position, "chunks must tile the elements in order"
        assert offset % 64 == 0, "a chunk starts on a grain of its entry"
        position += count
    assert position == total
    if total == 0:
        assert chunks == []
    elif threads == 1:
        assert chunks == [(next(i for i, n in enumerate(numels) if n), 0, total)]
    else:
        target = max(64, -(-(total // (threads * 16)) // 64) * 64)
        # ceil(total / target) cuts, less one when the last cut moved to the end
        assert len(chunks) in (-(-total // target) - 1, -(-total // target))
        sizes = [c for _, _, c in chunks]
        assert all(target - 63 <= c <= target + 63 for c in sizes[:-1]), (target, sizes)
        assert sizes[-1] <= target + 63
    return chunks


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_chunk_balance(rng, threads):
    check_chunks(GPT2_SMALL, threads)
    check_chunks([2048] * 2048, threads)
    check_chunks([0, 0, 5, 0, 1, 70, 0], threads)
    check_chunks([], threads)
    for _ in range(20):
        sizes = [int(n) for n in rng.integers(0, 5000, rng.integers(1, 200))]
        sizes[int(rng.integers(len(sizes)))] = int(rng.integers(0, 2**21))
        check_chunks(sizes, threads)


def test_gpt2_chunks_span_entries():
    """The GPT-2 list is cut into 32 chunks for 2 threads, not per tensor: a chunk holds many
    small entries, the embedding is split over several chunks."""
    chunks = check_chunks(GPT2_SMALL, 2)
    assert len(chunks) == 32
    assert sum(1 for t, _, _ in chunks if t == 0) >= 8  # the 38.6M-element embedding
    ends = np.cumsum(GPT2_SMALL)
    starts = ends - np.array(GPT2_SMALL)
    last_entry = [int(np.searchsorted(ends, starts[t] + offset + count - 1, side="right"))
                  for t, offset, count in chunks]
    assert max(last - t for last, (t, _, _) in zip(last_entry, chunks)) >= 2


# ------------------------------------------------------------------------------------------
# Property test: any list, dtypes, options, instruction set and thread split


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=40)
@given(data=st.data(),
       sizes=st.lists(st.integers(0, 300), min_size=0, max_size=12),
       combo=st.sampled_from(ENTRY_DTYPES), amsgrad=st.booleans(), maximize=st.booleans(),
       grad_scale=st.sampled_from([None, 1.0, 8.0, 0.125, 3.0]), mode=st.sampled_from([0, 1]),
       bias=st.booleans(), step=st.integers(1, 10**6),
       lr=st.floats(0.0, 1.0), decay=st.floats(0.0, 1.0),
       beta1=st.floats(0.0, 0.99999), beta2=st.floats(0.0, 0.99999),
       eps=st.floats(0.0, 1e-2), wd=st.floats(0.0, 1.0),
       isa=st.sampled_from(ISAS), threads=st.integers(1, 3),
       min_elems=st.sampled_from([1, 64, 1000]), streaming=st.booleans())
def test_property_bit_exact(data, sizes, combo, amsgrad, maximize, grad_scale, mode, bias, step,
                            lr, decay, beta1, beta2, eps, wd, isa, threads, min_elems, streaming):
    r = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    lists = make_entries(r, sizes, combo, amsgrad)
    hyper = Hyper(lr=lr, ema_decay=decay, beta1=beta1, beta2=beta2, eps=eps, mode=mode,
                  bias_correction=bias, weight_decay=wd)
    extras = Extras(maximize=maximize, grad_scale=grad_scale)
    actual, _ = run_list(lists, step, hyper, extras, isa=isa, threads=threads,
                         min_elems_per_thread=min_elems, streaming_bytes=0 if streaming else None)
    assert_lists_equal(actual, expected_lists(lists, step, hyper, extras))


# ------------------------------------------------------------------------------------------
# The Python wrapper's checks


def test_wrapper_rejects_bad_input(rng):
    lists = make_entries(rng, [10, 4], ENTRY_DTYPES[0], amsgrad=False)
    step = np.array([1], np.int64)
    args = [lists[name] for name in LISTS[:5]]
    with pytest.raises(ValueError, match="ms has 1 entries, grads has 2"):
        kernels.apply_fused_ema_adam_list_native(args[0], args[1], args[2][:1], args[3], args[4],
                                              step)
    with pytest.raises(ValueError, match=r"vs\[1\] has shape \[3\], vars\[1\] has \[4\]"):
        kernels.apply_fused_ema_adam_list_native(*args[:3], [args[3][0], args[3][1][:3]], args[4],
                                              step)
    with pytest.raises(TypeError, match="state dtype must be var's"):
        kernels.apply_fused_ema_adam_list_native(*args[:2], [m.astype(np.float16) for m in args[2]],
                                              *args[3:], step)
    mixed = [[a[0], a[1].astype(np.float16)] for a in args]  # entry 1 all fp16: valid alone
    with pytest.raises(TypeError, match="every tensor of a list has one dtype"):
        kernels.apply_fused_ema_adam_list_native(*mixed, step)
    with pytest.raises(ValueError, match="grad_scale must have one element"):
        kernels.apply_fused_ema_adam_list_native(*args, step, Hyper(),
                                              Extras(grad_scale=np.ones(2, np.float32)))
    with pytest.raises(ValueError, match="instruction set 'sse9'"):
        kernels.apply_fused_ema_adam_list_native(*args, step, isa="sse9")
    frozen = args[1][0].copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"vars\[0\] must be writeable"):
        kernels.apply_fused_ema_adam_list_native(args[0], [frozen, args[1][1]], *args[2:], step)
