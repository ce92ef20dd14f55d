"""The aclnn C API (``ascend_ema_adam.get_library()``) driven from Python through ctypes.

Multi-step runs of both phases on a stream, for every dtype, mode and bias setting, equal the
numpy emulation golden bit for bit, on contiguous tensors and on strided views of larger arrays;
rejected inputs come back with CANN's status codes and a message. numpy memory serves as device
memory: on the CPU device both are host memory."""

import ctypes
import os

import ml_dtypes
import numpy as np
import pytest

import ascend_ema_adam
from aclnn_ctypes import (ACL_FLOAT, ACL_FLOAT16, ACL_INT64, ACLNN_ERR_PARAM_INVALID,  # noqa: F401
                          ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS, Tensor, open_acl, stream)
from ascend_ema_adam import golden
from ascend_ema_adam._dtypes import FLOAT_DTYPES
from ascend_ema_adam.apps.check import OUTPUTS, random_inputs
from ascend_ema_adam.golden import Hyper

DTYPES = [d.numpy for d in FLOAT_DTYPES]
DTYPE_IDS = [d.short for d in FLOAT_DTYPES]


@pytest.fixture(scope="module")
def acl():
    """The library with its C signatures, initialised, device 0 set for this thread."""
    yield from open_acl()


def phase1(acl, tensors, h: Hyper):
    """(status, workspace size, executor, message)."""
    ws, executor = ctypes.c_uint64(0), ctypes.c_void_p()
    status = acl.aclnnApplyFusedEmaAdamGetWorkspaceSize(
        *[t.handle if t is not None else None for t in tensors], h.lr, h.ema_decay, h.beta1,
        h.beta2, h.eps, h.mode, h.bias_correction, h.weight_decay, ctypes.byref(ws),
        ctypes.byref(executor))
    message = acl.aclGetRecentErrMsg()
    return status, ws.value, executor, (message or b"").decode()


def run_step(acl, arrays, step: np.ndarray, h: Hyper, stream):
    """Both phases on ``stream`` and a synchronisation; the arrays are updated in place."""
    tensors = [Tensor(acl, a) for a in (*arrays, step)]
    try:
        status, ws, executor, message = phase1(acl, tensors, h)
        assert status == ACLNN_SUCCESS, message
        workspace = np.empty(max(ws, 1), np.uint8)
        assert acl.aclnnApplyFusedEmaAdam(workspace.ctypes.data, ws, executor, stream) == 0
        assert acl.aclrtSynchronizeStream(stream) == 0
    finally:
        for t in tensors:
            t.close()


def assert_bit_equal(actual, expected, what):
    for name, a, e in zip(OUTPUTS, actual, expected):
        assert golden.bit_equal(np.ascontiguousarray(a), e), f"{what}: {name} differs from the golden"


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_multi_step_matches_golden(acl, stream, rng, dtype, mode, bias):
    hyper = Hyper(lr=1e-3, ema_decay=0.99, mode=mode, bias_correction=bias, weight_decay=0.02)
    grad, var, m, v, s = random_inputs(rng, (37, 129), dtype)
    first_var = var.copy()
    expected = (var.copy(), m.copy(), v.copy(), s.copy())
    for step in range(1, 5):
        grad = random_inputs(rng, (37, 129), dtype)[0]  # a new gradient every step
        step_arr = np.array([step], np.int64)
        expected = golden.emulate_update(grad, *expected, step_arr, hyper)
        run_step(acl, (grad, var, m, v, s), step_arr, hyper, stream)
        assert_bit_equal((var, m, v, s), expected, f"step {step}")
    assert not golden.bit_equal(var, first_var)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_strided_views_match_golden(acl, stream, rng, dtype):
    """Every other row and every third column of larger arrays, and a transposed array: updated
    in place as the golden says; the rest of each array is untouched."""
    hyper = Hyper(lr=1e-2, ema_decay=0.9, mode=1, weight_decay=0.1)
    bases = random_inputs(rng, (30, 200), dtype)
    sliced = [b[1::2, 5:190:3] for b in bases]
    transposed = [x.T for x in random_inputs(rng, (40, 23), dtype)]
    for views, what in ((sliced, "sliced"), (transposed, "transposed")):
        assert not any(x.flags.c_contiguous for x in views)
        before = [np.array(b if what == "sliced" else x) for b, x in zip(bases, views)]
        expected = [np.ascontiguousarray(x) for x in views]
        for step in (1, 2, 3):
            step_arr = np.array([step], np.int64)
            expected[1:] = golden.emulate_update(*expected, step_arr, hyper)
            run_step(acl, views, step_arr, hyper, stream)
            assert_bit_equal(views[1:], expected[1:], f"{what} step {step}")
        if what == "sliced":
            for b, was in zip(bases, before):
                mask = np.ones(b.shape, bool)
                mask[1::2, 5:190:3] = False
                assert golden.bit_equal(b[mask], was[mask]), "an element outside the view changed"


