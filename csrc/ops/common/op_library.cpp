/**
 * @file op_library.cpp
 * @brief The ascend_ema_adam torch library (its namespace claim) and the shared Autograd kernel
 *        of in-place updates (see the header).
 */
#include "op_library.h"

#include <torch/autograd.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>

#include <vector>

namespace ascend_ema_adam::ops {

void InplaceUpdateAutograd(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
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

}  // namespace ascend_ema_adam::ops

// The namespace claim: one TORCH_LIBRARY per namespace; the ops are TORCH_LIBRARY_FRAGMENTs.
TORCH_LIBRARY(ascend_ema_adam, m)
{
    m.set_python_module(ascend_ema_adam::ops::kFakeKernelModule);
}
