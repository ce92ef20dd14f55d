r"""FusedEmaAdamW: Adam/AdamW and an EMA of the weights in one fused kernel launch per
parameter group (per device and dtype).

A drop-in for MindSpeed's ``FusedEmaAdamW`` (``mindspeed/core/optimizer/fused_ema_adamw``): the
same constructor, errors and EMA helpers, running the updates through
:func:`ascend_ema_adam.ops.apply_fused_ema_adam_list` (``aclnnApplyFusedEmaAdamList``; with
``foreach=False`` one :func:`ascend_ema_adam.ops.npu_apply_fused_ema_adamw` per parameter) on CPU
tensors (this package's CPU device) and NPU tensors (CANN). On top of MindSpeed it adds torch's
per-parameter steps (``step_scope="param"``, the default; ``"group"`` is MindSpeed's layout, bit
for bit), checkpoints that load into and from ``torch.optim.AdamW`` and carry the EMA warm-up,
:meth:`FusedEmaAdamW.swap_ema`, :meth:`FusedEmaAdamW.ema_state_dict`, DTensor (FSDP2)
parameters and ``torch.compile``. ``docs/OPTIMIZER.md`` is the user guide.

Per step, for every group and every parameter :math:`\theta` with a gradient :math:`g`
(:math:`t` the parameter's own step, or its group's with ``step_scope="group"``; :math:`n` the
optimizer's update counter):

.. math::
    \begin{aligned}
    & t \leftarrow t + 1, \qquad n \leftarrow n + 1,
      \qquad d = \min\bigl(d_{\max}, \tfrac{1+n}{10+n}\bigr) \ \text{(or } d_{\max}
      \text{ without } use\_num\_updates) \\
    & g \leftarrow g + \lambda\theta \quad \text{(Adam-L2 mode only)} \\
    & m \leftarrow \beta_1 m + (1-\beta_1) g, \qquad v \leftarrow \beta_2 v + (1-\beta_2) g^2 \\
    & u = \frac{m / c_1}{\sqrt{v / c_2} + \epsilon} \;(+\, \lambda\theta \text{ in AdamW mode}),
      \qquad c_i = 1-\beta_i^t \text{ (1 without bias correction)} \\
    & \theta \leftarrow \theta - \gamma u, \qquad s \leftarrow d\,s + (1-d)\,\theta
    \end{aligned}

in fp32 arithmetic with the kernel's operation order (``docs/ARCHITECTURE.md``). The moments and
the EMA of 16-bit parameters are fp32 by default (``state_dtype``); with ``master_weights`` the
kernel updates an fp32 master and writes the 16-bit parameter as its rounding. AMSGrad, maximize,
``torch.amp.GradScaler`` (no unscale pass, no host sync), EMA schedules and tensor (capturable)
``lr``/``ema_decay`` are options; ``docs/OPTIMIZER.md`` lists them.
"""

from __future__ import annotations

import contextlib
import math
import sys
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from itertools import repeat
from operator import attrgetter, is_, itemgetter, methodcaller
from typing import Any

import torch
from torch import Tensor
from torch.optim.optimizer import Optimizer

from torch.utils._foreach_utils import _group_tensors_by_device_and_dtype

from . import _C
from ._dtypes import torch_float_dtypes
from .ops import apply_fused_ema_adam_list, npu_apply_fused_ema_adamw

__all__ = ["FusedEmaAdamW", "fused_ema_adamw"]

_VALID_DTYPES = torch_float_dtypes()
_STEP_SCOPES = ("param", "group")
_STATE_KEYS = ("exp_avg", "exp_avg_sq", "ema_params")
_MAX_V = "max_exp_avg_sq"  # AMSGrad's running maximum of exp_avg_sq (torch's key)
_MASTER = "master_param"   # the fp32 master of a 16-bit parameter (master_weights=True)
# The state tensors that follow the state dtype (the master is always fp32).
_WIDE_KEYS = _STATE_KEYS + (_MAX_V,)
_EMA_WARMUPS = ("num_updates", "power", None)
# Group options added by this optimizer (beside MindSpeed's and torch's), with their defaults.
_OPTION_DEFAULTS = dict(state_dtype=torch.float32, master_weights=False, ema_warmup="num_updates",
                        inv_gamma=1.0, power=2.0 / 3.0, min_ema_decay=0.0,
                        ema_update_after_step=0, ema_every=1)
# torch's implementation switches that mean nothing here (and would move a reloading torch
# optimizer's steps to the device); dropped from loaded checkpoints.
_TORCH_ONLY_KEYS = ("fused", "capturable")
# Group keys that are this optimizer's settings: a loaded checkpoint does not change them.
_SETTINGS = ("foreach", "state_dtype", "master_weights", "ema_warmup", "inv_gamma", "power",
             "min_ema_decay", "ema_update_after_step", "ema_every")
# A double narrowed to fp32 (round to nearest even) is inf from 2^128 - 2^103 on, and 1.0 from
# 1 - 2^-25 on: a beta of 1 makes the bias correction 1 - 1^t = 0.
_FP32_OVERFLOW = 2.0**128 - 2.0**103
_FP32_ROUNDS_TO_ONE = 1.0 - 2.0**-25


# ---------------------------------------------------------------------------------------------
# DTensor (FSDP2) support: the op runs on each rank's local shard


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


# ---------------------------------------------------------------------------------------------
# Functional form (MindSpeed's ``fused_ema_adamw``)


def fused_ema_adamw(grad: list[Tensor], var: list[Tensor], m: list[Tensor], v: list[Tensor],
                    s: list[Tensor], step: Tensor, lr: float, ema_decay: float, beta1: float,
                    beta2: float, eps: float, mode: int, bias_correction: bool,
                    weight_decay: float) -> None:
    """MindSpeed's functional form (same signature), in place, with one fused launch
    (:func:`ascend_ema_adam.ops.apply_fused_ema_adam_list`) per (device, dtype) group of the
    parameters.

    The tensors are plain (local) tensors; ``step`` is the int64 one-element step, copied once
    per other device when the tensors live on several devices.
    """
    if not len(grad) == len(var) == len(m) == len(v) == len(s):
        raise ValueError(f"fused_ema_adamw: {len(grad)} gradients, {len(var)} parameters, "
                         f"{len(m)}, {len(v)} and {len(s)} state tensors: one of each per "
                         f"parameter")
    groups = _group_tensors_by_device_and_dtype([var, grad, m, v, s])
    steps = {step.device: step}
    for (device, _), ((params, grads, exp_avgs, exp_avg_sqs, emas), _) in groups.items():
        step_here = steps.get(device)
        if step_here is None:
            step_here = steps[device] = step.to(device)
        apply_fused_ema_adam_list(grads, params, exp_avgs, exp_avg_sqs, emas, step_here, lr,
                                  ema_decay, beta1, beta2, eps, mode, bias_correction,
                                  weight_decay)


# ---------------------------------------------------------------------------------------------
# Validation: everything a step needs is checked before its first write


def _hyperparameter_error(lr, eps, betas, weight_decay, ema_decay) -> str | None:
    """MindSpeed's checks and texts, in its order; then this package's additions: ema_decay in
    [0, 1], and every value finite and usable once narrowed to fp32 (the kernel's precision).
    ``lr`` and ``ema_decay`` may be one-element float32 tensors (capturable): their values are
    read on the device by the kernel, never here (that would be a host sync)."""
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
    if isinstance(ema_decay, Tensor):
        error = _tensor_value_error("ema_decay", ema_decay)
        if error is not None:
            return error
    elif not 0.0 <= ema_decay <= 1.0:
        return "Invalid ema_decay value: {}".format(ema_decay)
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
    for key in ("master_weights", "amsgrad", "maximize"):
        if not isinstance(group[key], bool):
            return f"Invalid {key}: {group[key]!r} (True or False)"
    if group["master_weights"] and group["state_dtype"] is None:
        return ("Invalid state_dtype: None with master_weights=True (the state of an fp32 master "
                "is fp32: use state_dtype=torch.float32)")
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
    return None


def _check_tensor_hypers(i: int, group: dict[str, Any], j: int, device: torch.device) -> None:
    """A tensor lr/ema_decay must be on the device of parameter ``j`` (the kernel reads it)."""
    for name in ("lr", "ema_decay"):
        value = group[name]
        if isinstance(value, Tensor) and value.device != device:
            raise RuntimeError(f"param_groups[{i}]['params'][{j}]: the group's {name} tensor is "
                               f"on {value.device}, the parameter on {device}")


def _check_hyperparameters(group: dict[str, Any], where: str = "") -> None:
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


