/**
 * @file aclnn_apply_fused_ema_adam8bit_list.h
 * @brief Two-phase aclnn API of ApplyFusedEmaAdam8bitList, declared exactly as CANN's op_build
 *        generates it from the OpDef ApplyFusedEmaAdam8bitList
 *        (op_host/apply_fused_ema_adam8bit_list/cann/): the list op's update (ApplyFusedEmaAdamListV2)
 *        with Adam's moments as 8-bit codes and one fp32 scale per block of 256 elements.
 *
 * Entry i: grads[i], varsRef[i], msRef[i] and vsRef[i] (uint8 codes), ssRef[i] (fp32 EMA) and
 * modelCopiesRef[i] of one shape; mAbsmaxesRef[i], vAbsmaxesRef[i] fp32 [ceil(numel / 256)].
 * qmapM, qmapV: the 256-entry fp32 maps (sorted, within [-1, 1]). An empty ssRef: no EMA on this
 * launch; an empty modelCopiesRef: no copies. lrTensorOptional / emaDecayTensorOptional replace the
 * lr / emaDecay attributes when given. No AMSGrad. docs/ACLNN.md, "ApplyFusedEmaAdam8bitList".
 */
#ifndef ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM8BIT_LIST_H
#define ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM8BIT_LIST_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize(
    const aclTensorList *grads, aclTensorList *varsRef, aclTensorList *msRef, aclTensorList *vsRef,
    aclTensorList *mAbsmaxesRef, aclTensorList *vAbsmaxesRef, aclTensorList *ssRef,
    aclTensorList *modelCopiesRef, const aclTensor *qmapM, const aclTensor *qmapV,
    const aclTensor *step, const aclTensor *gradScaleOptional, const aclTensor *foundInfOptional,
    const aclTensor *lrTensorOptional, const aclTensor *emaDecayTensorOptional, double lr,
    double emaDecay, double beta1, double beta2, double eps, int64_t mode, bool biasCorrection,
    double weightDecay, bool maximize, uint64_t *workspaceSize, aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdam8bitList(
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM8BIT_LIST_H */
