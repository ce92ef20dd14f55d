"""Validation: everything a step needs is checked before its first write. The hyper-parameters
(MindSpeed's checks and texts first, then this package's), this optimizer's options, torch's
``foreach``/``fused`` keywords, and a gradient or state tensor against its parameter."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from .._dtypes import (FLOAT_DTYPES, MASTER_DTYPES, by_name, by_torch, grad_dtypes_of,
                       state_dtypes_of)
from ._common import _EMA_EVERY_DECAYS, _EMA_WARMUPS, _MASTER, _layout_error
from ._clip import check_max_norm
from .functional import SWITCHES

# The kernel narrows every scalar to fp32: what overflows there, and the betas that become 1.
_FP32 = by_name("float32")
_FP32_OVERFLOW = _FP32.overflow_from
_FP32_ROUNDS_TO_ONE = _FP32.one_from
# The list op's contract (_dtypes.LIST_DTYPES) as the optimizer sees it: the dtypes a state
# tensor may have for a parameter dtype (either layout converts at the step), and the masters'.
_STATE_DTYPES = {d.torch: tuple(s.torch for s in state_dtypes_of(d)) for d in FLOAT_DTYPES}
_MASTER_DTYPES = tuple(d.torch for d in MASTER_DTYPES)
# The positional order of the constructor (MindSpeed's), for messages about torch's order.
_POSITIONAL = "params, lr, eps, betas, weight_decay, ema_decay, amsgrad"


def _check_types(lr, eps, betas, weight_decay, ema_decay) -> None:
    """Each hyper-parameter has the kind of value its check compares (a number, or a pair for
    ``betas``). The usual mistake is torch's positional order (``lr, betas, eps``): the message
    names the argument and gives the order, instead of a failed comparison."""
    if (type(lr) is float and type(eps) is float and type(weight_decay) is float
            and (ema_decay is None or type(ema_decay) is float) and type(betas) is tuple
            and len(betas) == 2 and type(betas[0]) is float and type(betas[1]) is float):
        return  # the usual case, checked at every step: plain floats (nothing else to see)
    for name, value in (("lr", lr), ("eps", eps), ("weight_decay", weight_decay),
                        ("ema_decay", ema_decay)):
        if isinstance(value, Tensor) and name in ("lr", "ema_decay"):
            continue
        if value is None and name == "ema_decay":  # no EMA: not a missing value
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            hint = ""
            if isinstance(value, (tuple, list)):
                hint = (f"; the positional order is MindSpeed's ({_POSITIONAL}), not "
                        f"torch.optim.AdamW's (params, lr, betas, eps, ...): pass betas="
                        f"{tuple(value)!r} by keyword")
            kind = "a number (or None: no EMA)" if name == "ema_decay" else "a number"
            raise TypeError(f"{name} must be {kind}, got {type(value).__name__} "
                            f"{value!r}{hint}")
    if isinstance(betas, (tuple, list)) and len(betas) == 2 and all(
            isinstance(b, Tensor) for b in betas):
        # torch.optim.AdamW's tensor betas: 1-element float tensors, read on the host each step
        for i, b in enumerate(betas):
            if b.numel() != 1 or not b.is_floating_point():
                raise ValueError(f"Tensor betas[{i}] must be 1-element and floating point, got "
                                 f"{b.dtype} of shape {list(b.shape)}")
        return
    if isinstance(betas, (tuple, list)) and len(betas) == 2 and any(
            isinstance(b, Tensor) for b in betas):
        raise TypeError(f"betas must be either both numbers or both Tensors (as in "
                        f"torch.optim.AdamW), got {betas!r}")
    if not (isinstance(betas, (tuple, list)) and len(betas) == 2 and all(
            isinstance(b, (int, float)) and not isinstance(b, bool) for b in betas)):
        hint = ""
        if isinstance(betas, (int, float)) and not isinstance(betas, bool):
            hint = (f"; the positional order is MindSpeed's ({_POSITIONAL}), not "
                    f"torch.optim.AdamW's (params, lr, betas, eps, ...): pass eps and betas by "
                    f"keyword")
        raise TypeError(f"betas must be a pair of numbers (beta1, beta2) or of 1-element "
                        f"tensors, got "
                        f"{type(betas).__name__} {betas!r}{hint}")


def _hyperparameter_error(lr, eps, betas, weight_decay, ema_decay) -> str | None:
    """MindSpeed's checks and texts, in its order; then this package's additions: ema_decay in
    [0, 1], and every value finite and usable once narrowed to fp32 (the kernel's precision).
    ``lr`` and ``ema_decay`` may be one-element float32 tensors (capturable): their values are
    read on the device by the kernel, never here (that would be a host sync). ``ema_decay=None``
    is valid: the group keeps no EMA."""
    if isinstance(lr, Tensor):
        error = _tensor_value_error("lr", lr)
        if error is not None:
            return error
    elif not 0.0 <= lr:
        return "Invalid learning rate: {}".format(lr)
    if not 0.0 <= eps:
        return "Invalid epsilon value: {}".format(eps)
    if not 0.0 <= betas[0] < 1.0:
        return "Invalid beta parameter at index 0: {}".format(betas[0])
    if not 0.0 <= betas[1] < 1.0:
        return "Invalid beta parameter at index 1: {}".format(betas[1])
    if not 0.0 <= weight_decay:
        return "Invalid weight_decay value: {}".format(weight_decay)
    error = _ema_decay_error(ema_decay)
    if error is not None:
        return error
    for text, value in (("Invalid learning rate", lr), ("Invalid epsilon value", eps),
                        ("Invalid weight_decay value", weight_decay)):
        if isinstance(value, Tensor):
            continue
        if not math.isfinite(value):
            return f"{text}: {value} (not a finite number)"
        if value >= _FP32_OVERFLOW:
            return f"{text}: {value} (overflows fp32, the kernel's precision)"
    for i in (0, 1):
        if betas[i] >= _FP32_ROUNDS_TO_ONE:
            return (f"Invalid beta parameter at index {i}: {betas[i]} (1 in fp32, the kernel's "
                    f"precision: the bias correction 1 - beta**step would be 0)")
    return None


def _ema_decay_error(ema_decay) -> str | None:
    """A number in [0, 1] (NaN is not), a one-element float32 tensor, or None (no EMA)."""
    if ema_decay is None:
        return None
    if isinstance(ema_decay, Tensor):
        return _tensor_value_error("ema_decay", ema_decay)
    if not 0.0 <= ema_decay <= 1.0:
        return "Invalid ema_decay value: {}".format(ema_decay)
    return None


def _check_ema_decay(ema_decay) -> None:
    """What the constructor checks of ``ema_decay``, for the attribute's setter: TypeError for
    a value of the wrong kind, ValueError for a bad one."""
    _check_types(0.0, 0.0, (0.0, 0.0), 0.0, ema_decay)
    error = _ema_decay_error(ema_decay)
    if error is not None:
        raise ValueError(error)


def _tensor_value_error(name: str, t: Tensor) -> str | None:
    """A tensor ``lr``/``ema_decay``: what the kernel reads, one float32 element (its value is
    not checked: on the device that would cost a sync, as for GradScaler's scale)."""
    if t.dtype != torch.float32 or t.numel() != 1 or t.is_sparse or t.requires_grad:
        return (f"Invalid {name}: a tensor {name} must be a float32 tensor of one element "
                f"without grad (got {t.dtype}, {t.numel()} elements"
                f"{', requires_grad' if t.requires_grad else ''})")
    return None


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _option_error(group: dict[str, Any]) -> str | None:
    """This optimizer's own group options (state layout, variants, EMA schedule)."""
    if group["state_dtype"] not in (torch.float32, None):
        return (f"Invalid state_dtype: {group['state_dtype']!r} (torch.float32: fp32 moments and "
                f"EMA for 16-bit parameters; None: the parameter's dtype)")
    for key in ("master_weights", *SWITCHES):
        if not isinstance(group[key], bool):
            return f"Invalid {key}: {group[key]!r} (True or False)"
    if group["master_weights"] and group["state_dtype"] is None:
        return ("Invalid state_dtype: None with master_weights=True (the state of an fp32 master "
                "is fp32: use state_dtype=torch.float32)")
    error = _state_bits_error(group)
    if error is not None:
        return error
    if group["ema_warmup"] not in _EMA_WARMUPS:
        return (f"Invalid ema_warmup: {group['ema_warmup']!r} ('num_updates', 'power' or "
                f"None)")
    for key in ("inv_gamma", "power"):
        value = group[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                0.0 < value < math.inf):
            return f"Invalid {key}: {value!r} (a finite number > 0)"
    value = group["min_ema_decay"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        return f"Invalid min_ema_decay: {value!r} (a number in [0, 1])"
    if not (_is_int(group["ema_update_after_step"]) and group["ema_update_after_step"] >= 0):
        return (f"Invalid ema_update_after_step: {group['ema_update_after_step']!r} (an int "
                f">= 0)")
    if not (_is_int(group["ema_every"]) and group["ema_every"] >= 1):
        return f"Invalid ema_every: {group['ema_every']!r} (an int >= 1)"
    if group["ema_every_decay"] not in _EMA_EVERY_DECAYS:
        return (f"Invalid ema_every_decay: {group['ema_every_decay']!r} ('power': decay**k on "
                f"every k-th step; 'once': ema-pytorch's update_every)")
    return check_max_norm(group.get("max_grad_norm"))


def _state_bits_error(group: dict[str, Any]) -> str | None:
    """``state_bits`` (32 or 8) and what 8-bit state cannot be combined with; ``min_8bit_size``
    (an int >= 0: the smallest parameter that keeps 8-bit state)."""
    bits, size = group["state_bits"], group["min_8bit_size"]
    if not (_is_int(bits) and bits in (8, 32)):
        return (f"Invalid state_bits: {bits!r} (32: fp32 moments; 8: 8-bit blockwise moments, "
                f"ApplyFusedEmaAdam8bitList)")
    if not (_is_int(size) and size >= 0):
        return f"Invalid min_8bit_size: {size!r} (an int >= 0)"
    if bits == 8 and group["amsgrad"]:
        return ("Invalid amsgrad: True with state_bits=8 (the 8-bit state keeps no running "
                "maximum of exp_avg_sq, as bitsandbytes' blockwise 8-bit Adam keeps none: "
                "AMSGrad needs state_bits=32)")
    if bits == 8 and group["state_dtype"] is None:
        return ("Invalid state_dtype: None with state_bits=8 (the 8-bit state keeps the EMA, "
                "and the moments of tensors below min_8bit_size, in fp32: use "
                "state_dtype=torch.float32)")
    return None


def _check_tensor_hypers(i: int, group: dict[str, Any], j: int, device: torch.device) -> None:
    """A tensor lr/ema_decay must be on the device of parameter ``j`` (the kernel reads it)."""
    for name in ("lr", "ema_decay"):
        value = group[name]
        if isinstance(value, Tensor) and value.device != device:
            raise RuntimeError(f"param_groups[{i}]['params'][{j}]: the group's {name} tensor is "
                               f"on {value.device}, the parameter on {device}")


def _check_hyperparameters(group: dict[str, Any], where: str = "") -> None:
    try:
        _check_types(group["lr"], group["eps"], group["betas"], group["weight_decay"],
                     group["ema_decay"])
    except TypeError as e:
        raise TypeError(where + str(e)) from None
    error = _hyperparameter_error(group["lr"], group["eps"], group["betas"],
                                  group["weight_decay"], group["ema_decay"])
    if error is None:
        error = _option_error(group)
    if error is not None:
        raise ValueError(where + error)


def _check_implementation(foreach, fused) -> None:
    """torch's ``foreach``/``fused`` keywords, with their meaning here."""
    if foreach is not None and not isinstance(foreach, bool):
        raise TypeError(f"foreach must be None, True or False, got {foreach!r}")
    if fused is False:
        raise ValueError("fused=False: FusedEmaAdamW is always fused (one kernel updates the "
                         "parameter, both moments and the EMA); use torch.optim.AdamW for an "
                         "unfused optimizer")
    if fused is not None and fused is not True:
        raise TypeError(f"fused must be None or True, got {fused!r}")


def _check_capturable(capturable) -> None:
    """torch's ``capturable`` (megatron-core >= 0.18 passes it to its Adam): accepted and
    ignored. What it buys in torch, a step without host syncs, is this optimizer's only mode;
    a device-graph capture of ``step()`` is not supported either way (see the class)."""
    if not isinstance(capturable, bool):
        raise TypeError(f"capturable must be True or False, got {capturable!r}")


def _tensor_error(param: Tensor, t: Tensor, what: str, dtensor, dtypes=None) -> str | None:
    """``t`` (the gradient or a state tensor) must match the parameter: one shape and device
    (and, for DTensors, one sharding); the gradient has the parameter's dtype, a state tensor
    one of ``dtypes`` (the parameter's or fp32: either layout is converted at the step)."""
    if t.dtype not in dtypes:
        if what == "the gradient":
            return (f"{what} has dtype {t.dtype}, the parameter {param.dtype}: the kernel "
                    f"reads a gradient of {' or '.join(map(str, dtypes))} for this parameter "
                    f"and layout")
        return (f"{what} has dtype {t.dtype}, the parameter {param.dtype}: the state is "
                f"{' or '.join(map(str, dtypes))}")
    if t.shape != param.shape:
        return f"{what} has shape {list(t.shape)}, the parameter {list(param.shape)}"
    if t.device != param.device:
        return f"{what} is on {t.device}, the parameter on {param.device}"
    return _layout_error(param, t, what, dtensor)


def _state_dtypes(param_dtype: torch.dtype, key: str) -> tuple[torch.dtype, ...]:
    """The dtypes a state tensor may have when a step starts (either layout converts)."""
    return _MASTER_DTYPES if key == _MASTER else _STATE_DTYPES[param_dtype]


def _grad_dtypes(group: dict[str, Any], dtype: torch.dtype) -> tuple[torch.dtype, ...]:
    """The gradient dtypes the list op reads for a parameter of ``dtype`` in this group's layout
    (_dtypes.LIST_DTYPES): the parameter's, and fp32 (Megatron's ``main_grad``, torch's
    ``grad_dtype``)."""
    state, master = _layout(group, dtype)
    key = (dtype, state, master)
    dtypes = _GRAD_DTYPES.get(key)
    if dtypes is None:
        p, s = by_torch(dtype), by_torch(state)
        rows = grad_dtypes_of(_FP32, _FP32, p) if master else grad_dtypes_of(p, s)
        dtypes = _GRAD_DTYPES[key] = tuple(d.torch for d in rows)
    return dtypes


_GRAD_DTYPES: dict[tuple, tuple[torch.dtype, ...]] = {}


def _layout(group: dict[str, Any], dtype: torch.dtype) -> tuple[torch.dtype, bool]:
    """The state dtype and whether there is an fp32 master, for a parameter of ``dtype``."""
    if dtype == torch.float32:
        return torch.float32, False
    return group["state_dtype"] or dtype, bool(group["master_weights"])


def check_cpu_device(groups: list[dict[str, Any]]) -> None:
    """The CPU device's environment (ASCEND_EMA_ADAM_NUM_THREADS, _THREAD_POOL, _ISA,
    _8BIT_ENCODE) read as the step's launches will read it, before the step writes anything: a bad
    variable refuses the step with its counters, parameters and state as they were."""
    cpu = [g for g in groups if g["params"] and g["params"][0].device.type == "cpu"]
    if not cpu:
        return
    from .._extension import _C  # (imported here: the extension loads the torch ops)

    _C.cpu_threads()
    if any(g.get("state_bits") == 8 for g in cpu):
        _C.cpu_8bit_path()
