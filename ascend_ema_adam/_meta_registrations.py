"""Fake (meta) kernels of the ascend_ema_adam torch ops, for FakeTensor tracing and
torch.compile. The schema files (csrc/ops/apply_fused_ema_adam*.cpp) point here with
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


def _check_list_devices(grads, vars, ms, vs, ss, step, max_vs, model_copies, grad_scale,
                        found_inf, lr_tensor=None, ema_decay_tensor=None):
    """Every tensor on step's device. The fake kernel is also the Meta kernel: a meta tensor among
    CPU tensors routes the whole call here, which must then fail instead of doing nothing."""
    lists = (("grads", grads), ("vars", vars), ("ms", ms), ("vs", vs), ("ss", ss),
             ("max_vs", max_vs), ("model_copies", model_copies))
    named = [(f"{name}[{i}]", t) for name, ts in lists for i, t in enumerate(ts or ())]
    named += [(name, t) for name, t in (("grad_scale", grad_scale), ("found_inf", found_inf),
                                        ("lr_tensor", lr_tensor),
                                        ("ema_decay_tensor", ema_decay_tensor))
              if t is not None]
    for name, t in named:
        if t.device != step.device:
            raise RuntimeError(f"apply_fused_ema_adam_list_: {name} is on {t.device}, step is on "
                               f"{step.device}: all tensors must be on one device")


@torch.library.register_fake("ascend_ema_adam::apply_fused_ema_adam_list_")
def _apply_fused_ema_adam_list_inplace_fake(grads, vars, ms, vs, ss, step, lr, ema_decay, beta1,
                                            beta2, eps, adam_mode, bias_correction, weight_decay,
                                            *, max_vs=None, model_copies=None, grad_scale=None,
                                            found_inf=None, maximize=False, lr_tensor=None,
                                            ema_decay_tensor=None):
    _check_list_devices(grads, vars, ms, vs, ss, step, max_vs, model_copies, grad_scale,
                        found_inf, lr_tensor, ema_decay_tensor)
    return None


@torch.library.register_fake("ascend_ema_adam::apply_fused_ema_adam_list")
def _apply_fused_ema_adam_list_fake(grads, vars, ms, vs, ss, step, lr, ema_decay, beta1, beta2,
                                    eps, adam_mode, bias_correction, weight_decay, *, max_vs=None,
                                    model_copies=None, grad_scale=None, found_inf=None,
                                    maximize=False, lr_tensor=None, ema_decay_tensor=None):
    _check_list_devices(grads, vars, ms, vs, ss, step, max_vs, model_copies, grad_scale,
                        found_inf, lr_tensor, ema_decay_tensor)

    def like(tensors):
        return [torch.empty_like(t) for t in tensors or ()]
    return like(vars), like(ms), like(vs), like(ss), like(max_vs), like(model_copies)
