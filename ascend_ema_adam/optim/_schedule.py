"""The EMA decay schedule, written once: :func:`_decay` over two small arithmetic backends.

The decay of a step comes from the warm-up counter ``n`` (1 on the first step; -1: warm-up off),
as diffusers' ``EMAModel.get_decay`` with MindSpeed's counting. With ``m = n -
ema_update_after_step``: ``min(ema_decay, (1+m)/(10+m))`` (``"num_updates"``) or ``min(ema_decay,
1 - (1 + m/inv_gamma)**-power)`` (``"power"``), then ``max(., min_ema_decay)``; 0 while ``m <= 0``
(the EMA is a copy of the weights); on an ``ema_every=k`` step ``decay**k``
(``ema_every_decay="power"``) or the decay itself (``"once"``, ema-pytorch's ``update_every``).

Where it is computed. Usually everything is a host number and the decay is a Python float
(float64; the op narrows it to fp32). Under a GradScaler or torch.compile the counter is an int64
device tensor, and ``ema_decay`` may be a device tensor (capturable): the decay must then be
computed on the device, without reading anything back. The formula is written once,
:func:`_decay`, and evaluated by one of two backends with the same IEEE float64 operations in
the same order: :class:`_Host` (Python floats, ``math.pow``) or :class:`_Device` (0-d float64
tensors, ``torch.pow`` with a tensor exponent, which is ``std::pow`` like ``math.pow``).

Why not one tensor path for both (what the issue asked first): on the host path (every plain
eager step) it would add about ten small torch ops per step and device where a step now does a
few float operations (about a microsecond), and it would hand the kernel a decay tensor instead
of the float attribute. And ``torch.pow`` on an accelerator's tensors is not guaranteed to round
like the C library's ``pow``, so moving the host's computation to the device could change
results. The device backend is used only where there is no host value to use.

Tested: ``tests/python/optim/test_optim_mixed.py`` holds the backends equal bit for bit after
narrowing to fp32 over thousands of counts. When the formula was unified,
``tools/ema_schedule_sweep/run.py`` (320,160 cases: 240 schedules x 1,334 counts, tensor counters and
tensor decays) found the backends equal,
the host value equal to v0.1.0's host copy of the formula exactly (float64) and the device value
equal to v0.1.0's device copy (fp32 bits; every 4th case). These comparisons ran on the CPU; on
an NPU the device backend's ``pow`` is the device's, as it was before.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor


class _Host:
    """The schedule on Python floats (float64), for host counters and float decays."""

    @staticmethod
    def counting(n) -> bool:
        return n >= 0

    # Calls of the builtins, not staticmethod(float) and the like: dynamo of torch 2.7 traces a
    # builtin only where it is called by name.
    @staticmethod
    def decay(x) -> float:
        return float(x)

    counter = decay

    @staticmethod
    def minimum(a: float, b: float) -> float:
        return min(a, b)

    @staticmethod
    def maximum(a: float, b: float) -> float:
        return max(a, b)

    @staticmethod
    def pow(base: float, exponent: float) -> float:
        return math.pow(base, exponent)

    @staticmethod
    def if_positive(m: float, compute) -> float:
        return compute(m) if m > 0 else 0.0  # (the warm-up is undefined for m <= 0)

    @staticmethod
    def result(d: float) -> float:
        return d


class _Device:
    """The schedule on 0-d float64 tensors of ``device`` (no host sync), narrowed at the end to
    the op's float32 [1] decay tensor."""

    __slots__ = ("f64",)

    def __init__(self, device: torch.device):
        self.f64 = dict(dtype=torch.float64, device=device)

    @staticmethod
    def counting(n) -> bool:
        return isinstance(n, Tensor) or n >= 0

    def _scalar(self, x) -> Tensor:
        # torch.full, not torch.tensor: a fill on the device, no host-to-device copy
        return x.to(**self.f64).reshape(()) if isinstance(x, Tensor) else torch.full(
            (), float(x), **self.f64)

    decay = counter = _scalar
    minimum = staticmethod(torch.minimum)
    maximum = staticmethod(torch.clamp_min)

    def pow(self, base: Tensor, exponent: float) -> Tensor:
        # a tensor exponent: std::pow, as math.pow (a scalar 2 or 3 would multiply instead)
        return torch.pow(base, torch.full((), exponent, **self.f64))

    def if_positive(self, m: Tensor, compute) -> Tensor:
        return torch.where(m > 0, compute(m), torch.zeros((), **self.f64))

    @staticmethod
    def result(d: Tensor) -> Tensor:
        return d.to(torch.float32).reshape(1)


_HOST = _Host()


def _decay(ops, group: dict[str, Any], n):
    """This step's EMA decay from the warm-up counter ``n`` with the backend ``ops``."""
    d_max = ops.decay(group["ema_decay"])
    floor = float(group["min_ema_decay"])
    if not ops.counting(n):
        d = ops.maximum(d_max, floor)
    else:
        warmup = group["ema_warmup"]

        def warmed_up(m):
            d = d_max
            if warmup == "num_updates":
                d = ops.minimum(d, (1 + m) / (10 + m))
            elif warmup == "power":
                d = ops.minimum(d, 1.0 - ops.pow(1.0 + m / group["inv_gamma"], -group["power"]))
            return ops.maximum(d, floor)

        # 0 until ema_update_after_step steps have passed: the EMA copies the weights
        d = ops.if_positive(ops.counter(n) - float(group["ema_update_after_step"]), warmed_up)
    k = group["ema_every"]
    if k > 1 and group.get("ema_every_decay", "power") == "power":
        d = ops.pow(d, float(k))
    return ops.result(d)


def _host_decay(group: dict[str, Any], n: int) -> float:
    """The decay as a Python float (the op narrows it to fp32)."""
    return _decay(_HOST, group, n)


def _device_decay(group: dict[str, Any], n, device: torch.device) -> Tensor:
    """The decay as the op's float32 [1] tensor on ``device``: the counter or the decay is a
    tensor. The same bits as :func:`_host_decay` narrowed to fp32."""
    return _decay(_Device(device), group, n)
