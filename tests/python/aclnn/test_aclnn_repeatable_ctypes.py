"""Repeatable executors and address updates through ctypes (CANN's aclSetAclOpExecutorRepeatable and
aclSet*TensorAddr, docs/ACLNN.md): one phase 1 of aclnnApplyFusedEmaAdamListV2, then several phase 2s
whose step, lr and decay tensors change in place and whose tensors move to new memory (gradients
each step, as after zero_grad(set_to_none=True); the state lists by their output irIndex), on both
CPU kernels, bit for bit the golden's; the old memory is never read or written again. Then the
refusals: CANN's status codes, messages, and nothing written."""

import ctypes

import numpy as np
import pytest
from test_aclnn_list_ctypes import (COMBO_IDS, COMBOS, KERNELS, LISTS, assert_matches,
                                    expected_after, make_entries)

from aclnn_ctypes import ACLNN_SUCCESS, Tensor, TensorList, open_acl, stream  # noqa: F401
from ascend_ema_adam import golden
from ascend_ema_adam.apps.check import random_inputs
from ascend_ema_adam.golden import Extras, Hyper

ACLNN_ERR_PARAM_INVALID = 161002
ACLNN_ERR_INNER = 561000
ACLNN_ERR_INNER_NULLPTR = 561103
SHAPES = [(0,), (1,), (7,), (33,), (3, 5), (257,)]
# The OpDef's outputs, as LISTS names, in declaration order (op_host's
# kApplyFusedEmaAdamListOutputOrder): the output irIndex of each in-place list.
OUTPUT_ORDER = ("vars", "ss", "max_vs", "copies", "ms", "vs")


@pytest.fixture(scope="module")
def acl():
    yield from open_acl()


def placeholders(entries, name):
    """An absent optional list as CANN's stack needs it (docs/ACLNN.md, "Absent lists"): one
    zero-element array per entry, of the state's dtype (ss, max_vs) or the parameters' (copies)."""
    owner = "vars" if name == "copies" else "ms"
    return [np.empty((0,), entries[owner][0].dtype) for _ in entries["grads"]]


class Launch:
    """One phase 1 of V2 over ``entries`` with step / lr / emaDecay tensors whose values change in
    place; the executor made repeatable. ``run`` queues phase 2 on ``stream``. ``absent``: how
    an absent optional list is passed, "empty" or "placeholders"."""

    def __init__(self, acl, entries, h, extras, repeatable=True, absent="empty"):
        self.acl, self.entries, self.h, self.extras = acl, entries, h, extras
        self.lists = {n: TensorList(acl, entries[n] if entries[n] is not None else
                                    placeholders(entries, n) if absent == "placeholders" else [])
                      for n in LISTS}
        self.step = np.array([1], np.int64)
        self.lr = np.array([h.lr], np.float32)
        self.decay = np.array([h.ema_decay], np.float32)
        scale = (np.array([extras.grad_scale], np.float32) if extras.grad_scale is not None
                 else None)
        self.scalars = [Tensor(acl, self.step)] + [
            Tensor(acl, x) if x is not None else None for x in (scale, None, self.lr, self.decay)]
        ws, executor = ctypes.c_uint64(0), ctypes.c_void_p()
        # the attributes hold other numbers: the tensors must be what the kernel reads
        status = acl.aclnnApplyFusedEmaAdamListV2GetWorkspaceSize(
            *[x.handle for x in self.lists.values()],
            *[x.handle if x is not None else None for x in self.scalars], 0.5, 0.0, h.beta1,
            h.beta2, h.eps, h.mode, h.bias_correction, h.weight_decay, extras.maximize,
            ctypes.byref(ws), ctypes.byref(executor))
        assert status == ACLNN_SUCCESS, acl.aclGetRecentErrMsg()
        self.ws, self.executor = ws.value, executor
        self.workspace = np.empty(max(self.ws, 1), np.uint8)
        if repeatable:
            assert acl.aclSetAclOpExecutorRepeatable(executor) == ACLNN_SUCCESS

    def run(self, stream):
        return self.acl.aclnnApplyFusedEmaAdamListV2(self.workspace.ctypes.data, self.ws,
                                                     self.executor, stream)

    def close(self, destroy=True):
        if destroy:
            assert self.acl.aclDestroyAclOpExecutor(self.executor) == ACLNN_SUCCESS
        for x in list(self.lists.values()) + [x for x in self.scalars if x is not None]:
            x.close()


