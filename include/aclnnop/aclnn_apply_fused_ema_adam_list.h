/**
 * @file aclnn_apply_fused_ema_adam_list.h
 * @brief Two-phase aclnn API of ApplyFusedEmaAdamList, declared exactly as CANN's op_build
 *        generates it from the OpDef (op_host/apply_fused_ema_adam_list/cann/): the fused Adam/AdamW + EMA update of a whole
 *        parameter group (entry i of every list is one parameter) in one launch, with optional
 *        AMSGrad (maxVsRef), fp16/bf16 model copies of fp32 master weights (modelCopiesRef),
 *        loss-scale division (gradScaleOptional), skipping on overflow (foundInfOptional) and
 *        maximize.
 *
 * Every list is a DYNAMIC parameter: never NULL (161001, as CANN's generated layer), at most 256
 * tensors (161002, as CANN's opbase), and an optional list that is not used is an EMPTY list
 * (aclCreateTensorList(NULL, 0)). Phase 1 validates every argument (161001 for null arguments and
 * null entries, 161002 for any other bad input, naming the list and the entry), runs the host
 * tiling and returns the workspace size and a single-use executor; phase 2 queues the in-place
 * update on the stream. See docs/ACLNN.md for the contract, the validation table and an example.
 * ApplyFusedEmaAdamListV2 (no EMA, lr / EMA decay as device tensors) has its own header,
 * aclnn_apply_fused_ema_adam_list_v2.h.
 */
#ifndef ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_LIST_H
#define ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_LIST_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdamListGetWorkspaceSize(
    const aclTensorList *grads, aclTensorList *varsRef, aclTensorList *msRef, aclTensorList *vsRef,
    aclTensorList *ssRef, aclTensorList *maxVsRef, aclTensorList *modelCopiesRef,
    const aclTensor *step, const aclTensor *gradScaleOptional, const aclTensor *foundInfOptional,
    double lr, double emaDecay, double beta1, double beta2, double eps, int64_t mode,
    bool biasCorrection, double weightDecay, bool maximize,
    uint64_t *workspaceSize, aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdamList(
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_LIST_H */
