"""The float dtypes of the operators' tensors: the Python layer's one table.

Everything in the package that names, checks or converts a tensor dtype derives from
:data:`FLOAT_DTYPES` (golden, check, twin, optim, bench, the tests). The C++ layers have their own
table, ``op_host/common/data_type.h``; ``tests/python/test_tiling.py`` holds the two equal through
``_twin.data_types()``. torch is imported only by the functions that return torch objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class FloatDtype:
    name: str        # "float32": the C++ table's name, torch's and numpy's spelling
    short: str       # "fp32": test ids and tables
    numpy: np.dtype  # numpy's dtype (bfloat16 from ml_dtypes)

    @property
    def itemsize(self) -> int:
        return self.numpy.itemsize

    @property
    def torch(self):
        import torch
        return getattr(torch, self.name)


FLOAT_DTYPES = (
    FloatDtype("float32", "fp32", np.dtype(np.float32)),
    FloatDtype("float16", "fp16", np.dtype(np.float16)),
    FloatDtype("bfloat16", "bf16", np.dtype(ml_dtypes.bfloat16)),
)
#: The numpy dtypes of :data:`FLOAT_DTYPES`, in order.
NUMPY_FLOAT_DTYPES = tuple(d.numpy for d in FLOAT_DTYPES)


def by_name(name: str) -> FloatDtype:
    """The entry named ``name`` ("float32", ...); ValueError for another name."""
    for d in FLOAT_DTYPES:
        if d.name == name:
            return d
    raise ValueError(f"dtype must be one of {', '.join(d.name for d in FLOAT_DTYPES)}, "
                     f"got {name!r}")


def by_numpy(dtype) -> FloatDtype:
    """The entry of a numpy dtype; TypeError for a dtype the kernels do not update."""
    dtype = np.dtype(dtype)
    for d in FLOAT_DTYPES:
        if d.numpy == dtype:
            return d
    raise TypeError(f"dtype {dtype} is not {', '.join(d.name for d in FLOAT_DTYPES)}")


def by_torch(dtype) -> FloatDtype:
    """The entry of a torch dtype; TypeError for a dtype the kernels do not update."""
    for d in FLOAT_DTYPES:
        if d.torch == dtype:
            return d
    raise TypeError(f"dtype {dtype} is not {', '.join(d.name for d in FLOAT_DTYPES)}")


def torch_float_dtypes() -> tuple:
    """The torch dtypes of :data:`FLOAT_DTYPES`, in order."""
    return tuple(d.torch for d in FLOAT_DTYPES)


def to_numpy(t) -> np.ndarray:
    """An exact numpy copy of a CPU torch tensor (bf16 through its bit pattern)."""
    import torch
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return t.numpy().copy()


def to_torch(a: np.ndarray):
    """An exact torch copy of a numpy array (bf16 through its bit pattern)."""
    import torch
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())
