"""aclnnApplyFusedEmaAdamListV2 through ctypes, on both CPU kernels: an empty ssRef (no EMA) and
lrTensorOptional / emaDecayTensorOptional tensors, bit for bit the golden's emulate_entry (s=None;
the tensors' values as attributes); a NULL list is refused by both versions (CANN's generated
aclnn null-checks every DYNAMIC parameter) and V1 refuses an empty ssRef; bad lr / emaDecay tensors
are refused with their names and nothing written; V1 and V2 executors are kept apart."""

import ctypes

import numpy as np
import pytest
from test_aclnn_list_ctypes import (COMBO_IDS, COMBOS, KERNELS, LISTS, SHAPES, assert_matches,
                                    expected_after, make_entries)

from aclnn_ctypes import ACLNN_SUCCESS, Tensor, TensorList, open_acl, stream  # noqa: F401
from ascend_ema_adam.golden import Extras, Hyper

ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002


@pytest.fixture(scope="module")
def acl():
    yield from open_acl()


def phase1(acl, entries, step, h, extras, *, lr=None, ema_decay=None, null=(), version=2):
    """Phase 1 of V2 (or V1); a list whose entries are None is passed as an empty list, one named
    in ``null`` as NULL. Returns (status, workspace size, executor, the handles to close)."""
    lists = [None if n in null else TensorList(acl, entries[n] if entries[n] is not None else [])
             for n in LISTS]
    scalars = [Tensor(acl, np.array([step], np.int64))]
    values = (extras.grad_scale, extras.found_inf) + ((lr, ema_decay) if version == 2 else ())
    for value in values:
        if value is None or isinstance(value, np.ndarray):
            scalars.append(None if value is None else Tensor(acl, value))
        else:
            scalars.append(Tensor(acl, np.array([value], np.float32)))
    ws, executor = ctypes.c_uint64(0), ctypes.c_void_p()
    fn = (acl.aclnnApplyFusedEmaAdamListV2GetWorkspaceSize if version == 2
          else acl.aclnnApplyFusedEmaAdamListGetWorkspaceSize)
    status = fn(*[x.handle if x is not None else None for x in lists + scalars], h.lr,
                h.ema_decay, h.beta1, h.beta2, h.eps, h.mode, h.bias_correction, h.weight_decay,
                extras.maximize, ctypes.byref(ws), ctypes.byref(executor))
    return status, ws.value, executor, [x for x in lists + scalars if x is not None]


def run_v2(acl, stream, entries, step, h, extras, **kwargs):
    status, ws, executor, handles = phase1(acl, entries, step, h, extras, **kwargs)
    try:
        assert status == ACLNN_SUCCESS, acl.aclGetRecentErrMsg()
        workspace = np.empty(max(ws, 1), np.uint8)
        assert acl.aclnnApplyFusedEmaAdamListV2(workspace.ctypes.data, ws, executor,
                                                stream) == 0
        assert acl.aclrtSynchronizeStream(stream) == 0, acl.aclGetRecentErrMsg()
    finally:
        for x in handles:
            x.close()


def expected_without_ema(entries, step, h, extras):
    """The golden with s=None (entries["ss"] is None)."""
    return expected_after(dict(entries, ss=[None] * len(entries["vars"])), step, h, extras)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("combo", COMBOS, ids=COMBO_IDS)
def test_no_ema_and_tensor_scalars_match_golden(acl, stream, rng, monkeypatch, kernel, combo):
    """Per combination: an empty ssRef (with and without AMSGrad), and lr/decay tensors with and
    without the EMA (the attributes then hold other numbers), two steps each."""
    monkeypatch.setenv("ASCEND_EMA_ADAM_CPU_KERNEL", kernel)
    h = Hyper(lr=float(rng.uniform(1e-3, 1e-2)), ema_decay=float(rng.uniform(0.9, 0.999)),
              weight_decay=0.05, mode=int(rng.integers(0, 2)))
    decoy = Hyper(lr=0.5, ema_decay=0.0, weight_decay=0.05, mode=h.mode)
    scalars = dict(lr=np.float32(h.lr), ema_decay=np.float32(h.ema_decay))
    cases = [("empty-ss", False, {}, h), ("empty-ss-amsgrad", False, {}, h),
             ("tensors", True, scalars, decoy), ("tensors-no-ema", False, scalars, decoy)]
    for name, ema, kwargs, launch_hyper in cases:
        entries = make_entries(rng, SHAPES, *combo, amsgrad=name != "empty-ss")
        if not ema:
            entries["ss"] = None
        extras = Extras(maximize=True, grad_scale=64.0)
        for step in (1, 2):
            expected = (expected_after(entries, step, h, extras) if ema
                        else expected_without_ema(entries, step, h, extras))
            run_v2(acl, stream, entries, step, launch_hyper, extras, **kwargs)
            assert_matches(entries, expected)


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("null", ["ss", "max_vs", "copies"])
def test_null_lists_refused_nothing_written(acl, rng, version, null):
    """A NULL list is 161001 in both versions, whether the list would be used or not: an absent
    list is an empty one."""
    entries = make_entries(rng, SHAPES, np.float32, np.float32, np.float32, None, amsgrad=False)
    before = {n: [a.copy() for a in entries[n]] for n in LISTS if entries[n] is not None}
    status, ws, executor, handles = phase1(acl, entries, 1, Hyper(), Extras(), null=(null,),
                                           version=version)
    for x in handles:
        x.close()
    assert status == ACLNN_ERR_PARAM_NULLPTR
    name = {"ss": "ssRef", "max_vs": "maxVsRef", "copies": "modelCopiesRef"}[null]
    assert acl.aclGetRecentErrMsg() == f"aclnnApplyFusedEmaAdamList{'V2' if version == 2 else ''}" \
        f"GetWorkspaceSize: {name} is null".encode()
    assert executor.value is None and ws == 0
    for n, arrays in before.items():
        assert all(np.array_equal(a, b) for a, b in zip(entries[n], arrays)), n