def _tensor_error(param: Tensor, t: Tensor, what: str, dtensor, dtypes=None) -> str | None:
    """``t`` (the gradient or a state tensor) must match the parameter: one shape and device
    (and, for DTensors, one sharding); the gradient has the parameter's dtype, a state tensor
    one of ``dtypes`` (the parameter's or fp32: either layout is converted at the step)."""
    if dtypes is None:
        if t.dtype != param.dtype:
            return (f"{what} has dtype {t.dtype}, the parameter {param.dtype}: the kernel reads "
                    f"the gradient in the parameter's dtype")
    elif t.dtype not in dtypes:
        return (f"{what} has dtype {t.dtype}, the parameter {param.dtype}: the state is "
                f"{' or '.join(map(str, dtypes))}")
    if t.shape != param.shape:
        return f"{what} has shape {list(t.shape)}, the parameter {list(param.shape)}"
    if t.device != param.device:
        return f"{what} is on {t.device}, the parameter on {param.device}"
    return _layout_error(param, t, what, dtensor)


def _state_dtypes(param_dtype: torch.dtype, key: str) -> tuple[torch.dtype, ...]:
    """The dtypes a state tensor may have when a step starts (either layout converts)."""
    if key == _MASTER or param_dtype == torch.float32:
        return (torch.float32,)
    return (param_dtype, torch.float32)


def _layout(group: dict[str, Any], dtype: torch.dtype) -> tuple[torch.dtype, bool]:
    """The state dtype and whether there is an fp32 master, for a parameter of ``dtype``."""
    if dtype == torch.float32:
        return torch.float32, False
    return group["state_dtype"] or dtype, bool(group["master_weights"])


def _step_number(value, where: str) -> int:
    """The value of a step (a number or a one-element tensor; a device tensor is read once):
    a whole number >= 0, the updates taken so far."""
    if isinstance(value, Tensor) and value.numel() != 1:
        raise ValueError(f"{where} holds {value.numel()} numbers, expected one")
    number = float(value)
    if not (math.isfinite(number) and number >= 0 and number == int(number)):
        raise ValueError(f"{where} is {number:g}; a step is a whole number >= 0 (the updates "
                         f"taken so far: the next update uses step + 1)")
    return int(number)


def _scalar_dtype() -> torch.dtype:
    """The dtype torch stores per-parameter steps in (``torch.optim.optimizer``'s rule)."""
    return torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32


def _host_step(number: float) -> Tensor:
    """A per-parameter step as torch stores it (not capturable, not fused): 0-d CPU float."""
    return torch.scalar_tensor(float(number), dtype=_scalar_dtype())


def _host_steps(numbers: list[int]) -> tuple[Tensor, ...]:
    """Many per-parameter steps at once (0-d CPU float views of one new tensor: one torch call
    for a whole group instead of one per parameter)."""
    return torch.tensor(numbers, dtype=_scalar_dtype()).unbind(0)


# ---------------------------------------------------------------------------------------------
# The EMA schedule, GradScaler's tensors, device-side steps

def _host_decay(group: dict[str, Any], n: int) -> float:
    """This step's EMA decay on the host, in float64 (the op narrows it to fp32), from the
    warm-up counter ``n`` (-1: off): diffusers' EMAModel.get_decay with MindSpeed's counting
    (``n`` is 1 on the first step). On an ema_every step, ``decay**k``."""
    d = float(group["ema_decay"])
    if n >= 0:
        m = n - group["ema_update_after_step"]
        if m <= 0:
            return 0.0  # the EMA is a copy of the weights until then
        warmup = group["ema_warmup"]
        if warmup == "num_updates":
            d = min(d, (1 + m) / (10 + m))
        elif warmup == "power":
            d = min(d, 1.0 - (1.0 + m / group["inv_gamma"]) ** -group["power"])
    d = max(d, group["min_ema_decay"])
    k = group["ema_every"]
    return math.pow(d, k) if k > 1 else d


def _device_decay(group: dict[str, Any], n, device: torch.device) -> Tensor:
    """:func:`_host_decay` with float64 tensor ops on ``device`` (the counter or the decay is
    a tensor: no host sync), narrowed to the op's float32 [1] decay tensor. The same IEEE
    operations in the same order: the same bits as the host's value narrowed."""
    f64 = dict(dtype=torch.float64, device=device)
    d_max = group["ema_decay"]
    # torch.full, not torch.tensor: a fill on the device, no host-to-device copy
    d = d_max.to(**f64).reshape(()) if isinstance(d_max, Tensor) else torch.full(
        (), float(d_max), **f64)
    counting = isinstance(n, Tensor) or n >= 0
    if counting:
        m = (n.to(**f64) if isinstance(n, Tensor) else torch.full((), float(n), **f64)) - float(
            group["ema_update_after_step"])
        warmup = group["ema_warmup"]
        if warmup == "num_updates":
            d = torch.minimum(d, (1 + m) / (10 + m))
        elif warmup == "power":
            d = torch.minimum(d, 1.0 - torch.pow(1.0 + m / group["inv_gamma"],
                                                 torch.full((), -group["power"], **f64)))
    d = torch.clamp_min(d, float(group["min_ema_decay"]))
    if counting:
        d = torch.where(m > 0, d, torch.zeros((), **f64))
    k = group["ema_every"]
    if k > 1:  # a tensor exponent: std::pow, as math.pow (a scalar 2 or 3 would multiply)
        d = torch.pow(d, torch.full((), float(k), **f64))
    return d.to(torch.float32).reshape(1)


def _op_step(step: Tensor, device: torch.device) -> Tensor:
    """The op's int64 [1] step of an update from a (float) step tensor before it."""
    return (step.to(device=device, dtype=torch.int64) + 1).reshape(1)


class _Scaler:
    """``torch.amp.GradScaler``'s ``grad_scale`` and ``found_inf`` of this step (both None
    without a scaler), moved to each device once."""

    __slots__ = ("grad_scale", "found_inf", "_on")

    def __init__(self, grad_scale: Tensor | None, found_inf: Tensor | None):
        self.grad_scale, self.found_inf = grad_scale, found_inf
        self._on: dict = {}

    def _get(self, what: str, t: Tensor | None, device: torch.device, dtype=None):
        if t is None:
            return None
        key = (what, device, dtype)
        out = self._on.get(key)
        if out is None:
            out = t.to(device, non_blocking=True)
            if dtype is not None:
                out = (out == 0).to(dtype)
            self._on[key] = out
        return out

    def scale_on(self, device: torch.device) -> Tensor | None:
        return self._get("scale", self.grad_scale, device)

    def found_on(self, device: torch.device) -> Tensor | None:
        return self._get("found", self.found_inf, device)

    def not_inf(self, device: torch.device, dtype: torch.dtype) -> Tensor:
        """``found_inf == 0`` as ``dtype`` on ``device``: what a step counter adds."""
        return self._get("ok", self.found_inf, device, dtype)


# ---------------------------------------------------------------------------------------------
# Swapping weights in and out (the EMA helpers)


def _checked_stash_device(stash_device) -> torch.device:
    device = torch.device(stash_device)  # RuntimeError for an unknown device string
    if device.type == "meta":
        raise ValueError(f"stash_device={stash_device!r}: a meta tensor cannot hold the training "
                         f"weights (it has no data); use 'cpu' or the parameters' device")
    return device


@contextlib.contextmanager
def _weights_swapped(pairs: Iterable[tuple[Tensor, Tensor]], stash_device):
    """Inside, each parameter of ``pairs`` holds its replacement's values; its own values come
    back on exit: after the body, after an exception in it, and after a failure half-way
    through the swap itself. The stash device is checked before anything is touched."""
    device = _checked_stash_device(stash_device)
    stash = []
    try:
        with torch.no_grad():
            for param, replacement in pairs:
                local = _local(param)
                stash.append((local, local.detach().to(device, copy=True)))
                local.copy_(_local(replacement))
            param = replacement = None  # the caller may be freeing the replacements as it goes
        yield
    finally:
        _copy_back(stash)


@torch.no_grad()
def _copy_back(stash: list[tuple[Tensor, Tensor]]) -> None:
    """Every stashed value back, even when one copy fails (the first error is raised after)."""
    error = None
    for local, saved in stash:
        try:
            local.copy_(saved)
        except Exception as e:  # noqa: BLE001 - keep restoring the others first
            error = error or e
    if error is not None:
        raise error


# ---------------------------------------------------------------------------------------------
# The step's work, bucketed for the launches


class _Item:
    """One parameter with a gradient, as checked before the step: its state and (per-parameter
    steps, eager) its step before this update: a host int, or a step tensor whose value only
    the device knows (a GradScaler step made it; parameters sharing that tensor share the
    value)."""

    __slots__ = ("param", "grad", "state", "step")

    def __init__(self, param: Tensor, grad: Tensor, state: dict, step):
        self.param, self.grad, self.state, self.step = param, grad, state, step


