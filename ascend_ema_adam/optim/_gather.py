"""What a step gathers per group, as torch's ``AdamW._init_group`` does: the full check of a
group's parameters with a gradient (:func:`check_group`, read only: an :class:`Item` each), the
state they need before the update (:func:`complete_state`), and what the functional core
:func:`~ascend_ema_adam.optim.functional.ema_adamw` takes: the lists (:class:`TensorLists`) and
this step's hyper-parameters (:func:`hyper_parameters`)."""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch import Tensor

from ._common import _MASTER, _MAX_V, _STATE_KEYS, _VALID_DTYPES, _WIDE_KEYS, _has_ema, _local
from ._schedule import _device_decay, _host_decay
from .functional import ADAM8BIT_DEVICES, SWITCHES
from ._state8bit import (ABSMAX_M, ABSMAX_V, CODES_M, CODES_V, QMAP_M, QMAP_V, ensure_maps,
                         has_8bit_state, is_8bit, map_error, state_error, to_8bit, to_wide,
                         zero_state)
from ._validation import (_check_hyperparameters, _check_tensor_hypers, _grad_dtypes, _layout,
                          _state_dtypes, _tensor_error)


class Item:
    """One parameter with a gradient, as checked before the step: its state and (per-parameter
    steps, eager) its step before this update: a host int, or a step tensor whose value only
    the device knows (a GradScaler step made it; parameters sharing that tensor share the
    value)."""

    __slots__ = ("param", "grad", "state", "step", "index")

    def __init__(self, param: Tensor, grad: Tensor, state: dict, step, index: int = -1):
        self.param, self.grad, self.state, self.step = param, grad, state, step
        self.index = index  # its position in the group's params (for messages)


def state_keys(group: dict[str, Any]) -> tuple[str, ...]:
    """The state tensors a step of this group checks and updates (the master only for 16-bit
    parameters: the key is absent, ``get`` gives None, for fp32 ones); no ``ema_params`` in a
    group without an EMA (``ema_decay=None``)."""
    keys = _STATE_KEYS if _has_ema(group) else _NO_EMA_KEYS
    return (keys + ((_MAX_V,) if group["amsgrad"] else ())
            + ((_MASTER,) if group["master_weights"] else ()))


_NO_EMA_KEYS = tuple(key for key in _STATE_KEYS if key != "ema_params")


def check_group(i: int, group: dict[str, Any], state_map, dtensor,
                step_before: Callable | None) -> list[Item]:
    """Check group ``i`` and its parameters with a gradient; read only. ``step_before(i, group,
    state, where)``: a parameter's step before this update (per-parameter steps, eager)."""
    _check_hyperparameters(group, f"param_groups[{i}]: ")
    keys = state_keys(group)
    eight_bit = group["state_bits"] == 8
    # the group's maps, checked once (used by its parameters with 8-bit state)
    maps_error = map_error(group) if eight_bit or QMAP_M in group or QMAP_V in group else None
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
        error = _tensor_error(p, grad, "the gradient", dtensor, _grad_dtypes(group, p.dtype))
        state = state_map[p] if p in state_map else {}
        for key in keys:
            if error is None and state.get(key) is not None:
                error = _tensor_error(p, state[key], f"state '{key}'", dtensor,
                                      _state_dtypes(p.dtype, key))
        if error is None and (eight_bit or CODES_M in state or ABSMAX_M in state):
            error = _state8bit_error(group, p, state, dtensor, maps_error)
        if error is not None:
            raise RuntimeError(where + error)
        _check_tensor_hypers(i, group, j, _local(p).device)
        step = step_before(i, group, state, where) if step_before is not None else None
        items.append(Item(p, grad, state, step, j))
    return items