def test_v1_still_requires_ss(acl, rng):
    entries = make_entries(rng, SHAPES, np.float32, np.float32, np.float32, None, amsgrad=False)
    entries["ss"] = None
    status, _, _, handles = phase1(acl, entries, 1, Hyper(), Extras(), version=1)
    for x in handles:
        x.close()
    assert status == ACLNN_ERR_PARAM_INVALID
    assert b"ssRef has 0 tensors but grads has" in acl.aclGetRecentErrMsg()


BAD = [
    ("lr-fp16", dict(lr=np.array([1e-3], np.float16)), rb"lrTensorOptional has dtype ACL_FLOAT16"),
    ("decay-int64", dict(ema_decay=np.array([1], np.int64)), rb"emaDecayTensorOptional has dtype ACL_INT64"),
    ("lr-two", dict(lr=np.array([1e-3, 1e-3], np.float32)),
     rb"lrTensorOptional has shape \[2\] \(2 elements\), expected exactly one element"),
    ("decay-rank2-empty", dict(ema_decay=np.zeros((1, 0), np.float32)),
     rb"emaDecayTensorOptional has shape \[1,0\] \(0 elements\)"),
]


@pytest.mark.parametrize("kwargs,error", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_scalar_tensors_refused_nothing_written(acl, rng, kwargs, error):
    import re
    entries = make_entries(rng, SHAPES, np.float32, np.float32, np.float32, None, amsgrad=True)
    before = {n: [a.copy() for a in entries[n]] for n in LISTS if entries[n] is not None}
    status, ws, executor, handles = phase1(acl, entries, 3, Hyper(), Extras(), **kwargs)
    for x in handles:
        x.close()
    assert status == ACLNN_ERR_PARAM_INVALID
    assert re.search(error, acl.aclGetRecentErrMsg())
    assert executor.value is None and ws == 0
    for n, arrays in before.items():
        assert all(np.array_equal(a.view(np.uint8), b.view(np.uint8))
                   for a, b in zip(entries[n], arrays)), n


def test_lr_tensor_aliasing_an_updated_tensor_refused(acl, rng):
    entries = make_entries(rng, SHAPES, np.float32, np.float32, np.float32, None, amsgrad=False)
    alias = entries["vars"][3][:1]  # the lr tensor is element 0 of varsRef[3]
    status, _, _, handles = phase1(acl, entries, 3, Hyper(), Extras(), lr=alias)
    for x in handles:
        x.close()
    assert status == ACLNN_ERR_PARAM_INVALID
    assert b"varsRef[3] and lrTensorOptional overlap in memory" in acl.aclGetRecentErrMsg()


def test_executors_of_v1_and_v2_are_kept_apart(acl, stream, rng):
    """A V2 executor is refused by V1's phase 2 (and vice versa), and stays usable."""
    entries = make_entries(rng, SHAPES, np.float32, np.float32, np.float32, None, amsgrad=False)
    status, ws, executor, handles = phase1(acl, entries, 1, Hyper(), Extras())
    try:
        assert status == ACLNN_SUCCESS
        assert acl.aclnnApplyFusedEmaAdamList(None, ws, executor, stream) != 0
        assert b"aclnnApplyFusedEmaAdamListV2" in acl.aclGetRecentErrMsg()
        expected = expected_after(entries, 1, Hyper(), Extras())
        assert acl.aclnnApplyFusedEmaAdamListV2(None, ws, executor, stream) == 0
        assert acl.aclrtSynchronizeStream(stream) == 0
        assert_matches(entries, expected)
    finally:
        for x in handles:
            x.close()