class _Bucket:
    """Parameters that share one launch: one device, one dtype, one step tensor (the lists the
    multi-tensor op takes). ``masters`` (fp32, the op's vars; the parameters are then its model
    copies) and ``max_vs`` (AMSGrad) stay empty when the group has none."""

    __slots__ = ("step", "params", "grads", "exp_avgs", "exp_avg_sqs", "ema_params", "max_vs",
                 "masters")

    def __init__(self, step: Tensor):
        self.step = step
        self.params, self.grads, self.exp_avgs, self.exp_avg_sqs, self.ema_params = (
            [], [], [], [], [])
        self.max_vs, self.masters = [], []

    def add(self, item: _Item, dtensor) -> None:
        """``dtensor``: :func:`_dtensor_type`'s answer (None: no DTensor can exist)."""
        st = item.state
        for target, t in ((self.params, item.param), (self.grads, item.grad),
                          (self.exp_avgs, st["exp_avg"]), (self.exp_avg_sqs, st["exp_avg_sq"]),
                          (self.ema_params, st["ema_params"]), (self.max_vs, st.get(_MAX_V)),
                          (self.masters, st.get(_MASTER))):
            if t is not None:
                target.append(t.to_local() if dtensor is not None and isinstance(t, dtensor)
                              else t)


# C-level accessors for the checks of a cached group (map() runs them without a Python frame).
_GRAD, _DTYPE, _DEVICE = (attrgetter(a) for a in ("grad", "dtype", "device"))
# (the master is absent for fp32 parameters: get gives None; every other key is always there)
_GETTERS = {**{key: itemgetter(key) for key in _WIDE_KEYS + ("step",)},
            _MASTER: methodcaller("get", _MASTER)}


def _same(xs):
    return xs


def _same_objects(a: list, b: list) -> bool:
    return len(a) == len(b) and all(map(is_, a, b))


def _group_config(group: dict[str, Any]) -> tuple:
    """What decides a group's state keys and launches (a cache is valid for one config)."""
    return (group["amsgrad"], group["master_weights"], group["state_dtype"])


def _state_keys(group: dict[str, Any]) -> tuple[str, ...]:
    """The state tensors a step of this group checks and updates (the master only for 16-bit
    parameters: the key is absent, ``get`` gives None, for fp32 ones)."""
    return (_STATE_KEYS + ((_MAX_V,) if group["amsgrad"] else ())
            + ((_MASTER,) if group["master_weights"] else ()))


class _GroupCache:
    """What a group's last full check established, kept while it still holds: the same
    parameters (objects; their dtypes, shapes and devices), each with a gradient, the same state
    dicts and state tensors (and, with per-parameter steps, the step tensors this optimizer wrote
    and their values). A step then re-checks the identities with C-level loops and the
    gradients' dtypes, shapes, devices and layouts in one C++ call, about a microsecond per
    parameter instead of ten, and launches from lists built once. Only for plain tensors (no
    DTensor), outside tracing."""

    __slots__ = ("config", "params", "refs", "state_map", "states", "columns", "step_tensors",
                 "step_values", "step_base", "step_version", "steps_handed_out", "buckets")

    def __init__(self, state_map, items: list[_Item], group: dict[str, Any]):
        self.config = _group_config(group)
        self.params = [item.param for item in items]
        # detached aliases: the dtype, shape and device each parameter had when it was checked
        self.refs = [p.detach() for p in self.params]
        self.state_map = state_map
        self.states = [item.state for item in items]
        self.columns = {key: list(map(_GETTERS[key], self.states)) for key in _state_keys(group)}
        self.step_tensors = None  # per-parameter steps: the tensors written, and their values
        self.step_values = None   # (host ints, or the one shared step tensor of a GradScaler step)
        # The tensor the step tensors are 0-d views of (None: they are one shared tensor), its
        # version after this optimizer's last write (a write by anyone else changes it: the
        # views share the base's counter), and whether state_dict() has handed them out.
        self.step_base = None
        self.step_version = -1
        self.steps_handed_out = False
        # (device, dtype) -> the parameters' indexes, in group order
        self.buckets: dict[tuple[torch.device, torch.dtype], list[int]] = {}
        for k, key in enumerate(zip(map(_DEVICE, self.params), map(_DTYPE, self.params))):
            self.buckets.setdefault(key, []).append(k)

    def grads_if_unchanged(self, group: dict[str, Any], state_map, state_unchanged: bool
                           ) -> list[Tensor] | None:
        """The parameters' gradients if everything cached still holds and every parameter has
        a gradient that matches it; None otherwise (the full check then runs, and raises the
        error if there is one). ``state_unchanged``: the optimizer's state map holds the same
        state dicts, in the same order, as after the last step."""
        params = group["params"]
        if (not state_unchanged or state_map is not self.state_map
                or _group_config(group) != self.config or not _same_objects(params, self.params)):
            return None
        grads = list(map(_GRAD, params))
        if not all(map(is_, map(type, grads), repeat(Tensor))):  # a missing (None) or DTensor
            return None
        states = self.states
        for key, tensors in self.columns.items():
            if not _same_objects(list(map(_GETTERS[key], states)), tensors):
                return None
        if self.step_tensors is not None and not (
                (self.step_base is None or self.step_base._version == self.step_version)
                and _same_objects(list(map(_GETTERS["step"], states)), self.step_tensors)):
            return None
        # The gradients against the parameters' dtypes, shapes and devices when they were
        # checked: a parameter changed since (p.data = ...) has a gradient of its new kind, so
        # the full check runs.
        if _C.first_unlike_gradient(self.refs, grads) != -1:
            return None
        return grads

    def buckets_for(self, grads: list[Tensor], step_of) -> list[_Bucket]:
        """One bucket per (device, dtype), with the step tensor ``step_of(device)``."""
        out = []
        columns = self.columns
        for (device, _), indexes in self.buckets.items():
            b = _Bucket(step_of(device))
            if len(indexes) == len(self.params):  # the usual case: one device and dtype
                pick = _same
            else:
                pick = ((lambda xs, get=itemgetter(*indexes): list(get(xs))) if len(indexes) > 1
                        else (lambda xs, k=indexes[0]: [xs[k]]))
            b.params, b.grads = pick(self.params), pick(grads)
            b.exp_avgs, b.exp_avg_sqs = pick(columns["exp_avg"]), pick(columns["exp_avg_sq"])
            b.ema_params = pick(columns["ema_params"])
            if _MAX_V in columns:
                b.max_vs = pick(columns[_MAX_V])
            if _MASTER in columns:
                b.masters = [m for m in pick(columns[_MASTER]) if m is not None]
            out.append(b)
        return out


