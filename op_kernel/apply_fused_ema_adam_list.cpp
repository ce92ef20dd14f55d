/**
 * @file apply_fused_ema_adam_list.cpp
 * @brief Kernel entry of ApplyFusedEmaAdamList: reads the tiling, picks the (P, S, G, C)
 *        instantiation by tiling key, runs one core's share. Argument order is CANN's: the
 *        inputs (dynamic lists as descriptors, then step, grad_scale, found_inf), the in-place
 *        outputs, workspace, tiling. model_copies is an input of the op for CANN's in-place
 *        pairing only: the kernel writes modelCopiesRef and never reads the copies.
 */
#include "apply_fused_ema_adam_list.h"
#include "apply_fused_ema_adam_list_tiling_key.h"

using ascend_ema_adam::KernelApplyFusedEmaAdamList;
using ascend_ema_adam::ListKernelArgs;
using ascend_ema_adam::NoModelCopy;

template <typename P, typename S, typename G, typename C>
__aicore__ inline void RunApplyFusedEmaAdamList(const ListKernelArgs& args,
                                                const ApplyFusedEmaAdamListTilingData& tiling)
{
    AscendC::TPipe pipe;
    KernelApplyFusedEmaAdamList<P, S, G, C> op;
    if (op.Init(args, tiling, &pipe)) {
        op.Process();
    }
}

extern "C" __global__ __aicore__ void apply_fused_ema_adam_list(
    GM_ADDR grads, GM_ADDR vars, GM_ADDR ms, GM_ADDR vs, GM_ADDR ss, GM_ADDR maxVs,
    GM_ADDR modelCopies, GM_ADDR step, GM_ADDR gradScale, GM_ADDR foundInf, GM_ADDR varsRef,
    GM_ADDR msRef, GM_ADDR vsRef, GM_ADDR ssRef, GM_ADDR maxVsRef, GM_ADDR modelCopiesRef,
    GM_ADDR workspace, GM_ADDR tiling)
{
    (void)modelCopies;  // written through modelCopiesRef, never read
    (void)workspace;    // the operator needs no workspace
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    REGISTER_TILING_DEFAULT(ApplyFusedEmaAdamListTilingData);
    GET_TILING_DATA(tilingData, tiling);
    const ListKernelArgs args{grads,     vars,     ms,       vs,    ss,    maxVs,    step,
                              gradScale, foundInf, varsRef,  msRef, vsRef, ssRef,    maxVsRef,
                              modelCopiesRef};
    if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_FP32)) {
        RunApplyFusedEmaAdamList<float, float, float, NoModelCopy>(args, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_FP16_FP16)) {
        RunApplyFusedEmaAdamList<float, float, half, half>(args, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_FP32_FP16)) {
        RunApplyFusedEmaAdamList<float, float, float, half>(args, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_BF16_BF16)) {
        RunApplyFusedEmaAdamList<float, float, bfloat16_t, bfloat16_t>(args, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_FP32_BF16)) {
        RunApplyFusedEmaAdamList<float, float, float, bfloat16_t>(args, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_FP16_FP16_FP16)) {
        RunApplyFusedEmaAdamList<half, half, half, NoModelCopy>(args, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_FP16_FP16_FP32)) {
        RunApplyFusedEmaAdamList<half, half, float, NoModelCopy>(args, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_FP16_FP32_FP16)) {
        RunApplyFusedEmaAdamList<half, float, half, NoModelCopy>(args, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_FP16_FP32_FP32)) {
        RunApplyFusedEmaAdamList<half, float, float, NoModelCopy>(args, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_BF16_BF16_BF16)) {
        RunApplyFusedEmaAdamList<bfloat16_t, bfloat16_t, bfloat16_t, NoModelCopy>(args, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_BF16_BF16_FP32)) {
        RunApplyFusedEmaAdamList<bfloat16_t, bfloat16_t, float, NoModelCopy>(args, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_BF16_FP32_BF16)) {
        RunApplyFusedEmaAdamList<bfloat16_t, float, bfloat16_t, NoModelCopy>(args, tilingData);
    } else if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_BF16_FP32_FP32)) {
        RunApplyFusedEmaAdamList<bfloat16_t, float, float, NoModelCopy>(args, tilingData);
    }
}
