/**
 * @file aclnn_aea_apply_fused_ema_adam.h
 * @brief Two-phase aclnn API of AeaApplyFusedEmaAdam: FusedEmaAdam as this package registers it
 *        with CANN (a vendor-unique op type, so that installing the package never replaces CANN's
 *        own ApplyFusedEmaAdam; docs/ACLNN.md, "The op type"), declared exactly as CANN's op_build
 *        generates it from the package's OpDef. The same operator as aclnn_apply_fused_ema_adam.h
 *        (the API of CANN's op, which this library also offers on the CPU device): the same
 *        arguments, validation and results; an executor runs only under the name that made it.
 */
#ifndef ASCEND_EMA_ADAM_ACLNN_AEA_APPLY_FUSED_EMA_ADAM_H
#define ASCEND_EMA_ADAM_ACLNN_AEA_APPLY_FUSED_EMA_ADAM_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnAeaApplyFusedEmaAdamGetWorkspaceSize(
    const aclTensor *grad, aclTensor *varRef, aclTensor *mRef, aclTensor *vRef, aclTensor *sRef,
    const aclTensor *step, double lr, double emaDecay, double beta1, double beta2, double eps,
    int64_t mode, bool biasCorrection, double weightDecay, uint64_t *workspaceSize,
    aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnAeaApplyFusedEmaAdam(
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ASCEND_EMA_ADAM_ACLNN_AEA_APPLY_FUSED_EMA_ADAM_H */
