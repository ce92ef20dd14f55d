/**
 * @file aclnn_apply_fused_ema_adam.h
 * @brief Two-phase aclnn API of ApplyFusedEmaAdam, declared exactly as CANN's generated header.
 *
 * Phase 1 validates every argument, runs the host tiling and returns the workspace size and a
 * single-use executor; phase 2 queues the update of varRef, mRef, vRef and sRef (in place) on the
 * stream. See docs/ACLNN.md for the validation table and the semantics.
 */
#ifndef ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_H
#define ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdamGetWorkspaceSize(
    const aclTensor *grad, aclTensor *varRef, aclTensor *mRef, aclTensor *vRef, aclTensor *sRef,
    const aclTensor *step, double lr, double emaDecay, double beta1, double beta2, double eps,
    int64_t mode, bool biasCorrection, double weightDecay, uint64_t *workspaceSize,
    aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdam(
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_H */
