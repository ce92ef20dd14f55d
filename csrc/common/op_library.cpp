/**
 * @file op_library.cpp
 * @brief The ascend_ema_adam torch library (its namespace claim) and the shared Autograd kernel
 *        of in-place updates (see the header).
 */
#include "op_library.h"

#include <pybind11/pybind11.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>

#include <utility>
#include <vector>

namespace ascend_ema_adam::ops {

namespace {

/** Calls f on the tensor an argument holds, or on every tensor of its list (None: nothing). */
template <class F>
void ForEachTensor(const c10::IValue& value, const F& f)
{
    if (value.isTensor()) {
        f(value.toTensor());
    } else if (value.isTensorList()) {
        for (const c10::IValue& element : value.toListRef()) {
            f(element.toTensor());
        }
    }
}

/**
 * Keeps a call's arguments alive and lets them go with the GIL held once. A tensor created in
 * Python owns its Python object: when its last C++ reference goes, c10 decrefs that object under
 * the GIL. The dispatcher runs ops with the GIL released, so a list of thousands of tensors
 * dropped there would take and hand back the GIL once per tensor; dropped here, once per call.
 */
class ArgumentsReleasedUnderGil {
public:
    explicit ArgumentsReleasedUnderGil(std::vector<c10::IValue> args) : args_(std::move(args)) {}
    ArgumentsReleasedUnderGil(const ArgumentsReleasedUnderGil&) = delete;
    ArgumentsReleasedUnderGil& operator=(const ArgumentsReleasedUnderGil&) = delete;

    ~ArgumentsReleasedUnderGil()
    {
        if (Py_IsInitialized() != 0 && PyGILState_Check() == 0) {
            pybind11::gil_scoped_acquire gil;
            args_.clear();
        }
    }

private:
    std::vector<c10::IValue> args_;
};

}  // namespace

void InplaceUpdateAutograd(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                           torch::jit::Stack* stack)
{
    const std::vector<c10::Argument>& args = op.schema().arguments();
    const size_t first = stack->size() - args.size();
    const ArgumentsReleasedUnderGil keep(std::vector<c10::IValue>(
        stack->begin() + static_cast<std::ptrdiff_t>(first), stack->end()));
    bool recordsGrad = false;
    if (at::GradMode::is_enabled()) {
        for (size_t i = 0; i < args.size() && !recordsGrad; ++i) {
            ForEachTensor((*stack)[first + i], [&](const at::Tensor& t) {
                recordsGrad = recordsGrad || t.requires_grad();
            });
        }
    }
    // The written arguments (a list as one value: one reference count, not one per tensor),
    // kept to bump their versions once the kernel has consumed the stack.
    std::vector<c10::IValue> mutated;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i].alias_info() != nullptr && args[i].alias_info()->isWrite()) {
            mutated.push_back((*stack)[first + i]);
            ForEachTensor(mutated.back(), [&](const at::Tensor& t) {
                torch::autograd::check_inplace(t, recordsGrad);
            });
        }
    }
    TORCH_CHECK(!recordsGrad, op.schema().name(), ": the update has no derivative; call it under "
                "torch.no_grad(), as optimizers do");
    {
        at::AutoDispatchBelowADInplaceOrView guard;
        op.redispatchBoxed(keys & c10::after_ADInplaceOrView_keyset, stack);
    }
    for (const c10::IValue& value : mutated) {
        ForEachTensor(value, [](const at::Tensor& t) { torch::autograd::increment_version(t); });
    }
}

void FunctionalOfInplaceUpdate(const c10::OperatorHandle& op, torch::jit::Stack* stack)
{
    const c10::FunctionSchema& schema = op.schema();
    const c10::OperatorHandle inplace = c10::Dispatcher::singleton().findSchemaOrThrow(
        (schema.name() + "_").c_str(), schema.overload_name().c_str());
    const std::vector<c10::Argument>& args = inplace.schema().arguments();
    const size_t first = stack->size() - args.size();
    std::vector<c10::IValue> results;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i].alias_info() == nullptr || !args[i].alias_info()->isWrite()) {
            continue;
        }
        c10::IValue& value = (*stack)[first + i];
        if (value.isTensor()) {
            value = value.toTensor().clone();
        } else if (value.isTensorList()) {
            c10::List<at::Tensor> clones;
            clones.reserve(value.toListRef().size());
            for (const c10::IValue& element : value.toListRef()) {
                clones.push_back(element.toTensor().clone());
            }
            value = std::move(clones);
        }
        results.push_back(value.isNone() ? c10::IValue(c10::List<at::Tensor>()) : value);
    }
    inplace.callBoxed(stack);  // consumes the arguments; the in-place op returns nothing
    for (c10::IValue& result : results) {
        torch::jit::push(stack, std::move(result));
    }
}

}  // namespace ascend_ema_adam::ops

// The namespace claim: one TORCH_LIBRARY per namespace; the ops are TORCH_LIBRARY_FRAGMENTs.
TORCH_LIBRARY(ascend_ema_adam, m)
{
    m.set_python_module(ascend_ema_adam::ops::kFakeKernelModule);
}
