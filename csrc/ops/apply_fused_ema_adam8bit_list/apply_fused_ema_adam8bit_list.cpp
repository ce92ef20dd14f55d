/**
 * @file apply_fused_ema_adam8bit_list.cpp
 * @brief The torch op schemas of ApplyFusedEmaAdam8bitList (namespace ascend_ema_adam), generated
 *        from its signature (op_host/apply_fused_ema_adam8bit_list/
 *        apply_fused_ema_adam8bit_list_signature.json), and their device-independent kernels
 *        (op_library.h): autograd handling of the in-place op, and the functional variant.
 *
 *   apply_fused_ema_adam8bit_list_  mutates every tensor of vars, ms, vs (uint8 codes),
 *                                   m_absmaxes, v_absmaxes (fp32 block scales), ss (and
 *                                   model_copies) in place; returns nothing, so torch.compile
 *                                   functionalizes it automatically (auto_functionalized).
 *   apply_fused_ema_adam8bit_list   out-of-place variant: returns new lists (vars, ms, vs,
 *                                   m_absmaxes, v_absmaxes, ss, model_copies); an absent optional
 *                                   list gives an empty one.
 * An empty ss with non-empty vars means "no EMA on this launch": ss is neither read nor written.
 * qmap_m / qmap_v: the 256-entry fp32 maps of the codes. lr_tensor / ema_decay_tensor: one-element
 * fp32 tensors on the parameters' device that replace lr / ema_decay when given.
 * Kernels: apply_fused_ema_adam8bit_list_cpu.cpp (our aclnn API on the CPU device) and, built with
 * torch_npu, apply_fused_ema_adam8bit_list_npu.cpp (CANN's op-API through torch_npu's task queue),
 * both ApplyFusedEmaAdam8bitListKernel (apply_fused_ema_adam8bit_list_call.h). Fake (meta) kernels:
 * ascend_ema_adam/_meta_registrations.py, from the schemas.
 */
#include <torch/library.h>

#include "apply_fused_ema_adam8bit_list_signature.h"
#include "op_library.h"

TORCH_LIBRARY_FRAGMENT(ascend_ema_adam, m)
{
    ascend_ema_adam::ops::DefineInplaceUpdate(m, APPLY_FUSED_EMA_ADAM8BIT_LIST_SCHEMA,
                                              APPLY_FUSED_EMA_ADAM8BIT_LIST_FUNCTIONAL_SCHEMA);
}