def _state8bit_error(group: dict[str, Any], p: Tensor, state: dict, dtensor,
                     maps_error: str | None) -> str | None:
    """What the 8-bit state needs (a parameter of an 8-bit group, or one with 8-bit state to
    convert): its state tensors and the group's maps as the operator takes them (``maps_error``:
    :func:`map_error` of the group); for one that keeps 8-bit state, a device the 8-bit op
    reaches."""
    eight = is_8bit(group, p.numel())
    if dtensor is not None and isinstance(p, dtensor):
        return ("state_bits=8 does not take DTensor (FSDP2) parameters: a shard's blocks of 256 "
                "are not the parameter's (use state_bits=32 for this group)")
    error = state_error(p, state) or maps_error
    if error is not None:
        return error
    if has_8bit_state(state) and not all(isinstance(group.get(k), Tensor)
                                         for k in (QMAP_M, QMAP_V)):
        return (f"the 8-bit state has no maps: the group has no '{QMAP_M}' and "
                f"'{QMAP_V}' (a checkpoint's codes need the maps saved with them)")
    if eight and p.device.type not in ADAM8BIT_DEVICES:
        return (f"state_bits=8 runs on {' and '.join(sorted(ADAM8BIT_DEVICES))} tensors (this "
                f"build), this parameter is on {p.device}")
    return None


def complete_state(item: Item, group: dict[str, Any], state_map) -> None:
    """Create the missing state, key by key (a partially loaded state, e.g. a ZeRO load of a
    torch AdamW checkpoint, is completed rather than rejected), and bring it to the group's
    layout: the master created (or dropped), the state dtype converted, the moments in the
    state kind the parameter keeps (8-bit or not: converted by golden8bit's quantize and
    decode)."""
    p, state = item.param, item.state
    if not state:
        state = item.state = state_map[p]
    state_dtype, master = _layout(group, p.dtype)
    if master and _MASTER not in state:
        state[_MASTER] = p.detach().to(torch.float32, copy=True)
    elif not master:
        state.pop(_MASTER, None)
    eight = is_8bit(group, p.numel())
    if eight or has_8bit_state(state):
        qmaps = ensure_maps(group, p.device)
        if not eight:  # (8-bit state of a parameter that keeps fp32 state now)
            to_wide(state, qmaps, state_dtype)
    moments = ("exp_avg", "exp_avg_sq")
    if eight and not has_8bit_state(state):
        if any(key in state for key in moments):  # fp32 state, converted
            for key in moments:
                if key not in state:
                    state[key] = torch.zeros_like(p, dtype=torch.float32)
            to_8bit(state, qmaps)
        else:
            state.update(zero_state(p, qmaps))
    for key in (() if eight else moments) + ((_MAX_V,) if group["amsgrad"] else ()):
        if key not in state:
            state[key] = torch.zeros_like(p, dtype=state_dtype,
                                          memory_format=torch.preserve_format)
    if not _has_ema(group):  # (a group whose EMA was switched off: its memory is freed)
        state.pop("ema_params", None)
    elif "ema_params" not in state:  # the EMA starts at the weights (the master's, if any)
        state["ema_params"] = state.get(_MASTER, p).detach().to(state_dtype, copy=True)
    for key in _WIDE_KEYS:
        if key in state and state[key].dtype != state_dtype:
            state[key] = state[key].to(state_dtype)


class TensorLists:
    """One group's tensors for :func:`~ascend_ema_adam.optim.functional.ema_adamw`, one entry
    per parameter with a gradient (local shards of DTensors): ``max_exp_avg_sqs`` empty without
    AMSGrad, ``ema_params`` None in a group without an EMA, ``master_params`` None without
    masters (else None entries for fp32 parameters)."""

    __slots__ = ("params", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs", "ema_params",
                 "master_params")

    def __init__(self, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, ema_params,
                 master_params):
        self.params, self.grads = params, grads
        self.exp_avgs, self.exp_avg_sqs = exp_avgs, exp_avg_sqs
        self.max_exp_avg_sqs, self.ema_params = max_exp_avg_sqs, ema_params
        self.master_params = master_params

    @classmethod
    def of_items(cls, items: list[Item], group: dict[str, Any], dtensor) -> TensorLists:
        """From a fully checked group's items, their state completed (``complete_state``)."""
        local = _local if dtensor is not None else _plain
        amsgrad, ema, masters = group["amsgrad"], _has_ema(group), group["master_weights"]
        lists = cls([], [], [], [], [], [] if ema else None, [] if masters else None)
        for item in items:
            st = item.state
            lists.params.append(local(item.param))
            lists.grads.append(local(item.grad))
            lists.exp_avgs.append(local(st["exp_avg"]))
            lists.exp_avg_sqs.append(local(st["exp_avg_sq"]))
            if amsgrad:
                lists.max_exp_avg_sqs.append(local(st[_MAX_V]))
            if ema:
                lists.ema_params.append(local(st["ema_params"]))
            if masters:
                master = st.get(_MASTER)
                lists.master_params.append(None if master is None else local(master))
        return lists


