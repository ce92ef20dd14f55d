/**
 * @file aea_apply_fused_ema_adam.cpp
 * @brief Kernel entry of AeaApplyFusedEmaAdam, this package's registration of FusedEmaAdam (a
 *        vendor-unique op type: it never replaces CANN's own ApplyFusedEmaAdam, docs/ACLNN.md
 *        "The op type"): reads the tiling, picks the dtype instantiation by tiling key, runs one
 *        core's share. Argument order is CANN's (inputs, in-place outputs, workspace, tiling).
 */
#include "apply_fused_ema_adam.h"
#include "apply_fused_ema_adam_tiling_key.h"

using ascend_ema_adam::apply_fused_ema_adam::KernelApplyFusedEmaAdam;

template <typename T>
__aicore__ inline void RunApplyFusedEmaAdam(GM_ADDR grad, GM_ADDR var, GM_ADDR m, GM_ADDR v,
                                            GM_ADDR s, GM_ADDR step, GM_ADDR varRef,
                                            GM_ADDR mRef, GM_ADDR vRef, GM_ADDR sRef,
                                            const ApplyFusedEmaAdamTilingData& tiling)
{
    AscendC::TPipe pipe;
    KernelApplyFusedEmaAdam<T> op;
    op.Init(grad, var, m, v, s, step, varRef, mRef, vRef, sRef, tiling, &pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void aea_apply_fused_ema_adam(GM_ADDR grad, GM_ADDR var,
                                                               GM_ADDR m, GM_ADDR v, GM_ADDR s,
                                                               GM_ADDR step, GM_ADDR varRef,
                                                               GM_ADDR mRef, GM_ADDR vRef,
                                                               GM_ADDR sRef, GM_ADDR workspace,
                                                               GM_ADDR tiling)
{
    (void)workspace;  // the operator needs no workspace
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    REGISTER_TILING_DEFAULT(ApplyFusedEmaAdamTilingData);
    GET_TILING_DATA(tilingData, tiling);
    if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_KEY_FP32)) {
        RunApplyFusedEmaAdam<float>(grad, var, m, v, s, step, varRef, mRef, vRef, sRef, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_KEY_FP16)) {
        RunApplyFusedEmaAdam<half>(grad, var, m, v, s, step, varRef, mRef, vRef, sRef, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_KEY_BF16)) {
        RunApplyFusedEmaAdam<bfloat16_t>(grad, var, m, v, s, step, varRef, mRef, vRef, sRef,
                                         tilingData);
    }
}