class FusedEmaAdamW(Optimizer):
    r"""Adam/AdamW with an exponential moving average of the weights, one fused multi-tensor
    kernel launch per device and dtype of a parameter group (a drop-in for MindSpeed's
    ``FusedEmaAdamW``).

    Args:
        params: iterable of parameters, dicts defining parameter groups, or named parameters
            (``named_parameters(remove_duplicate=False)`` keeps tied weights' other names for
            :meth:`ema_state_dict`). DTensor parameters (FSDP2 ``fully_shard``) are updated
            shard by shard, and their state stays sharded.
        lr (float): learning rate (default: 1e-3).
        eps (float): added to the denominator after the square root (default: 1e-8).
        betas (tuple[float, float]): coefficients of the first and second moments
            (default: (0.9, 0.999)).
        weight_decay (float): decoupled (AdamW) or L2 (Adam) weight decay (default: 1e-2).
        ema_decay (float): the EMA decay :math:`d_{\max}` (default: 0.9999). Also a per-group
            option, and settable later through :attr:`ema_decay` (as Megatron's glue does).
        amsgrad (bool): AMSGrad: the denominator uses the running maximum of ``exp_avg_sq``
            (state ``max_exp_avg_sq``, as torch) (default: False).
        maximize (bool): ascend the gradient instead of descending (default: False).
        use_num_updates (bool): EMA warm-up: the decay is ``min(ema_decay, (1+n)/(10+n))`` with
            ``n`` the number of steps taken, counted from 1 (default: True).
        bias_correction (bool): divide the moments by ``1 - beta**step`` (default: True).
        adam_w_mode (bool): decoupled weight decay (AdamW, kernel mode 1); False gives Adam with
            L2 decay added to the gradient (mode 0) (default: True).
        set_grad_none (bool): :meth:`zero_grad` sets gradients to None; False zeroes them
            (default: True).
        step_scope (str): ``"param"`` (default): each parameter counts its own updates, as
            torch's optimizers do (``state[p]["step"]``), so a parameter that first gets a
            gradient late starts its bias correction at 1. ``"group"``: MindSpeed's one step per
            group (``param_groups[i]["step"]``), counted also when no parameter has a gradient;
            bit-compatible with MindSpeed.
        foreach (bool | None): torch's keyword. None/True: one multi-tensor launch
            (``apply_fused_ema_adam_list``) per bucket of a group (its parameters of one device
            and dtype, and one step value), False: one launch per parameter; both give the same
            bits (default: None).
        fused (bool | None): torch's keyword: this optimizer is always fused; ``False`` raises
            ``ValueError`` (default: None).
        state_dtype (torch.dtype | None): the dtype of ``exp_avg``, ``exp_avg_sq``,
            ``max_exp_avg_sq`` and ``ema_params`` of 16-bit parameters: ``torch.float32``
            (default), or None for the parameter's dtype (MindSpeed's layout). fp32 parameters
            always have fp32 state. A checkpoint of either layout converts on load.
        master_weights (bool): 16-bit parameters get an fp32 master (state ``master_param``,
            from the parameter at its first step); the kernel updates the master and writes the
            parameter as the master rounded to nearest even, and the EMA follows the master
            (default: False; fp32 parameters need no master).
        ema_warmup (str | None): the EMA decay schedule, from the warm-up counter ``n``:
            ``"num_updates"`` (default, MindSpeed's ``min(ema_decay, (1+n)/(10+n))``), ``"power"``
            (timm/diffusers: ``min(ema_decay, 1 - (1 + n/inv_gamma)**-power)``) or None
            (constant ``ema_decay``; ``use_num_updates=False`` is its old spelling).
        inv_gamma, power (float): the ``"power"`` warm-up's constants (defaults 1.0 and 2/3).
        min_ema_decay (float): the decay never goes below this, after the warm-up's min
            (default: 0.0).
        ema_update_after_step (int): for the first this many steps the EMA is a plain copy of
            the weights (decay 0); the warm-up counts from there (default: 0).
        ema_every (int): update the EMA on every k-th ``step()`` with ``decay**k``; the other
            steps do not touch it (default: 1).

    ``lr`` and ``ema_decay`` may also be one-element float32 tensors on the parameters'
    device: the kernel reads them there, so ``step()`` never syncs (capturable). Under
    ``torch.amp.GradScaler`` the step reads its ``grad_scale`` and ``found_inf`` (no unscale
    pass, no host sync); a step with an inf/NaN gradient changes nothing, counters included.

    State, per parameter: ``exp_avg``, ``exp_avg_sq`` (zeros), ``ema_params`` (a copy of the
    parameter, or of its master), ``max_exp_avg_sq`` (amsgrad), ``master_param``
    (master_weights), created at the parameter's first step, and (``step_scope="param"``)
    ``step``, a 0-d float32 CPU tensor like torch's (on the GradScaler's device once a scaler
    drives the steps: its value is then the device's). Per group:
    ``num_updates`` (the warm-up counter, -1 without warm-up), ``ema_decay``, ``foreach``,
    ``decoupled_weight_decay`` (mirrors ``adam_w_mode`` for torch's loaders) and
    (``step_scope="group"``) ``step``, an int64 tensor of one element on the group's device.
    Parameters without a gradient are skipped; their state (and EMA) is untouched.
    """

    def __init__(self, params, lr=1e-3, eps=1e-8, betas=(0.9, 0.999), weight_decay=1e-2,
                 ema_decay=0.9999, amsgrad=False, *, maximize=False, use_num_updates=True,
                 bias_correction=True, adam_w_mode=True, set_grad_none=True, step_scope="param",
                 foreach=None, fused=None, state_dtype=torch.float32, master_weights=False,
                 ema_warmup="num_updates", inv_gamma=1.0, power=2.0 / 3.0, min_ema_decay=0.0,
                 ema_update_after_step=0, ema_every=1):
        options = dict(state_dtype=state_dtype, master_weights=master_weights,
                       ema_warmup=ema_warmup if use_num_updates else None, inv_gamma=inv_gamma,
                       power=power, min_ema_decay=min_ema_decay,
                       ema_update_after_step=ema_update_after_step, ema_every=ema_every)
        error = _hyperparameter_error(lr, eps, betas, weight_decay, ema_decay) or _option_error(
            dict(options, amsgrad=amsgrad, maximize=maximize))
        if error is not None:
            raise ValueError(error)
        _check_implementation(foreach, fused)
        if step_scope not in _STEP_SCOPES:
            raise ValueError(f"step_scope must be 'param' or 'group', got {step_scope!r}")
        if not use_num_updates and (ema_warmup == "power" or ema_update_after_step):
            raise ValueError("use_num_updates=False turns the warm-up counter off: "
                             "ema_warmup='power' and ema_update_after_step need it")
        self.use_num_updates = bool(use_num_updates)
        self.adam_w_mode = 1 if adam_w_mode else 0
        self.set_grad_none = set_grad_none
        self.step_scope = step_scope
        self._reset_caches()
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=betas, eps=eps,
                        weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        ema_decay=ema_decay, foreach=foreach, **options)
        super().__init__(params, defaults)

    def _reset_caches(self) -> None:
        # Host values of the group steps this optimizer wrote (group index -> (tensor, value)),
        # and the int64 device steps of the last update ((device, value) -> tensor): neither is
        # ever read back from the device.
        self._known_group_steps: dict[int, tuple[Tensor, int]] = {}
        self._device_steps: dict[tuple[torch.device, int], Tensor] = {}
        # Per group index: what its last full check established (_GroupCache), and the state
        # map's dicts after the last step.
        self._group_caches: dict[int, _GroupCache] = {}
        self._state_values: list = []
        # The per-parameter step tensors that GradScaler steps made, shared by the parameters
        # of one launch (id -> tensor): their values live on the device, the host never reads
        # them.
        self._shared_steps: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

    # -- optimizer-wide EMA settings (MindSpeed attributes), stored in every param group so
    # -- that checkpoints and ZeroRedundancyOptimizer (which syncs group keys) carry them

    @property
    def _initial_num_updates(self) -> int:
        return 0 if self.use_num_updates else -1

    @property
    def num_updates(self) -> int:
        """Steps taken, for the EMA warm-up (MindSpeed's attribute; -1: warm-up off)."""
        return int(self.param_groups[0].get("num_updates", self._initial_num_updates))

    @num_updates.setter
    def num_updates(self, value: int) -> None:
        for group in self.param_groups:
            group["num_updates"] = int(value)

    @property
    def ema_decay(self) -> float:
        """The EMA decay (MindSpeed's attribute). Setting it sets every group's decay."""
        return self.param_groups[0].get("ema_decay", self.defaults["ema_decay"])

    @ema_decay.setter
    def ema_decay(self, value: float | Tensor) -> None:
        error = (_tensor_value_error("ema_decay", value) if isinstance(value, Tensor)
                 else None if 0.0 <= value <= 1.0 else "Invalid ema_decay value: {}".format(value))
        if error is not None:
            raise ValueError(error)
        self.defaults["ema_decay"] = value
        for group in self.param_groups:
            group["ema_decay"] = value

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group (torch semantics); its own hyper-parameters are validated like the
        constructor's, and it joins the optimizer's current warm-up count. Named parameters
        listed twice (tied weights from ``named_parameters(remove_duplicate=False)``) are kept
        once, their other names in the group's ``param_aliases``."""
        if isinstance(param_group, dict):
            merged = {**self.defaults, **param_group}
            _check_hyperparameters(merged)
            if not self.use_num_updates and (merged["ema_warmup"] is not None
                                             or merged["ema_update_after_step"]):
                raise ValueError("use_num_updates=False turns the warm-up counter off: "
                                 "ema_warmup and ema_update_after_step need it")
            _check_implementation(merged["foreach"], None)
            _merge_tied_names(param_group)
        current = (self.param_groups[0].get("num_updates", self._initial_num_updates)
                   if self.param_groups else self._initial_num_updates)
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        group.setdefault("num_updates", current)
        group.setdefault("ema_calls", 0)
        group["decoupled_weight_decay"] = bool(self.adam_w_mode)

    # -- gradients

    def zero_grad(self, set_to_none: bool | None = None) -> None:
        """Set gradients to None (``set_grad_none``, MindSpeed's behaviour) or zero them;
        ``set_to_none`` overrides the constructor's choice for one call."""
        if set_to_none is None:
            set_to_none = self.set_grad_none
        if not torch.compiler.is_compiling():
            super().zero_grad(set_to_none=set_to_none)
            return
        # torch's zero_grad is excluded from tracing; inside a compiled training step the same
        # work is traced here (a full graph needs it)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    # -- the step: check everything, then write

    # torch.amp.GradScaler: step() reads self.grad_scale / self.found_inf (set by the scaler)
    _step_supports_amp_scaling = True

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns the closure's loss.

        Every group and parameter is checked first (hyper-parameters, dtypes, shapes, devices,
        state, steps): a step that raises has changed nothing."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if torch.compiler.is_compiling() and self._needs_eager_update():
            self._update_outside_graph()
        else:
            self._update()
        return loss

    @torch.no_grad()
    def _update(self) -> None:
        """Check every group (read only), then create missing state, count, and launch. A group
        whose last full check still holds (its _GroupCache) re-checks only what may change."""
        dtensor = _dtensor_type()
        compiling = torch.compiler.is_compiling()
        cacheable = not compiling
        scaler = _Scaler(getattr(self, "grad_scale", None), getattr(self, "found_inf", None))
        # The state map as after the last step (same state dicts, same order; no hashing)?
        state_unchanged = cacheable and _same_objects(list(self.state.values()),
                                                      self._state_values)
        plan = []
        for i, group in enumerate(self.param_groups):
            cache = self._group_caches.get(i) if cacheable else None
            grads = None
            if cache is not None and not (self.step_scope == "param" and "step" in group):
                grads = cache.grads_if_unchanged(group, self.state, state_unchanged)
            if grads is not None:
                _check_hyperparameters(group, f"param_groups[{i}]: ")
                for (device, _), indexes in cache.buckets.items():
                    _check_tensor_hypers(i, group, indexes[0], device)
                if self.step_scope == "group":
                    self._group_step_before(i, group)
                plan.append((i, group, None, cache, grads))
            else:
                plan.append((i, group, self._checked_group(i, group, dtensor), None, None))

        for _, group, items, _, _ in plan:
            for item in items or ():
                self._complete_state(item, group)
        n = self._advance_num_updates(scaler)
        device_steps: dict[tuple[torch.device, int], Tensor] = {}
        for i, group, items, cache, grads in plan:
            if cache is not None:
                buckets = self._advance_cached(i, group, cache, grads, device_steps, scaler)
            elif self.step_scope == "group":
                buckets = self._advance_group_step(i, group, items, dtensor, scaler)
            else:
                buckets = self._advance_param_steps(i, group, items, device_steps, dtensor,
                                                    scaler)
            self._launch(group, buckets, n, scaler)
            if cacheable and cache is None:
                self._remember(i, group, items)
        if cacheable:
            self._device_steps = device_steps
            self._state_values = list(self.state.values())

    def _remember(self, i: int, group: dict[str, Any], items: list[_Item]) -> None:
        """Cache group ``i`` after a full check and update, if every parameter had a gradient
        (the common case; otherwise the next step checks it fully again)."""
        dtensor = _dtensor_type()
        if (not items or len(items) != len(group["params"])
                or (dtensor is not None
                    and any(isinstance(item.param, dtensor) for item in items))):
            self._group_caches.pop(i, None)
            return
        cache = _GroupCache(self.state, items, group)
        if self.step_scope == "param":
            steps = [item.state["step"] for item in items]
            if _same_objects(steps, [steps[0]] * len(steps)) and self._is_device_step(steps[0]):
                cache.step_values = [steps[0]] * len(steps)  # one shared GradScaler step
            else:
                base = steps[0]._base
                if base is None or not all(t._base is base for t in steps):
                    self._group_caches.pop(i, None)  # not the views _host_steps made
                    return
                cache.step_base, cache.step_version = base, base._version
                cache.step_values = [item.step + 1 for item in items]
            cache.step_tensors = steps
        self._group_caches[i] = cache

    def _advance_cached(self, i: int, group: dict[str, Any], cache: _GroupCache,
                        grads: list[Tensor], device_steps: dict, scaler) -> list[_Bucket]:
        """The steps and buckets of a cached group: what _advance_group_step and
        _advance_param_steps do, from the cached lists."""
        if self.step_scope == "group":
            step = self._next_group_step(i, group, scaler)
            return cache.buckets_for(grads, lambda device: step)
        values = cache.step_values
        first = values[0]
        if scaler.found_inf is None and not isinstance(first, Tensor) and values.count(
                first) == len(values):
            values = [first + 1] * len(values)
            buckets = cache.buckets_for(
                grads, lambda device: self._device_step(device, values[0], device_steps))
            if cache.steps_handed_out:  # out of place: a saved state dict keeps its values
                cache.step_tensors = list(_host_steps(values))
                cache.step_base = cache.step_tensors[0]._base
                for state, step in zip(cache.states, cache.step_tensors):
                    state["step"] = step
            else:  # nobody else holds this optimizer's step tensors: one in-place add
                cache.step_base.add_(1)
            cache.step_version = cache.step_base._version
            cache.steps_handed_out = False
            cache.step_values = values
            return buckets
        if isinstance(first, Tensor) and all(map(is_, values, repeat(first))):
            # one shared device-side step (GradScaler): one launch per device and dtype
            new = self._next_shared_step(first, scaler)
            buckets = cache.buckets_for(grads, lambda device: _op_step(first, device))
            for state in cache.states:
                state["step"] = new
            cache.step_tensors = [new] * len(values)
            cache.step_values = [new] * len(values)
            return buckets
        # parameters at different steps, or a GradScaler's first step: the general path
        items = [_Item(p, g, st, v) for p, g, st, v in
                 zip(cache.params, grads, cache.states, values)]
        buckets = self._advance_param_steps(i, group, items, device_steps, None, scaler)
        self._group_caches.pop(i, None)  # the next step checks fully and caches again
        return buckets

    # Under torch.compile every float the op receives is a constant of the graph, so the warm-up
    # counter and decay are tensors there (computed on the device). ema_every's EMA-or-not is a
    # host decision, new every step: with ema_every > 1 the update runs eagerly (one graph break
    # at the call of step()).
    try:
        _update_outside_graph = torch.compiler.disable(
            _update, reason="FusedEmaAdamW: ema_every > 1 decides on the host whether a step "
            "updates the EMA, so the update runs outside the graph")
    except TypeError:  # torch before 2.8: no reason
        _update_outside_graph = torch.compiler.disable(_update)

    def _needs_eager_update(self) -> bool:
        """Under tracing: would the traced update take a new constant on every step? (ema_every's
        EMA-or-not is decided on the host.)"""
        return any(group["ema_every"] > 1 for group in self.param_groups)

    def _checked_group(self, i: int, group: dict[str, Any], dtensor) -> list[_Item]:
        """Check group ``i`` and its parameters with a gradient; read only."""
        _check_hyperparameters(group, f"param_groups[{i}]: ")
        compiling = torch.compiler.is_compiling()
        per_param = self.step_scope == "param" and not compiling
        keys = _state_keys(group)
        items = []
        for j, p in enumerate(group["params"]):
            grad = p.grad
            if grad is None:
                continue
            where = f"param_groups[{i}]['params'][{j}]: "
            # MindSpeed's two checks and texts first, naming the parameter
            if p.dtype not in _VALID_DTYPES:
                raise RuntimeError(where + 'ema_adamw only support fp32, fp16, bf16. '
                                   f'(this parameter is {p.dtype})')
            if grad.is_sparse:
                raise RuntimeError(where + 'AdamW does not support sparse gradients')
            error = _tensor_error(p, grad, "the gradient", dtensor)
            state = self.state[p] if p in self.state else {}
            for key in keys:
                if error is None and state.get(key) is not None:
                    error = _tensor_error(p, state[key], f"state '{key}'", dtensor,
                                          _state_dtypes(p.dtype, key))
            if error is not None:
                raise RuntimeError(where + error)
            _check_tensor_hypers(i, group, j, _local(p).device)
            step = self._param_step_before(i, group, state, where) if per_param else None
            items.append(_Item(p, grad, state, step))
        if self.step_scope == "group" and not compiling:
            self._group_step_before(i, group)
        return items

    def _complete_state(self, item: _Item, group: dict[str, Any]) -> None:
        """Create the missing state, key by key (a partially loaded state, e.g. a ZeRO load of
        a torch AdamW checkpoint, is completed rather than rejected), and bring it to the
        group's layout: the master created (or dropped), the state dtype converted."""
        p, state = item.param, item.state
        if not state:
            state = item.state = self.state[p]
        state_dtype, master = _layout(group, p.dtype)
        if master and _MASTER not in state:
            state[_MASTER] = p.detach().to(torch.float32, copy=True)
        elif not master:
            state.pop(_MASTER, None)
        for key in ("exp_avg", "exp_avg_sq") + ((_MAX_V,) if group["amsgrad"] else ()):
            if key not in state:
                state[key] = torch.zeros_like(p, dtype=state_dtype,
                                              memory_format=torch.preserve_format)
        if "ema_params" not in state:  # the EMA starts at the weights (the master's, if any)
            state["ema_params"] = state.get(_MASTER, p).detach().to(state_dtype, copy=True)
        for key in _WIDE_KEYS:
            if key in state and state[key].dtype != state_dtype:
                state[key] = state[key].to(state_dtype)

    def _advance_num_updates(self, scaler: "_Scaler"):
        """The optimizer-wide warm-up counter (MindSpeed's), once per step, and each group's
        ema_every clock (``ema_calls``: step() calls, counted on the host). The constructor's
        ``use_num_updates`` decides whether it counts, whatever a loaded group says. Under a
        GradScaler or torch.compile the counter is an int64 tensor advanced on the device
        (``+ (found_inf == 0)``: a skipped step does not count). Returns the new count."""
        compiling = torch.compiler.is_compiling()
        if not compiling:
            for group in self.param_groups:
                if group["ema_every"] > 1:
                    group["ema_calls"] = group.get("ema_calls", 0) + 1
        if not self.use_num_updates:
            n = -1
        else:
            n = self.param_groups[0].get("num_updates", 0) if self.param_groups else 0
            if not isinstance(n, Tensor) and scaler.found_inf is None and not compiling:
                n = max(n, 0) + 1
            else:
                if not isinstance(n, Tensor):
                    n = torch.full((), max(n, 0), dtype=torch.int64,
                                   device=self._counter_device(scaler))
                n = n + 1 if scaler.found_inf is None else n + scaler.not_inf(n.device,
                                                                              torch.int64)
        for group in self.param_groups:
            group["num_updates"] = n
        return n

    def _counter_device(self, scaler: "_Scaler") -> torch.device:
        if scaler.found_inf is not None:
            return scaler.found_inf.device
        for group in self.param_groups:
            for p in group["params"]:
                return _local(p).device
        return torch.device("cpu")

    # -- steps: per group (MindSpeed) or per parameter (torch)

    def _group_step_before(self, i: int, group: dict[str, Any]):
        """The group's step before this update, checked, without reading the device: the value
        this optimizer wrote last, else read once (a checkpoint, an assignment, a ZeRO sync).
        None: this optimizer's own step tensor, advanced on the device by a GradScaler."""
        step = group.get("step")
        if step is None:  # fresh, or per-parameter steps from a checkpoint (ZeRO loads)
            steps = [_step_number(self.state[p]["step"], f"param_groups[{i}]['params'][{j}]: "
                                  f"state 'step'")
                     for j, p in enumerate(group["params"])
                     if p in self.state and "step" in self.state[p]]
            return max(steps, default=0)
        known = self._known_group_steps.get(i)
        if known is not None and known[0] is step:
            return known[1]
        value = _step_number(step, f"param_groups[{i}]: step")
        self._known_group_steps[i] = (step, value)
        return value

    def _advance_group_step(self, i: int, group: dict[str, Any], items: list[_Item], dtensor,
                            scaler) -> list[_Bucket]:
        """The group's next step (_next_group_step) and one bucket per (device, dtype).
        Every group counts, with or without gradients (MindSpeed), empty ones too, so
        ZeroRedundancyOptimizer's per-rank partitions of a group keep equal counters."""
        step = self._next_group_step(i, group, scaler)
        buckets: dict[tuple[torch.device, torch.dtype], _Bucket] = {}
        for item in items:
            key = (item.param.device, item.param.dtype)
            if key not in buckets:
                buckets[key] = _Bucket(step)
            buckets[key].add(item, dtensor)
        return list(buckets.values())

    def _next_group_step(self, i: int, group: dict[str, Any], scaler) -> Tensor:
        """Increment (or create) the group's int64 step on the group's device; returns the
        step of this update (under a GradScaler the group keeps ``step + (found_inf == 0)``).

        Out of place: a step tensor shared with a state dict (ZeroRedundancyOptimizer's load
        shares the caller's tensors) or saved earlier never changes behind the caller's back."""
        device = _local(group["params"][0]).device if group["params"] else torch.device("cpu")
        step = group.get("step")
        before = None if torch.compiler.is_compiling() else self._group_step_before(i, group)
        if step is None:
            step = torch.tensor([before or 0], dtype=torch.int64, device=device)
            for p in group["params"]:  # per-parameter steps of a loaded checkpoint, now merged
                if p in self.state:
                    self.state[p].pop("step", None)
        this = step.to(device) + 1
        if scaler.found_inf is None:
            group["step"] = this
            after = None if before is None else before + 1
        else:
            group["step"] = step.to(device) + scaler.not_inf(device, torch.int64)
            after = None
        if not torch.compiler.is_compiling():
            self._known_group_steps[i] = (group["step"], after)
        return this

    def _param_step_before(self, i: int, group: dict[str, Any], state: dict, where: str):
        """A parameter's step before this update, on the host: its own, else (a group-step
        checkpoint synced in by ZeroRedundancyOptimizer) its group's, else 0 (first update).
        A step tensor this optimizer shares between parameters (GradScaler) is returned as it
        is: its value lives on the device."""
        if "step" in state:
            if self._is_device_step(state["step"]):
                return state["step"]
            return _step_number(state["step"], where + "state 'step'")
        if "step" in group and "exp_avg" in state:
            return _step_number(group["step"], f"param_groups[{i}]: step")
        return 0

    def _is_device_step(self, step: Tensor) -> bool:
        return self._shared_steps.get(id(step)) is step

    def _next_shared_step(self, step, scaler) -> Tensor:
        """The step tensor of parameters that share one device-side step (made by a
        GradScaler step), after this update: one tensor for all of them."""
        if isinstance(step, Tensor):
            new = step + (1 if scaler.found_inf is None else scaler.not_inf(step.device,
                                                                              step.dtype))
        else:  # a host value: the new tensor lives on the scaler's device (no device read)
            device = scaler.found_inf.device if scaler.found_inf is not None else torch.device(
                "cpu")
            new = torch.full((), float(step), dtype=_scalar_dtype(), device=device)
            new = new + (1 if scaler.found_inf is None else scaler.not_inf(device, new.dtype))
        self._shared_steps[id(new)] = new
        return new

    def _advance_param_steps(self, i: int, group: dict[str, Any], items: list[_Item],
                             device_steps: dict, dtensor, scaler) -> list[_Bucket]:
        """Each parameter's own step, incremented out of place and kept on the host (as torch
        does without ``capturable``); one bucket per (device, dtype, step value), normally one
        per device and dtype. The op's int64 [1] device step of each value is made once per
        update, from the previous update's (one device op) when it can be: nothing is read
        back from the device. Under a GradScaler the parameters of one bucket share one step
        tensor, ``step + (found_inf == 0)``, whose value the host does not know."""
        if "step" in group:  # a group-step checkpoint synced in by ZeroRedundancyOptimizer
            self._split_group_step(i, group)
        if torch.compiler.is_compiling():  # step values are unknown while tracing
            buckets = []
            for item in items:
                old = item.state.get("step")
                new = (old if old is not None else torch.zeros((), dtype=_scalar_dtype())) + 1
                device = _local(item.param).device
                buckets.append(_Bucket(new.to(torch.int64).reshape(1).to(device)))
                if scaler.found_inf is not None:  # on the scaler's device: no device read
                    device = scaler.found_inf.device
                    new = new.to(device) - 1 + scaler.not_inf(device, new.dtype)
                item.state["step"] = new
                buckets[-1].add(item, dtensor)
            return buckets
        buckets: dict[tuple, _Bucket] = {}
        shared: dict[tuple, Tensor] = {}
        host_known = scaler.found_inf is None and not any(
            isinstance(item.step, Tensor) for item in items)
        new_steps = _host_steps([item.step + 1 for item in items]) if host_known else None
        for k, item in enumerate(items):
            device = item.param.device if dtensor is None else _local(item.param).device
            before = item.step
            if isinstance(before, Tensor):
                key = (device, item.param.dtype, id(before))
                if key not in buckets:
                    buckets[key] = _Bucket(_op_step(before, device))
            else:
                key = (device, item.param.dtype, before + 1)
                if key not in buckets:
                    buckets[key] = _Bucket(self._device_step(device, before + 1, device_steps))
            buckets[key].add(item, dtensor)
            if host_known:
                item.state["step"] = new_steps[k]
            else:
                if key not in shared:
                    shared[key] = self._next_shared_step(before, scaler)
                item.state["step"] = shared[key]
        return list(buckets.values())

    def _device_step(self, device: torch.device, value: int, device_steps: dict) -> Tensor:
        step = device_steps.get((device, value))
        if step is None:
            previous = self._device_steps.get((device, value - 1))
            if previous is not None:
                step = previous + 1
            else:
                step = torch.tensor([value], dtype=torch.int64, device=device)
            device_steps[(device, value)] = step
        return step

    def _split_group_step(self, i: int, group: dict[str, Any]) -> None:
        """Per-parameter steps from a group step (a MindSpeed-layout checkpoint): every
        parameter with state takes the group's value."""
        value = _step_number(group.pop("step"), f"param_groups[{i}]: step")
        for p in group["params"]:
            state = self.state.get(p)
            if state and "exp_avg" in state and "step" not in state:
                state["step"] = _host_step(value)

    # -- the launches

    def _launch(self, group: dict[str, Any], buckets: list[_Bucket], n, scaler) -> None:
        """The group's hyper-parameters and this step's EMA decay (computed once per step from
        the optimizer-wide counter: on the host, or on the device when the counter or the
        decay is a tensor), then per bucket one multi-tensor launch (what ``fused_ema_adamw``
        does for one device and dtype), or with ``foreach=False`` one launch per parameter
        (the same bits)."""
        if not buckets:
            return
        ema_on = group["ema_every"] == 1 or group.get("ema_calls", 0) % group["ema_every"] == 0
        device_decay = isinstance(n, Tensor) or isinstance(group["ema_decay"], Tensor)
        host_decay = None if device_decay or not ema_on else _host_decay(group, n)
        beta1, beta2 = group["betas"]
        lr = group["lr"]
        rest = (float(beta1), float(beta2), float(group["eps"]), self.adam_w_mode,
                bool(group["bias_correction"]), float(group["weight_decay"]))
        maximize = bool(group["maximize"])
        per_param = group.get("foreach") is False
        decays: dict[torch.device, Tensor] = {}
        for b in buckets:
            device = b.params[0].device
            if ema_on and device_decay:
                if device not in decays:
                    decays[device] = _device_decay(group, n, device)
                decay = decays[device]
            else:
                decay = host_decay if ema_on else 1.0  # (no EMA list: the decay is unused)
            extras = {key: value for key, value in (
                ("max_vs", b.max_vs), ("model_copies", b.params if b.masters else None),
                ("grad_scale", scaler.scale_on(device)), ("found_inf", scaler.found_on(device)),
                ("maximize", maximize)) if value is not None and value is not False
                and value != []}  # only what is used: the op's defaults stay implicit
            ss = b.ema_params if ema_on else None  # None: the launch does not touch the EMA
            vars = b.masters or b.params
            step = b.step if b.step.device == device else b.step.to(device)
            if not per_param:  # the bucket is one device and dtype already: no regrouping
                apply_fused_ema_adam_list(b.grads, vars, b.exp_avgs, b.exp_avg_sqs, ss, step,
                                          lr, decay, *rest, **extras)
            elif (not b.masters and not b.max_vs and not maximize and scaler.found_inf is None
                  and scaler.grad_scale is None and ema_on and not isinstance(lr, Tensor)
                  and not isinstance(decay, Tensor) and b.exp_avgs[0].dtype == vars[0].dtype):
                # what the single op can do: one call of it per parameter
                for update in zip(b.grads, vars, b.exp_avgs, b.exp_avg_sqs, b.ema_params):
                    npu_apply_fused_ema_adamw(*update, step, float(lr), float(decay), *rest)
            else:  # one launch of the list op per parameter
                for k in range(len(vars)):
                    one = dict(extras)
                    if b.max_vs:
                        one["max_vs"] = [b.max_vs[k]]
                    if b.masters:
                        one["model_copies"] = [b.params[k]]
                    apply_fused_ema_adam_list([b.grads[k]], [vars[k]], [b.exp_avgs[k]],
                                              [b.exp_avg_sqs[k]], None if ss is None else
                                              [ss[k]], step, lr, decay, *rest, **one)

    # -- EMA access (MindSpeed) and additions

    def _params_with_ema(self) -> Iterator[tuple[Tensor, Tensor]]:
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state.get(p)
                if state and "ema_params" in state:
                    yield p, state["ema_params"]

    def _weights_with_ema(self) -> Iterator[tuple[Tensor, Tensor]]:
        """(parameter, EMA) pairs, and (master, EMA) for parameters with an fp32 master: what
        the user sees and what training continues from both take the EMA (a 16-bit parameter
        its rounding to nearest even)."""
        for p, ema in self._params_with_ema():
            yield p, ema
            master = self.state[p].get(_MASTER)
            if master is not None:
                yield master, ema

    @torch.no_grad()
    def copy_to(self) -> None:
        """Write the EMA weights into the parameters (params without EMA state are skipped);
        with master weights, into the masters too (training continues from the EMA)."""
        for p, ema in self._weights_with_ema():
            _local(p).copy_(_local(ema))

    def _group_params(self, parameters) -> list[list[Tensor]]:
        """Each group's parameters, each followed by its fp32 master when it has one."""
        out = []
        for g in parameters:
            params = list(g["params"]) if isinstance(g, dict) else [g]
            with_masters = []
            for p in params:
                with_masters.append(p)
                state = self.state.get(p) if isinstance(p, Tensor) else None
                if state and _MASTER in state:
                    with_masters.append(state[_MASTER])
            out.append(with_masters)
        return out

    @torch.no_grad()
    def store(self, parameters=None) -> None:
        """Stash the current weights of ``parameters`` (param groups, default this optimizer's;
        their fp32 masters too) on the host, for :meth:`restore`."""
        if parameters is None:
            parameters = self.param_groups
        self.collected_params_group = [[_local(p).detach().cpu().clone() for p in params]
                                       for params in self._group_params(parameters)]

    @torch.no_grad()
    def restore(self, parameters=None) -> None:
        """Copy the weights (and masters) stashed by :meth:`store` back and drop the stash."""
        stash = getattr(self, "collected_params_group", None)
        if stash is None:
            raise RuntimeError("FusedEmaAdamW.restore() without a preceding store(): no weights "
                               "are stashed (each store() is restored once)")
        if parameters is None:
            parameters = self.param_groups
        for saved_group, params in zip(stash, self._group_params(parameters), strict=True):
            for saved, p in zip(saved_group, params, strict=True):
                _local(p).copy_(saved)
        del self.collected_params_group

    @contextlib.contextmanager
    def swap_ema(self, stash_device: str | torch.device = "cpu"):
        """Context manager: the parameters hold their EMA weights inside (16-bit parameters its
        rounding; their fp32 masters the EMA itself), their own weights again on exit, also
        when the body raises or the swap fails half-way. The EMA state is not modified.

        ``stash_device``: where the training weights wait meanwhile (host memory by default,
        as :meth:`store` does; the parameters' own device is faster and costs device memory).
        It is checked before anything is swapped (``"meta"`` cannot hold them).

        Example::

            with optimizer.swap_ema():
                evaluate(model)
        """
        with _weights_swapped(self._weights_with_ema(), stash_device):
            yield self

    def ema_state_dict(self, model: torch.nn.Module | None = None) -> dict[str, Tensor]:
        """The model's state dict with the EMA in place of each parameter that has one.

        With ``model`` the keys are ``model.state_dict()``'s (buffers included, parameters
        without EMA state keep their own value), so ``model.load_state_dict(...)`` loads the EMA
        weights. Without it, the optimizer must have been built from ``named_parameters()``
        and the dict holds parameters only; tied weights keep all their names only when the
        optimizer was built from ``named_parameters(remove_duplicate=False)``. Values are
        detached references, like ``Module.state_dict()``: save or clone them before training
        on (a tied weight is one tensor under all its names). An fp32 EMA of a 16-bit parameter
        is returned in the parameter's dtype (rounded to nearest even: a new tensor). DTensor
        parameters give sharded DTensor values (see ``ascend_ema_adam.distributed.gather_full_ema_state_dict``).
        """
        if model is not None:
            source = model.state_dict(keep_vars=True)
            out = OrderedDict()
            metadata = getattr(source, "_metadata", None)
            if metadata is not None:
                out._metadata = metadata
            items = source.items()
        else:
            if not all("param_names" in g for g in self.param_groups):
                raise TypeError(
                    "ema_state_dict() needs the model (ema_state_dict(model)) unless the "
                    "optimizer was built from model.named_parameters() (with tied weights: "
                    "named_parameters(remove_duplicate=False), or pass the model)")
            out = OrderedDict()
            items = _named_params_with_aliases(self.param_groups)
        exported: dict[int, Tensor] = {}
        for name, value in items:
            if isinstance(value, Tensor):
                if id(value) not in exported:
                    state = self.state.get(value)
                    source_value = state["ema_params"] if state and "ema_params" in state else value
                    source_value = source_value.detach()
                    if source_value.dtype != value.dtype:  # an fp32 EMA of a 16-bit weight
                        source_value = source_value.to(value.dtype)
                    exported[id(value)] = source_value
                value = exported[id(value)]
            out[name] = value
        return out

    # -- checkpoints

    def state_dict(self) -> dict[str, Any]:
        """torch's layout: per-parameter ``step`` in ``state`` (``step_scope="param"``), so the
        dict loads into ``torch.optim.AdamW``/``Adam``; the groups carry the warm-up counter, the
        EMA decay and ``decoupled_weight_decay`` (this optimizer's ``adam_w_mode``)."""
        for group in self.param_groups:
            group["decoupled_weight_decay"] = bool(self.adam_w_mode)
        for cache in self._group_caches.values():  # its step tensors now have another holder
            cache.steps_handed_out = True
        return super().state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a checkpoint of this optimizer (either step scope), of MindSpeed's, or of
        ``torch.optim.AdamW``/``Adam``.

        The checkpoint gives the state, the counters (steps, ``num_updates``) and the groups'
        hyper-parameters; this optimizer's construction gives its settings (``adam_w_mode``,
        ``use_num_updates``, ``step_scope``, ``foreach``). Per-parameter steps are kept per
        parameter (``step_scope="param"``) or merged into the group's (``"group"``: the largest,
        with a warning when they differ); a missing ``ema_params`` starts as a clone of the
        parameter; missing group keys take their defaults. A checkpoint of the other weight
        decay mode (torch ``Adam``: ``decoupled_weight_decay=False``) warns. State tensors take
        the parameter's device and this optimizer's layout (``state_dtype``, ``master_weights``
        are settings): either layout converts, from the checkpoint's own values (torch's loader
        alone would round fp32 state to a 16-bit parameter's dtype first); a missing master is
        made from the parameter, an unwanted one dropped."""
        groups = state_dict["param_groups"]
        self._warn_on_weight_decay_mode(groups)
        settings = [{key: g[key] for key in _SETTINGS} for g in self.param_groups]
        saved_ids = [i for g in groups for i in g["params"]]
        originals = {i: {k: v for k, v in state_dict["state"][i].items()
                         if k in _WIDE_KEYS + (_MASTER,) and isinstance(v, Tensor)}
                     for i in saved_ids if i in state_dict["state"]}
        self._load_warnings = []
        super().load_state_dict(state_dict)
        for group, kept in zip(self.param_groups, settings):
            group.update(kept)
        params = [(p, g) for g in self.param_groups for p in g["params"]]
        with torch.no_grad():
            for saved_id, (p, group) in zip(saved_ids, params):
                self._convert_loaded_state(p, group, originals.get(saved_id, {}))
        for message in self._load_warnings:
            warnings.warn(message, stacklevel=2)
        del self._load_warnings

    def _convert_loaded_state(self, p: Tensor, group: dict[str, Any],
                              original: dict[str, Tensor]) -> None:
        """One parameter's loaded state in this optimizer's layout, converted from the
        checkpoint's tensors (``original``)."""
        state = self.state.get(p)
        if not state or not p.is_floating_point():
            return
        state_dtype, master = _layout(group, p.dtype)
        if master:
            saved = original.get(_MASTER)
            state[_MASTER] = (saved.to(device=p.device, dtype=torch.float32, copy=True)
                              if saved is not None else p.detach().to(torch.float32, copy=True))
        else:
            state.pop(_MASTER, None)
        for key in _WIDE_KEYS:
            saved = original.get(key)
            if saved is not None:
                state[key] = saved.to(device=p.device, dtype=state_dtype, copy=True)
            elif key == "ema_params" and key in state:  # made from the parameter on load
                state[key] = state.get(_MASTER, p).detach().to(state_dtype, copy=True)

    def _warn_on_weight_decay_mode(self, groups: list[dict[str, Any]]) -> None:
        mine = bool(self.adam_w_mode)
        theirs = {bool(g["decoupled_weight_decay"]) for g in groups
                  if "decoupled_weight_decay" in g and g.get("weight_decay", 0) != 0}
        if theirs and theirs != {mine}:
            kind = {True: "decoupled (AdamW)", False: "L2 (Adam)"}
            warnings.warn(
                f"FusedEmaAdamW(adam_w_mode={mine}) loads a checkpoint whose groups say "
                f"decoupled_weight_decay={not mine}: it was trained with {kind[not mine]} weight "
                f"decay and continues with {kind[mine]} weight decay. Construct the optimizer "
                f"with adam_w_mode={not mine} to keep the checkpoint's.", stacklevel=3)

    def __getstate__(self) -> dict[str, Any]:
        """torch pickles only defaults, state and groups; the constructor's switches too."""
        state = super().__getstate__()
        state.update(adam_w_mode=self.adam_w_mode, set_grad_none=self.set_grad_none,
                     use_num_updates=self.use_num_updates, step_scope=self.step_scope)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickling, and torch's ``load_state_dict`` (which ends here with the loaded state
        and groups): missing keys take their defaults, the steps take this optimizer's layout,
        the warm-up counter follows ``use_num_updates``."""
        super().__setstate__(state)
        self.__dict__.setdefault("use_num_updates", True)
        self.__dict__.setdefault("adam_w_mode", 1)
        self.__dict__.setdefault("set_grad_none", True)
        self.__dict__.setdefault("step_scope", "group")  # pickled before per-parameter steps
        self._reset_caches()
        self.defaults.setdefault("ema_decay", 0.9999)
        self.defaults.setdefault("foreach", None)
        for key, value in _OPTION_DEFAULTS.items():
            self.defaults.setdefault(key, value)
        for i, group in enumerate(self.param_groups):
            group.setdefault("bias_correction", True)
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("ema_decay", self.defaults["ema_decay"])
            group.setdefault("foreach", self.defaults["foreach"])
            group.setdefault("num_updates", self._initial_num_updates)
            for key in _OPTION_DEFAULTS:
                group.setdefault(key, self.defaults[key])
            if not self.use_num_updates:
                group["ema_warmup"] = None
            group["decoupled_weight_decay"] = bool(self.adam_w_mode)
            for key in _TORCH_ONLY_KEYS:
                group.pop(key, None)
            # load_state_dict warns its caller; unpickling has nobody to warn
            self._normalize_loaded_group(i, group, self.__dict__.get("_load_warnings", []))
        n = self.num_updates
        self.num_updates = -1 if not self.use_num_updates else max(n, 0)

    def _normalize_loaded_group(self, i: int, group: dict[str, Any],
                                warnings_out: list[str]) -> None:
        """A loaded group in this optimizer's step layout (read back from the device once), and
        the EMA from the parameter when the checkpoint has none (torch's)."""
        steps = {}
        for j, p in enumerate(group["params"]):
            state = self.state.get(p)
            if not state:
                continue
            if "exp_avg" in state and "ema_params" not in state:
                state["ema_params"] = p.detach().clone()
            if "step" in state:
                steps[p] = _step_number(state["step"], f"param_groups[{i}]['params'][{j}]: "
                                                       f"state 'step'")
        if self.step_scope == "param":
            if "step" in group:
                self._split_group_step(i, group)
            for p, value in steps.items():
                self.state[p]["step"] = _host_step(value)
            return
        for p in steps:
            del self.state[p]["step"]
        if group.get("step") is None and steps:
            if len(set(steps.values())) > 1:
                warnings_out.append(
                    f"FusedEmaAdamW(step_scope='group'): the checkpoint's parameters in "
                    f"param_groups[{i}] have different steps ({min(steps.values())} to "
                    f"{max(steps.values())}); the group continues from the largest, so the "
                    f"others are bias-corrected as if they were older. step_scope='param' keeps "
                    f"each parameter's step.")
            group["step"] = max(steps.values())
        if group.get("step") is not None:
            # MindSpeed's and ours: an int64 [1] tensor on the group's device
            value = _step_number(group["step"], f"param_groups[{i}]: step")
            device = _local(group["params"][0]).device if group["params"] else torch.device("cpu")
            group["step"] = torch.tensor([value], dtype=torch.int64, device=device)
            self._known_group_steps[i] = (group["step"], value)


def _merge_tied_names(param_group: dict[str, Any]) -> None:
    """Named parameters listed twice (tied weights): the first name keeps the parameter, the
    others go to ``param_aliases`` (alias -> name), so the step updates it once and
    :meth:`FusedEmaAdamW.ema_state_dict` exports every name."""
    params = param_group.get("params")
    if params is None or isinstance(params, (Tensor, set)):  # torch's checks decide
        return
    params = list(params)
    param_group["params"] = params
    if not params or not all(isinstance(p, tuple) for p in params):
        return
    first: dict[int, str] = {}
    kept, aliases = [], {}
    for name, p in params:
        if id(p) in first:
            aliases[name] = first[id(p)]
        else:
            first[id(p)] = name
            kept.append((name, p))
    if aliases:
        param_group["params"] = kept
        param_group["param_aliases"] = aliases


def _named_params_with_aliases(groups) -> Iterator[tuple[str, Tensor]]:
    for g in groups:
        by_name = dict(zip(g["param_names"], g["params"], strict=True))
        yield from by_name.items()
        for alias, name in g.get("param_aliases", {}).items():
            yield alias, by_name[name]
