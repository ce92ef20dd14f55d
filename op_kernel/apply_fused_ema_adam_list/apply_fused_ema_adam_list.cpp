/**
 * @file apply_fused_ema_adam_list.cpp
 * @brief Kernel entry of ApplyFusedEmaAdamList (the V1 operator): reads the tiling and runs one
 *        core's share through the instantiation of the tiling key (apply_fused_ema_adam_list.h).
 *        Argument order is CANN's: the inputs (dynamic lists as descriptors, then step,
 *        grad_scale, found_inf), the in-place outputs in the OpDef's order -- varsRef, ssRef,
 *        maxVsRef, modelCopiesRef, msRef, vsRef: a list that is never empty last, because CANN's
 *        opbase leaves an empty last output list's place holder unfilled and the runtime then
 *        overwrites the first argument (docs/ACLNN.md, D1) --, workspace, tiling. model_copies is an
 *        input of the op for CANN's in-place pairing only: the kernel writes modelCopiesRef and
 *        never reads the copies. lr and the EMA decay are attributes only (ApplyFusedEmaAdamListV2,
 *        apply_fused_ema_adam_list_v2.cpp, also takes them as tensors, and may omit the EMA).
 */
#include "apply_fused_ema_adam_list.h"

extern "C" __global__ __aicore__ void apply_fused_ema_adam_list(
    GM_ADDR grads, GM_ADDR vars, GM_ADDR ms, GM_ADDR vs, GM_ADDR ss, GM_ADDR maxVs,
    GM_ADDR modelCopies, GM_ADDR step, GM_ADDR gradScale, GM_ADDR foundInf, GM_ADDR varsRef,
    GM_ADDR ssRef, GM_ADDR maxVsRef, GM_ADDR modelCopiesRef, GM_ADDR msRef, GM_ADDR vsRef,
    GM_ADDR workspace, GM_ADDR tiling)
{
    (void)modelCopies;  // written through modelCopiesRef, never read
    (void)workspace;    // the operator needs no workspace
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    REGISTER_TILING_DEFAULT(ApplyFusedEmaAdamListTilingData);
    GET_TILING_DATA(tilingData, tiling);
    const ascend_ema_adam::apply_fused_ema_adam_list::ApplyFusedEmaAdamListKernelArgs args{
        grads,   vars,    ms,      vs,    ss,    maxVs, step,     gradScale,     foundInf,
        nullptr, nullptr, varsRef, msRef, vsRef, ssRef, maxVsRef, modelCopiesRef};
    ascend_ema_adam::apply_fused_ema_adam_list::RunApplyFusedEmaAdamListOfKey(args, tilingData);
}
