/**
 * @file apply_fused_ema_adam_list.h
 * @brief The C++ entry of ascend_ema_adam::apply_fused_ema_adam_list_: its signature is the op's,
 *        so the dispatcher call (typed<decltype(ApplyFusedEmaAdamListInplace)>) and every kernel
 *        of the op (ListKernel, apply_fused_ema_adam_list_call.h) derive from this one declaration.
 */
#ifndef ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_H
#define ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_H

#include <ATen/core/Tensor.h>

#include <optional>

namespace ascend_ema_adam::apply_fused_ema_adam_list {

/** apply_fused_ema_adam_list_(grads, vars!, ms!, vs!, ss!, step, lr, ema_decay, beta1, beta2, eps,
 *  adam_mode, bias_correction, weight_decay, *, max_vs!, model_copies!, grad_scale, found_inf,
 *  maximize, lr_tensor, ema_decay_tensor) through the dispatcher. An empty ss with non-empty vars
 *  is a launch without the EMA; lr_tensor / ema_decay_tensor (one-element fp32, on the device)
 *  replace lr / ema_decay. */
void ApplyFusedEmaAdamListInplace(at::TensorList grads, at::TensorList vars, at::TensorList ms,
                                  at::TensorList vs, at::TensorList ss, const at::Tensor& step,
                                  double lr, double emaDecay, double beta1, double beta2,
                                  double eps, int64_t mode, bool biasCorrection,
                                  double weightDecay, std::optional<at::TensorList> maxVs,
                                  std::optional<at::TensorList> modelCopies,
                                  const std::optional<at::Tensor>& gradScale,
                                  const std::optional<at::Tensor>& foundInf, bool maximize,
                                  const std::optional<at::Tensor>& lrTensor,
                                  const std::optional<at::Tensor>& emaDecayTensor);

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_H
