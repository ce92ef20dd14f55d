/**
 * @file aclnn_apply_fused_ema_adam_list.h
 * @brief Two-phase aclnn API of ApplyFusedEmaAdamList: the fused Adam/AdamW + EMA update of a
 *        whole parameter group (entry i of every list is one parameter) in one launch, with
 *        optional AMSGrad (maxVsRefOptional), fp16/bf16 model copies of fp32 master weights
 *        (modelCopiesRefOptional), loss-scale division (gradScaleOptional), skipping on overflow
 *        (foundInfOptional) and maximize.
 *
 * Phase 1 validates every argument (161001 for null required arguments and null entries, 161002
 * for any other bad input, naming the list and the entry), runs the host tiling and returns the
 * workspace size and a single-use executor; phase 2 queues the in-place update on the stream.
 * An absent optional list is NULL or an empty list. See docs/ACLNN.md for the contract, the
 * validation table and an example.
 *
 * V2 (CANN's versioning: aclnnXxxV2 beside aclnnXxx) adds, for capturable training and EMA
 * schedules: ssRefOptional may be NULL or an empty list (no EMA on this launch: the EMA list is
 * neither read nor written), and lrOptional / emaDecayOptional, one-element fp32 tensors on the
 * device read when the launch runs, replace the lr / emaDecay attributes (their values are not
 * validated, like gradScaleOptional; the attributes still are). V1 is V2 with a required ssRef
 * and both tensors NULL.
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
    aclTensorList *ssRef, aclTensorList *maxVsRefOptional, aclTensorList *modelCopiesRefOptional,
    const aclTensor *step, const aclTensor *gradScaleOptional, const aclTensor *foundInfOptional,
    double lr, double emaDecay, double beta1, double beta2, double eps, int64_t mode,
    bool biasCorrection, double weightDecay, bool maximize,
    uint64_t *workspaceSize, aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdamList(
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

__attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdamListV2GetWorkspaceSize(
    const aclTensorList *grads, aclTensorList *varsRef, aclTensorList *msRef, aclTensorList *vsRef,
    aclTensorList *ssRefOptional, aclTensorList *maxVsRefOptional,
    aclTensorList *modelCopiesRefOptional, const aclTensor *step,
    const aclTensor *gradScaleOptional, const aclTensor *foundInfOptional,
    const aclTensor *lrOptional, const aclTensor *emaDecayOptional, double lr, double emaDecay,
    double beta1, double beta2, double eps, int64_t mode, bool biasCorrection,
    double weightDecay, bool maximize, uint64_t *workspaceSize, aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdamListV2(
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_LIST_H */
