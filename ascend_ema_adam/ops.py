"""The torch ops, as MindSpeed users call them.

:func:`npu_apply_fused_ema_adamw` is a drop-in for MindSpeed's function of the same name: same
positional order, keywords and defaults, and it returns ``(var, m, v, s)`` — the very tensor
objects passed in, updated in place. CPU tensors run through this package's aclnn layer on the
CPU device; NPU tensors (torch_npu) through CANN's ``aclnnApplyFusedEmaAdam``.

:func:`apply_fused_ema_adam_list` updates a whole parameter group in one launch
(``aclnnApplyFusedEmaAdamListV2``), with AMSGrad, fp32 state of 16-bit parameters, fp16/bf16 model
copies of fp32 masters, loss-scale division, skipping on overflow, maximize, launches without the
EMA, and lr / EMA decay given as device tensors (capturable).

:func:`apply_fused_ema_adam8bit_list` is the same update with Adam's moments kept as 8-bit codes
and one fp32 scale per block of 256 elements (``aclnnApplyFusedEmaAdam8bitList``), the EMA in fp32.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch

from ._extension import _C  # noqa: F401  (registers the ascend_ema_adam ops)
from . import _meta_registrations  # noqa: F401

__all__ = ["npu_apply_fused_ema_adamw", "apply_fused_ema_adam", "apply_fused_ema_adam_functional",
           "apply_fused_ema_adam_list", "apply_fused_ema_adam8bit_list"]


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
    _check_attributes("apply_fused_ema_adam", dict(lr=lr, ema_decay=ema_decay, beta1=beta1,
                      beta2=beta2, eps=eps, weight_decay=weight_decay), mode,
                      dict(bias_correction=bias_correction))
    torch.ops.ascend_ema_adam.apply_fused_ema_adam_(grad, var, m, v, s, step, lr, ema_decay,
                                                    beta1, beta2, eps, mode, bias_correction,
                                                    weight_decay)
    return var, m, v, s


def _check_attributes(op: str, floats: dict, mode, bools: dict) -> None:
    """The attributes' Python types, before the schema's conversion: torch's schema takes None,
    2 or 1.5 as a bool, True as a float, and refuses an int beyond int64 as "not an int". A float
    attribute is a real number (or a tensor, where the op documents one); ``mode`` an int."""
    for name, value in floats.items():
        if isinstance(value, bool) or not isinstance(value, (numbers.Real, torch.Tensor)):
            raise TypeError(f"{op}: {name} must be a real number, got {value!r}")
    if isinstance(mode, bool) or not isinstance(mode, numbers.Integral):
        raise TypeError(f"{op}: mode must be an int (0: Adam with L2, 1: AdamW), got {mode!r}")
    if not -2**63 <= mode < 2**63:
        raise ValueError(f"{op}: mode is {mode}, expected 0 (Adam with L2) or 1 (AdamW)")
    for name, value in bools.items():
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{op}: {name} must be a bool, got {value!r}")


def _check_tensors(op: str, tensors: dict) -> None:
    """Tensor arguments given as something else, named (torch's schema refuses qmap_v=None with
    "tensor does not have a device", naming nothing)."""
    for name, value in tensors.items():
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{op}: {name} must be a torch.Tensor, got {type(value).__name__}")


def _check_devices(grad, var, m, v, s, step):
    """All six tensors on one device (the kernels cannot check what the dispatcher routed past
    them: a meta or NPU tensor among CPU tensors picks the meta or NPU kernel)."""
    named = {"grad": grad, "var": var, "m": m, "v": v, "s": s, "step": step}
    _check_tensors("apply_fused_ema_adam", named)
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
    _check_attributes("apply_fused_ema_adam_functional", dict(lr=lr, ema_decay=ema_decay,
                      beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay), mode,
                      dict(bias_correction=bias_correction))
    return torch.ops.ascend_ema_adam.apply_fused_ema_adam(grad, var, m, v, s, step, lr,
                                                          ema_decay, beta1, beta2, eps, mode,
                                                          bias_correction, weight_decay)


_list_op = torch.ops.ascend_ema_adam.apply_fused_ema_adam_list_.default


#: The float attribute the op receives when lr / ema_decay come as tensors: any finite value in
#: the attributes' ranges (the kernels use the tensor's value instead).
_TENSOR_PLACEHOLDER = 0.0


def apply_fused_ema_adam_list(grads, vars, ms, vs, ss, step, lr=1e-3, ema_decay=0.9999,
                              beta1=0.9, beta2=0.999, eps=1e-8, mode=1, bias_correction=True,
                              weight_decay=0.0, *, max_vs=None, model_copies=None,
                              grad_scale=None, found_inf=None, maximize=False):
    """The fused Adam/AdamW + EMA update of a whole parameter group, in place, in one launch.

    Entry ``i`` of the lists is one parameter: ``grads[i]``, ``vars[i]``, ``ms[i]``, ``vs[i]``,
    ``ss[i]`` (and ``max_vs[i]``, ``model_copies[i]``) have one shape; different entries may have
    any shapes and sizes (empty too). Per entry, in fp32 (``docs/ACLNN.md`` has the exact order):
    ``g = grad`` (negated with ``maximize``, divided by ``grad_scale``); Adam/AdamW moments;
    with ``max_vs`` (AMSGrad) ``max_v = max(max_v, v)`` is the denominator's; ``var`` is updated,
    ``s`` follows the updated fp32 ``var`` and ``model_copies[i]`` receives it rounded.

    Dtypes (every tensor of a list has one dtype; ``ascend_ema_adam._dtypes.LIST_DTYPES`` lists
    the 13 combinations, and the C++ check refuses any other):
        * ``vars`` (P): float32, float16 or bfloat16;
        * ``ms``, ``vs``, ``ss``, ``max_vs`` (S): P's dtype or float32;
        * ``grads``: P's dtype or float32; with ``model_copies``, their dtype or float32;
        * ``model_copies`` (C): float16 or bfloat16, with float32 ``vars`` (the master weights).

    Args:
        grads: the gradients (read only).
        vars, ms, vs, ss: parameters, first and second moments, EMA weights; updated in place
            (any strides; no updated tensor may share memory with any other tensor of the call).
            ``ss=None`` (or an empty list): no EMA on this launch, nothing of it read or written
            (e.g. the steps between two EMA updates with ``ema_every``).
        step: int64 tensor of one element, the group's 1-based step (not incremented).
        lr, ema_decay, beta1, beta2, eps, weight_decay: hyper-parameters (used as fp32). ``lr``
            and ``ema_decay`` may also be float32 tensors of one element on the parameters'
            device: the kernel reads them when it runs (no host sync; under torch.compile their
            values may change between calls without recompiling), and a tensor holding
            ``fp32(x)`` gives the same bits as the number ``x``. Tensor values are not checked.
        mode: 1 = AdamW (decoupled weight decay), 0 = Adam with L2 (decay added to the gradient).
        bias_correction: divide the moments by ``1 - beta**step``.
        max_vs: AMSGrad's running maxima of the second moments (S), updated in place.
        model_copies: 16-bit copies of the fp32 ``vars``, overwritten (never read).
        grad_scale: float32 tensor of one element: the gradients are divided by it.
        found_inf: float32 tensor of one element: when nonzero (NaN counts), nothing at all is
            written; read on the device, so a step can be skipped without a host sync.
        maximize: ascend the gradient instead of descending.

    Every tensor must be on one device (CPU: this package's CPU device; NPU: torch_npu). On the
    NPU every entry reaches the kernel as 1-D views, so an entry's tensors must be contiguous or
    share one dense layout. A bad call raises before anything is written.

    Returns:
        ``(vars, ms, vs, ss)``, the lists passed in (``ss`` None when given None).
    """
    _check_tensors("apply_fused_ema_adam_list", dict(step=step))
    _check_attributes("apply_fused_ema_adam_list", dict(lr=lr, ema_decay=ema_decay, beta1=beta1,
                      beta2=beta2, eps=eps, weight_decay=weight_decay), mode,
                      dict(bias_correction=bias_correction, maximize=maximize))
    lr_tensor = lr if isinstance(lr, torch.Tensor) else None
    decay_tensor = ema_decay if isinstance(ema_decay, torch.Tensor) else None
    _list_op(grads, vars, ms, vs, [] if ss is None else ss, step,
             _TENSOR_PLACEHOLDER if lr_tensor is not None else lr,
             _TENSOR_PLACEHOLDER if decay_tensor is not None else ema_decay,
             beta1, beta2, eps, mode, bias_correction, weight_decay, max_vs=max_vs,
             model_copies=model_copies, grad_scale=grad_scale, found_inf=found_inf,
             maximize=maximize, lr_tensor=lr_tensor, ema_decay_tensor=decay_tensor)
    return vars, ms, vs, ss


_list8bit_op = torch.ops.ascend_ema_adam.apply_fused_ema_adam8bit_list_.default


def apply_fused_ema_adam8bit_list(grads, vars, ms, vs, m_absmaxes, v_absmaxes, ss, qmap_m, qmap_v,
                                  step, lr=1e-3, ema_decay=0.9999, beta1=0.9, beta2=0.999,
                                  eps=1e-8, mode=1, bias_correction=True, weight_decay=0.0, *,
                                  model_copies=None, grad_scale=None, found_inf=None,
                                  maximize=False):
    """:func:`apply_fused_ema_adam_list`'s update of a whole parameter group with Adam's moments
    in 8 bits, in place, in one launch (``op_host/apply_fused_ema_adam8bit_list/README.md``).

    Per block of 256 elements of an entry (its last block may be shorter): the moments decoded
    (``qmap_m[ms[i]] * m_absmaxes[i][block]``, the same for v), the list op's fp32 update op for
    op, the new block scales (``max |m'|``), each moment encoded to the exactly nearest map entry
    of ``m' / scale`` (a tie to the larger code), the EMA ``ss`` and ``model_copies`` from the
    updated fp32 ``vars``. ``golden8bit.emulate_entry8`` is the contract, bit for bit.

    Dtypes (every tensor of a list has one dtype; ``ascend_ema_adam._dtypes.LIST8BIT_DTYPES``
    lists the rows, and the C++ check refuses any other):
        * ``vars``: float32, float16 or bfloat16; ``grads``: float32, float16 or bfloat16;
        * ``ms``, ``vs``: uint8 codes of ``vars[i]``'s shape; ``m_absmaxes``, ``v_absmaxes``:
          float32 of shape ``[ceil(numel / 256)]``; ``ss``: float32 of ``vars[i]``'s shape;
        * ``model_copies``: float16 or bfloat16, with float32 ``vars`` (the master weights);
        * ``qmap_m``, ``qmap_v``: float32 ``[256]``, sorted, within [-1, 1]
          (``golden8bit.dynamic_map(True)`` / ``(False)``, bitsandbytes' maps).

    Args:
        grads: the gradients (read only).
        vars, ms, vs, m_absmaxes, v_absmaxes, ss: parameters, moment codes and their block
            scales, EMA weights; updated in place (any strides; no updated tensor may share memory
            with any other tensor of the call). ``ss=None`` (or an empty list): no EMA on this
            launch, nothing of it read or written.
        qmap_m, qmap_v: the maps of the m and v codes (read only).
        step, lr, ema_decay, beta1, beta2, eps, mode, bias_correction, weight_decay, grad_scale,
            found_inf, maximize, model_copies: as in :func:`apply_fused_ema_adam_list` (``lr`` and
            ``ema_decay`` may be float32 tensors of one element on the parameters' device).
            There is no AMSGrad (an 8-bit running maximum would be re-quantized every step).

    A bad call raises before anything is written.

    Returns:
        ``(vars, ms, vs, m_absmaxes, v_absmaxes, ss)``, the lists passed in (``ss`` None when
        given None).
    """
    _check_tensors("apply_fused_ema_adam8bit_list", dict(qmap_m=qmap_m, qmap_v=qmap_v, step=step))
    _check_attributes("apply_fused_ema_adam8bit_list", dict(lr=lr, ema_decay=ema_decay,
                      beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay), mode,
                      dict(bias_correction=bias_correction, maximize=maximize))
    lr_tensor = lr if isinstance(lr, torch.Tensor) else None
    decay_tensor = ema_decay if isinstance(ema_decay, torch.Tensor) else None
    _list8bit_op(grads, vars, ms, vs, m_absmaxes, v_absmaxes, [] if ss is None else ss, qmap_m,
                 qmap_v, step, _TENSOR_PLACEHOLDER if lr_tensor is not None else lr,
                 _TENSOR_PLACEHOLDER if decay_tensor is not None else ema_decay,
                 beta1, beta2, eps, mode, bias_correction, weight_decay,
                 model_copies=model_copies, grad_scale=grad_scale, found_inf=found_inf,
                 maximize=maximize, lr_tensor=lr_tensor, ema_decay_tensor=decay_tensor)
    return vars, ms, vs, m_absmaxes, v_absmaxes, ss
