/**
 * @file apply_fused_ema_adam_list_kernel.cpp
 * @brief CPU kernel of ascend_ema_adam::apply_fused_ema_adam_list_: the lists go through our
 *        aclnn list API (aclnnApplyFusedEmaAdamListV2: aclCreateTensorList, the two phases),
 *        every tensor with its real sizes, strides and storage offset, and a workspace from the
 *        torch allocator. The arguments are validated by aclnn's phase 1; this file checks that
 *        every tensor is on the CPU and turns a failed phase into an error.
 *
 * The aclnn contract is CANN's: every list is a real aclTensorList, an absent optional list (and
 * an empty ss with non-empty vars: no EMA) an empty one, at most 256 tensors per list. A call of
 * more entries runs as several launches (apply_fused_ema_adam_list_call.h): first the whole call
 * is validated (the shared validation and the memory rules, with the call's own entry indexes),
 * then phase 1 of every launch, and only when all succeeded the phase 2s; a failure anywhere
 * writes nothing.
 */
#include <torch/library.h>

#include <ATen/ops/empty.h>

#include <string>
#include <type_traits>
#include <vector>

#include "apply_fused_ema_adam_list.h"
#include "apply_fused_ema_adam_list_call.h"
#include "aclnnop/aclnn_apply_fused_ema_adam_list_v2.h"
#include "cpu_op_api.h"

