/**
 * @file apply_fused_ema_adam_list_prepared.h
 * @brief A call of apply_fused_ema_adam_list_ on the CPU device with phase 1 done for every
 *        launch (aclnnApplyFusedEmaAdamListV2GetWorkspaceSize per slice of at most 256 entries):
 *        the op runs one once; FusedEmaAdamW keeps a repeatable one per launch group, and its
 *        steps are then phase 2 only (CANN's aclSetAclOpExecutorRepeatable, docs/ACLNN.md).
 *
 * What a repeated launch may change, and how each is decided (RunAgain): the gradients may be
 * new tensors (zero_grad(set_to_none=True) makes new ones every step) of the description phase 1
 * saw: their addresses go to the executors (aclSetDynamicInputTensorAddr) after a check that
 * none overlaps an updated tensor (a binary search in the updated tensors' sorted spans). The
 * step, grad scale and found-inf tensors likewise (aclSetInputTensorAddr), with the step's value
 * checked as phase 1 checks it. lr and the EMA decay are values written into one-element tensors
 * the launches read (V2's lrTensorOptional / emaDecayTensorOptional). Every other tensor (the
 * parameters, the state, the model copies) is held, and must still have the address, dtype,
 * sizes and strides phase 1 saw: a tensor whose memory was replaced (p.data = ..., a loaded
 * state) fails the comparison. Anything else (other tensors, attributes, lists' lengths, which
 * lists are given) is a new call: RunAgain then returns false and changes nothing, and the
 * caller prepares again, through the full validation.
 */
#ifndef ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_PREPARED_H
#define ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_PREPARED_H

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "apply_fused_ema_adam_list_call.h"
#include "cpu_op_api.h"
#include "memory_layout.h"

namespace ascend_ema_adam::ops {

/** lr or the EMA decay of a repeated launch: a value, or a one-element fp32 tensor. */
struct ScalarArg {
    double value = 0.0;
    std::optional<at::Tensor> tensor;
};

class PreparedListCall {
public:
    /**
     * Validates the whole call as the op does (device, the shared validation, the memory rules),
     * then phase 1 of every launch; raises the op's errors. `repeatable`: the executors stay for
     * RunAgain, the lists' tensors are held, and the launches read lr and the EMA decay from
     * tensors: the call's lr_tensor / ema_decay_tensor if given (RunAgain then takes such a
     * tensor, which may move), else one this object owns (RunAgain writes the value into it).
     */
    PreparedListCall(const ListCall& call, bool repeatable);
    ~PreparedListCall();
    PreparedListCall(const PreparedListCall&) = delete;
    PreparedListCall& operator=(const PreparedListCall&) = delete;

    /** Phase 2 of every launch, in order, with the tensors of construction (once, unless
     *  repeatable); the update is done when this returns. */
    void Run();

    /**
     * A repeatable call's next launch with these gradients, step, grad scale and found-inf flag
     * and lr / EMA decay values: true once it ran; false, with nothing written, if anything
     * phase 1 checked no longer holds (the file comment says what is compared).
     */
    bool RunAgain(const std::vector<at::Tensor>& grads, const at::Tensor& step,
                  const ScalarArg& lr, const ScalarArg& emaDecay,
                  const std::optional<at::Tensor>& gradScale,
                  const std::optional<at::Tensor>& foundInf);

    size_t Launches() const { return launches_.size(); }

private:
    /** A tensor as phase 1 saw it. */
    struct Seen {
        const void* data = nullptr;
        at::ScalarType dtype = at::ScalarType::Undefined;
        at::Device device = at::kCPU;
        std::vector<int64_t> sizes;
        std::vector<int64_t> strides;
        int64_t storageOffset = 0;

        explicit Seen(const at::Tensor& t);
        /** Same dtype, device, sizes and strides (the address aside). */
        bool SameDescription(const at::Tensor& t) const;
    };
    struct ExecutorDeleter {
        void operator()(aclOpExecutor* executor) const;  // aclDestroyAclOpExecutor
    };
    struct Launch {
        std::pair<size_t, size_t> entries;
        std::array<AclTensorListPtr, kApplyFusedEmaAdamLists> lists;
        std::unique_ptr<aclOpExecutor, ExecutorDeleter> executor;  // null once phase 2 took it
        uint64_t workspaceSize = 0;
        size_t firstScalar = 0;  // the flat input index of its step (aclSetInputTensorAddr)
    };

    /** t (a new step, scale, flag or gradient) overlaps no updated tensor of the call. */
    bool OverlapsNoUpdated(const at::Tensor& t) const;
    /** Points one-element input `scalar` (ListCallScalar order after the step: -1 the step) of
     *  every launch at t, if t is not where phase 1 saw it. */
    void UpdateScalar(int scalar, const at::Tensor& t, Seen* seen, AclTensorPtr* handle);
    /** lr / the decay for the next launch: a value into the owned tensor, or a moved tensor. */
    void UpdateValue(int scalar, const ScalarArg& arg);

    bool repeatable_;
    bool biasCorrection_;
    std::vector<Launch> launches_;
    at::Tensor workspace_;
    AclTensorPtr step_, gradScale_, foundInf_, lr_, emaDecay_;
    // repeatable only
    std::array<std::vector<at::Tensor>, kApplyFusedEmaAdamLists> held_;
    std::array<std::vector<Seen>, kApplyFusedEmaAdamLists> seen_;
    std::optional<Seen> seenStep_, seenGradScale_, seenFoundInf_;
    // lr / decay: the caller's tensors (seen) or ours (owned: RunAgain writes the value)
    std::optional<Seen> seenLr_, seenEmaDecay_;
    at::Tensor lrValue_, emaDecayValue_;
    std::vector<MemorySpan> updatedSpans_;     // sorted, disjoint (phase 1 checked)
};

}  // namespace ascend_ema_adam::ops

#endif  // ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_PREPARED_H
