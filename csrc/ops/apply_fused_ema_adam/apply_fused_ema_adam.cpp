/**
 * @file apply_fused_ema_adam.cpp
 * @brief The torch op schemas of ApplyFusedEmaAdam (namespace ascend_ema_adam), generated from its
 *        signature (op_host/apply_fused_ema_adam/apply_fused_ema_adam_signature.json), and their
 *        device-independent kernels (op_library.h): autograd handling of the in-place op, and the
 *        functional variant.
 *
 *   apply_fused_ema_adam_  mutates var, m, v, s in place (the optimizer's op); returns nothing, so
 *                          torch.compile functionalizes it automatically (auto_functionalized).
 *   apply_fused_ema_adam   out-of-place variant: returns new (var, m, v, s).
 * Kernels: apply_fused_ema_adam_cpu.cpp (our aclnn two phases on the CPU device) and, built with
 * torch_npu, apply_fused_ema_adam_npu.cpp (CANN's op-API through torch_npu's task queue).
 * Fake (meta) kernels: ascend_ema_adam/_meta_registrations.py, from the schemas.
 * The schema calls CANN's `mode` attribute `adam_mode` (the spec's torch_name): torch's
 * functionalization passes its own `mode` keyword through custom ops, which an argument of that
 * name would collide with.
 */
#include <torch/library.h>

#include "apply_fused_ema_adam_signature.h"
#include "op_library.h"

TORCH_LIBRARY_FRAGMENT(ascend_ema_adam, m)
{
    ascend_ema_adam::ops::DefineInplaceUpdate(m, APPLY_FUSED_EMA_ADAM_SCHEMA,
                                              APPLY_FUSED_EMA_ADAM_FUNCTIONAL_SCHEMA);
}
