/**
 * @file apply_fused_ema_adam_check.cpp
 * @brief CheckApplyFusedEmaAdam (see the header).
 */
#include "apply_fused_ema_adam_check.h"

namespace ascend_ema_adam::apply_fused_ema_adam {

namespace {

constexpr const char* kFloatGroup = "grad, varRef, mRef, vRef and sRef";

Refusal CheckDtypes(const ApplyFusedEmaAdamTensorArgs& t)
{
    Refusal refusal = CheckFloatDtype(t[kGrad]);
    for (int i = kVar; refusal.empty() && i < kApplyFusedEmaAdamFloatTensors; ++i) {
        refusal = CheckSameDtype(t[i], t[kGrad], kFloatGroup);
    }
    return refusal.empty() ? CheckStepDtype(t[kStep]) : refusal;
}

Refusal CheckShapes(const ApplyFusedEmaAdamTensorArgs& t)
{
    Refusal refusal;
    for (int i = kVar; refusal.empty() && i < kApplyFusedEmaAdamFloatTensors; ++i) {
        refusal = CheckSameShape(t[i], t[kGrad], kFloatGroup);
    }
    return refusal.empty() ? CheckStepShape(t[kStep]) : refusal;
}

}  // namespace

Refusal CheckApplyFusedEmaAdam(const ApplyFusedEmaAdamTensorArgs& tensors, const Attrs& attrs)
{
    Refusal refusal = CheckDtypes(tensors);
    if (refusal.empty()) refusal = CheckShapes(tensors);
    if (refusal.empty()) refusal = CheckAttrs(attrs);
    return refusal;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam
