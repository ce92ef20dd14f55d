/**
 * @file apply_fused_ema_adam.cpp
 * @brief The torch op schema (namespace ascend_ema_adam) and the device-independent parts:
 *        autograd handling of the in-place op and the functional variant.
 *
 *   apply_fused_ema_adam_  mutates var, m, v, s in place (the optimizer's op); returns nothing, so
 *                          torch.compile functionalizes it automatically (auto_functionalized).
 *   apply_fused_ema_adam   out-of-place variant: returns new (var, m, v, s).
 * Backend kernels: cpu/ (through our aclnn two phases), npu/ (EXEC_NPU_CMD, with torch_npu).
 * Fake (meta) kernels live in ascend_ema_adam/_meta_registrations.py.
 * The schema calls CANN's `mode` attribute `adam_mode`: torch's functionalization passes its own
 * `mode` keyword through custom ops, which an argument of that name would collide with.
 */
#include <torch/autograd.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

namespace {

/**
 * Autograd kernel of the in-place op, with torch's rules for in-place updates: a leaf (or a view
 * of a leaf) that requires grad may only be updated under no_grad (torch's own error otherwise),
 * and every mutated tensor's version counter is bumped, so autograd notices when a tensor it
 * saved for backward was updated. The update itself has no derivative.
 */
void ApplyFusedEmaAdamInplaceAutograd(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                                      torch::jit::Stack* stack)
{
    const std::vector<c10::Argument>& args = op.schema().arguments();
    const size_t first = stack->size() - args.size();
    bool recordsGrad = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const c10::IValue& value = (*stack)[first + i];
        recordsGrad = recordsGrad || (value.isTensor() && value.toTensor().requires_grad());
    }
    recordsGrad = recordsGrad && at::GradMode::is_enabled();
    std::vector<at::Tensor> mutated;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i].alias_info() != nullptr && args[i].alias_info()->isWrite()) {
            mutated.push_back((*stack)[first + i].toTensor());
            torch::autograd::check_inplace(mutated.back(), recordsGrad);
        }
    }
    TORCH_CHECK(!recordsGrad, op.schema().name(), ": the update has no derivative; call it under "
                "torch.no_grad(), as optimizers do");
    {
        at::AutoDispatchBelowADInplaceOrView guard;
        op.redispatchBoxed(keys & c10::after_ADInplaceOrView_keyset, stack);
    }
    for (const at::Tensor& t : mutated) {
        torch::autograd::increment_version(t);
    }
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> ApplyFusedEmaAdamFunctional(
    const at::Tensor& grad, const at::Tensor& var, const at::Tensor& m, const at::Tensor& v,
    const at::Tensor& s, const at::Tensor& step, double lr, double emaDecay, double beta1,
    double beta2, double eps, int64_t mode, bool biasCorrection, double weightDecay)
{
    static const auto inplace = c10::Dispatcher::singleton()
        .findSchemaOrThrow("ascend_ema_adam::apply_fused_ema_adam_", "")
        .typed<void(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                    const at::Tensor&, const at::Tensor&, double, double, double, double,
                    double, int64_t, bool, double)>();
    at::Tensor varOut = var.clone();
    at::Tensor mOut = m.clone();
    at::Tensor vOut = v.clone();
    at::Tensor sOut = s.clone();
    inplace.call(grad, varOut, mOut, vOut, sOut, step, lr, emaDecay, beta1, beta2, eps, mode,
                 biasCorrection, weightDecay);
    return {varOut, mOut, vOut, sOut};
}

}  // namespace

TORCH_LIBRARY(ascend_ema_adam, m)
{
    m.set_python_module("ascend_ema_adam._meta_registrations");
    m.def("apply_fused_ema_adam_(Tensor grad, Tensor(a!) var, Tensor(b!) m, Tensor(c!) v, "
          "Tensor(d!) s, Tensor step, float lr, float ema_decay, float beta1, float beta2, "
          "float eps, int adam_mode, bool bias_correction, float weight_decay) -> ()");
    m.def("apply_fused_ema_adam(Tensor grad, Tensor var, Tensor m, Tensor v, Tensor s, "
          "Tensor step, float lr, float ema_decay, float beta1, float beta2, float eps, "
          "int adam_mode, bool bias_correction, float weight_decay) -> (Tensor, Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(ascend_ema_adam, Autograd, m)
{
    m.impl("apply_fused_ema_adam_",
           torch::CppFunction::makeFromBoxedFunction<&ApplyFusedEmaAdamInplaceAutograd>());
}

// Reached when autograd is already below (e.g. inside another op's kernel): bumps versions.
TORCH_LIBRARY_IMPL(ascend_ema_adam, ADInplaceOrView, m)
{
    m.impl("apply_fused_ema_adam_", torch::autograd::autogradNotImplementedInplaceOrViewFallback());
}

TORCH_LIBRARY_IMPL(ascend_ema_adam, CompositeExplicitAutograd, m)
{
    m.impl("apply_fused_ema_adam", &ApplyFusedEmaAdamFunctional);
}
