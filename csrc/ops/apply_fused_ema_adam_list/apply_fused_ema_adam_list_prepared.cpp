/**
 * @file apply_fused_ema_adam_list_prepared.cpp
 * @brief PreparedListCall: phase 1 of every launch of a list call on the CPU device, then its
 *        phase 2s, once or (repeatable) again and again (apply_fused_ema_adam_list_prepared.h).
 */
#include "apply_fused_ema_adam_list_prepared.h"

#include <ATen/ops/empty.h>
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

/** The storage address that puts element 0 of a tensor described with `storageOffset` at t's
 *  first element (aclSet*TensorAddr set the storage address; the offset stays phase 1's). */
void* StorageAddress(const at::Tensor& t, int64_t storageOffset)
{
    return static_cast<char*>(t.data_ptr()) - storageOffset * static_cast<int64_t>(t.itemsize());
}

}  // namespace

PreparedListCall::Seen::Seen(const at::Tensor& t)
    : data(t.data_ptr()),
      dtype(t.scalar_type()),
      device(t.device()),
      sizes(t.sizes().vec()),
      strides(t.strides().vec()),
      storageOffset(t.storage_offset())
{
}

bool PreparedListCall::Seen::SameDescription(const at::Tensor& t) const
{
    return t.layout() == at::kStrided && t.scalar_type() == dtype && t.device() == device &&
           t.sizes().equals(sizes) && t.strides().equals(strides);
}

