"""Fake (meta) kernels of the ascend_ema_adam torch ops, for FakeTensor tracing and
torch.compile. The schema file (csrc/ops/apply_fused_ema_adam.cpp) points here with
set_python_module, so torch imports this module whenever the ops need their fakes."""

import torch


@torch.library.register_fake("ascend_ema_adam::apply_fused_ema_adam_")
def _apply_fused_ema_adam_inplace_fake(grad, var, m, v, s, step, lr, ema_decay, beta1, beta2,
                                       eps, adam_mode, bias_correction, weight_decay):
    return None


@torch.library.register_fake("ascend_ema_adam::apply_fused_ema_adam")
def _apply_fused_ema_adam_fake(grad, var, m, v, s, step, lr, ema_decay, beta1, beta2, eps, adam_mode,
                               bias_correction, weight_decay):
    return (torch.empty_like(var), torch.empty_like(m), torch.empty_like(v), torch.empty_like(s))
