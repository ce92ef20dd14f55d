"""The float dtypes of the operators' tensors: the Python layer's one table, and the list
operator's dtype contract as one table.

Everything in the package that names, checks or converts a tensor dtype derives from
:data:`FLOAT_DTYPES` (golden, check, twin, optim, bench, the tests), including the per-dtype
numbers: CANN's precision-standard thresholds and the limits of narrowing a double to the dtype.
:data:`LIST_DTYPES` is ApplyFusedEmaAdamList's dtype contract (golden's entry check, check's
sweep, the optimizer's state layouts). The C++ layers have their own tables,
``op_host/common/data_type.h`` and the list op's check;
``tests/python/host/test_apply_fused_ema_adam_tiling.py`` and ``tests/python/host/test_dtypes.py`` hold the
two languages' tables equal through ``_kernels``. torch is
imported only by the functions that return torch objects.
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
    # CANN's single-benchmark precision standard: the threshold of the mean relative error
    # (MERE); the max relative error (MARE) must stay below 10x the same value.
    mere_threshold: float
    # The floor of the relative-error denominator (Ascend msprobe's "small value"): an output
    # that cancels to almost zero is judged by its absolute error (golden.small_value_floor).
    small_value: float
    # Narrowing a double to this dtype (round to nearest even): from ``overflow_from`` on it is
    # inf, from ``one_from`` up to 1 it is 1.0 (a beta of 1 makes 1 - beta**t zero).
    overflow_from: float
    one_from: float

    @property
    def itemsize(self) -> int:
        return self.numpy.itemsize

    @property
    def torch(self):
        import torch
        return getattr(torch, self.name)


FLOAT_DTYPES = (
    FloatDtype("float32", "fp32", np.dtype(np.float32), mere_threshold=2.0**-13,
               small_value=2.0**-20, overflow_from=2.0**128 - 2.0**103, one_from=1.0 - 2.0**-25),
    FloatDtype("float16", "fp16", np.dtype(np.float16), mere_threshold=2.0**-10,
               small_value=2.0**-10, overflow_from=2.0**16 - 2.0**4, one_from=1.0 - 2.0**-12),
    FloatDtype("bfloat16", "bf16", np.dtype(ml_dtypes.bfloat16), mere_threshold=2.0**-7,
               small_value=2.0**-10, overflow_from=2.0**128 - 2.0**119, one_from=1.0 - 2.0**-9),
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


# ---------------------------------------------------------------------------------------------
# ApplyFusedEmaAdamList's dtype contract


@dataclass(frozen=True)
class ApplyFusedEmaAdamListDtypes:
    """One dtype combination of a list launch (every tensor of a list has the list's dtype)."""

    param: FloatDtype        # P: vars (the fp32 masters when there are model copies)
    state: FloatDtype        # S: ms, vs, ss and max_vs
    grad: FloatDtype         # G: grads
    copy: FloatDtype | None  # C: model_copies (16-bit weights written from the fp32 masters)

    @property
    def names(self) -> tuple:
        """(param, state, grad, copy or None) by name, as ``_kernels`` reports combinations."""
        return (self.param.name, self.state.name, self.grad.name,
                None if self.copy is None else self.copy.name)


_F32, _F16, _BF16 = FLOAT_DTYPES
#: Every combination the list operator accepts, in the order of its tiling keys: the state is
#: P's dtype or fp32; the gradient P's dtype or fp32, or with model copies (16-bit, of fp32
#: masters) the copies' dtype or fp32.
LIST_DTYPES = tuple(ApplyFusedEmaAdamListDtypes(*row) for row in (
    # param  state  grad   copy
    (_F32, _F32, _F32, None),
    (_F32, _F32, _F16, _F16),
    (_F32, _F32, _F32, _F16),
    (_F32, _F32, _BF16, _BF16),
    (_F32, _F32, _F32, _BF16),
    (_F16, _F16, _F16, None),
    (_F16, _F16, _F32, None),
    (_F16, _F32, _F16, None),
    (_F16, _F32, _F32, None),
    (_BF16, _BF16, _BF16, None),
    (_BF16, _BF16, _F32, None),
    (_BF16, _F32, _BF16, None),
    (_BF16, _F32, _F32, None),
))


def state_dtypes_of(param: FloatDtype) -> tuple[FloatDtype, ...]:
    """The state dtypes the contract allows for parameters of ``param`` (no model copies), the
    parameter's own first."""
    return tuple(dict.fromkeys(row.state for row in LIST_DTYPES
                               if row.param == param and row.copy is None))


def grad_dtypes_of(param: FloatDtype, state: FloatDtype,
                   copy: FloatDtype | None = None) -> tuple[FloatDtype, ...]:
    """The gradient dtypes the contract allows beside these dtypes (empty: none)."""
    return tuple(row.grad for row in LIST_DTYPES
                 if (row.param, row.state, row.copy) == (param, state, copy))


#: The dtypes a model copy may have, and those of the masters (vars) beside model copies.
COPY_DTYPES = tuple(dict.fromkeys(row.copy for row in LIST_DTYPES if row.copy is not None))
MASTER_DTYPES = tuple(dict.fromkeys(row.param for row in LIST_DTYPES if row.copy is not None))


# ---------------------------------------------------------------------------------------------
# ApplyFusedEmaAdam8bitList's dtype contract (its state is uint8 codes, fp32 scales and an fp32
# EMA whatever the parameter's dtype)


@dataclass(frozen=True)
class List8bitDtypes:
    """One dtype combination of an 8-bit list launch."""

    param: FloatDtype        # P: vars (the fp32 masters when there are model copies)
    grad: FloatDtype         # G: grads, any float dtype
    copy: FloatDtype | None  # C: model_copies (16-bit weights written from the fp32 masters)

    @property
    def names(self) -> tuple:
        """(param, grad, copy or None) by name."""
        return (self.param.name, self.grad.name, None if self.copy is None else self.copy.name)


#: Every combination the 8-bit list operator accepts, in the order of its tiling keys: fp32,
#: fp16 or bf16 parameters, or fp32 masters of fp16 / bf16 model copies, each with a gradient of
#: any of the three float dtypes.
LIST8BIT_DTYPES = tuple(List8bitDtypes(p, g, c)
                        for p, c in ((_F32, None), (_F32, _F16), (_F32, _BF16), (_F16, None),
                                     (_BF16, None))
                        for g in FLOAT_DTYPES)
