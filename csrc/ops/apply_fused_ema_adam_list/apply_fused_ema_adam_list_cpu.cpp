/**
 * @file apply_fused_ema_adam_list_cpu.cpp
 * @brief CPU kernel of ascend_ema_adam::apply_fused_ema_adam_list_: the lists go through our aclnn
 *        list API (aclnnApplyFusedEmaAdamListV2: aclCreateTensorList, the two phases), every tensor
 *        with its real sizes, strides and storage offset, and a workspace from the torch allocator,
 *        as one single-use PreparedApplyFusedEmaAdamListCall
 *        (apply_fused_ema_adam_list_prepared.h).
 *
 * The aclnn contract is CANN's: every list is a real aclTensorList, an absent optional list (and
 * an empty ss with non-empty vars: no EMA) an empty one, at most 256 tensors per list. A call of
 * more entries runs as several launches (apply_fused_ema_adam_list_call.h): first the whole call
 * is validated (the shared validation and the memory rules, with the call's own entry indexes),
 * then phase 1 of every launch, and only when all succeeded the phase 2s; a failure anywhere
 * writes nothing.
 */
#include <torch/library.h>

#include "apply_fused_ema_adam_list_call.h"
#include "apply_fused_ema_adam_list_prepared.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using namespace ops;  // the torch ops' shared part (csrc/common/)

namespace {

/** The CPU kernel's work: phase 1 of every launch after the whole call is validated, then the
 *  phase 2s (a single-use PreparedApplyFusedEmaAdamListCall). */
void RunCpu(const ListCall& call)
{
    PreparedApplyFusedEmaAdamListCall prepared(call, /*repeatable=*/false);
    prepared.Run();
}

}  // namespace

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

TORCH_LIBRARY_IMPL(ascend_ema_adam, CPU, m)
{
    namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;
    m.impl("apply_fused_ema_adam_list_", &list_op::ApplyFusedEmaAdamListKernel<list_op::RunCpu>);
}
