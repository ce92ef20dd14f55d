"""The aclnn C API (``ascend_ema_adam.get_library()``) for ctypes tests: the library with the C
signatures of both operators, and numpy arrays as aclTensors. numpy memory serves as device
memory: on the CPU device both are host memory."""

import ctypes

import ml_dtypes
import numpy as np
import pytest

import ascend_ema_adam

ACL_FLOAT, ACL_FLOAT16, ACL_INT64, ACL_BF16 = 0, 1, 9, 27
ACL_FORMAT_ND = 2
ACLNN_SUCCESS, ACLNN_ERR_PARAM_NULLPTR, ACLNN_ERR_PARAM_INVALID = 0, 161001, 161002
ACL_DTYPE = {np.dtype(np.float32): ACL_FLOAT, np.dtype(np.float16): ACL_FLOAT16,
             np.dtype(ml_dtypes.bfloat16): ACL_BF16, np.dtype(np.int64): ACL_INT64}

c_int64_p = ctypes.POINTER(ctypes.c_int64)
_PHASE1_TAIL = [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_void_p)]
_PHASE2 = (ctypes.c_int32, [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p])
_SIGNATURES = {
    "aclInit": (ctypes.c_int, [ctypes.c_char_p]),
    "aclFinalize": (ctypes.c_int, []),
    "aclGetRecentErrMsg": (ctypes.c_char_p, []),
    "aclrtSetDevice": (ctypes.c_int, [ctypes.c_int32]),
    "aclrtResetDevice": (ctypes.c_int, [ctypes.c_int32]),
    "aclrtCreateStream": (ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p)]),
    "aclrtDestroyStream": (ctypes.c_int, [ctypes.c_void_p]),
    "aclrtSynchronizeStream": (ctypes.c_int, [ctypes.c_void_p]),
    "aclCreateTensor": (ctypes.c_void_p, [c_int64_p, ctypes.c_uint64, ctypes.c_int,
                                          c_int64_p, ctypes.c_int64, ctypes.c_int,
                                          c_int64_p, ctypes.c_uint64, ctypes.c_void_p]),
    "aclDestroyTensor": (ctypes.c_int32, [ctypes.c_void_p]),
    "aclCreateTensorList": (ctypes.c_void_p, [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint64]),
    "aclDestroyTensorList": (ctypes.c_int32, [ctypes.c_void_p]),
    "aclnnApplyFusedEmaAdamGetWorkspaceSize": (
        ctypes.c_int32, [ctypes.c_void_p] * 6 + [ctypes.c_double] * 5
        + [ctypes.c_int64, ctypes.c_bool, ctypes.c_double] + _PHASE1_TAIL),
    "aclnnApplyFusedEmaAdam": _PHASE2,
    "aclnnApplyFusedEmaAdamListGetWorkspaceSize": (
        ctypes.c_int32, [ctypes.c_void_p] * 10 + [ctypes.c_double] * 5
        + [ctypes.c_int64, ctypes.c_bool, ctypes.c_double, ctypes.c_bool] + _PHASE1_TAIL),
    "aclnnApplyFusedEmaAdamList": _PHASE2,
    "aclnnApplyFusedEmaAdamListV2GetWorkspaceSize": (
        ctypes.c_int32, [ctypes.c_void_p] * 12 + [ctypes.c_double] * 5
        + [ctypes.c_int64, ctypes.c_bool, ctypes.c_double, ctypes.c_bool] + _PHASE1_TAIL),
    "aclnnApplyFusedEmaAdamListV2": _PHASE2,
    "aclDestroyAclOpExecutor": (ctypes.c_int32, [ctypes.c_void_p]),
    "aclSetAclOpExecutorRepeatable": (ctypes.c_int32, [ctypes.c_void_p]),
    **{name: (ctypes.c_int32, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                               ctypes.c_void_p])
       for name in ("aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr")},
    **{name: (ctypes.c_int32, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                               ctypes.c_void_p, ctypes.c_void_p])
       for name in ("aclSetDynamicInputTensorAddr", "aclSetDynamicOutputTensorAddr",
                    "aclSetDynamicTensorAddr")},
    "aclSetRawTensorAddr": (ctypes.c_int32, [ctypes.c_void_p, ctypes.c_void_p]),
    "aclGetRawTensorAddr": (ctypes.c_int32, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]),
}


def open_acl():
    """Generator for a module fixture: the library with its C signatures, initialised, device 0
    set for this thread; finalised afterwards."""
    lib = ctypes.CDLL(ascend_ema_adam.get_library())
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    assert lib.aclInit(None) == 0
    assert lib.aclrtSetDevice(0) == 0
    yield lib
    assert lib.aclrtResetDevice(0) == 0
    assert lib.aclFinalize() == 0


@pytest.fixture
def stream(acl):
    """A stream of the module's ``acl`` fixture, destroyed after the test (import it into the test
    module to use it)."""
    s = ctypes.c_void_p()
    assert acl.aclrtCreateStream(ctypes.byref(s)) == 0
    yield s
    assert acl.aclrtDestroyStream(s) == 0


def int64s(values):
    return (ctypes.c_int64 * max(len(values), 1))(*values)


def create_tensor(acl, view: np.ndarray):
    """An aclTensor handle describing numpy array ``view`` inside its base array (the storage)."""
    base = view
    while isinstance(base.base, np.ndarray):  # the array that owns the memory
        base = base.base
    item = view.dtype.itemsize
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0])
    assert offset % item == 0 and all(s % item == 0 for s in view.strides)
    handle = acl.aclCreateTensor(
        int64s(view.shape), view.ndim, ACL_DTYPE[view.dtype],
        int64s([s // item for s in view.strides]), offset // item, ACL_FORMAT_ND,
        int64s([base.size]), 1, base.__array_interface__["data"][0])
    assert handle, acl.aclGetRecentErrMsg()
    return handle


class Tensor:
    """An aclTensor describing numpy array ``view`` inside its base array (the storage)."""

    def __init__(self, acl, view: np.ndarray):
        self.acl, self.view = acl, view
        self.handle = create_tensor(acl, view)

    def close(self):
        assert self.acl.aclDestroyTensor(self.handle) == 0


class TensorList:
    """An aclTensorList of numpy arrays; the list owns its tensors (one destroy for all)."""

    def __init__(self, acl, views):
        self.acl = acl
        handles = (ctypes.c_void_p * max(len(views), 1))(*[create_tensor(acl, v) for v in views])
        self.handle = acl.aclCreateTensorList(handles, len(views))
        assert self.handle, acl.aclGetRecentErrMsg()

    def close(self):
        assert self.acl.aclDestroyTensorList(self.handle) == 0