class TensorLists8:
    """An 8-bit group's parameters that keep 8-bit state, as
    :func:`~ascend_ema_adam.optim.functional.ema_adamw8bit` takes them (``ema_params`` None in a
    group without an EMA, ``master_params`` None without masters)."""

    __slots__ = ("params", "grads", "exp_avg_codes", "exp_avg_sq_codes", "exp_avg_absmaxes",
                 "exp_avg_sq_absmaxes", "ema_params", "master_params")

    def __init__(self, params, grads, exp_avg_codes, exp_avg_sq_codes, exp_avg_absmaxes,
                 exp_avg_sq_absmaxes, ema_params, master_params):
        self.params, self.grads = params, grads
        self.exp_avg_codes, self.exp_avg_sq_codes = exp_avg_codes, exp_avg_sq_codes
        self.exp_avg_absmaxes, self.exp_avg_sq_absmaxes = exp_avg_absmaxes, exp_avg_sq_absmaxes
        self.ema_params, self.master_params = ema_params, master_params

    @classmethod
    def of_items(cls, items: list[Item], group: dict[str, Any]) -> TensorLists8:
        """From a fully checked group's items with 8-bit state (completed)."""
        states = [item.state for item in items]
        column = (lambda key: [st[key] for st in states])
        return cls([item.param for item in items], [item.grad for item in items],
                   column(CODES_M), column(CODES_V), column(ABSMAX_M), column(ABSMAX_V),
                   column("ema_params") if _has_ema(group) else None,
                   [st.get(_MASTER) for st in states] if group["master_weights"] else None)


def _plain(t: Tensor) -> Tensor:
    return t


def hyper_parameters(group: dict[str, Any], n, adam_w_mode: int,
                     device: torch.device) -> tuple[bool, dict[str, Any]]:
    """Whether this update of the group touches the EMA (not in a group without one, nor on
    ``ema_every``'s other steps), and ``ema_adamw``'s hyper-parameters for it; the EMA decay
    from the warm-up counter ``n``: a host float, or a float32 [1] tensor computed on ``device``
    when the counter or the group's decay is a tensor (GradScaler, torch.compile, capturable)."""
    k, calls = group["ema_every"], group.get("ema_calls", 0)
    # ema_every=k: every k-th step() ("power"), or steps 1, k+1, 2k+1, ... ("once": ema-pytorch's
    # update_every, whose update() after the first optimizer step copies the weights)
    ema_on = _has_ema(group) and (
        k == 1 or (calls if group.get("ema_every_decay", "power") == "power" else calls - 1) % k
        == 0)
    if not ema_on:
        decay = None
    elif isinstance(n, Tensor) or isinstance(group["ema_decay"], Tensor):
        decay = _device_decay(group, n, device)
    else:
        decay = _host_decay(group, n)
    beta1, beta2 = group["betas"]
    return ema_on, dict(beta1=beta1, beta2=beta2, lr=group["lr"],
                        weight_decay=group["weight_decay"], eps=group["eps"], ema_decay=decay,
                        bias_correction=group["bias_correction"],
                        decoupled_weight_decay=bool(adam_w_mode),
                        **{key: group[key] for key in SWITCHES})