namespace ascend_ema_adam::ops {

namespace {

constexpr const char* kOpName = "apply_fused_ema_adam_list_";
constexpr const char* kPhase1 = "aclnnApplyFusedEmaAdamListV2GetWorkspaceSize";
constexpr const char* kPhase2 = "aclnnApplyFusedEmaAdamListV2";

AclTensorPtr ToAclOptional(const std::optional<at::Tensor>& t)
{
    return t ? ToAclTensor(*t, false) : AclTensorPtr();
}

/** A launch whose phase 1 succeeded: its executor, destroyed unless phase 2 consumes it. */
struct PreparedLaunch {
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
};

void ApplyFusedEmaAdamListCpu(at::TensorList grads, at::TensorList vars, at::TensorList ms,
                              at::TensorList vs, at::TensorList ss, const at::Tensor& step,
                              double lr, double emaDecay, double beta1, double beta2, double eps,
                              int64_t mode, bool biasCorrection, double weightDecay,
                              std::optional<at::TensorList> maxVs,
                              std::optional<at::TensorList> modelCopies,
                              const std::optional<at::Tensor>& gradScale,
                              const std::optional<at::Tensor>& foundInf, bool maximize,
                              const std::optional<at::Tensor>& lrTensor,
                              const std::optional<at::Tensor>& emaDecayTensor)
{
    ListCall call;
    call.lists = {grads, vars, ms, vs, ss, maxVs.value_or(at::TensorList()),
                  modelCopies.value_or(at::TensorList())};
    call.step = &step;
    call.scalars = {&gradScale, &foundInf, &lrTensor, &emaDecayTensor};
    call.attrs = AttrsInCannOrder(lr, emaDecay, beta1, beta2, eps, mode, biasCorrection,
                                  weightDecay);
    call.maximize = maximize;
    CheckListCallDevice(kOpName, call, at::Device(at::kCPU));
    static const auto getWorkspaceSize =
        CpuOpApiFunction<decltype(&aclnnApplyFusedEmaAdamListV2GetWorkspaceSize)>(kPhase1);
    static const auto run = CpuOpApiFunction<decltype(&aclnnApplyFusedEmaAdamListV2)>(kPhase2);
    static const auto destroyExecutor =
        CpuOpApiFunction<decltype(&aclDestroyAclOpExecutor)>("aclDestroyAclOpExecutor");

    const std::vector<std::pair<size_t, size_t>> launches = ListLaunches(call.Entries());
    if (launches.size() > 1) {  // the whole call, named with its own entry indexes
        CheckListCallDescription(kOpName, call);
        CheckListCallMemory(kOpName, call);
    }
    const AclTensorPtr aclStep = ToAclTensor(step, false);
    const AclTensorPtr aclGradScale = ToAclOptional(gradScale);
    const AclTensorPtr aclFoundInf = ToAclOptional(foundInf);
    const AclTensorPtr aclLr = ToAclOptional(lrTensor);
    const AclTensorPtr aclEmaDecay = ToAclOptional(emaDecayTensor);
    std::vector<PreparedLaunch> prepared;
    prepared.reserve(launches.size());
    // Executors of launches prepared before a failure are destroyed: nothing was written.
    struct Cleanup {
        std::vector<PreparedLaunch>* launches;
        ~Cleanup()
        {
            for (const PreparedLaunch& p : *launches) {
                if (p.executor != nullptr) destroyExecutor(p.executor);
            }
        }
    } cleanup{&prepared};
    uint64_t maxWorkspace = 0;
    for (size_t k = 0; k < launches.size(); ++k) {
        // A list handle always, empty for an absent list (the lists are sliced only when the
        // call has several launches: one launch sees the lists as given, for phase 1's messages).
        const auto list = [&](int l, bool mutated) {
            const at::TensorList whole = call.lists[l];
            return ToAclTensorList(launches.size() > 1 ? LaunchSlice(whole, launches[k]) : whole,
                                   mutated);
        };
        const AclTensorListPtr aclLists[kApplyFusedEmaAdamLists] = {
            list(kListGrads, false), list(kListVars, true),  list(kListMs, true),
            list(kListVs, true),     list(kListSs, true),    list(kListMaxVs, true),
            list(kListCopies, true)};
        PreparedLaunch p;
        const aclnnStatus status = getWorkspaceSize(
            aclLists[kListGrads].get(), aclLists[kListVars].get(), aclLists[kListMs].get(),
            aclLists[kListVs].get(), aclLists[kListSs].get(), aclLists[kListMaxVs].get(),
            aclLists[kListCopies].get(), aclStep.get(), aclGradScale.get(), aclFoundInf.get(),
            aclLr.get(), aclEmaDecay.get(), lr, emaDecay, beta1, beta2, eps, mode, biasCorrection,
            weightDecay, maximize, &p.workspaceSize, &p.executor);
        if (status != ACLNN_SUCCESS) {
            const std::string where =
                launches.size() > 1
                    ? " (in the launch of entries " + std::to_string(launches[k].first) + " to " +
                          std::to_string(launches[k].second - 1) + ": entry i there is entry " +
                          std::to_string(launches[k].first) + " + i of the call)"
                    : std::string();
            CheckAclnnStatus(kPhase1, status, where);
        }
        prepared.push_back(p);
        maxWorkspace = std::max(maxWorkspace, p.workspaceSize);
    }
    const at::Tensor workspace = at::empty({static_cast<int64_t>(maxWorkspace)},
                                           at::TensorOptions().dtype(at::kByte));
    for (PreparedLaunch& p : prepared) {
        // The null stream is the CPU device's synchronous default stream: done when this returns.
        const aclnnStatus status = run(p.workspaceSize > 0 ? workspace.data_ptr() : nullptr,
                                       p.workspaceSize, p.executor, nullptr);
        if (status == ACLNN_SUCCESS) {
            p.executor = nullptr;  // consumed by phase 2; a refused one stays for the cleanup
        }
        CheckAclnnStatus(kPhase2, status);
    }
}

static_assert(std::is_same_v<decltype(ApplyFusedEmaAdamListCpu),
                             decltype(ApplyFusedEmaAdamListInplace)>,
              "the CPU kernel must have the op's signature");

}  // namespace

}  // namespace ascend_ema_adam::ops

TORCH_LIBRARY_IMPL(ascend_ema_adam, CPU, m)
{
    m.impl("apply_fused_ema_adam_list_", &ascend_ema_adam::ops::ApplyFusedEmaAdamListCpu);
}
