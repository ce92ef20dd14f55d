"""``torch.amp.GradScaler`` without an unscale pass or a host sync: ``GradScaler.step`` sets the
optimizer's ``grad_scale`` and ``found_inf``; the kernel divides the gradients by the scale and
writes nothing when ``found_inf`` is nonzero, and every counter advances on the device by
``found_inf == 0`` (see ``_steps``)."""

from __future__ import annotations

import torch
from torch import Tensor


class _Scaler:
    """``torch.amp.GradScaler``'s ``grad_scale`` and ``found_inf`` of this step (both None
    without a scaler; under clipping ``grad_scale`` is a group's divisor), and what the counters
    add on each device (``found_inf == 0``), made once per device and dtype."""

    __slots__ = ("grad_scale", "found_inf", "_not_inf")

    def __init__(self, grad_scale: Tensor | None, found_inf: Tensor | None):
        self.grad_scale, self.found_inf = grad_scale, found_inf
        self._not_inf: dict = {}

    def not_inf(self, device: torch.device, dtype: torch.dtype) -> Tensor:
        """``found_inf == 0`` as ``dtype`` on ``device``: what a step counter adds."""
        key = (device, dtype)
        out = self._not_inf.get(key)
        if out is None:
            out = self._not_inf[key] = (self.found_inf.to(device, non_blocking=True) == 0).to(
                dtype)
        return out