def moved(entries, name, i, fill):
    """Entry i of list ``name`` copied to new memory (the same view of a new base); the old
    memory is filled with ``fill`` so a read of it would show. Returns the new base's address."""
    old = entries[name][i]
    base = old
    while isinstance(base.base, np.ndarray):
        base = base.base
    new_base = base.copy()
    offset = old.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    new = np.lib.stride_tricks.as_strided(new_base.reshape(-1).view(np.uint8)[offset:]
                                          .view(old.dtype), old.shape, old.strides)
    new[...] = old
    base[...] = fill
    entries[name][i] = new
    return new_base.ctypes.data


def strided(entries, name, i, rng):
    """Entry i of list ``name`` as every other element of a twice-as-long array."""
    x = entries[name][i]
    base = np.full((2 * x.size,), np.nan, x.dtype)
    view = base[::2].reshape(x.shape) if x.size else base[:0].reshape(x.shape)
    view[...] = x
    entries[name][i] = view


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("combo", COMBOS[:1] + COMBOS[2:3] + COMBOS[6:8] + COMBOS[10:11],
                         ids=COMBO_IDS[:1] + COMBO_IDS[2:3] + COMBO_IDS[6:8] + COMBO_IDS[10:11])
def test_repeated_runs_with_moved_tensors_match_golden(acl, stream, rng, monkeypatch, kernel,
                                                       combo):
    """Four phase 2s of one executor: steps 1..4 and a new lr / decay each time (the tensors'
    values), new gradient memory every step, and one state list moved per step by its output
    irIndex (staged strided views among them): each step bit for bit the golden's."""
    monkeypatch.setenv("ASCEND_EMA_ADAM_CPU_KERNEL", kernel)
    entries = make_entries(rng, SHAPES, *combo, amsgrad=True)
    for name in ("grads", "vars", "ms"):
        strided(entries, name, 3, rng)
    h = Hyper(lr=0.01, ema_decay=0.99, weight_decay=0.05, mode=int(rng.integers(0, 2)))
    extras = Extras(maximize=bool(rng.integers(0, 2)), grad_scale=256.0)
    launch = Launch(acl, entries, h, extras)
    try:
        movable = [n for n in OUTPUT_ORDER if entries[n] is not None]
        for step in range(1, 5):
            h = Hyper(lr=float(rng.uniform(1e-3, 1e-2)),
                      ema_decay=float(rng.uniform(0.9, 0.999)), weight_decay=0.05, mode=h.mode)
            launch.step[0], launch.lr[0], launch.decay[0] = step, h.lr, h.ema_decay
            if step > 1:
                grads = launch.lists["grads"].handle
                old_grads = list(entries["grads"])  # kept alive, poisoned: never read again
                for g in old_grads:
                    g[...] = np.nan
                for i in range(len(SHAPES)):
                    entries["grads"][i] = rng.standard_normal(SHAPES[i]).astype(
                        entries["grads"][i].dtype)
                    if i == 3:
                        strided(entries, "grads", 3, rng)
                    base = entries["grads"][i]
                    while isinstance(base.base, np.ndarray):
                        base = base.base
                    assert acl.aclSetDynamicInputTensorAddr(
                        launch.executor, 0, i, grads, base.ctypes.data) == ACLNN_SUCCESS
                name = movable[(step - 2) % len(movable)]
                for i in range(len(SHAPES)):
                    address = moved(entries, name, i, np.nan)
                    assert acl.aclSetDynamicOutputTensorAddr(
                        launch.executor, OUTPUT_ORDER.index(name), i, launch.lists[name].handle,
                        address) == ACLNN_SUCCESS, acl.aclGetRecentErrMsg()
            expected = expected_after(entries, step, h, extras)
            assert launch.run(stream) == ACLNN_SUCCESS, acl.aclGetRecentErrMsg()
            assert acl.aclrtSynchronizeStream(stream) == 0, acl.aclGetRecentErrMsg()
            assert_matches(entries, expected)
    finally:
        launch.close()


