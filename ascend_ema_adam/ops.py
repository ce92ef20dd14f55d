"""The torch op, as MindSpeed users call it.

:func:`npu_apply_fused_ema_adamw` is a drop-in for MindSpeed's function of the same name: same
positional order, keywords and defaults, and it returns ``(var, m, v, s)`` — the very tensor
objects passed in, updated in place. CPU tensors run through this package's aclnn layer on the
CPU device; NPU tensors (torch_npu) through CANN's ``aclnnApplyFusedEmaAdam``.
"""

from __future__ import annotations

import torch

from . import _C  # noqa: F401  (registers the ascend_ema_adam ops)
from . import _meta_registrations  # noqa: F401

__all__ = ["npu_apply_fused_ema_adamw", "apply_fused_ema_adam", "apply_fused_ema_adam_functional"]


def npu_apply_fused_ema_adamw(grad, var, m, v, s, step, lr=1e-3, ema_decay=0.9999, beta1=0.9,
                              beta2=0.999, eps=1e-8, mode=1, bias_correction=True,
                              weight_decay=0.0):
    """One fused Adam/AdamW + EMA update, in place.

    Args:
        grad: gradient, float32/float16/bfloat16.
        var, m, v, s: parameter, first and second moments, EMA weights; same dtype and shape as
            ``grad``; updated in place (any strides; they must not share memory).
        step: int64 tensor of one element, the 1-based number of this update (not incremented).
        lr, ema_decay, beta1, beta2, eps, weight_decay: hyper-parameters (used as fp32).
        mode: 1 = AdamW (decoupled weight decay), 0 = Adam with L2 (decay added to the gradient).
        bias_correction: divide the moments by ``1 - beta**step``.

    Returns:
        ``(var, m, v, s)``, the input tensors themselves.
    """
    _check_devices(grad, var, m, v, s, step)
    torch.ops.ascend_ema_adam.apply_fused_ema_adam_(grad, var, m, v, s, step, lr, ema_decay,
                                                    beta1, beta2, eps, mode, bias_correction,
                                                    weight_decay)
    return var, m, v, s


def _check_devices(grad, var, m, v, s, step):
    """All six tensors on one device (the kernels cannot check what the dispatcher routed past
    them: a meta or NPU tensor among CPU tensors picks the meta or NPU kernel)."""
    named = {"grad": grad, "var": var, "m": m, "v": v, "s": s, "step": step}
    for name, t in named.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"apply_fused_ema_adam: {name} must be a torch.Tensor, "
                            f"got {type(t).__name__}")
    for name, t in named.items():
        if t.device != grad.device:
            raise ValueError(f"apply_fused_ema_adam: {name} is on {t.device}, grad is on "
                             f"{grad.device}: all tensors must be on one device")


#: Alias with the CANN operator's name.
apply_fused_ema_adam = npu_apply_fused_ema_adamw


def apply_fused_ema_adam_functional(grad, var, m, v, s, step, lr=1e-3, ema_decay=0.9999,
                                    beta1=0.9, beta2=0.999, eps=1e-8, mode=1,
                                    bias_correction=True, weight_decay=0.0):
    """Out-of-place variant: returns new ``(var, m, v, s)`` and leaves the inputs unchanged."""
    _check_devices(grad, var, m, v, s, step)
    return torch.ops.ascend_ema_adam.apply_fused_ema_adam(grad, var, m, v, s, step, lr,
                                                          ema_decay, beta1, beta2, eps, mode,
                                                          bias_correction, weight_decay)
