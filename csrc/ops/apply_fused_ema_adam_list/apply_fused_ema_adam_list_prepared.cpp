/**
 * @file apply_fused_ema_adam_list_prepared.cpp
 * @brief PreparedApplyFusedEmaAdamListCall: phase 1 of every launch of a list call on the CPU
 *        device, then its phase 2s, once or (repeatable) again and again
 *        (apply_fused_ema_adam_list_prepared.h).
 */
#include "apply_fused_ema_adam_list_prepared.h"

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <string>
#include <utility>

#include "apply_fused_ema_adam_list_api.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using namespace ops;  // the torch ops' shared part (csrc/common/)

namespace {

constexpr const char* kOpName = "apply_fused_ema_adam_list_";

const ApplyFusedEmaAdamListOpApi& V2() { return LoadApplyFusedEmaAdamListOpApi<CpuOpApiSymbol>(); }

AclTensorPtr ToAclOptional(const std::optional<at::Tensor>& t)
{
    return t ? ToAclTensor(*t, false) : AclTensorPtr();
}

}  // namespace

// ---- PreparedApplyFusedEmaAdamListCall: the CPU device
// --------------------------------------------------------

PreparedApplyFusedEmaAdamListCall::PreparedApplyFusedEmaAdamListCall(const ListCall& given,
                                                                     bool repeatable)
    : repeatable_(repeatable)
{
    biasCorrection_ = given.attrs.biasCorrection;
    ListCall call = given;
    if (repeatable) {  // lr and the decay from tensors: the caller's, or ours holding the value
        OwnValues(&call, at::TensorOptions());
    }
    CheckApplyFusedEmaAdamListCallDevice(kOpName, call, at::Device(at::kCPU));
    const std::vector<std::pair<size_t, size_t>> slices =
        ApplyFusedEmaAdamListLaunches(call.Entries());
    if (slices.size() > 1) {  // the whole call, named with its own entry indexes
        CheckApplyFusedEmaAdamListCallDescription(kOpName, call);
        CheckApplyFusedEmaAdamListCallMemory(kOpName, call);
    }
    scalars_[0] = ToAclTensor(*call.step, false);
    for (int s = 0; s < kCallScalars; ++s) scalars_[1 + s] = ToAclOptional(*call.scalars[s]);
    const ApplyFusedEmaAdamListOpApi& api = V2();
    FollowTorchThreads();  // phase 1 fixes the executors' thread count
    torchThreads_ = at::get_num_threads();
    uint64_t maxWorkspace = 0;
    launches_.reserve(slices.size());
    for (const std::pair<size_t, size_t>& slice : slices) {
        Launch launch;
        launch.firstScalar = ListCall::FirstScalarInput(slice.second - slice.first);
        // A list handle always, placeholders for an absent list (sliced only when the call has
        // several launches: one launch sees the lists as given, for phase 1's messages).
        for (int l = 0; l < kApplyFusedEmaAdamListTensorLists; ++l) {
            const at::TensorList whole = call.lists[l];
            const std::vector<at::Tensor> placeholders =
                ApplyFusedEmaAdamListPlaceholders(call, l, slice);
            const at::TensorList given = !placeholders.empty() ? at::TensorList(placeholders)
                                         : slices.size() > 1   ? LaunchSlice(whole, slice)
                                                               : whole;
            launch.lists[l] = ToAclTensorList(given, kApplyFusedEmaAdamListUpdated[l]);
        }
        aclOpExecutor* executor = nullptr;
        const aclnnStatus status = api.phase1(
            launch.lists[kApplyFusedEmaAdamListGrads].get(),
            launch.lists[kApplyFusedEmaAdamListVars].get(),
            launch.lists[kApplyFusedEmaAdamListMs].get(),
            launch.lists[kApplyFusedEmaAdamListVs].get(),
            launch.lists[kApplyFusedEmaAdamListSs].get(),
            launch.lists[kApplyFusedEmaAdamListMaxVs].get(),
            launch.lists[kApplyFusedEmaAdamListCopies].get(), scalars_[0].get(),
            scalars_[1 + kCallGradScale].get(), scalars_[1 + kCallFoundInf].get(),
            scalars_[1 + kCallLr].get(), scalars_[1 + kCallEmaDecay].get(),
            APPLY_FUSED_EMA_ADAM_LIST_ATTR_VALUES(call.attrs), &launch.workspaceSize, &executor);
        launch.executor.reset(executor);
        if (status != ACLNN_SUCCESS) {  // raises; launches_ destroys the others
            CheckAclnnStatus(kApplyFusedEmaAdamListPhase1, status,
                             LaunchOfCall(slice, slices.size()));
        }
        launches_.push_back(std::move(launch));
        if (repeatable) {
            CheckAclnnStatus("aclSetAclOpExecutorRepeatable",
                             api.repeatable(launches_.back().executor.get()));
        }
        maxWorkspace = std::max(maxWorkspace, launches_.back().workspaceSize);
    }
    workspace_ = at::empty({static_cast<int64_t>(maxWorkspace)},
                           at::TensorOptions().dtype(at::kByte));
    if (repeatable) Remember(call);
}

void PreparedApplyFusedEmaAdamListCall::ExecutorDeleter::operator()(aclOpExecutor* executor) const
{
    V2().destroy(executor);
}

PreparedApplyFusedEmaAdamListCall::~PreparedApplyFusedEmaAdamListCall() = default;

void PreparedApplyFusedEmaAdamListCall::Run()
{
    RunCpuPhase2s(launches_, V2().phase2, kApplyFusedEmaAdamListPhase2, workspace_, repeatable_,
                  kOpName);
}

bool PreparedApplyFusedEmaAdamListCall::MayLaunch(const at::Tensor& step) const
{
    // host memory on the CPU device: checked as phase 1 checks it
    return CheckStepValue(*step.data_ptr<int64_t>(), biasCorrection_).empty() &&
           at::get_num_threads() == torchThreads_;
}

void PreparedApplyFusedEmaAdamListCall::Relaunch(const Moves& moves, const BorrowedTensors& grads,
                                                 const ScalarArg& lr, const ScalarArg& emaDecay)
{
    TORCH_CHECK(repeatable_, kOpName, ": RunAgain needs a repeatable prepared call");
    const ApplyFusedEmaAdamListOpApi& api = V2();
    for (size_t i : moves.grads) {
        Launch& launch = launches_[i / kApplyFusedEmaAdamListMaxTensors];
        CheckAclnnStatus("aclSetDynamicInputTensorAddr",
                         api.setDynamicInput(launch.executor.get(), kApplyFusedEmaAdamListGrads,
                                             i % kApplyFusedEmaAdamListMaxTensors,
                                             launch.lists[kApplyFusedEmaAdamListGrads].get(),
                                             SeenGradAddress(i, *grads[i])));
    }
    for (int s = 0; s < 1 + kCallScalars; ++s) {
        const at::Tensor* t = moves.scalars[s];
        if (t == nullptr) continue;
        void* address = SeenScalarAddress(s, *t);
        for (Launch& launch : launches_) {
            CheckAclnnStatus(
                "aclSetInputTensorAddr",
                api.setInput(launch.executor.get(),
                             launch.firstScalar + ApplyFusedEmaAdamListScalarPosition(s - 1),
                             scalars_[s].get(), address));
        }
    }
    // values into the owned tensors: host memory, and no launch of this call is in flight
    if (lrValue_) lrValue_->data_ptr<float>()[0] = static_cast<float>(lr.value);
    if (emaDecayValue_) emaDecayValue_->data_ptr<float>()[0] = static_cast<float>(emaDecay.value);
    Run();
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
