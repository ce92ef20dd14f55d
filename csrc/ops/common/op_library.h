/**
 * @file op_library.h
 * @brief What every torch op of the ascend_ema_adam library shares: the module holding the fake
 *        (meta) kernels, and the Autograd kernel of an in-place update. library.cpp claims the
 *        namespace (TORCH_LIBRARY); each op's file adds its schemas with TORCH_LIBRARY_FRAGMENT
 *        and its kernels with TORCH_LIBRARY_IMPL.
 */
#ifndef ASCEND_EMA_ADAM_OP_LIBRARY_H
#define ASCEND_EMA_ADAM_OP_LIBRARY_H

#include <torch/library.h>

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

}  // namespace ascend_ema_adam::ops

#endif  // ASCEND_EMA_ADAM_OP_LIBRARY_H
