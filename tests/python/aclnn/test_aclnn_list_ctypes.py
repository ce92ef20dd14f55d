"""aclnnApplyFusedEmaAdamList through ctypes, on both CPU kernels (the native one and the AscendC
list kernel on the twin): every dtype combination of the contract with AMSGrad, maximize, a grad
scale and found_inf, over entries of mixed sizes (empty, one element, tails), strided views,
several steps on a stream: bit for bit the golden's emulate_entry."""

import ctypes

import numpy as np
import pytest

from aclnn_ctypes import ACLNN_SUCCESS, Tensor, TensorList, open_acl, stream  # noqa: F401
from ascend_ema_adam import golden
from ascend_ema_adam._dtypes import by_name
from ascend_ema_adam.apps.check import random_inputs
from ascend_ema_adam.golden import Extras, Hyper

KERNELS = ["native", "twin"]
F32, F16, BF16 = (by_name(n).numpy for n in ("float32", "float16", "bfloat16"))
# (P, S, G, C): the contract's 13 combinations, C None without model copies
COMBOS = [(F32, F32, F32, None), (F32, F32, F16, F16), (F32, F32, F32, F16),
          (F32, F32, BF16, BF16), (F32, F32, F32, BF16), (F16, F16, F16, None),
          (F16, F16, F32, None), (F16, F32, F16, None), (F16, F32, F32, None),
          (BF16, BF16, BF16, None), (BF16, BF16, F32, None), (BF16, F32, BF16, None),
          (BF16, F32, F32, None)]
COMBO_IDS = ["-".join(np.dtype(d).name for d in c if d is not None) for c in COMBOS]
SHAPES = [(0,), (1,), (7,), (33,), (3, 5), (257,), (2, 0, 3)]
LISTS = ("grads", "vars", "ms", "vs", "ss", "max_vs", "copies")


@pytest.fixture(scope="module")
def acl():
    yield from open_acl()


def make_entries(rng, shapes, p, s, g, c, amsgrad):
    """Per list the arrays of every entry (None for an absent optional list, passed as an empty
    list)."""
    out = {name: [] for name in LISTS}
    for shape in shapes:
        grad, var, m, v, ema = random_inputs(rng, shape, np.float32)
        out["grads"].append(grad.astype(g))
        out["vars"].append(var.astype(p))
        for name, x in (("ms", m), ("vs", v), ("ss", ema)):
            out[name].append(x.astype(s))
        out["max_vs"].append((v * rng.uniform(0.5, 2.0, shape)).astype(s))
        out["copies"].append(np.zeros(shape, c) if c is not None else None)
    if not amsgrad:
        out["max_vs"] = None
    if c is None:
        out["copies"] = None
    return out


def run(acl, stream, entries, step, h: Hyper, extras: Extras):
    """Both phases of the list API on ``stream`` and a synchronisation (arrays updated in
    place); returns phase 1's workspace size."""
    lists = [TensorList(acl, entries[n] if entries[n] is not None else []) for n in LISTS]
    scalars = [Tensor(acl, np.array([step], np.int64))]
    for value in (extras.grad_scale, extras.found_inf):
        scalars.append(Tensor(acl, np.array([value], np.float32)) if value is not None else None)
    try:
        ws, executor = ctypes.c_uint64(0), ctypes.c_void_p()
        status = acl.aclnnApplyFusedEmaAdamListGetWorkspaceSize(
            *[x.handle if x is not None else None for x in lists + scalars], h.lr, h.ema_decay,
            h.beta1, h.beta2, h.eps, h.mode, h.bias_correction, h.weight_decay, extras.maximize,
            ctypes.byref(ws), ctypes.byref(executor))
        assert status == ACLNN_SUCCESS, acl.aclGetRecentErrMsg()
        workspace = np.empty(max(ws.value, 1), np.uint8)
        assert acl.aclnnApplyFusedEmaAdamList(workspace.ctypes.data, ws.value, executor,
                                              stream) == 0
        assert acl.aclrtSynchronizeStream(stream) == 0, acl.aclGetRecentErrMsg()
        return ws.value
    finally:
        for x in lists + scalars:
            if x is not None:
                x.close()


