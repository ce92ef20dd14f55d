/**
 * @file module.cpp
 * @brief ascend_ema_adam._C: importing it registers the torch ops (static TORCH_LIBRARY
 *        initialisers in the linked kernel files); it also reports how it was built, and gives
 *        the optimizer its per-step gradient check in one call.
 */
#include <pybind11/pybind11.h>
#include <torch/csrc/utils/pybind.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "op_bindings.h"
#include "platform.h"

namespace py = pybind11;

namespace ascend_ema_adam::ops {

namespace {

std::vector<std::pair<const char*, BindFn>>& Registry()
{
    static std::vector<std::pair<const char*, BindFn>> registry;
    return registry;
}

}  // namespace

OpBindingsRegistration::OpBindingsRegistration(const char* op, BindFn bind)
{
    Registry().emplace_back(op, bind);
}

void BindAllOps(py::module_& mod)
{
    for (const auto& entry : Registry()) entry.second(mod);
}

}  // namespace ascend_ema_adam::ops

namespace {

/** The index of the first gradient that is not a dense tensor of its reference's dtype, shape
 *  and device, or -1: FusedEmaAdamW's check of a cached group, one C++ loop instead of a few
 *  Python attribute reads per parameter. */
int64_t FirstUnlikeGradient(const std::vector<at::Tensor>& references,
                            const std::vector<at::Tensor>& grads)
{
    if (references.size() != grads.size()) {
        return 0;
    }
    for (size_t i = 0; i < grads.size(); ++i) {
        const at::Tensor& g = grads[i];
        const at::Tensor& r = references[i];
        if (g.layout() != at::kStrided || g.scalar_type() != r.scalar_type() ||
            g.sizes() != r.sizes() || g.device() != r.device()) {
            return static_cast<int64_t>(i);
        }
    }
    return -1;
}

/**
 * Whether states[i][key] is columns[k][i] for every (key, column) pair k and every i (by identity;
 * a missing key counts as None): FusedEmaAdamW's check that a cached group's state dicts still
 * hold the tensors it cached, one C loop per column instead of a list built in Python.
 */
bool SameStateColumns(const py::list& states, const py::list& keys, const py::list& columns)
{
    const Py_ssize_t n = PyList_GET_SIZE(states.ptr());
    if (PyList_GET_SIZE(keys.ptr()) != PyList_GET_SIZE(columns.ptr())) return false;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(keys.ptr()); ++k) {
        PyObject* key = PyList_GET_ITEM(keys.ptr(), k);
        PyObject* column = PyList_GET_ITEM(columns.ptr(), k);
        if (!PyList_Check(column) || PyList_GET_SIZE(column) != n) return false;
        for (Py_ssize_t i = 0; i < n; ++i) {
            PyObject* state = PyList_GET_ITEM(states.ptr(), i);
            if (!PyDict_Check(state)) return false;
            PyObject* value = PyDict_GetItemWithError(state, key);  // borrowed
            if (value == nullptr) {
                if (PyErr_Occurred()) throw py::error_already_set();
                value = Py_None;
            }
            if (value != PyList_GET_ITEM(column, i)) return false;
        }
    }
    return true;
}

}  // namespace

PYBIND11_MODULE(_C, mod)
{
    mod.doc() = "ascend_ema_adam torch ops (ascend_ema_adam::apply_fused_ema_adam_, ...)";
    mod.def("build_info", [] {
        const ascend_ema_adam::Platform cpu = ascend_ema_adam::CpuPlatform();
        py::dict d;
        d["npu_kernel"] = AEA_WITH_NPU != 0;
        d["compiler"] = __VERSION__;
        d["cxx11_abi"] = _GLIBCXX_USE_CXX11_ABI != 0;
        d["cpu_threads"] = cpu.vectorCoreNum;
        d["cpu_ub_bytes"] = cpu.ubSize;
        return d;
    }, "How this extension was built and the CPU device it runs on.");
    mod.def("first_unlike_gradient", &FirstUnlikeGradient, py::arg("references"), py::arg("grads"),
            "The index of the first gradient that is not a dense tensor of its reference's dtype, "
            "shape and device, or -1.");
    mod.def("same_state_columns", &SameStateColumns, py::arg("states"), py::arg("keys"),
            py::arg("columns"),
            "Whether states[i][keys[k]] is columns[k][i] for every k and i (a missing key: None).");
    ascend_ema_adam::ops::BindAllOps(mod);
}
