/**
 * @file apply_fused_ema_adam_check.h
 * @brief The validation of an ApplyFusedEmaAdam call that needs no tensor memory: dtypes, shapes,
 *        the step tensor and the attributes. One function for both paths: the CPU aclnn layer
 *        (runtime/acl/, between its null and its format/memory checks) and the CANN tiling adapter
 *        (op_host/<op>/cann/), so a call is refused with the same message on the CPU and the NPU.
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_CHECK_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_CHECK_H

#include "ema_adam_attrs.h"
#include "validation.h"

namespace ascend_ema_adam::apply_fused_ema_adam {

/** The tensor arguments in signature order; the first five are the float tensors. */
enum ApplyFusedEmaAdamTensor : int { kGrad, kVar, kM, kV, kS, kStep, kApplyFusedEmaAdamTensors };
constexpr int kApplyFusedEmaAdamFloatTensors = kS + 1;
/** Their names in the aclnn API (the messages use them). */
constexpr const char* kApplyFusedEmaAdamTensorNames[kApplyFusedEmaAdamTensors] = {
    "grad", "varRef", "mRef", "vRef", "sRef", "step"};

using ApplyFusedEmaAdamTensorArgs = TensorArg[kApplyFusedEmaAdamTensors];

/**
 * In this order, the first failure wins:
 *   dtypes:     grad fp32/fp16/bf16; varRef, mRef, vRef, sRef grad's dtype; step int64;
 *   shapes:     varRef, mRef, vRef, sRef grad's shape; step exactly one element;
 *   attributes: CheckAttrs.
 * The step's value (CheckStepValue) is checked by callers that can read it.
 */
Refusal CheckApplyFusedEmaAdam(const ApplyFusedEmaAdamTensorArgs& tensors, const Attrs& attrs);

}  // namespace ascend_ema_adam::apply_fused_ema_adam

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_CHECK_H
