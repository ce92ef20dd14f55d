/**
 * @file apply_fused_ema_adam_list_api.h
 * @brief The aclnn functions a prepared list call uses, found in one op-API library: the CPU
 *        device's (CpuOpApiSymbol) or CANN's through torch_npu (NpuOpApiSymbol). Their types are
 *        our C API's declarations (include/aclnnop/, include/aclnn/acl_meta.h), which are CANN's.
 */
#ifndef ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_API_H
#define ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_API_H

#include <cstddef>
#include <string>
#include <utility>

#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_apply_fused_ema_adam_list_v2.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

inline constexpr const char* kApplyFusedEmaAdamListPhase1 =
    "aclnnApplyFusedEmaAdamListV2GetWorkspaceSize";
inline constexpr const char* kApplyFusedEmaAdamListPhase2 = "aclnnApplyFusedEmaAdamListV2";

struct ApplyFusedEmaAdamListOpApi {
    decltype(&aclnnApplyFusedEmaAdamListV2GetWorkspaceSize) phase1;
    decltype(&aclnnApplyFusedEmaAdamListV2) phase2;
    decltype(&aclDestroyAclOpExecutor) destroy;
    decltype(&aclSetAclOpExecutorRepeatable) repeatable;
    decltype(&aclSetDynamicInputTensorAddr) setDynamicInput;
    decltype(&aclSetInputTensorAddr) setInput;
};

/** The functions, looked up once with `kSymbol` (which raises for a missing one). */
template <void* (*kSymbol)(const char*)>
const ApplyFusedEmaAdamListOpApi& LoadApplyFusedEmaAdamListOpApi()
{
    static const ApplyFusedEmaAdamListOpApi api{
        reinterpret_cast<decltype(ApplyFusedEmaAdamListOpApi::phase1)>(
            kSymbol(kApplyFusedEmaAdamListPhase1)),
        reinterpret_cast<decltype(ApplyFusedEmaAdamListOpApi::phase2)>(
            kSymbol(kApplyFusedEmaAdamListPhase2)),
        reinterpret_cast<decltype(ApplyFusedEmaAdamListOpApi::destroy)>(
            kSymbol("aclDestroyAclOpExecutor")),
        reinterpret_cast<decltype(ApplyFusedEmaAdamListOpApi::repeatable)>(
            kSymbol("aclSetAclOpExecutorRepeatable")),
        reinterpret_cast<decltype(ApplyFusedEmaAdamListOpApi::setDynamicInput)>(
            kSymbol("aclSetDynamicInputTensorAddr")),
        reinterpret_cast<decltype(ApplyFusedEmaAdamListOpApi::setInput)>(
            kSymbol("aclSetInputTensorAddr"))};
    return api;
}

/** What a phase-1 refusal of one launch of several adds to the message: which entries it held
 *  (empty for a call of one launch, whose messages name the call's own entries). */
inline std::string LaunchOfCall(std::pair<size_t, size_t> slice, size_t launches)
{
    if (launches <= 1) return {};
    return " (in the launch of entries " + std::to_string(slice.first) + " to " +
           std::to_string(slice.second - 1) + ": entry i there is entry " +
           std::to_string(slice.first) + " + i of the call)";
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_API_H
