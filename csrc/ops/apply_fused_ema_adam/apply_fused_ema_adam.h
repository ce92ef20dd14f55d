/**
 * @file apply_fused_ema_adam.h
 * @brief The C++ entry of ascend_ema_adam::apply_fused_ema_adam_: its signature is the op's, so
 *        the dispatcher call (typed<decltype(ApplyFusedEmaAdamInplace)>) and every kernel of the
 *        op (static_assert on their types) derive from this one declaration.
 */
#ifndef ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_H
#define ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_H

#include <ATen/core/Tensor.h>

namespace ascend_ema_adam::apply_fused_ema_adam {

/** apply_fused_ema_adam_(grad, var!, m!, v!, s!, step, lr, ema_decay, beta1, beta2, eps,
 *  adam_mode, bias_correction, weight_decay) through the dispatcher. */
void ApplyFusedEmaAdamInplace(const at::Tensor& grad, const at::Tensor& var, const at::Tensor& m,
                              const at::Tensor& v, const at::Tensor& s, const at::Tensor& step,
                              double lr, double emaDecay, double beta1, double beta2, double eps,
                              int64_t mode, bool biasCorrection, double weightDecay);

}  // namespace ascend_ema_adam::apply_fused_ema_adam

#endif  // ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_H
