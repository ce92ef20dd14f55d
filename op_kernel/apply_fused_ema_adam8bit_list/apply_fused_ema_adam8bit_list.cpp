/**
 * @file apply_fused_ema_adam8bit_list.cpp
 * @brief Kernel entry of ApplyFusedEmaAdam8bitList (apply_fused_ema_adam8bit_list.h). Argument
 *        order is CANN's: inputs, in-place outputs in the OpDef's order (a list that is never empty
 *        last: kApplyFusedEmaAdam8bitListOutputOrder, docs/ACLNN.md "D1"), workspace, tiling.
 */
#include "apply_fused_ema_adam8bit_list.h"

extern "C" __global__ __aicore__ void apply_fused_ema_adam8bit_list(
    GM_ADDR grads, GM_ADDR vars, GM_ADDR ms, GM_ADDR vs, GM_ADDR mAbsmaxes, GM_ADDR vAbsmaxes,
    GM_ADDR ss, GM_ADDR modelCopies, GM_ADDR qmapM, GM_ADDR qmapV, GM_ADDR step,
    GM_ADDR gradScale, GM_ADDR foundInf, GM_ADDR lr, GM_ADDR emaDecay, GM_ADDR varsRef,
    GM_ADDR ssRef, GM_ADDR modelCopiesRef, GM_ADDR msRef, GM_ADDR vsRef, GM_ADDR mAbsmaxesRef,
    GM_ADDR vAbsmaxesRef, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)modelCopies;  // written through modelCopiesRef, never read
    (void)workspace;    // the operator needs no workspace
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    REGISTER_TILING_DEFAULT(ApplyFusedEmaAdam8bitListTilingData);
    GET_TILING_DATA(tilingData, tiling);
    const ascend_ema_adam::apply_fused_ema_adam8bit_list::ApplyFusedEmaAdam8bitListKernelArgs args{
        grads,   vars,  ms,    vs,           mAbsmaxes,    vAbsmaxes, ss,
        qmapM,   qmapV, step,  gradScale,    foundInf,     lr,        emaDecay,
        varsRef, msRef, vsRef, mAbsmaxesRef, vAbsmaxesRef, ssRef,     modelCopiesRef};
    ascend_ema_adam::apply_fused_ema_adam8bit_list::RunApplyFusedEmaAdam8bitListOfKey(args,
                                                                                     tilingData);
}
