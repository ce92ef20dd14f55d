/**
 * @file apply_fused_ema_adam_list_repeated.cpp
 * @brief RepeatedApplyFusedEmaAdamListCall: what a repeatable prepared list call compares before it
 *        launches again, whatever the device (apply_fused_ema_adam_list_repeated.h).
 */
#include "apply_fused_ema_adam_list_repeated.h"

#include <ATen/ops/full.h>

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using namespace ops;  // the torch ops' shared part (csrc/common/)

// ---- RepeatedApplyFusedEmaAdamListCall: what may be launched again
// --------------------------------------------

void RepeatedApplyFusedEmaAdamListCall::OwnValues(ListCall* call, const at::TensorOptions& options)
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

void RepeatedApplyFusedEmaAdamListCall::Remember(const ListCall& call)
{
    biasCorrection_ = call.attrs.biasCorrection;
    tensors_.Remember(call.lists.data(), kApplyFusedEmaAdamListTensorLists,
                      kApplyFusedEmaAdamListGrads, kApplyFusedEmaAdamListUpdated, {});
    seenScalars_[0].emplace(*call.step);
    for (int s = 0; s < kCallScalars; ++s) {
        const at::Tensor* given = call.scalars[s]->has_value() ? &**call.scalars[s] : nullptr;
        if (s == kCallLr && lrValue_) given = nullptr;  // owned: not the caller's
        if (s == kCallEmaDecay && emaDecayValue_) given = nullptr;
        if (given != nullptr) seenScalars_[1 + s].emplace(*given);
    }
}

void* RepeatedApplyFusedEmaAdamListCall::SeenScalarAddress(int slot, const at::Tensor& t) const
{
    return seenScalars_[slot]->StorageAddressOf(t);
}

bool RepeatedApplyFusedEmaAdamListCall::RunAgain(const BorrowedTensors& grads,
                                                 const at::Tensor& step, const ScalarArg& lr,
                                                 const ScalarArg& emaDecay,
                                                 const std::optional<at::Tensor>& gradScale,
                                                 const std::optional<at::Tensor>& foundInf,
                                                 bool heldChecked)
{
    // ---- everything phase 1 checked, read only
    if (!tensors_.HeldUnchanged(heldChecked)) return false;
    Moves moves;
    if (!tensors_.GradsFit(grads, &moves.grads)) return false;
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
            if (!tensors_.OverlapsNoUpdated(*t)) return false;
            moves.scalars[s] = t;
        }
    }
    if (!MayLaunch(step)) return false;

    // ---- launch, then remember where the moved tensors are now
    Relaunch(moves, grads, lr, emaDecay);
    for (size_t i : moves.grads) tensors_.GradMoved(i, *grads[i]);
    for (size_t s = 0; s < scalars.size(); ++s) {
        if (moves.scalars[s] != nullptr) seenScalars_[s]->data = moves.scalars[s]->data_ptr();
    }
    return true;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
