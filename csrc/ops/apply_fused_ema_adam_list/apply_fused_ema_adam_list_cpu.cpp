/**
 * @file apply_fused_ema_adam_list_cpu.cpp
 * @brief CPU kernel of ascend_ema_adam::apply_fused_ema_adam_list_: the lists go through our
 *        aclnn list API (aclnnApplyFusedEmaAdamListV2: aclCreateTensorList, the two phases),
 *        every tensor with its real sizes, strides and storage offset, and a workspace from the
 *        torch allocator, as one single-use PreparedListCall (apply_fused_ema_adam_list_prepared.h).
 *
 * The aclnn contract is CANN's: every list is a real aclTensorList, an absent optional list (and
 * an empty ss with non-empty vars: no EMA) an empty one, at most 256 tensors per list. A call of
 * more entries runs as several launches (apply_fused_ema_adam_list_call.h): first the whole call
 * is validated (the shared validation and the memory rules, with the call's own entry indexes),
 * then phase 1 of every launch, and only when all succeeded the phase 2s; a failure anywhere
 * writes nothing.
 */
#include <torch/library.h>

#include <type_traits>

#include "apply_fused_ema_adam_list.h"
#include "apply_fused_ema_adam_list_call.h"
#include "apply_fused_ema_adam_list_prepared.h"

namespace ascend_ema_adam::ops {

namespace {

void ApplyFusedEmaAdamListCpu(at::TensorList grads, at::TensorList vars, at::TensorList ms,
                              at::TensorList vs, at::TensorList ss, const at::Tensor& step,
                              double lr, double emaDecay, double beta1, double beta2, double eps,
                              int64_t mode, bool biasCorrection, double weightDecay,
                              std::optional<at::TensorList> maxVs,
                              std::optional<at::TensorList> modelCopies,
                              const std::optional<at::Tensor>& gradScale,
                              const std::optional<at::Tensor>& foundInf, bool maximize,
                              const std::optional<at::Tensor>& lrTensor,
                              const std::optional<at::Tensor>& emaDecayTensor)
{
    const ListCall call = ListCallOf(grads, vars, ms, vs, ss, step, lr, emaDecay, beta1, beta2,
                                     eps, mode, biasCorrection, weightDecay, maxVs, modelCopies,
                                     gradScale, foundInf, maximize, lrTensor, emaDecayTensor);
    PreparedListCall prepared(call, /*repeatable=*/false);
    prepared.Run();
}

static_assert(std::is_same_v<decltype(ApplyFusedEmaAdamListCpu),
                             decltype(ApplyFusedEmaAdamListInplace)>,
              "the CPU kernel must have the op's signature");

}  // namespace

}  // namespace ascend_ema_adam::ops

TORCH_LIBRARY_IMPL(ascend_ema_adam, CPU, m)
{
    m.impl("apply_fused_ema_adam_list_", &ascend_ema_adam::ops::ApplyFusedEmaAdamListCpu);
}
