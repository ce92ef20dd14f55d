"""ApplyFusedEmaAdamList host tiling: one balanced block split over all tensors of a launch.

Every invariant is checked on the tiling the host really produces (core start table, the
segments each core walks, chunk and UB), for random lists on random core counts and UB sizes,
on every preset, and for the dtype contract against the golden model's."""

import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st

from ascend_ema_adam import _kernels, golden, kernels
from ascend_ema_adam._dtypes import NUMPY_FLOAT_DTYPES
from ascend_ema_adam.apps.check import list_combos

COMBOS = list_combos()
PRESETS = kernels.platforms()
MAX_CORES = 64  # kApplyFusedEmaAdamListMaxCores

#: GPT-2 small's parameter shapes (148 tensors): the 50257x768 embedding beside 768-element
#: biases and norms.
GPT2_SMALL = ([50257 * 768, 1024 * 768]
              + [768, 768, 768 * 2304, 2304, 768 * 768, 768, 768, 768, 768 * 3072, 3072,
                 3072 * 768, 768] * 12
              + [768, 768])


def align_of(combo):
    dtypes = [combo.param, combo.state, combo.grad] + ([combo.copy] if combo.copy else [])
    return 32 // min(np.dtype(d).itemsize for d in dtypes)


def ub_bytes_per_element(combo, amsgrad, grad_scale):
    return _kernels.list_ub_bytes_per_element(
        golden.dtype_name(combo.param), golden.dtype_name(combo.state),
        golden.dtype_name(combo.grad), golden.dtype_name(combo.copy) if combo.copy else "",
        amsgrad, grad_scale)


def tiling_of(numels, combo, *, amsgrad=False, grad_scale=False, platform="cpu", cores=0, ub=0):
    return kernels.compute_list_tiling(numels, combo.param, combo.state, combo.grad, combo.copy,
                                    amsgrad=amsgrad, grad_scale=grad_scale, platform=platform,
                                    vector_core_num=cores, ub_size=ub)


def core_elements(t):
    return [sum(end - begin for _, begin, end in segments) for segments in t["core_segments"]]


