"""What every part of the optimizer shares: the state keys, the group options and their
defaults, and DTensor (FSDP2) shards (the op runs on each rank's local shard)."""

from __future__ import annotations

import contextlib
import sys
from operator import is_

import torch
from torch import Tensor

from .._dtypes import torch_float_dtypes

_VALID_DTYPES = torch_float_dtypes()
_STEP_SCOPES = ("param", "group")
_STATE_KEYS = ("exp_avg", "exp_avg_sq", "ema_params")
_MAX_V = "max_exp_avg_sq"  # AMSGrad's running maximum of exp_avg_sq (torch's key)
_MASTER = "master_param"   # the fp32 master of a 16-bit parameter (master_weights=True)
# The state tensors that follow the state dtype (the master is always fp32).
_WIDE_KEYS = _STATE_KEYS + (_MAX_V,)
_EMA_WARMUPS = ("num_updates", "power", None)
# ema_every=k's two meanings: "power", the decay**k on every k-th step (a constant-decay EMA
# sampled every k steps); "once", ema-pytorch's update_every: the decay once, on steps 1, k+1, ...
_EMA_EVERY_DECAYS = ("power", "once")
# Group options added by this optimizer (beside MindSpeed's and torch's), with their defaults.
_OPTION_DEFAULTS = dict(state_dtype=torch.float32, master_weights=False, ema_warmup="num_updates",
                        inv_gamma=1.0, power=2.0 / 3.0, min_ema_decay=0.0,
                        ema_update_after_step=0, ema_every=1, ema_every_decay="power",
                        max_grad_norm=None, state_bits=32, min_8bit_size=4096)
# torch's implementation switches that mean nothing here (and would move a reloading torch
# optimizer's steps to the device); dropped from loaded checkpoints.
_TORCH_ONLY_KEYS = ("fused", "capturable")
# Group keys that are this optimizer's settings: a loaded checkpoint does not change them.
_SETTINGS = ("foreach", "state_dtype", "master_weights", "ema_warmup", "inv_gamma", "power",
             "min_ema_decay", "ema_update_after_step", "ema_every", "ema_every_decay", "state_bits",
             "min_8bit_size")


def _has_ema(group: dict) -> bool:
    """Whether a group keeps an EMA: ``ema_decay=None`` turns it off (no ``ema_params`` state,
    no EMA in its launches; the EMA schedule options are kept but do nothing)."""
    return group["ema_decay"] is not None


def _same_objects(a: list, b: list) -> bool:
    return len(a) == len(b) and all(map(is_, a, b))


def _dtensor_type():
    """``torch.distributed.tensor.DTensor`` if that module is loaded, else None. A DTensor can
    only exist once the module is imported, so this never imports it (and costs nothing)."""
    module = sys.modules.get("torch.distributed.tensor")
    return getattr(module, "DTensor", None)


def _local(t: Tensor) -> Tensor:
    """The tensor the kernel updates: the local shard (a view) of a DTensor, else ``t``."""
    dtensor = _dtensor_type()
    if dtensor is not None and isinstance(t, dtensor):
        return t.to_local()
    return t


def _layout_error(param: Tensor, other: Tensor, what: str, dtensor) -> str | None:
    """A DTensor parameter needs its gradient and state sharded the same way (each rank updates
    exactly the elements it holds). ``dtensor``: :func:`_dtensor_type`'s answer."""
    if dtensor is None:
        return None
    p_is = isinstance(param, dtensor)
    o_is = isinstance(other, dtensor)
    if p_is != o_is:
        return (f"the parameter is {'a' if p_is else 'not a'} DTensor but {what} is "
                f"{'a' if o_is else 'not a'} DTensor")
    if p_is and (other.placements != param.placements or other.device_mesh != param.device_mesh):
        return f"{what} has placements {other.placements}, the parameter {param.placements}"
    return None


def counter_device(groups: list[dict], found_inf: Tensor | None) -> torch.device:
    """Where a device-side counter or norm lives: GradScaler's ``found_inf``'s device, else the
    first parameter's."""
    if found_inf is not None:
        return found_inf.device
    for group in groups:
        for p in group["params"]:
            return _local(p).device
    return torch.device("cpu")


_OPTIM_DIR = __file__.rsplit("/", 1)[0] + "/"
_TORCH_DIR = torch.__file__.rsplit("/", 1)[0] + "/"
_CONTEXTLIB = contextlib.__file__


def user_stacklevel() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` in the caller that names the user's line: the
    first frame outside this package's optim/, torch (whose Optimizer calls
    ``add_param_group`` and wraps ``step()`` in hooks) and contextlib (``swap_ema``)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(
            (_OPTIM_DIR, _TORCH_DIR, _CONTEXTLIB)):
        frame, level = frame.f_back, level + 1
    return level