@pytest.mark.parametrize("absent", ["empty", "placeholders"])
def test_step_by_flat_index_and_dynamic_tensor_addr(acl, stream, rng, absent):
    """As opbase numbers the instances: aclSetInputTensorAddr's index counts every list's entries
    (an empty list none, placeholders one per entry), then one slot per one-element input, given
    or not (step, grad scale, found_inf, lr, EMA decay); aclSetTensorAddr the same;
    aclSetDynamicTensorAddr's irIndex the inputs, then the outputs (output 0: vars)."""
    entries = make_entries(rng, SHAPES, *COMBOS[0], amsgrad=False)
    h = Hyper(lr=0.01, ema_decay=0.99)
    launch = Launch(acl, entries, h, Extras(), absent=absent)
    try:
        n = len(SHAPES)
        # grads, vars, ms, vs, ss; max_vs and copies empty (none) or placeholders (n each)
        flat_step = (5 if absent == "empty" else 7) * n
        for step, setter in ((1, None), (2, "aclSetInputTensorAddr"), (3, "aclSetTensorAddr")):
            if setter is not None:
                new_step = np.array([step], np.int64)
                launch.step[0] = 10**6  # the old step memory must not be read
                handle = launch.scalars[0].handle
                assert getattr(acl, setter)(launch.executor, flat_step, handle,
                                            new_step.ctypes.data) == ACLNN_SUCCESS
                launch.step = new_step
                # lr at its slot, after the absent grad scale and found_inf: a new value
                new_lr = np.array([h.lr * step], np.float32)
                launch.lr[0] = np.nan
                assert getattr(acl, setter)(launch.executor, flat_step + 3,
                                            launch.scalars[3].handle,
                                            new_lr.ctypes.data) == ACLNN_SUCCESS, \
                    acl.aclGetRecentErrMsg()
                launch.lr = new_lr
                h = Hyper(lr=float(new_lr[0]), ema_decay=0.99)
            address = moved(entries, "vars", 2, np.nan)
            # irIndex 7 inputs (the lists) + the 5 one-element inputs, given or not
            assert acl.aclSetDynamicTensorAddr(launch.executor, 12, 2, launch.lists["vars"].handle,
                                               address) == ACLNN_SUCCESS
            expected = expected_after(entries, step, h, Extras())
            assert launch.run(stream) == ACLNN_SUCCESS, acl.aclGetRecentErrMsg()
            assert acl.aclrtSynchronizeStream(stream) == 0
            assert_matches(entries, expected)
    finally:
        launch.close()


def test_queued_launch_keeps_its_addresses(acl, rng):
    """A launch queued on a stream runs with the addresses it was queued with: an update made
    right after reaches only the next launch (as on the device, which copies the arguments)."""
    s = ctypes.c_void_p()
    assert acl.aclrtCreateStream(ctypes.byref(s)) == 0
    entries = make_entries(rng, [(1 << 16,), (4099,)], *COMBOS[0], amsgrad=False)
    h = Hyper(lr=0.01, ema_decay=0.99)
    launch = Launch(acl, entries, h, Extras())
    try:
        first = [g.copy() for g in entries["grads"]]
        expected1 = expected_after(entries, 1, h, Extras())
        assert launch.run(s) == ACLNN_SUCCESS
        second = [rng.standard_normal(g.shape).astype(g.dtype) for g in first]
        for i, g in enumerate(second):
            assert acl.aclSetDynamicInputTensorAddr(launch.executor, 0, i,
                                                    launch.lists["grads"].handle,
                                                    g.ctypes.data) == ACLNN_SUCCESS
        launch.step[0] = 1  # (the step tensor is read when the launch runs: keep it 1 for now)
        assert acl.aclrtSynchronizeStream(s) == 0, acl.aclGetRecentErrMsg()
        assert_matches(entries, expected1)
        launch.step[0] = 2
        entries["grads"] = second
        expected2 = expected_after(entries, 2, h, Extras())
        assert launch.run(s) == ACLNN_SUCCESS
        assert acl.aclrtSynchronizeStream(s) == 0
        assert_matches(entries, expected2)
    finally:
        launch.close()
        assert acl.aclrtDestroyStream(s) == 0


