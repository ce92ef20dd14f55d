"""``torch.amp.GradScaler`` without an unscale pass or a host sync: ``GradScaler.step`` sets the
optimizer's ``grad_scale`` and ``found_inf``; the kernel divides the gradients by the scale and
writes nothing when ``found_inf`` is nonzero, and every counter advances on the device by
``found_inf == 0`` (see ``_steps``)."""

from __future__ import annotations

import torch
from torch import Tensor


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

