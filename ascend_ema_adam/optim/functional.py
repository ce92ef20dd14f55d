"""The functional step under :class:`FusedEmaAdamW`, as torch's ``AdamW`` sits over its
functional ``adamw()``: the class checks, keeps the state and counters, and buckets the
parameters; :func:`launch_buckets` turns one group's buckets into launches of the list op. Also
MindSpeed's functional form :func:`fused_ema_adamw`."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch.utils._foreach_utils import _group_tensors_by_device_and_dtype

from ..ops import apply_fused_ema_adam_list, npu_apply_fused_ema_adamw
from ._buckets import _Bucket
from ._scaler import _Scaler
from ._schedule import _device_decay, _host_decay

__all__ = ["fused_ema_adamw", "launch_buckets"]



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
                   mode: int) -> None:
    """One group's update: its hyper-parameters and this step's EMA decay (from the
    optimizer-wide warm-up counter ``n``: on the host, or on the device when the counter or the
    decay is a tensor), then per bucket one multi-tensor launch (what ``fused_ema_adamw`` does
    for one device and dtype), or with ``foreach=False`` one launch per parameter (the same
    bits). ``mode``: 1 AdamW, 0 Adam with L2 decay."""
    if not buckets:
        return
    ema_on = group["ema_every"] == 1 or group.get("ema_calls", 0) % group["ema_every"] == 0
    device_decay = isinstance(n, Tensor) or isinstance(group["ema_decay"], Tensor)
    host_decay = None if device_decay or not ema_on else _host_decay(group, n)
    beta1, beta2 = group["betas"]
    lr = group["lr"]
    rest = (float(beta1), float(beta2), float(group["eps"]), mode,
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