def check_list_tiling(t, numels, combo, cores, ub, amsgrad, grad_scale):
    align = align_of(combo)
    n = len(numels)
    blocks = [-(-size // align) for size in numels]
    total = sum(blocks)
    used = min(cores, MAX_CORES, total)
    assert t["align_elems"] == align
    assert t["tiling_key"] == combo.tiling_key
    assert t["tensor_num"] == n and t["buffer_num"] == 2 and t["workspace_size"] == 0
    assert t["block_dim"] == t["used_core_num"] == used

    # The start table: one entry per core plus the sentinel; every position names a block its
    # tensor has (empty tensors are skipped); balanced to one block in the global sequence.
    starts = t["core_starts"]
    assert len(starts) == used + 1 and starts[-1] == (n, 0)
    before = np.concatenate([[0], np.cumsum(blocks, dtype=np.int64)]) if n else np.array([0])
    for tensor, block in starts[:-1]:
        assert tensor < n and block < blocks[tensor]
    first = [int(before[tensor]) + block for tensor, block in starts]
    assert first[0] == 0 and first[-1] == total
    shares = np.diff(first)
    if used:
        assert shares.min() >= 1 and shares.max() - shares.min() <= 1
        assert sorted(first) == first  # monotone

    # The segments the cores walk cover every element exactly once, in list order.
    cursor = {i: 0 for i in range(n)}
    walk = [seg for segments in t["core_segments"] for seg in segments]
    assert [s[:2] for s in walk] == sorted(s[:2] for s in walk)
    for tensor, begin, end in walk:
        assert begin == cursor[tensor] and begin < end <= numels[tensor]
        cursor[tensor] = end
    assert cursor == dict(enumerate(numels))
    # A core's elements: its blocks, less the partial last blocks of the tensors it ends:
    # imbalance <= 1 block plus tails.
    for share, segments, elems in zip(shares, t["core_segments"], core_elements(t)):
        tails = sum(1 for tensor, _, end in segments
                    if end == numels[tensor] and numels[tensor] % align)
        assert share * align - tails * (align - 1) <= elems <= share * align

    # The chunk: whole blocks, within the UB (double-buffered slots + work slots), as large as
    # the UB allows unless the largest core share is smaller.
    chunk = t["chunk_length"]
    per_elem = ub_bytes_per_element(combo, amsgrad, grad_scale)
    if not used:
        assert chunk == 0 and t["ub_bytes_per_core"] == 0 and t["core_segments"] == []
        return
    largest = int(shares.max()) * align
    assert chunk > 0 and chunk % align == 0 and chunk <= largest
    assert t["ub_bytes_per_core"] == chunk * per_elem <= ub
    assert chunk == largest or (chunk + align) * per_elem > ub


sizes = st.one_of(st.just(0), st.integers(1, 40), st.integers(1, 3000), st.integers(1, 10**6))


@given(numels=st.lists(sizes, min_size=0, max_size=40), cores=st.integers(1, 100),
       ub=st.integers(2048, 256 * 1024).map(lambda b: b // 32 * 32),
       combo=st.sampled_from(COMBOS), amsgrad=st.booleans(), grad_scale=st.booleans())
def test_list_tiling_invariants_random(numels, cores, ub, combo, amsgrad, grad_scale):
    t = tiling_of(numels, combo, amsgrad=amsgrad, grad_scale=grad_scale, platform="Ascend910B2",
                  cores=cores, ub=ub)
    check_list_tiling(t, numels, combo, cores, ub, amsgrad, grad_scale)


@pytest.mark.parametrize("platform", PRESETS, ids=lambda p: p["name"])
@pytest.mark.parametrize("combo", COMBOS, ids=lambda c: c.name)
def test_list_tiling_invariants_presets(rng, platform, combo):
    for numels in ([1], [0, 5, 0], [17] * 100, GPT2_SMALL,
                   list(rng.integers(0, 5000, 300)), [3, 2**31 + 5, 0, 9]):
        for amsgrad, grad_scale in itertools.product((False, True), repeat=2):
            t = tiling_of(numels, combo, amsgrad=amsgrad, grad_scale=grad_scale,
                          platform=platform["name"])
            check_list_tiling(t, numels, combo, platform["vector_core_num"], platform["ub_size"],
                              amsgrad, grad_scale)


@pytest.mark.parametrize("combo", [COMBOS[0], COMBOS[9]], ids=lambda c: c.name)
def test_embedding_beside_biases_balances(combo):
    """GPT-2 small on the 48 cores of a 910B2: the cores' element counts differ by at most one
    block (every shape is a multiple of the block), where whole tensors per core would leave one
    core the 38.6M-element embedding, 31% of the model."""
    t = tiling_of(GPT2_SMALL, combo, platform="Ascend910B2")
    elems = core_elements(t)
    assert t["block_dim"] == 48
    assert max(elems) - min(elems) <= align_of(combo)
    assert max(elems) / np.mean(elems) < 1 + 1e-5
    assert max(GPT2_SMALL) / np.mean(elems) > 14  # the whole-tensor split's worst core
    # With odd-sized biases the tails add at most one partial block per tensor a core ends.
    odd = [50257 * 768] + [777, 769, 3] * 40
    t = tiling_of(odd, combo, platform="Ascend910B2")
    elems = core_elements(t)
    tails = max(len(segments) for segments in t["core_segments"])
    assert max(elems) - min(elems) <= align_of(combo) * (1 + tails)


def test_core_count_is_capped():
    t = tiling_of([10**6], COMBOS[0], platform="Ascend910B2", cores=200)
    assert t["block_dim"] == MAX_CORES
    assert tiling_of([10**6], COMBOS[0], platform="Ascend910B2", cores=5)["block_dim"] == 5


@pytest.mark.parametrize("numels", [[], [0], [0, 0, 0]], ids=["none", "one-empty", "all-empty"])
def test_no_elements_no_launch(numels):
    for combo in COMBOS:
        t = tiling_of(numels, combo, platform="Ascend910B2")
        assert t["block_dim"] == 0 and t["chunk_length"] == 0
        assert t["core_starts"] == [(len(numels), 0)] and t["core_segments"] == []


def test_dtype_contract_is_the_golden_models():
    """The host accepts exactly the (P, S, G, C) combinations golden.check_entry_dtypes accepts,
    one distinct key each (1000 + code, apart from the single op's 100-102); every other
    combination is refused with a message naming its dtypes."""
    accepted = set()
    for p, s, g, c in itertools.product(NUMPY_FLOAT_DTYPES, NUMPY_FLOAT_DTYPES, NUMPY_FLOAT_DTYPES,
                                        (None,) + NUMPY_FLOAT_DTYPES):
        one = {d: np.zeros(1, d) for d in NUMPY_FLOAT_DTYPES}
        try:
            golden.check_entry_dtypes(one[g], one[p], one[s], one[s], one[s],
                                      copy=None if c is None else one[c])
            ok = True
        except TypeError:
            ok = False
        names = [golden.dtype_name(d) for d in (p, s, g)]
        copy = "" if c is None else golden.dtype_name(c)
        if ok:
            t = _kernels.compute_list_tiling([10], *names, copy)
            accepted.add((p, s, g, c, t["tiling_key"]))
        else:
            with pytest.raises(ValueError, match="has no kernel for param " + names[0]):
                _kernels.compute_list_tiling([10], *names, copy)
    combos = {(c.param, c.state, c.grad, c.copy, c.tiling_key) for c in COMBOS}
    assert accepted == combos and len(combos) == 13
    keys = [c.tiling_key for c in COMBOS]
    assert len(set(keys)) == 13 and all(1000 <= k < 1100 for k in keys)
