"""The functional step under :class:`FusedEmaAdamW`, as torch's ``AdamW`` sits over its
functional ``adamw()``: the class checks, keeps the state and counters, and buckets the
parameters; :func:`launch_buckets` turns one group's buckets into launches of the list op. Also
MindSpeed's functional form :func:`fused_ema_adamw`."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch.utils._foreach_utils import _group_tensors_by_device_and_dtype

from .. import _C
from ..ops import apply_fused_ema_adam_list, npu_apply_fused_ema_adamw
from ._buckets import _Bucket
from ._scaler import _Scaler
from ._schedule import _device_decay, _host_decay

__all__ = ["fused_ema_adamw", "launch_buckets"]

# FusedEmaAdamW's cached groups launch through prepared launches (phase 2 only, _launch_prepared)
# on these devices; PREPARED_LAUNCHES = False launches through the op every step (the same bits).
PREPARED_LAUNCHES = True
_PREPARED_DEVICES = frozenset({"cpu"} | ({"npu"} if _C.build_info()["npu_kernel"] else set()))



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


def launch_buckets(group: dict[str, Any], buckets: list[_Bucket], n, scaler: _Scaler,
                   mode: int, launches: dict | None = None, held_checked: bool = False) -> None:
    """One group's update: its hyper-parameters and this step's EMA decay (from the
    optimizer-wide warm-up counter ``n``: on the host, or on the device when the counter or the
    decay is a tensor), then per bucket one multi-tensor launch (what ``fused_ema_adamw`` does
    for one device and dtype), or with ``foreach=False`` one launch per parameter (the same
    bits). ``mode``: 1 AdamW, 0 Adam with L2 decay.

    ``launches``: the prepared launches of a group whose last full check still holds (its
    _GroupCache's): a CPU bucket (an NPU one with a torch_npu build) then runs phase 2 only
    (_launch_prepared). ``held_checked``: the step has compared every tensor those launches
    hold with what the caches saw (``_C.UpdatedStorages.in_place``)."""
    if not buckets:
        return
    # No EMA on this launch: a group without one (ema_decay=None), or ema_every's other steps.
    # (The single op always updates an EMA: such a group's foreach=False launches go through the
    # list op, one parameter each, below.)
    ema_on = group["ema_decay"] is not None and (
        group["ema_every"] == 1 or group.get("ema_calls", 0) % group["ema_every"] == 0)
    device_decay = isinstance(n, Tensor) or isinstance(group["ema_decay"], Tensor)
    host_decay = None if device_decay or not ema_on else _host_decay(group, n)
    beta1, beta2 = group["betas"]
    lr = group["lr"]
    rest = (float(beta1), float(beta2), float(group["eps"]), mode,
            bool(group["bias_correction"]), float(group["weight_decay"]))
    maximize = bool(group["maximize"])
    per_param = group.get("foreach") is False
    decays: dict[torch.device, Tensor] = {}
    for k, b in enumerate(buckets):
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
        if (launches is not None and PREPARED_LAUNCHES and not per_param
                and device.type in _PREPARED_DEVICES):
            _launch_prepared(launches, (k, ss is not None), b, vars, ss, step, lr, decay, rest,
                             extras, held_checked)
        elif not per_param:  # the bucket is one device and dtype already: no regrouping
            apply_fused_ema_adam_list(b.grads, vars, b.exp_avgs, b.exp_avg_sqs, ss, step,
                                      lr, decay, *rest, **extras)
        elif (not b.masters and not b.max_vs and not maximize and scaler.found_inf is None
              and scaler.grad_scale is None and ema_on and not isinstance(lr, Tensor)
              and not isinstance(decay, Tensor) and b.exp_avgs[0].dtype == vars[0].dtype
              and b.grads[0].dtype == vars[0].dtype):
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


def _launch_prepared(launches: dict, slot: tuple, b: _Bucket, vars: list[Tensor],
                     ss: list[Tensor] | None, step: Tensor, lr, decay, rest: tuple,
                     extras: dict, held_checked: bool = False) -> None:
    """A bucket's update through its prepared launch (phase 2 only: CANN's repeatable
    executors), prepared again when anything its phase 1 checked has changed. ``slot``: the
    bucket and whether the launch has the EMA (ema_every alternates the two); each slot keeps
    one launch, with what decides it besides the tensors (the attributes, which one-element
    tensors are given): a change of those replaces it."""
    scale, found = extras.get("grad_scale"), extras.get("found_inf")
    # lr and the decay: numbers, or one-element tensors (a capturable lr, the decay a GradScaler
    # or torch.compile keeps on the device)
    lr = lr if isinstance(lr, Tensor) else float(lr)
    decay = decay if isinstance(decay, Tensor) else float(decay)
    maximize = extras.get("maximize", False)
    kind = (rest, maximize, scale is not None, found is not None, isinstance(lr, Tensor),
            isinstance(decay, Tensor))
    kept = launches.get(slot)
    if kept is not None and kept[0] == kind and kept[1].run(b.grads, step, lr, decay, scale,
                                                            found, held_checked):
        return
    launches.pop(slot, None)  # (its executors go before the new ones are made)
    launch = _C.ListLaunch(b.grads, vars, b.exp_avgs, b.exp_avg_sqs, ss or [], b.max_vs,
                           b.params if b.masters else [], step, scale, found, lr, decay, *rest,
                           maximize)
    launches[slot] = (kind, launch)
    if not launch.run(b.grads, step, lr, decay, scale, found):
        raise RuntimeError("FusedEmaAdamW: a launch prepared from this step's tensors refused "
                           "them")  # cannot happen: nothing changed since it was prepared
