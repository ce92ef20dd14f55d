/**
 * @file apply_fused_ema_adam_list_repeated.cpp
 * @brief RepeatedListCall: what a repeatable prepared list call compares before it launches
 *        again, whatever the device (apply_fused_ema_adam_list_repeated.h).
 */
#include "apply_fused_ema_adam_list_repeated.h"

#include <ATen/ops/full.h>

#include <algorithm>

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using namespace ops;  // the torch ops' shared part (csrc/ops/common/)

namespace {

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

// ---- RepeatedListCall: what may be launched again --------------------------------------------

void RepeatedListCall::OwnValues(ListCall* call, const at::TensorOptions& options)
{
    if (!call->scalars[kCallLr]->has_value()) {
        lrValue_ = at::full({1}, call->attrs.lr, options.dtype(at::kFloat));
        call->scalars[kCallLr] = &lrValue_;
    }
    if (!call->scalars[kCallEmaDecay]->has_value()) {
        emaDecayValue_ = at::full({1}, call->attrs.emaDecay, options.dtype(at::kFloat));
        call->scalars[kCallEmaDecay] = &emaDecayValue_;
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
        if (s == kCallLr && lrValue_) given = nullptr;  // owned: not the caller's
        if (s == kCallEmaDecay && emaDecayValue_) given = nullptr;
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

bool RepeatedListCall::OverlapsNoUpdated(const at::Tensor& t) const
{
    return !TouchesSortedSpans(updatedSpans_, SpanOf(t, false));  // (an empty span touches none)
}

bool RepeatedListCall::RunAgain(const BorrowedTensors& grads, const at::Tensor& step,
                                const ScalarArg& lr, const ScalarArg& emaDecay,
                                const std::optional<at::Tensor>& gradScale,
                                const std::optional<at::Tensor>& foundInf, bool heldChecked)
{
    // ---- everything phase 1 checked, read only
    std::vector<SeenTensor>& seenGrads = seen_[kListGrads];
    if (grads.size() != seenGrads.size()) return false;
    for (int l = 0; l < kApplyFusedEmaAdamLists && !heldChecked; ++l) {
        const std::vector<at::Tensor>& held = held_[l];
        for (size_t i = 0; i < held.size(); ++i) {
            PrefetchAhead(i, held.size(), [&](size_t j) -> const at::Tensor& { return held[j]; });
            if (!seen_[l][i].Matches(held[i])) return false;
        }
    }
    Moves moves;
    for (size_t i = 0; i < grads.size(); ++i) {
        PrefetchAhead(i, grads.size(), [&](size_t j) -> const at::Tensor& { return *grads[j]; });
        const at::Tensor& grad = *grads[i];
        if (!seenGrads[i].SameDescription(grad)) return false;
        if (grad.data_ptr() != seenGrads[i].data) {
            if (!OverlapsNoUpdated(grad)) return false;
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
    if (!MayLaunch(step)) return false;

    // ---- launch, then remember where the moved tensors are now
    Relaunch(moves, grads, lr, emaDecay);
    for (size_t i : moves.grads) seenGrads[i].data = grads[i]->data_ptr();
    for (size_t s = 0; s < scalars.size(); ++s) {
        if (moves.scalars[s] != nullptr) seenScalars_[s]->data = moves.scalars[s]->data_ptr();
    }
    return true;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
