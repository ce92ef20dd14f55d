/**
 * @file apply_fused_ema_adam8bit_list_prepared.h
 * @brief The CPU device's prepared call of apply_fused_ema_adam8bit_list_: the whole call checked
 *        as the op checks it, phase 1 of every launch through our aclnn
 *        (aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize per slice of at most 256 entries), then
 *        the phase 2s. The op runs one once; _C.ApplyFusedEmaAdam8bitListLaunch keeps a repeatable
 *        one per launch group of FusedEmaAdamW, whose steps are then phase 2 only (CANN's
 *        aclSetAclOpExecutorRepeatable, docs/ACLNN.md "Repeatable executors").
 *
 * What a repeated launch may change (RunAgain): the gradients may be new tensors of the
 * description phase 1 saw; their addresses go to the executors (aclSetDynamicInputTensorAddr)
 * after a check that none shares memory with an updated tensor. The step, grad scale, found-inf
 * flag, lr and EMA decay are copied into one-element tensors the launches own and read (host
 * memory on the CPU device, so each step's values are read when it launches); a grad scale or
 * flag must be given again if it was given then, and not if not, none may share memory with an
 * updated tensor (as the op's memory rules say), and the step's value passes phase 1's check.
 * The maps must be the tensors phase 1 checked, unwritten since (their version counters); every
 * other tensor must still have the address, dtype, sizes and strides phase 1 saw. Anything else
 * is a new call: RunAgain returns false and writes nothing, and the caller prepares again,
 * through the full validation.
 */
#ifndef ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM8BIT_LIST_PREPARED_H
#define ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM8BIT_LIST_PREPARED_H

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "aclnn/acl_meta.h"
#include "apply_fused_ema_adam8bit_list_call.h"
#include "cpu_op_api.h"
#include "repeated_launch.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

class ApplyFusedEmaAdam8bitListPreparedCall {
public:
    /** Checks the whole call as the op does (device, the shared validation, the memory rules),
     *  then runs phase 1 of every launch; raises the op's errors and writes nothing.
     *  `repeatable`: the executors stay for RunAgain, and the one-element inputs are copies the
     *  call owns. */
    ApplyFusedEmaAdam8bitListPreparedCall(const ApplyFusedEmaAdam8bitListCall& call,
                                          bool repeatable);
    ~ApplyFusedEmaAdam8bitListPreparedCall();

    /** Phase 2 of every launch, in order (once, unless repeatable); done when this returns. */
    void Run();

    /**
     * The next update with these gradients (borrowed), step, grad scale, found-inf flag, lr and
     * EMA decay: true once done; false, with nothing written, if anything phase 1 checked no
     * longer holds (the file comment). `heldChecked`: the caller has just compared every tensor
     * of the lists with what phase 1 saw (FusedEmaAdamW: _C.UpdatedStorages.in_place).
     */
    bool RunAgain(const ops::BorrowedTensors& grads, const at::Tensor& step,
                  const ops::ScalarArg& lr, const ops::ScalarArg& emaDecay,
                  const std::optional<at::Tensor>& gradScale,
                  const std::optional<at::Tensor>& foundInf, bool heldChecked);

    size_t Launches() const { return launches_.size(); }

private:
    struct ExecutorDeleter {
        void operator()(aclOpExecutor* executor) const;  // aclDestroyAclOpExecutor
    };
    struct Launch {
        std::array<ops::AclTensorListPtr, kApplyFusedEmaAdam8bitListTensorLists>
            lists;                                                 // alive while its executor is
        std::unique_ptr<aclOpExecutor, ExecutorDeleter> executor;  // null once phase 2 took it
        uint64_t workspaceSize = 0;
    };

    bool repeatable_;
    bool biasCorrection_;
    std::vector<Launch> launches_;
    at::Tensor workspace_;
    std::array<ops::AclTensorPtr, kCallTensors> tensors_;
    // the one-element inputs a repeatable call owns (undefined: not given), kCallTensors' order
    std::array<at::Tensor, kCallTensors> owned_;
    ops::RepeatedLaunchTensors seen_;
    int torchThreads_ = 0;  // torch.get_num_threads() when phase 1 ran
};

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

#endif  // ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM8BIT_LIST_PREPARED_H
