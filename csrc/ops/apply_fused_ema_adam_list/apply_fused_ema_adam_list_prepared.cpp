/**
 * @file apply_fused_ema_adam_list_prepared.cpp
 * @brief RepeatedListCall's decision of what may be launched again (any device), and
 *        PreparedListCall: phase 1 of every launch of a list call on the CPU device, then its
 *        phase 2s, once or (repeatable) again and again (apply_fused_ema_adam_list_prepared.h).
 */
#include "apply_fused_ema_adam_list_prepared.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <string>
#include <utility>

#include "aclnnop/aclnn_apply_fused_ema_adam_list_v2.h"

namespace ascend_ema_adam::ops {

namespace {

constexpr const char* kOpName = "apply_fused_ema_adam_list_";
constexpr const char* kPhase1 = "aclnnApplyFusedEmaAdamListV2GetWorkspaceSize";
constexpr const char* kPhase2 = "aclnnApplyFusedEmaAdamListV2";

struct Api {
    decltype(&aclnnApplyFusedEmaAdamListV2GetWorkspaceSize) phase1;
    decltype(&aclnnApplyFusedEmaAdamListV2) phase2;
    decltype(&aclDestroyAclOpExecutor) destroy;
    decltype(&aclSetAclOpExecutorRepeatable) repeatable;
    decltype(&aclSetDynamicInputTensorAddr) setDynamicInput;
    decltype(&aclSetInputTensorAddr) setInput;
};

const Api& V2()
{
    static const Api api{
        CpuOpApiFunction<decltype(&aclnnApplyFusedEmaAdamListV2GetWorkspaceSize)>(kPhase1),
        CpuOpApiFunction<decltype(&aclnnApplyFusedEmaAdamListV2)>(kPhase2),
        CpuOpApiFunction<decltype(&aclDestroyAclOpExecutor)>("aclDestroyAclOpExecutor"),
        CpuOpApiFunction<decltype(&aclSetAclOpExecutorRepeatable)>(
            "aclSetAclOpExecutorRepeatable"),
        CpuOpApiFunction<decltype(&aclSetDynamicInputTensorAddr)>("aclSetDynamicInputTensorAddr"),
        CpuOpApiFunction<decltype(&aclSetInputTensorAddr)>("aclSetInputTensorAddr")};
    return api;
}

AclTensorPtr ToAclOptional(const std::optional<at::Tensor>& t)
{
    return t ? ToAclTensor(*t, false) : AclTensorPtr();
}

ViewLayout LayoutOf(const at::Tensor& t)
{
    return {t.sizes().data(), t.strides().data(), static_cast<size_t>(t.dim())};
}

MemorySpan SpanOf(const at::Tensor& t, bool updated)
{
    return SpanOfView(reinterpret_cast<uintptr_t>(t.data_ptr()), LayoutOf(t),
                      static_cast<uint32_t>(t.itemsize()), 0, updated);
}

}  // namespace

// ---- SeenTensor ----------------------------------------------------------------------------

SeenTensor::SeenTensor(const at::Tensor& t)
    : data(t.data_ptr()),
      dtype(t.scalar_type()),
      device(t.device()),
      sizes(t.sizes().vec()),
      strides(t.strides().vec()),
      storageOffset(t.storage_offset())
{
}

bool SeenTensor::SameDescription(const at::Tensor& t) const
{
    return t.layout() == at::kStrided && t.scalar_type() == dtype && t.device() == device &&
           t.sizes().equals(sizes) && t.strides().equals(strides);
}

void* SeenTensor::StorageAddressOf(const at::Tensor& t) const
{
    return static_cast<char*>(t.data_ptr()) - storageOffset * static_cast<int64_t>(t.itemsize());
}

// ---- RepeatedListCall: what may be launched again --------------------------------------------

void RepeatedListCall::OwnValues(ListCall* call, const at::TensorOptions& options)
{
    if (!call->scalars[kCallLr]->has_value()) {
        lrValue_ = at::full({1}, call->attrs.lr, options.dtype(at::kFloat));
    }
    if (!call->scalars[kCallEmaDecay]->has_value()) {
        emaDecayValue_ = at::full({1}, call->attrs.emaDecay, options.dtype(at::kFloat));
    }
}

void RepeatedListCall::Remember(const ListCall& call)
{
    biasCorrection_ = call.attrs.biasCorrection;
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        for (const at::Tensor& t : call.lists[l]) {
            seen_[l].emplace_back(t);
            if (l != kListGrads) held_[l].push_back(t);  // gradients are replaced, not held
            if (kApplyFusedEmaAdamListUpdated[l]) {
                const MemorySpan span = SpanOf(t, true);
                if (span.begin != span.end) updatedSpans_.push_back(span);
            }
        }
    }
    std::sort(updatedSpans_.begin(), updatedSpans_.end(),
              [](const MemorySpan& a, const MemorySpan& b) { return a.begin < b.begin; });
    seenScalars_[0].emplace(*call.step);
    for (int s = 0; s < kCallScalars; ++s) {
        const at::Tensor* given = call.scalars[s]->has_value() ? &**call.scalars[s] : nullptr;
        if (s == kCallLr && lrValue_.defined()) given = nullptr;  // owned: not the caller's
        if (s == kCallEmaDecay && emaDecayValue_.defined()) given = nullptr;
        if (given != nullptr) seenScalars_[1 + s].emplace(*given);
    }
}

