/**
 * @file module_registry.cpp
 * @brief The registry of module_registry.h (one per module: each links this file).
 */
#include "module_registry.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace ascend_ema_adam::module_registry {

namespace {

std::vector<std::pair<const char*, BindFn>>& Registry()
{
    static std::vector<std::pair<const char*, BindFn>> registry;
    return registry;
}

}  // namespace

Registration::Registration(const char* op, BindFn bind)
{
    Registry().emplace_back(op, bind);
}

void BindRegistered(py::module_& mod, const char* moduleName)
{
    for (const auto& [op, bind] : Registry()) {
        const py::dict before = mod.attr("__dict__").attr("copy")();
        bind(mod);
        const py::dict after = mod.attr("__dict__");
        for (const auto& [name, value] : before) {
            if (after[name].ptr() != value.ptr()) {
                throw std::runtime_error(std::string(moduleName) + ": the bindings of " + op +
                                         " define " + py::str(name).cast<std::string>() +
                                         ", which is already defined");
            }
        }
    }
}

}  // namespace ascend_ema_adam::module_registry