def snapshot(entries):
    return {n: [x.copy() for x in entries[n]] for n in LISTS if entries[n] is not None}


def test_refusals(acl, stream, rng):
    """Null handles and indexes out of range are refused with opbase's codes and a message;
    nothing runs. A single-use executor is gone after its phase 2; a repeatable one until
    destroyed, after which phase 2 and the setters refuse it."""
    entries = make_entries(rng, SHAPES, *COMBOS[0], amsgrad=False)
    h = Hyper(lr=0.01, ema_decay=0.99)
    launch = Launch(acl, entries, h, Extras())
    grads = launch.lists["grads"].handle
    address = entries["grads"][1].ctypes.data
    cases = [
        (acl.aclSetAclOpExecutorRepeatable, (None,), ACLNN_ERR_INNER_NULLPTR, "executor is null"),
        (acl.aclSetDynamicInputTensorAddr, (None, 0, 1, grads, address), ACLNN_ERR_INNER_NULLPTR,
         "executor is null"),
        (acl.aclSetDynamicInputTensorAddr, (launch.executor, 0, 1, None, address),
         ACLNN_ERR_INNER_NULLPTR, "tensors is null"),
        (acl.aclSetDynamicInputTensorAddr, (launch.executor, 0, len(SHAPES), grads, address),
         ACLNN_ERR_PARAM_INVALID, f"relativeIndex {len(SHAPES)} is out of the list's"),
        (acl.aclSetDynamicInputTensorAddr, (launch.executor, 12, 1, grads, address),
         ACLNN_ERR_PARAM_INVALID, "irIndex 12 is past the 12 inputs of ApplyFusedEmaAdamListV2"),
        (acl.aclSetDynamicOutputTensorAddr, (launch.executor, 2, 1, grads, address),
         ACLNN_ERR_PARAM_INVALID, "relativeIndex 1 is past the 0 tensors of output 2"),
        (acl.aclSetDynamicInputTensorAddr, (launch.executor, 0, 1, grads, None),
         ACLNN_ERR_PARAM_INVALID, "a null address for input 0 tensor 1, which has elements"),
        # the lists' 5 * n tensors, then the 5 one-element slots (2 of them absent)
        (acl.aclSetInputTensorAddr, (launch.executor, 5 * len(SHAPES) + 5,
                                     launch.scalars[0].handle, launch.step.ctypes.data),
         ACLNN_ERR_PARAM_INVALID, "is past the executor's input tensors"),
    ]
    try:
        before = snapshot(entries)
        for fn, args, status, message in cases:
            assert fn(*args) == status, (fn.__name__, args)
            text = acl.aclGetRecentErrMsg().decode()
            assert message in text, text
            # a refused update leaves the tensor's own address where it was set (opbase sets it
            # first): point it back at the real memory before the next case
            assert acl.aclSetDynamicInputTensorAddr(
                launch.executor, 0, 1, grads, entries["grads"][1].ctypes.data) == ACLNN_SUCCESS
        after = snapshot(entries)
        assert all(np.array_equal(a, b, equal_nan=True) for n in before
                   for a, b in zip(before[n], after[n]))
        for _ in range(2):  # repeatable: runs twice
            assert launch.run(stream) == ACLNN_SUCCESS
        assert acl.aclrtSynchronizeStream(stream) == 0
    finally:
        launch.close()
    assert launch.run(stream) == ACLNN_ERR_PARAM_INVALID
    assert "not a live executor" in acl.aclGetRecentErrMsg().decode()
    assert acl.aclSetAclOpExecutorRepeatable(launch.executor) == ACLNN_ERR_INNER

    single = Launch(acl, make_entries(rng, SHAPES, *COMBOS[0], amsgrad=False), h, Extras(),
                    repeatable=False)
    try:
        assert single.run(stream) == ACLNN_SUCCESS
        assert acl.aclrtSynchronizeStream(stream) == 0
        assert single.run(stream) == ACLNN_ERR_PARAM_INVALID  # consumed
        assert acl.aclSetAclOpExecutorRepeatable(single.executor) == ACLNN_ERR_INNER
        assert acl.aclSetDynamicInputTensorAddr(single.executor, 0, 1, single.lists["grads"].handle,
                                                address) == ACLNN_ERR_INNER
    finally:
        single.close(destroy=False)


