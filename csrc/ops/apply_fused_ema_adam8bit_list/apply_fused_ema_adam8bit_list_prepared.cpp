/**
 * @file apply_fused_ema_adam8bit_list_prepared.cpp
 * @brief ApplyFusedEmaAdam8bitListPreparedCall: phase 1 of every launch of an 8-bit list call on
 *        the CPU device, then its phase 2s, once or (repeatable) again and again
 *        (apply_fused_ema_adam8bit_list_prepared.h).
 */
#include "apply_fused_ema_adam8bit_list_prepared.h"

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <utility>

#include "aclnnop/aclnn_apply_fused_ema_adam8bit_list.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

using namespace ops;  // the torch ops' shared part (csrc/common/)

namespace {

constexpr const char* kPhase1 = "aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize";
constexpr const char* kPhase2 = "aclnnApplyFusedEmaAdam8bitList";

struct Api {
    decltype(&aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize) phase1;
    decltype(&aclnnApplyFusedEmaAdam8bitList) phase2;
    decltype(&aclDestroyAclOpExecutor) destroy;
    decltype(&aclSetAclOpExecutorRepeatable) repeatable;
    decltype(&aclSetDynamicInputTensorAddr) setDynamicInput;
};

const Api& CpuApi()
{
    static const Api api{
        CpuOpApiFunction<decltype(Api::phase1)>(kPhase1),
        CpuOpApiFunction<decltype(Api::phase2)>(kPhase2),
        CpuOpApiFunction<decltype(Api::destroy)>("aclDestroyAclOpExecutor"),
        CpuOpApiFunction<decltype(Api::repeatable)>("aclSetAclOpExecutorRepeatable"),
        CpuOpApiFunction<decltype(Api::setDynamicInput)>("aclSetDynamicInputTensorAddr")};
    return api;
}

/** The one-element fp32 tensor a repeatable call reads lr or the decay from: a copy of the one
 *  given, else one holding the value. */
at::Tensor OwnedValue(const at::Tensor* given, double value)
{
    return given != nullptr ? given->clone()
                            : at::full({1}, value, at::TensorOptions().dtype(at::kFloat));
}

}  // namespace

ApplyFusedEmaAdam8bitListPreparedCall::ApplyFusedEmaAdam8bitListPreparedCall(
    const ApplyFusedEmaAdam8bitListCall& given, bool repeatable)
    : repeatable_(repeatable), biasCorrection_(given.attrs.biasCorrection)
{
    CheckApplyFusedEmaAdam8bitListCallDevice(given, at::Device(at::kCPU));
    const std::vector<std::pair<size_t, size_t>> slices =
        ApplyFusedEmaAdam8bitListLaunches(given.Entries());
    if (slices.size() > 1) {  // the whole call, named with its own entry indexes
        CheckApplyFusedEmaAdam8bitListCallDescription(given);
    }
    if (slices.size() > 1 || repeatable) {
        // (a repeatable call's own: phase 1 sees copies of its one-element inputs, which share
        // no memory, and one the caller's shares with an updated tensor is refused as the op
        // refuses it)
        CheckApplyFusedEmaAdam8bitListCallMemory(given);
    }
    ApplyFusedEmaAdam8bitListCall call = given;
    if (repeatable) {  // the one-element inputs: copies, which RunAgain refills
        for (int t : {kCallStep, kCallGradScale, kCallFoundInf}) {
            if (call.tensors[t] != nullptr) owned_[t] = call.tensors[t]->clone();
        }
        owned_[kCallLr] = OwnedValue(call.tensors[kCallLr], call.attrs.lr);
        owned_[kCallEmaDecay] = OwnedValue(call.tensors[kCallEmaDecay], call.attrs.emaDecay);
        for (int t = kCallStep; t < kCallTensors; ++t) {
            if (owned_[t].defined()) call.tensors[t] = &owned_[t];
        }
    }
    for (int t = 0; t < kCallTensors; ++t) {
        if (call.tensors[t] != nullptr) tensors_[t] = ToAclTensor(*call.tensors[t], false);
    }
    const Api& api = CpuApi();
    FollowTorchThreads();  // phase 1 fixes the executors' thread count
    torchThreads_ = at::get_num_threads();
    uint64_t maxWorkspace = 0;
    launches_.reserve(slices.size());
    for (const std::pair<size_t, size_t>& slice : slices) {
        Launch& launch = launches_.emplace_back();
        for (int l = 0; l < kApplyFusedEmaAdam8bitListTensorLists; ++l) {
            // one launch sees the lists as given, for phase 1's messages
            const at::TensorList lists =
                slices.size() > 1 ? ApplyFusedEmaAdam8bitListLaunchSlice(call.lists[l], slice)
                                  : call.lists[l];
            launch.lists[l] = ToAclTensorList(lists, kApplyFusedEmaAdam8bitListUpdated[l]);
        }
        const auto list = [&](int l) { return launch.lists[l].get(); };
        const auto tensor = [&](int t) { return tensors_[t].get(); };
        aclOpExecutor* executor = nullptr;
        const aclnnStatus status = api.phase1(
            list(kApplyFusedEmaAdam8bitListGrads), list(kApplyFusedEmaAdam8bitListVars),
            list(kApplyFusedEmaAdam8bitListMs), list(kApplyFusedEmaAdam8bitListVs),
            list(kApplyFusedEmaAdam8bitListMAbsmaxes), list(kApplyFusedEmaAdam8bitListVAbsmaxes),
            list(kApplyFusedEmaAdam8bitListSs), list(kApplyFusedEmaAdam8bitListCopies),
            tensor(kCallQmapM), tensor(kCallQmapV), tensor(kCallStep), tensor(kCallGradScale),
            tensor(kCallFoundInf), tensor(kCallLr), tensor(kCallEmaDecay),
            APPLY_FUSED_EMA_ADAM8BIT_LIST_ATTR_VALUES(call.attrs), &launch.workspaceSize,
            &executor);
        launch.executor.reset(executor);
        // raises; the launches prepared so far are destroyed with launches_
        CheckAclnnStatus(kPhase1, status,
                         ApplyFusedEmaAdam8bitListLaunchOfCall(slice, slices.size()));
        if (repeatable) {
            CheckAclnnStatus("aclSetAclOpExecutorRepeatable",
                             api.repeatable(launch.executor.get()));
        }
        maxWorkspace = std::max(maxWorkspace, launch.workspaceSize);
    }
    workspace_ = at::empty({static_cast<int64_t>(maxWorkspace)},
                           at::TensorOptions().dtype(at::kByte));
    if (repeatable) {
        seen_.Remember(call.lists.data(), kApplyFusedEmaAdam8bitListTensorLists,
                       kApplyFusedEmaAdam8bitListGrads, kApplyFusedEmaAdam8bitListUpdated,
                       {call.tensors[kCallQmapM], call.tensors[kCallQmapV]});
    }
}

