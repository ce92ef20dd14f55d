/**
 * @file apply_fused_ema_adam8bit_list_cpu.cpp
 * @brief CPU kernel of ascend_ema_adam::apply_fused_ema_adam8bit_list_: the lists go through our
 *        aclnn API (aclnnApplyFusedEmaAdam8bitList: aclCreateTensorList, the two phases), every
 *        tensor with its real sizes, strides and storage offset, and a workspace from the torch
 *        allocator.
 *
 * The aclnn contract is CANN's: every list is a real aclTensorList, an absent optional list (and
 * an empty ss with non-empty vars: no EMA) an empty one, at most 256 tensors per list. A call of
 * more entries runs as several launches (apply_fused_ema_adam8bit_list_call.h): first the whole
 * call is validated (the shared validation and the memory rules, with the call's own entry
 * indexes), then phase 1 of every launch (which also checks the maps' values), and only when all
 * succeeded the phase 2s; a failure anywhere writes nothing. The op runs a prepared call once
 * (apply_fused_ema_adam8bit_list_prepared.h), which FusedEmaAdamW keeps and repeats.
 */
#include <torch/library.h>

#include "apply_fused_ema_adam8bit_list_call.h"
#include "apply_fused_ema_adam8bit_list_prepared.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

namespace {

/** The CPU kernel's work: the whole call checked and phase 1 of every launch, then the phase 2s
 *  (a prepared call run once). */
void RunCpu(const ApplyFusedEmaAdam8bitListCall& call)
{
    ApplyFusedEmaAdam8bitListPreparedCall(call, /*repeatable=*/false).Run();
}

}  // namespace

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

TORCH_LIBRARY_IMPL(ascend_ema_adam, CPU, m)
{
    namespace op8 = ascend_ema_adam::apply_fused_ema_adam8bit_list;
    m.impl("apply_fused_ema_adam8bit_list_", &op8::ApplyFusedEmaAdam8bitListKernel<op8::RunCpu>);
}
