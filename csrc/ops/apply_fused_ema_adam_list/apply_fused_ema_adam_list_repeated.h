/**
 * @file apply_fused_ema_adam_list_repeated.h
 * @brief A call of apply_fused_ema_adam_list_ with phase 1 done for every launch
 *        (aclnnApplyFusedEmaAdamListV2GetWorkspaceSize per slice of at most 256 entries): the CPU
 *        op runs one once (PreparedApplyFusedEmaAdamListCall); FusedEmaAdamW keeps a repeatable one
 *        per launch group (_C.ApplyFusedEmaAdamListLaunch), on the CPU or the NPU, and its steps
 *        are then phase 2 only (CANN's aclSetAclOpExecutorRepeatable, docs/ACLNN.md "Repeatable
 *        executors").
 *
 * What a repeated launch may change, and how each is decided
 * (RepeatedApplyFusedEmaAdamListCall::RunAgain): the gradients may be new tensors
 * (zero_grad(set_to_none=True) makes new ones every step) of the description phase 1 saw: their
 * addresses go to the executors (aclSetDynamicInputTensorAddr) after a check that none overlaps an
 * updated tensor (a binary search in the updated tensors' sorted spans). The step, grad scale and
 * found-inf tensors, and lr / the EMA decay when they are tensors, likewise
 * (aclSetInputTensorAddr); the step's value is checked as phase 1 checks it where the host can read
 * it (the CPU). lr and the decay given as numbers are written into one-element tensors the launches
 * read (V2's lrTensorOptional / emaDecayTensorOptional). Every other tensor (the parameters, the
 * state, the model copies) is held, and must still have the address, dtype, sizes and strides phase
 * 1 saw: a tensor whose memory was replaced (p.data = ..., a loaded state) fails the comparison.
 * Anything else (other tensors, attributes, lists' lengths, which lists and scalars are given) is a
 * new call: RunAgain then returns false and changes nothing, and the caller prepares again, through
 * the full validation.
 */
#ifndef ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_REPEATED_H
#define ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_REPEATED_H

#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "apply_fused_ema_adam_list_call.h"
#include "memory_layout.h"
#include "repeated_launch.h"
#include "tensor_identity.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using ops::BorrowedTensors;  // the gradients of a repeated launch, borrowed
using ops::ScalarArg;        // lr or the EMA decay: a value, or a one-element fp32 tensor

/** The one-element inputs after the lists, in the aclnn's order (-1 the step, then
 *  ApplyFusedEmaAdamListCallScalar), and the flat input index of each relative to a launch's first
 *  one. */
enum RepeatedScalar : int { kRepeatedStep = -1 };

/**
 * A repeatable prepared call, whatever the device: what RunAgain compares (the file comment),
 * and the device's launcher. A device's implementation prepares its launches, calls Remember
 * with the call as phase 1 saw it, and implements Relaunch.
 */
class RepeatedApplyFusedEmaAdamListCall {
public:
    virtual ~RepeatedApplyFusedEmaAdamListCall() = default;

    /**
     * The next launch with these gradients, step, grad scale and found-inf flag, and lr / EMA
     * decay (the kind phase 1 saw: value or tensor): true once it is launched (on the CPU: done);
     * false, with nothing written, if anything phase 1 checked no longer holds. `heldChecked`:
     * the caller has just compared every held tensor's address and description with what phase
     * 1 saw (FusedEmaAdamW, for all its launches at once: UpdatedStorages.in_place), so they are
     * not compared again.
     */
    bool RunAgain(const BorrowedTensors& grads, const at::Tensor& step,
                  const ScalarArg& lr, const ScalarArg& emaDecay,
                  const std::optional<at::Tensor>& gradScale,
                  const std::optional<at::Tensor>& foundInf, bool heldChecked = false);

    virtual size_t Launches() const = 0;

protected:
    /** What moved since the last launch, for Relaunch: the gradients at a new address (their
     *  indexes in the call) and the one-element inputs at a new address (null: not moved). */
    struct Moves {
        std::vector<size_t> grads;
        std::array<const at::Tensor*, 1 + kCallScalars> scalars =
            {};  // step, then ApplyFusedEmaAdamListCallScalar
    };

    /** Records the call as phase 1 saw it (lr / decay given as tensors, or owned). */
    void Remember(const ListCall& call);
    /** One-element fp32 tensors on `options`' device holding the call's lr and decay, for a call
     *  that gives them as numbers (kept in lrValue_ / emaDecayValue_; `call` then points at
     *  them). */
    void OwnValues(ListCall* call, const at::TensorOptions& options);
    /** Whether the device may launch again now: on the CPU the step's value passes phase 1's
     *  check (host memory) and torch's thread count is the one the launches were prepared with
     *  (phase 1 fixes it); on the NPU (the value is device data) the current stream is the one
     *  the launches were prepared on (their workspace's). */
    virtual bool MayLaunch(const at::Tensor& step) const = 0;
    /** The launches with `moves` applied and `lr` / `emaDecay` written (owned ones), in stream
     *  order; raises only on a runtime failure. */
    virtual void Relaunch(const Moves& moves, const BorrowedTensors& grads,
                          const ScalarArg& lr, const ScalarArg& emaDecay) = 0;
    /** The storage address for aclSet*TensorAddr that puts phase 1's view of gradient i, or of
     *  one-element input slot `slot` (0 the step, 1 + ApplyFusedEmaAdamListCallScalar), at t's
     *  first element. */
    void* SeenGradAddress(size_t i, const at::Tensor& t) const
    {
        return tensors_.GradStorageAddress(i, t);
    }
    void* SeenScalarAddress(int slot, const at::Tensor& t) const;

    bool biasCorrection_ = true;
    std::optional<at::Tensor> lrValue_, emaDecayValue_;  // owned: the launches read lr / decay

private:
    ops::RepeatedLaunchTensors tensors_;  // the lists: held, and the gradients' descriptions
    std::array<std::optional<ops::SeenTensor>, 1 + kCallScalars>
        seenScalars_;  // step, ApplyFusedEmaAdamListCallScalar
};

/** The NPU device's repeatable prepared call (apply_fused_ema_adam_list_npu.cpp, built
 *  with torch_npu): validation and flattening as the NPU op, phase 1 per launch, and phase 2s
 *  queued on the current stream by op-plugin's task queue. */
std::unique_ptr<RepeatedApplyFusedEmaAdamListCall> PrepareNpuApplyFusedEmaAdamListCall(
    const ListCall& call);

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_REPEATED_H
