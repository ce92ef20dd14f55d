/**
 * @file apply_fused_ema_adam.cpp
 * @brief The torch op schemas of ApplyFusedEmaAdam (namespace ascend_ema_adam) and their
 *        device-independent kernels: autograd handling of the in-place op, and the functional
 *        variant.
 *
 *   apply_fused_ema_adam_  mutates var, m, v, s in place (the optimizer's op); returns nothing, so
 *                          torch.compile functionalizes it automatically (auto_functionalized).
 *   apply_fused_ema_adam   out-of-place variant: returns new (var, m, v, s).
 * Kernels: apply_fused_ema_adam_cpu.cpp (our aclnn two phases on the CPU device) and, built with
 * torch_npu, apply_fused_ema_adam_npu.cpp (CANN's op-API through torch_npu's task queue).
 * Fake (meta) kernels live in ascend_ema_adam/_meta_registrations.py.
 * The schema calls CANN's `mode` attribute `adam_mode`: torch's functionalization passes its own
 * `mode` keyword through custom ops, which an argument of that name would collide with.
 */
#include "apply_fused_ema_adam.h"

#include <torch/library.h>

#include <tuple>

#include "op_library.h"

namespace ascend_ema_adam::apply_fused_ema_adam {

using namespace ops;  // the torch ops' shared part (csrc/ops/common/)

void ApplyFusedEmaAdamInplace(const at::Tensor& grad, const at::Tensor& var, const at::Tensor& m,
                              const at::Tensor& v, const at::Tensor& s, const at::Tensor& step,
                              double lr, double emaDecay, double beta1, double beta2, double eps,
                              int64_t mode, bool biasCorrection, double weightDecay)
{
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("ascend_ema_adam::apply_fused_ema_adam_", "")
                               .typed<decltype(ApplyFusedEmaAdamInplace)>();
    op.call(grad, var, m, v, s, step, lr, emaDecay, beta1, beta2, eps, mode, biasCorrection,
            weightDecay);
}

namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> ApplyFusedEmaAdamFunctional(
    const at::Tensor& grad, const at::Tensor& var, const at::Tensor& m, const at::Tensor& v,
    const at::Tensor& s, const at::Tensor& step, double lr, double emaDecay, double beta1,
    double beta2, double eps, int64_t mode, bool biasCorrection, double weightDecay)
{
    at::Tensor varOut = var.clone();
    at::Tensor mOut = m.clone();
    at::Tensor vOut = v.clone();
    at::Tensor sOut = s.clone();
    ApplyFusedEmaAdamInplace(grad, varOut, mOut, vOut, sOut, step, lr, emaDecay, beta1, beta2,
                             eps, mode, biasCorrection, weightDecay);
    return {varOut, mOut, vOut, sOut};
}

}  // namespace

}  // namespace ascend_ema_adam::apply_fused_ema_adam

TORCH_LIBRARY_FRAGMENT(ascend_ema_adam, m)
{
    ascend_ema_adam::ops::DefineInplaceUpdate(
        m,
        "apply_fused_ema_adam_(Tensor grad, Tensor(a!) var, Tensor(b!) m, Tensor(c!) v, "
        "Tensor(d!) s, Tensor step, float lr, float ema_decay, float beta1, float beta2, "
        "float eps, int adam_mode, bool bias_correction, float weight_decay) -> ()",
        "apply_fused_ema_adam(Tensor grad, Tensor var, Tensor m, Tensor v, Tensor s, "
        "Tensor step, float lr, float ema_decay, float beta1, float beta2, float eps, "
        "int adam_mode, bool bias_correction, float weight_decay) -> (Tensor, Tensor, Tensor, Tensor)",
        &ascend_ema_adam::apply_fused_ema_adam::ApplyFusedEmaAdamFunctional);
}
