/**
 * @file aclnn_apply_fused_ema_adam_list_v2.h
 * @brief Two-phase aclnn API of ApplyFusedEmaAdamListV2, declared exactly as CANN's op_build
 *        generates it from the OpDef ApplyFusedEmaAdamListV2 (op_host/apply_fused_ema_adam_list/cann/): ApplyFusedEmaAdamList
 *        (aclnn_apply_fused_ema_adam_list.h) for capturable training and EMA schedules.
 *
 * What V2 adds: ssRef may be an EMPTY list (no EMA on this launch: the EMA list is neither read
 * nor written), and lrTensorOptional / emaDecayTensorOptional, one-element fp32 tensors on the
 * device read when the launch runs, replace the lr / emaDecay attributes (their values are not
 * validated, like gradScaleOptional's; the attributes still are). NULL lists are refused (161001)
 * and lists of more than 256 tensors too (161002), as in V1. V1 is V2 with a full ssRef and both
 * tensors NULL.
 */
#ifndef ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_LIST_V2_H
#define ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_LIST_V2_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdamListV2GetWorkspaceSize(
    const aclTensorList *grads, aclTensorList *varsRef, aclTensorList *msRef, aclTensorList *vsRef,
    aclTensorList *ssRef, aclTensorList *maxVsRef, aclTensorList *modelCopiesRef,
    const aclTensor *step, const aclTensor *gradScaleOptional, const aclTensor *foundInfOptional,
    const aclTensor *lrTensorOptional, const aclTensor *emaDecayTensorOptional, double lr,
    double emaDecay, double beta1, double beta2, double eps, int64_t mode, bool biasCorrection,
    double weightDecay, bool maximize, uint64_t *workspaceSize, aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdamListV2(
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_LIST_V2_H */