def test_queued_steps_on_one_stream(acl, stream, rng):
    """Three steps queued back to back (phase 1 for all first, one synchronisation at the end)
    run in stream order: the result equals three golden steps."""
    hyper = Hyper(mode=0, weight_decay=0.05)
    grad, var, m, v, s = random_inputs(rng, (5000,), np.float32)
    steps = [np.array([k], np.int64) for k in (1, 2, 3)]
    tensors = [Tensor(acl, a) for a in (grad, var, m, v, s)]
    step_tensors = [Tensor(acl, st) for st in steps]
    expected = (var.copy(), m.copy(), v.copy(), s.copy())
    executors = []
    for st in step_tensors:
        status, ws, executor, message = phase1(acl, tensors + [st], hyper)
        assert status == ACLNN_SUCCESS and ws == 0, message
        executors.append(executor)
    for executor in executors:
        assert acl.aclnnApplyFusedEmaAdam(None, 0, executor, stream) == 0
    assert acl.aclrtSynchronizeStream(stream) == 0
    for st in steps:
        expected = golden.emulate_update(grad, *expected, st, hyper)
    assert_bit_equal((var, m, v, s), expected, "queued")
    for t in tensors + step_tensors:
        t.close()


@pytest.mark.parametrize("case, status, message", [
    ("null grad", ACLNN_ERR_PARAM_NULLPTR, "grad is null"),
    ("mode 2", ACLNN_ERR_PARAM_INVALID, "mode is 2, expected 0"),
    ("float step", ACLNN_ERR_PARAM_INVALID, "step has dtype ACL_FLOAT (0), expected ACL_INT64"),
    ("two steps", ACLNN_ERR_PARAM_INVALID, "step has shape [2] (2 elements)"),
    ("beta2 1", ACLNN_ERR_PARAM_INVALID, "beta2 is 1 (1 in fp32), expected 0 <= beta2 < 1"),
    ("mixed dtypes", ACLNN_ERR_PARAM_INVALID, "sRef has dtype ACL_FLOAT16 (1) but grad has ACL_FLOAT (0)"),
    ("nan eps", ACLNN_ERR_PARAM_INVALID, "eps is nan, expected a finite value"),
    ("step 0", ACLNN_ERR_PARAM_INVALID, "step is 0, expected step >= 1 when biasCorrection is true"),
])
def test_errors(acl, rng, case, status, message):
    arrays = list(random_inputs(rng, (4, 6), np.float32))
    step = np.array([3], np.int64)
    hyper = Hyper()
    if case == "mode 2":
        hyper = Hyper(mode=2)
    elif case == "float step":
        step = np.array([3.0], np.float32)
    elif case == "two steps":
        step = np.array([3, 4], np.int64)
    elif case == "step 0":
        step = np.array([0], np.int64)
    elif case == "beta2 1":
        hyper = Hyper(beta2=1.0)
    elif case == "mixed dtypes":
        arrays[4] = arrays[4].astype(np.float16)
    elif case == "nan eps":
        hyper = Hyper(eps=float("nan"))
    before = [a.copy() for a in arrays]
    tensors = [Tensor(acl, a) for a in arrays] + [Tensor(acl, step)]
    args = [None] + tensors[1:] if case == "null grad" else tensors
    got, ws, executor, text = phase1(acl, args, hyper)
    assert got == status
    assert message in text and text.startswith("aclnnApplyFusedEmaAdamGetWorkspaceSize: ")
    assert all(golden.bit_equal(a, b) for a, b in zip(arrays, before))
    for t in tensors:
        t.close()


def test_empty_tensors(acl):
    arrays = [np.empty((0, 3), ml_dtypes.bfloat16) for _ in range(5)]
    tensors = [Tensor(acl, a) for a in arrays] + [Tensor(acl, np.array([1], np.int64))]
    status, ws, executor, message = phase1(acl, tensors, Hyper())
    assert (status, ws) == (ACLNN_SUCCESS, 0), message
    assert acl.aclnnApplyFusedEmaAdam(None, 0, executor, None) == ACLNN_SUCCESS
    assert acl.aclnnApplyFusedEmaAdam(None, 0, executor, None) == ACLNN_ERR_PARAM_INVALID
    assert "not a live executor" in acl.aclGetRecentErrMsg().decode()
    for t in tensors:
        t.close()


def test_get_include_and_get_library():
    include = ascend_ema_adam.get_include()
    for header in ("acl/acl.h", "acl/acl_rt.h", "aclnn/acl_meta.h", "aclnn/opdev/op_errno.h",
                   "aclnnop/aclnn_apply_fused_ema_adam.h"):
        assert os.path.isfile(os.path.join(include, header)), header
    assert ascend_ema_adam.get_library().endswith("lib/libascend_ema_adam_acl.so")
