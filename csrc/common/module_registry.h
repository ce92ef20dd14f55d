/**
 * @file module_registry.h
 * @brief What both extension modules (_C and _kernels) do with their operators' Python
 *        bindings: each operator's bindings file registers a function at static
 *        initialisation, and the module's init calls them in registration order. Each module links its own copy of
 *        module_registry.cpp, so each has its own registry.
 */
#ifndef ASCEND_EMA_ADAM_MODULE_REGISTRY_H
#define ASCEND_EMA_ADAM_MODULE_REGISTRY_H

#include <pybind11/pybind11.h>

namespace ascend_ema_adam::module_registry {

/** One operator's bindings, called once when the module is imported. */
using BindFn = void (*)(pybind11::module_& mod);

/** Adds an operator's bindings to this module's registry. */
struct Registration {
    Registration(const char* op, BindFn bind);
};

/** Calls the registered bindings in registration order. A binding may only add names: one that
 *  redefines a name already in the module (pybind11 would make it an overload of the first) is
 *  refused with a message naming `moduleName` and the operator. */
void BindRegistered(pybind11::module_& mod, const char* moduleName);

}  // namespace ascend_ema_adam::module_registry

#endif  // ASCEND_EMA_ADAM_MODULE_REGISTRY_H