void ApplyFusedEmaAdam8bitListPreparedCall::ExecutorDeleter::operator()(
    aclOpExecutor* executor) const
{
    CpuApi().destroy(executor);
}

ApplyFusedEmaAdam8bitListPreparedCall::~ApplyFusedEmaAdam8bitListPreparedCall() = default;

void ApplyFusedEmaAdam8bitListPreparedCall::Run()
{
    RunCpuPhase2s(launches_, CpuApi().phase2, kPhase2, workspace_, repeatable_,
                  kApplyFusedEmaAdam8bitListOpName);
}

bool ApplyFusedEmaAdam8bitListPreparedCall::RunAgain(const BorrowedTensors& grads,
                                                     const at::Tensor& step, const ScalarArg& lr,
                                                     const ScalarArg& emaDecay,
                                                     const std::optional<at::Tensor>& gradScale,
                                                     const std::optional<at::Tensor>& foundInf,
                                                     bool heldChecked)
{
    TORCH_CHECK(repeatable_, kApplyFusedEmaAdam8bitListOpName,
                ": RunAgain needs a repeatable prepared call");
    // ---- everything phase 1 checked, read only
    if (!seen_.HeldUnchanged(heldChecked)) return false;
    std::vector<size_t> moved;
    if (!seen_.GradsFit(grads, &moved)) return false;
    // the one-element inputs, in kCallTensors' order from the step (lr, decay: tensors or values)
    const std::array<const at::Tensor*, kCallTensors> given = {
        nullptr, nullptr, &step, gradScale ? &*gradScale : nullptr,
        foundInf ? &*foundInf : nullptr, lr.tensor ? &*lr.tensor : nullptr,
        emaDecay.tensor ? &*emaDecay.tensor : nullptr};
    for (int t : {kCallStep, kCallGradScale, kCallFoundInf}) {
        if ((given[t] != nullptr) != owned_[t].defined()) return false;  // given then, not now
    }
    for (int t : {kCallStep, kCallGradScale, kCallFoundInf, kCallLr, kCallEmaDecay}) {
        if (given[t] != nullptr && (!FitsOneElement(*given[t], owned_[t]) ||
                                    !seen_.OverlapsNoUpdated(*given[t]))) {
            return false;
        }
    }
    if (!CheckStepValue(*step.data_ptr<int64_t>(), biasCorrection_).empty() ||
        at::get_num_threads() != torchThreads_) {
        return false;
    }

    // ---- the new values and addresses, then the launches
    for (int t : {kCallStep, kCallGradScale, kCallFoundInf, kCallLr, kCallEmaDecay}) {
        if (given[t] != nullptr) CopyOneElement(*given[t], owned_[t]);
    }
    // (host memory, and no launch of this call is in flight)
    if (!lr.tensor) owned_[kCallLr].data_ptr<float>()[0] = static_cast<float>(lr.value);
    if (!emaDecay.tensor) {
        owned_[kCallEmaDecay].data_ptr<float>()[0] = static_cast<float>(emaDecay.value);
    }
    const Api& api = CpuApi();
    for (size_t i : moved) {
        Launch& launch = launches_[i / kApplyFusedEmaAdam8bitListMaxTensors];
        CheckAclnnStatus("aclSetDynamicInputTensorAddr",
                         api.setDynamicInput(launch.executor.get(), kApplyFusedEmaAdam8bitListGrads,
                                             i % kApplyFusedEmaAdam8bitListMaxTensors,
                                             launch.lists[kApplyFusedEmaAdam8bitListGrads].get(),
                                             seen_.GradStorageAddress(i, *grads[i])));
        seen_.GradMoved(i, *grads[i]);
    }
    Run();
    return true;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list