void* RepeatedListCall::SeenAddress(int list, size_t index, const at::Tensor& t) const
{
    return seen_[list][index].StorageAddressOf(t);
}

void* RepeatedListCall::SeenScalarAddress(int slot, const at::Tensor& t) const
{
    return seenScalars_[slot]->StorageAddressOf(t);
}

size_t RepeatedListCall::ScalarPosition(int scalar) const
{
    if (scalar == kRepeatedStep) return 0;
    size_t position = 1;
    for (int s = 0; s < scalar; ++s) {
        // lr and the decay are always given to a repeatable call (the caller's or owned)
        position += (seenScalars_[1 + s] || s == kCallLr || s == kCallEmaDecay) ? 1 : 0;
    }
    return position;
}

bool RepeatedListCall::OverlapsNoUpdated(const at::Tensor& t) const
{
    const MemorySpan span = SpanOf(t, false);
    if (span.begin == span.end) return true;
    // The updated spans are disjoint, so sorted by start they are sorted by end too: the first
    // one ending after t starts is the only candidate that may begin before t ends.
    const auto it = std::partition_point(updatedSpans_.begin(), updatedSpans_.end(),
                                         [&](const MemorySpan& u) { return u.end <= span.begin; });
    return it == updatedSpans_.end() || !SpansOverlap(*it, span);
}

bool RepeatedListCall::RunAgain(const std::vector<at::Tensor>& grads, const at::Tensor& step,
                                const ScalarArg& lr, const ScalarArg& emaDecay,
                                const std::optional<at::Tensor>& gradScale,
                                const std::optional<at::Tensor>& foundInf)
{
    // ---- everything phase 1 checked, read only
    std::vector<SeenTensor>& seenGrads = seen_[kListGrads];
    if (grads.size() != seenGrads.size()) return false;
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        const std::vector<at::Tensor>& held = held_[l];
        for (size_t i = 0; i < held.size(); ++i) {
            const SeenTensor& seen = seen_[l][i];
            if (held[i].data_ptr() != seen.data || !seen.SameDescription(held[i])) return false;
        }
    }
    Moves moves;
    for (size_t i = 0; i < grads.size(); ++i) {
        if (!seenGrads[i].SameDescription(grads[i])) return false;
        if (grads[i].data_ptr() != seenGrads[i].data) {
            if (!OverlapsNoUpdated(grads[i])) return false;
            moves.grads.push_back(i);
        }
    }
    const std::array<const at::Tensor*, 1 + kCallScalars> scalars = {
        &step, gradScale ? &*gradScale : nullptr, foundInf ? &*foundInf : nullptr,
        lr.tensor ? &*lr.tensor : nullptr, emaDecay.tensor ? &*emaDecay.tensor : nullptr};
    for (size_t s = 0; s < scalars.size(); ++s) {
        const at::Tensor* t = scalars[s];
        const std::optional<SeenTensor>& seen = seenScalars_[s];
        if ((t != nullptr) != seen.has_value()) return false;  // given then, not now (or so)
        if (t == nullptr) continue;
        if (!seen->SameDescription(*t)) return false;
        if (t->data_ptr() != seen->data) {
            if (!OverlapsNoUpdated(*t)) return false;
            moves.scalars[s] = t;
        }
    }
    if (!StepValueOk(step)) return false;

    // ---- launch, then remember where the moved tensors are now
    Relaunch(moves, grads, lr, emaDecay);
    for (size_t i : moves.grads) seenGrads[i].data = grads[i].data_ptr();
    for (size_t s = 0; s < scalars.size(); ++s) {
        if (moves.scalars[s] != nullptr) seenScalars_[s]->data = moves.scalars[s]->data_ptr();
    }
    return true;
}

// ---- PreparedListCall: the CPU device --------------------------------------------------------

