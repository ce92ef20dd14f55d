/**
 * @file op_library.h
 * @brief What every torch op of the ascend_ema_adam library shares: the module holding the fake
 *        (meta) kernels, and the registration of an in-place update with its functional variant.
 *        module.cpp claims the namespace (TORCH_LIBRARY); each op's schema file
 *        (csrc/ops/<op>/<op>.cpp) calls DefineInplaceUpdate in a TORCH_LIBRARY_FRAGMENT, and each
 *        backend file registers its kernel with TORCH_LIBRARY_IMPL (CPU, PrivateUse1).
 */
#ifndef ASCEND_EMA_ADAM_OP_LIBRARY_H
#define ASCEND_EMA_ADAM_OP_LIBRARY_H

#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include <string>

namespace ascend_ema_adam::ops {

/**
 * The Python module with the ops' fake kernels (ascend_ema_adam/_meta_registrations.py). torch
 * records it per definition, so every fragment that defines ops sets it:
 *     m.set_python_module(kFakeKernelModule);
 */
inline constexpr const char* kFakeKernelModule = "ascend_ema_adam._meta_registrations";

/**
 * Autograd kernel of any in-place update op (register with makeFromBoxedFunction): torch's rules
 * for in-place updates. A leaf (or a view of a leaf) that requires grad may only be updated under
 * no_grad (torch's own error otherwise), and every tensor the schema marks as written (a tensor,
 * or each tensor of a written list) has its version counter bumped, so autograd notices when a
 * tensor it saved for backward was updated.
 * The update itself has no derivative.
 */
void InplaceUpdateAutograd(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                           torch::jit::Stack* stack);

/**
 * CompositeExplicitAutograd kernel of the functional variant "name(...)" of any in-place update
 * "name_(...)" of the same arguments (register with makeFromBoxedFunction): clones every argument
 * the in-place op's schema marks as written, runs the in-place op on the clones and returns them
 * in argument order (a tensor, or a list; an absent optional list gives an empty one).
 */
void FunctionalOfInplaceUpdate(const c10::OperatorHandle& op, torch::jit::Stack* stack);

/**
 * Defines an in-place update op and its functional variant in one fragment, with their
 * device-independent kernels: torch's rules for in-place updates on the in-place op (Autograd:
 * InplaceUpdateAutograd; ADInplaceOrView, reached when autograd is already below, e.g. inside
 * another op's kernel: version bumps) and FunctionalOfInplaceUpdate as the functional op's
 * CompositeExplicitAutograd kernel. The schemas (an operator's generated <op>_SCHEMA and
 * <op>_FUNCTIONAL_SCHEMA) name the ops ("name_(...)", "name(...)"); the fake kernels are
 * kFakeKernelModule's.
 */
inline void DefineInplaceUpdate(torch::Library& m, const char* inplaceSchema,
                                const char* functionalSchema)
{
    const auto nameOf = [](const char* schema) {
        const std::string s(schema);
        return s.substr(0, s.find('('));
    };
    m.set_python_module(kFakeKernelModule);
    m.def(inplaceSchema);
    m.def(functionalSchema);
    const std::string inplace = nameOf(inplaceSchema);
    m.impl(inplace.c_str(),
           torch::dispatch(c10::DispatchKey::Autograd,
                           torch::CppFunction::makeFromBoxedFunction<&InplaceUpdateAutograd>()));
    m.impl(inplace.c_str(),
           torch::dispatch(c10::DispatchKey::ADInplaceOrView,
                           torch::autograd::autogradNotImplementedInplaceOrViewFallback()));
    m.impl(
        nameOf(functionalSchema).c_str(),
        torch::dispatch(c10::DispatchKey::CompositeExplicitAutograd,
                        torch::CppFunction::makeFromBoxedFunction<&FunctionalOfInplaceUpdate>()));
}

}  // namespace ascend_ema_adam::ops

#endif  // ASCEND_EMA_ADAM_OP_LIBRARY_H
