/**
 * @file apply_fused_ema_adam_list_v2.cpp
 * @brief Kernel entry of ApplyFusedEmaAdamListV2: ApplyFusedEmaAdamList's kernel
 *        (apply_fused_ema_adam_list.h) with two more optional inputs after found_inf, lr and
 *        ema_decay as one-element fp32 tensors (tiling hasLrTensor / hasEmaDecayTensor), and an
 *        EMA list that may be empty (tiling hasEma 0: the kernel never opens ss/ssRef). Argument
 *        order is CANN's: inputs, in-place outputs (in the OpDef's order, see
 *        apply_fused_ema_adam_list.cpp), workspace, tiling.
 */
#include "apply_fused_ema_adam_list.h"

extern "C" __global__ __aicore__ void apply_fused_ema_adam_list_v2(
    GM_ADDR grads, GM_ADDR vars, GM_ADDR ms, GM_ADDR vs, GM_ADDR ss, GM_ADDR maxVs,
    GM_ADDR modelCopies, GM_ADDR step, GM_ADDR gradScale, GM_ADDR foundInf, GM_ADDR lr,
    GM_ADDR emaDecay, GM_ADDR varsRef, GM_ADDR ssRef, GM_ADDR maxVsRef, GM_ADDR modelCopiesRef,
    GM_ADDR msRef, GM_ADDR vsRef, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)modelCopies;  // written through modelCopiesRef, never read
    (void)workspace;    // the operator needs no workspace
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    REGISTER_TILING_DEFAULT(ApplyFusedEmaAdamListTilingData);
    GET_TILING_DATA(tilingData, tiling);
    const ascend_ema_adam::apply_fused_ema_adam_list::ApplyFusedEmaAdamListKernelArgs args{
        grads, vars,     ms,      vs,    ss,    maxVs, step,     gradScale,     foundInf,
        lr,    emaDecay, varsRef, msRef, vsRef, ssRef, maxVsRef, modelCopiesRef};
    ascend_ema_adam::apply_fused_ema_adam_list::RunApplyFusedEmaAdamListOfKey(args, tilingData);
}
