/**
 * @file apply_fused_ema_adam_list.cpp
 * @brief The torch op schemas of ApplyFusedEmaAdamList (namespace ascend_ema_adam), generated from
 *        its signature
 *        (op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_signature.json), and their
 *        device-independent kernels (op_library.h): autograd handling of the in-place op, and the
 *        functional variant.
 *
 *   apply_fused_ema_adam_list_  mutates every tensor of vars, ms, vs, ss (and max_vs,
 *                               model_copies) in place; returns nothing, so torch.compile
 *                               functionalizes it automatically (auto_functionalized).
 *   apply_fused_ema_adam_list   out-of-place variant: returns new lists (vars, ms, vs, ss, max_vs,
 *                               model_copies); an absent optional list gives an empty one.
 * An empty ss with non-empty vars means "no EMA on this launch" (the only length mismatch
 * allowed): ss is neither read nor written. lr_tensor / ema_decay_tensor: one-element fp32
 * tensors on the parameters' device that replace lr / ema_decay when given (read by the kernel
 * when it runs: no host sync, and torch.compile keeps one graph while their values change).
 * Kernels: apply_fused_ema_adam_list_cpu.cpp (our aclnn list API on the CPU device) and, built
 * with torch_npu, apply_fused_ema_adam_list_npu.cpp (CANN's op-API through torch_npu's task queue),
 * both ApplyFusedEmaAdamListKernel (apply_fused_ema_adam_list_call.h). Fake (meta) kernels:
 * ascend_ema_adam/_meta_registrations.py, from the schemas.
 */
#include <torch/library.h>

#include "apply_fused_ema_adam_list_signature.h"
#include "op_library.h"

TORCH_LIBRARY_FRAGMENT(ascend_ema_adam, m)
{
    ascend_ema_adam::ops::DefineInplaceUpdate(m, APPLY_FUSED_EMA_ADAM_LIST_SCHEMA,
                                              APPLY_FUSED_EMA_ADAM_LIST_FUNCTIONAL_SCHEMA);
}