PreparedListCall::PreparedListCall(const ListCall& given, bool repeatable)
    : repeatable_(repeatable)
{
    biasCorrection_ = given.attrs.biasCorrection;
    ListCall call = given;
    std::optional<at::Tensor> lr;
    std::optional<at::Tensor> emaDecay;
    if (repeatable) {  // lr and the decay from tensors: the caller's, or ours holding the value
        OwnValues(&call, at::TensorOptions());
        if (lrValue_.defined()) call.scalars[kCallLr] = &(lr = lrValue_);
        if (emaDecayValue_.defined()) call.scalars[kCallEmaDecay] = &(emaDecay = emaDecayValue_);
    }
    CheckListCallDevice(kOpName, call, at::Device(at::kCPU));
    const std::vector<std::pair<size_t, size_t>> slices = ListLaunches(call.Entries());
    if (slices.size() > 1) {  // the whole call, named with its own entry indexes
        CheckListCallDescription(kOpName, call);
        CheckListCallMemory(kOpName, call);
    }
    scalars_[0] = ToAclTensor(*call.step, false);
    for (int s = 0; s < kCallScalars; ++s) scalars_[1 + s] = ToAclOptional(*call.scalars[s]);
    int givenLists = 0;
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) givenLists += call.lists[l].empty() ? 0 : 1;
    const Api& api = V2();
    uint64_t maxWorkspace = 0;
    launches_.reserve(slices.size());
    for (const std::pair<size_t, size_t>& slice : slices) {
        Launch launch;
        launch.firstScalar = (slice.second - slice.first) * givenLists;
        // A list handle always, empty for an absent list (sliced only when the call has several
        // launches: one launch sees the lists as given, for phase 1's messages).
        for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
            const at::TensorList whole = call.lists[l];
            launch.lists[l] = ToAclTensorList(slices.size() > 1 ? LaunchSlice(whole, slice) : whole,
                                              kApplyFusedEmaAdamListUpdated[l]);
        }
        const Attrs& a = call.attrs;
        aclOpExecutor* executor = nullptr;
        const aclnnStatus status = api.phase1(
            launch.lists[kListGrads].get(), launch.lists[kListVars].get(),
            launch.lists[kListMs].get(), launch.lists[kListVs].get(), launch.lists[kListSs].get(),
            launch.lists[kListMaxVs].get(), launch.lists[kListCopies].get(), scalars_[0].get(),
            scalars_[1 + kCallGradScale].get(), scalars_[1 + kCallFoundInf].get(),
            scalars_[1 + kCallLr].get(), scalars_[1 + kCallEmaDecay].get(), a.lr, a.emaDecay,
            a.beta1, a.beta2, a.eps, a.mode, a.biasCorrection, a.weightDecay, call.maximize,
            &launch.workspaceSize, &executor);
        launch.executor.reset(executor);
        if (status != ACLNN_SUCCESS) {
            const std::string where =
                slices.size() > 1
                    ? " (in the launch of entries " + std::to_string(slice.first) + " to " +
                          std::to_string(slice.second - 1) + ": entry i there is entry " +
                          std::to_string(slice.first) + " + i of the call)"
                    : std::string();
            CheckAclnnStatus(kPhase1, status, where);  // raises; launches_ destroys the others
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

void PreparedListCall::ExecutorDeleter::operator()(aclOpExecutor* executor) const
{
    V2().destroy(executor);
}

PreparedListCall::~PreparedListCall() = default;

void PreparedListCall::Run()
{
    const Api& api = V2();
    for (Launch& launch : launches_) {
        TORCH_CHECK(launch.executor != nullptr, kOpName,
                    ": this prepared call already ran (it is not repeatable)");
        // The null stream is the CPU device's synchronous default stream: done when this returns.
        const aclnnStatus status =
            api.phase2(launch.workspaceSize > 0 ? workspace_.data_ptr() : nullptr,
                       launch.workspaceSize, launch.executor.get(), nullptr);
        if (status == ACLNN_SUCCESS && !repeatable_) {
            launch.executor.release();  // consumed by phase 2; a refused one is destroyed
        }
        CheckAclnnStatus(kPhase2, status);
    }
}

bool PreparedListCall::StepValueOk(const at::Tensor& step) const
{
    // host memory on the CPU device: checked as phase 1 checks it
    return CheckStepValue(*step.data_ptr<int64_t>(), biasCorrection_).empty();
}

void PreparedListCall::Relaunch(const Moves& moves, const std::vector<at::Tensor>& grads,
                                const ScalarArg& lr, const ScalarArg& emaDecay)
{
    TORCH_CHECK(repeatable_, kOpName, ": RunAgain needs a repeatable prepared call");
    const Api& api = V2();
    for (size_t i : moves.grads) {
        Launch& launch = launches_[i / kListMaxTensors];
        CheckAclnnStatus("aclSetDynamicInputTensorAddr",
                         api.setDynamicInput(launch.executor.get(), kListGrads,
                                             i % kListMaxTensors, launch.lists[kListGrads].get(),
                                             SeenAddress(kListGrads, i, grads[i])));
    }
    for (int s = 0; s < 1 + kCallScalars; ++s) {
        const at::Tensor* t = moves.scalars[s];
        if (t == nullptr) continue;
        void* address = SeenScalarAddress(s, *t);
        for (Launch& launch : launches_) {
            CheckAclnnStatus("aclSetInputTensorAddr",
                             api.setInput(launch.executor.get(),
                                          launch.firstScalar + ScalarPosition(s - 1),
                                          scalars_[s].get(), address));
        }
    }
    // values into the owned tensors: host memory, and no launch of this call is in flight
    if (lrValue_.defined()) lrValue_.data_ptr<float>()[0] = static_cast<float>(lr.value);
    if (emaDecayValue_.defined()) {
        emaDecayValue_.data_ptr<float>()[0] = static_cast<float>(emaDecay.value);
    }
    Run();
}

}  // namespace ascend_ema_adam::ops