def test_single_tensor_op_repeats_with_moved_tensors(acl, stream, rng):
    """aclnnApplyFusedEmaAdam's executor too: inputs grad, var, m, v, s, step; outputs var, m, v,
    s. Each step a new gradient (aclSetInputTensorAddr 0) and a moved m (output 1): bit for bit
    the golden's."""
    shape = (33, 7)
    grad, var, m, v, s = (x.astype(np.float32) for x in random_inputs(rng, shape, np.float32))
    step = np.array([1], np.int64)
    arrays = {"grad": grad, "var": var, "m": m, "v": v, "s": s}
    tensors = [Tensor(acl, x) for x in (grad, var, m, v, s, step)]
    h = Hyper(lr=0.01, ema_decay=0.99, weight_decay=0.05, mode=1)
    ws, executor = ctypes.c_uint64(0), ctypes.c_void_p()
    assert acl.aclnnApplyFusedEmaAdamGetWorkspaceSize(
        *[t.handle for t in tensors], h.lr, h.ema_decay, h.beta1, h.beta2, h.eps, h.mode,
        h.bias_correction, h.weight_decay, ctypes.byref(ws), ctypes.byref(executor)) == 0
    assert acl.aclSetAclOpExecutorRepeatable(executor) == ACLNN_SUCCESS
    workspace = np.empty(max(ws.value, 1), np.uint8)
    try:
        for k in range(1, 4):
            step[0] = k
            if k > 1:
                arrays["grad"][...] = np.nan
                arrays["grad"] = rng.standard_normal(shape).astype(np.float32)
                assert acl.aclSetInputTensorAddr(executor, 0, tensors[0].handle,
                                                 arrays["grad"].ctypes.data) == ACLNN_SUCCESS
                new_m = arrays["m"].copy()
                arrays["m"][...] = np.nan
                arrays["m"] = new_m
                assert acl.aclSetOutputTensorAddr(executor, 1, tensors[2].handle,
                                                  new_m.ctypes.data) == ACLNN_SUCCESS
            got = golden.emulate_entry(*(arrays[n] for n in ("grad", "var", "m", "v", "s")),
                                       step, h, Extras())
            want = [np.array(x, copy=True) for x in got.astuple()[:4]]
            assert acl.aclnnApplyFusedEmaAdam(workspace.ctypes.data, ws.value, executor,
                                              stream) == ACLNN_SUCCESS
            assert acl.aclrtSynchronizeStream(stream) == 0
            for name, expected in zip(("var", "m", "v", "s"), want):
                assert golden.bit_equal(arrays[name], expected), f"step {k}: {name}"
    finally:
        assert acl.aclDestroyAclOpExecutor(executor) == ACLNN_SUCCESS
        for t in tensors:
            t.close()