PreparedListCall::PreparedListCall(const ListCall& given, bool repeatable)
    : repeatable_(repeatable), biasCorrection_(given.attrs.biasCorrection)
{
    ListCall call = given;
    std::optional<at::Tensor> lr;
    std::optional<at::Tensor> emaDecay;
    if (repeatable) {  // lr and the decay from tensors: the caller's, or ours holding the value
        const auto options = at::TensorOptions().dtype(at::kFloat);
        if (!given.scalars[kCallLr]->has_value()) {
            lrValue_ = at::empty({1}, options);
            lrValue_.data_ptr<float>()[0] = static_cast<float>(given.attrs.lr);
            lr = lrValue_;
            call.scalars[kCallLr] = &lr;
        }
        if (!given.scalars[kCallEmaDecay]->has_value()) {
            emaDecayValue_ = at::empty({1}, options);
            emaDecayValue_.data_ptr<float>()[0] = static_cast<float>(given.attrs.emaDecay);
            emaDecay = emaDecayValue_;
            call.scalars[kCallEmaDecay] = &emaDecay;
        }
    }
    CheckListCallDevice(kOpName, call, at::Device(at::kCPU));
    const std::vector<std::pair<size_t, size_t>> slices = ListLaunches(call.Entries());
    if (slices.size() > 1) {  // the whole call, named with its own entry indexes
        CheckListCallDescription(kOpName, call);
        CheckListCallMemory(kOpName, call);
    }
    step_ = ToAclTensor(*call.step, false);
    gradScale_ = ToAclOptional(*call.scalars[kCallGradScale]);
    foundInf_ = ToAclOptional(*call.scalars[kCallFoundInf]);
    lr_ = ToAclOptional(*call.scalars[kCallLr]);
    emaDecay_ = ToAclOptional(*call.scalars[kCallEmaDecay]);
    int givenLists = 0;
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) givenLists += call.lists[l].empty() ? 0 : 1;
    const Api& api = V2();
    uint64_t maxWorkspace = 0;
    launches_.reserve(slices.size());
    for (const std::pair<size_t, size_t>& slice : slices) {
        Launch launch;
        launch.entries = slice;
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
            launch.lists[kListMaxVs].get(), launch.lists[kListCopies].get(), step_.get(),
            gradScale_.get(), foundInf_.get(), lr_.get(), emaDecay_.get(), a.lr, a.emaDecay,
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
    if (!repeatable) return;
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
    seenStep_.emplace(*call.step);
    if (call.scalars[kCallGradScale]->has_value()) seenGradScale_.emplace(**call.scalars[kCallGradScale]);
    if (call.scalars[kCallFoundInf]->has_value()) seenFoundInf_.emplace(**call.scalars[kCallFoundInf]);
    if (!lrValue_.defined()) seenLr_.emplace(**call.scalars[kCallLr]);
    if (!emaDecayValue_.defined()) seenEmaDecay_.emplace(**call.scalars[kCallEmaDecay]);
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

bool PreparedListCall::OverlapsNoUpdated(const at::Tensor& t) const
{
    const MemorySpan span = SpanOf(t, false);
    if (span.begin == span.end) return true;
    // The updated spans are disjoint, so sorted by start they are sorted by end too: the first
    // one ending after t starts is the only candidate that may begin before t ends.
    const auto it = std::partition_point(updatedSpans_.begin(), updatedSpans_.end(),
                                         [&](const MemorySpan& u) { return u.end <= span.begin; });
    return it == updatedSpans_.end() || !SpansOverlap(*it, span);
}

void PreparedListCall::UpdateScalar(int scalar, const at::Tensor& t, Seen* seen,
                                    AclTensorPtr* handle)
{
    if (t.data_ptr() == seen->data) return;
    // its flat input index after a launch's list entries: the step, then the one-element
    // tensors given before it (a repeatable call always gives lr and the decay)
    const bool given[kCallScalars] = {seenGradScale_.has_value(), seenFoundInf_.has_value(),
                                      true, true};
    size_t position = 0;
    for (int s = 0; s < scalar; ++s) position += given[s] ? 1 : 0;
    position += scalar >= 0 ? 1 : 0;
    void* address = StorageAddress(t, seen->storageOffset);
    for (Launch& launch : launches_) {
        CheckAclnnStatus("aclSetInputTensorAddr",
                         V2().setInput(launch.executor.get(), launch.firstScalar + position,
                                       handle->get(), address));
    }
    seen->data = t.data_ptr();
}

void PreparedListCall::UpdateValue(int scalar, const ScalarArg& arg)
{
    at::Tensor& owned = scalar == kCallLr ? lrValue_ : emaDecayValue_;
    if (owned.defined()) {
        owned.data_ptr<float>()[0] = static_cast<float>(arg.value);
    } else {
        UpdateScalar(scalar, *arg.tensor, scalar == kCallLr ? &*seenLr_ : &*seenEmaDecay_,
                     scalar == kCallLr ? &lr_ : &emaDecay_);
    }
}

bool PreparedListCall::RunAgain(const std::vector<at::Tensor>& grads, const at::Tensor& step,
                                const ScalarArg& lr, const ScalarArg& emaDecay,
                                const std::optional<at::Tensor>& gradScale,
                                const std::optional<at::Tensor>& foundInf)
{
    TORCH_CHECK(repeatable_, kOpName, ": RunAgain needs a repeatable prepared call");
    // ---- everything phase 1 checked, read only
    std::vector<Seen>& seenGrads = seen_[kListGrads];
    if (grads.size() != seenGrads.size()) return false;
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        const std::vector<at::Tensor>& held = held_[l];
        for (size_t i = 0; i < held.size(); ++i) {
            const Seen& seen = seen_[l][i];
            if (held[i].data_ptr() != seen.data || !seen.SameDescription(held[i])) return false;
        }
    }
    std::vector<size_t> moved;  // gradients at a new address
    for (size_t i = 0; i < grads.size(); ++i) {
        if (!seenGrads[i].SameDescription(grads[i])) return false;
        if (grads[i].data_ptr() != seenGrads[i].data) {
            if (!OverlapsNoUpdated(grads[i])) return false;
            moved.push_back(i);
        }
    }
    if (gradScale.has_value() != seenGradScale_.has_value() ||
        foundInf.has_value() != seenFoundInf_.has_value() ||
        lr.tensor.has_value() != seenLr_.has_value() ||
        emaDecay.tensor.has_value() != seenEmaDecay_.has_value()) {
        return false;
    }
    const auto optional = [](const std::optional<at::Tensor>& t, const std::optional<Seen>& s) {
        return std::pair<const at::Tensor*, const Seen*>(t ? &*t : nullptr, s ? &*s : nullptr);
    };
    const std::pair<const at::Tensor*, const Seen*> scalars[] = {
        {&step, &*seenStep_}, optional(gradScale, seenGradScale_),
        optional(foundInf, seenFoundInf_), optional(lr.tensor, seenLr_),
        optional(emaDecay.tensor, seenEmaDecay_)};
    for (const auto& [t, seen] : scalars) {
        if (t == nullptr) continue;
        if (!seen->SameDescription(*t)) return false;
        if (t->data_ptr() != seen->data && !OverlapsNoUpdated(*t)) return false;
    }
    // the step's value, as phase 1 checks it (host memory on the CPU device)
    if (!CheckStepValue(*step.data_ptr<int64_t>(), biasCorrection_).empty()) return false;

    // ---- the new addresses and values, then the launches
    const Api& api = V2();
    for (size_t i : moved) {
        Launch& launch = launches_[i / kListMaxTensors];
        CheckAclnnStatus("aclSetDynamicInputTensorAddr",
                         api.setDynamicInput(launch.executor.get(), kListGrads, i % kListMaxTensors,
                                             launch.lists[kListGrads].get(),
                                             StorageAddress(grads[i], seenGrads[i].storageOffset)));
        seenGrads[i].data = grads[i].data_ptr();
    }
    UpdateScalar(-1, step, &*seenStep_, &step_);
    if (gradScale) UpdateScalar(kCallGradScale, *gradScale, &*seenGradScale_, &gradScale_);
    if (foundInf) UpdateScalar(kCallFoundInf, *foundInf, &*seenFoundInf_, &foundInf_);
    UpdateValue(kCallLr, lr);
    UpdateValue(kCallEmaDecay, emaDecay);
    Run();
    return true;
}

}  // namespace ascend_ema_adam::ops