def expected_after(entries, step, h, extras):
    """The golden's new arrays per list, entry by entry."""
    out = {name: [] for name in LISTS}
    for i in range(len(entries["vars"])):
        args = [entries[n][i] for n in ("grads", "vars", "ms", "vs", "ss")]
        optional = {k: None if entries[n] is None else entries[n][i]
                    for k, n in (("max_v", "max_vs"), ("copy", "copies"))}
        got = golden.emulate_entry(*args, np.array([step]), h, extras, **optional)
        for name, value in zip(LISTS[1:], got.astuple()):
            out[name].append(None if value is None else np.array(value, copy=True))
    return out


def assert_matches(entries, expected):
    for name in LISTS[1:]:
        if entries[name] is None:
            continue
        for i, (actual, want) in enumerate(zip(entries[name], expected[name])):
            assert golden.bit_equal(actual, want), f"{name}[{i}] differs from the golden"


OPTIONS = {
    "plain": Extras(),
    "maximize+scale": Extras(maximize=True, grad_scale=1024.0),
    "found_inf=0": Extras(grad_scale=0.5, found_inf=0.0),
}


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("combo", COMBOS, ids=COMBO_IDS)
def test_every_combination_matches_golden(acl, stream, rng, monkeypatch, kernel, combo):
    """Two steps per option set (with and without AMSGrad, both modes), on mixed shapes."""
    monkeypatch.setenv("ASCEND_EMA_ADAM_CPU_KERNEL", kernel)
    for k, (option, extras) in enumerate(OPTIONS.items()):
        amsgrad = k % 2 == 1 or option == "found_inf=0"
        entries = make_entries(rng, SHAPES, *combo, amsgrad=amsgrad)
        h = Hyper(lr=0.01, ema_decay=0.99, weight_decay=0.05, mode=k % 2)
        for step in (1, 2):
            expected = expected_after(entries, step, h, extras)
            run(acl, stream, entries, step, h, extras)
            assert_matches(entries, expected)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("found_inf", [1.0, float("nan"), -0.0])
def test_found_inf_writes_nothing_or_everything(acl, stream, rng, monkeypatch, kernel, found_inf):
    """Nonzero (NaN too): every byte as it was, strided views' gaps included; -0.0 is zero."""
    monkeypatch.setenv("ASCEND_EMA_ADAM_CPU_KERNEL", kernel)
    entries = make_entries(rng, SHAPES, F32, F32, BF16, BF16, amsgrad=True)
    big = np.asarray(random_inputs(rng, (6, 40), np.float32)[1])
    entries["vars"][4] = big[::2, 3:8]  # strided [3, 5] view: staged through the workspace
    before = {n: [a.copy() for a in entries[n]] for n in LISTS}
    big_before = big.copy()
    extras = Extras(found_inf=found_inf)
    expected = expected_after(entries, 3, Hyper(), extras)
    assert run(acl, stream, entries, 3, Hyper(), extras) > 0
    if found_inf == 0:
        assert_matches(entries, expected)
    else:
        for n in LISTS:
            assert all(np.array_equal(a.view(np.uint8), b.view(np.uint8))
                       for a, b in zip(entries[n], before[n])), n
        assert np.array_equal(big, big_before)


@pytest.mark.parametrize("kernel", KERNELS)
def test_strided_views_match_golden_and_keep_their_gaps(acl, stream, rng, monkeypatch, kernel):
    """Entry 1 of every list: rows two apart from an offset; entry 2: every third element; each
    inside a larger array of its own, whose other bytes stay as they were."""
    monkeypatch.setenv("ASCEND_EMA_ADAM_CPU_KERNEL", kernel)
    entries = make_entries(rng, [(4,), (3, 5), (17,)], F32, F32, F32, None, amsgrad=False)
    picks = {1: (lambda b: b[1:7:2, 2:7]), 2: (lambda b: b.reshape(-1)[5:56:3])}
    bases = []
    for k, n in enumerate(LISTS[:5]):
        for i, pick in picks.items():
            base = np.abs(np.asarray(random_inputs(rng, (9, 24), np.float32)[k]))
            pick(base)[...] = entries[n][i]
            entries[n][i] = pick(base)
            bases.append((n, base, base.copy(), pick))
    h = Hyper(lr=0.02, weight_decay=0.1, mode=0)
    expected = expected_after(entries, 5, h, Extras())
    assert run(acl, stream, entries, 5, h, Extras()) > 0
    assert_matches(entries, expected)
    for n, base, snapshot, pick in bases:
        touched = np.zeros(base.shape, bool)
        pick(touched)[...] = True
        assert np.array_equal(base[~touched], snapshot[~touched]), f"{n}: a gap changed"
