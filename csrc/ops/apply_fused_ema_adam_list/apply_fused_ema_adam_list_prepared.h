/**
 * @file apply_fused_ema_adam_list_prepared.h
 * @brief The CPU device's prepared list call (phase 1 of every launch through our aclnn, then
 *        the phase 2s): the op runs one once; _C.ApplyFusedEmaAdamListLaunch keeps a repeatable one
 *        (apply_fused_ema_adam_list_repeated.h says what may change between its launches).
 */
#ifndef ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_PREPARED_H
#define ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_PREPARED_H

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "apply_fused_ema_adam_list_call.h"
#include "apply_fused_ema_adam_list_repeated.h"
#include "cpu_op_api.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

/** The CPU device's prepared call: once (the op), or repeatable (a
 *  RepeatedApplyFusedEmaAdamListCall). */
class PreparedApplyFusedEmaAdamListCall final : public RepeatedApplyFusedEmaAdamListCall {
public:
    /** Validates the whole call as the op does (device, the shared validation, the memory rules),
     *  then phase 1 of every launch; raises the op's errors. `repeatable`: the executors stay for
     *  RunAgain, lr / decay come from tensors (the call's, or owned). */
    PreparedApplyFusedEmaAdamListCall(const ListCall& call, bool repeatable);
    ~PreparedApplyFusedEmaAdamListCall() override;

    /** Phase 2 of every launch, in order (once, unless repeatable); done when this returns. */
    void Run();
    size_t Launches() const override { return launches_.size(); }

private:
    struct ExecutorDeleter {
        void operator()(aclOpExecutor* executor) const;  // aclDestroyAclOpExecutor
    };
    struct Launch {
        std::array<ops::AclTensorListPtr, kApplyFusedEmaAdamListTensorLists> lists;
        std::unique_ptr<aclOpExecutor, ExecutorDeleter> executor;  // null once phase 2 took it
        uint64_t workspaceSize = 0;
        size_t firstScalar = 0;  // the flat input index of its step (aclSetInputTensorAddr)
    };

    bool MayLaunch(const at::Tensor& step) const override;
    void Relaunch(const Moves& moves, const BorrowedTensors& grads, const ScalarArg& lr,
                  const ScalarArg& emaDecay) override;

    bool repeatable_;
    std::vector<Launch> launches_;
    at::Tensor workspace_;
    std::array<ops::AclTensorPtr, 1 + kCallScalars>
        scalars_;           // step, then ApplyFusedEmaAdamListCallScalar order
    int torchThreads_ = 0;  // torch.get_num_threads() when phase 1 ran
};

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_PREPARED_H
