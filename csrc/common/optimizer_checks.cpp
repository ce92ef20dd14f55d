/**
 * @file optimizer_checks.cpp
 * @brief FusedEmaAdamW's per-step checks of a cached group (optim/_buckets.py _GroupCache), each
 *        one C++ loop over the parameters instead of several Python passes: the gradients read
 *        and compared with what the last full check saw (CachedGradients), the state dicts still
 *        holding the cached tensors (same_state_columns), and the storages the step updates
 *        (UpdatedStorages), which a new gradient or scalar tensor must not touch; and the
 *        optimizer's state map unchanged (same_dict_values).
 */
#include "optimizer_checks.h"

#include <ATen/PythonTorchFunctionTLS.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "memory_layout.h"
#include "tensor_identity.h"

namespace ascend_ema_adam::ops {

namespace {

namespace py = pybind11;

/** The bytes of t's storage (empty for an empty one); nullopt: no storage to look at. */
std::optional<MemorySpan> StorageSpan(const at::Tensor& t)
{
    if (!t.has_storage()) return std::nullopt;
    const c10::Storage& storage = t.storage();
    MemorySpan span;
    span.begin = reinterpret_cast<uintptr_t>(storage.data());
    span.end = span.begin + storage.nbytes();
    return span;
}

/** An updated tensor as the caches saw it: its memory and description (what a prepared launch
 *  compares, tensor_identity.h), and its storage's size. */
struct PlacedTensor {
    at::Tensor tensor;
    SeenTensor seen;
    size_t storageBytes;
};

/**
 * The storages a step updates (every cached group's parameters and state), as sorted, merged
 * byte spans: a later step whose updated tensors are the same objects, in the same memory
 * (InPlace), checks only what is new each step (the gradients, the scalar tensors) against them.
 */
class UpdatedStorages {
public:
    explicit UpdatedStorages(const std::vector<at::Tensor>& updated)
    {
        std::vector<MemorySpan> spans;
        for (const at::Tensor& t : updated) {
            const auto span = StorageSpan(t);
            TORCH_CHECK(span, "UpdatedStorages: a tensor without storage");
            if (span->begin != span->end) spans.push_back(*span);
            placed_.push_back({t, SeenTensor(t), t.storage().nbytes()});
        }
        std::sort(spans.begin(), spans.end(),
                  [](const MemorySpan& a, const MemorySpan& b) { return a.begin < b.begin; });
        for (const MemorySpan& s : spans) {  // merged: disjoint (tensors share storages)
            if (!storages_.empty() && s.begin < storages_.back().end) {
                storages_.back().end = std::max(storages_.back().end, s.end);
            } else {
                storages_.push_back(s);
            }
        }
    }

    /** Whether t's storage shares a byte with an updated one (a tensor without storage: yes,
     *  the full check decides). */
    bool Touches(const at::Tensor& t) const
    {
        const auto span = StorageSpan(t);
        return !span || TouchesSortedSpans(storages_, *span);
    }

    bool TouchesAny(const std::vector<at::Tensor>& tensors) const
    {
        return std::any_of(tensors.begin(), tensors.end(),
                           [&](const at::Tensor& t) { return Touches(t); });
    }

    /** Whether every updated tensor still has the memory and description it had (first element,
     *  storage size, dtype, sizes, strides): p.data = ..., set_() or a resize make the ranges
     *  stale, and so does a copy-on-write storage (torch._lazy_clone), which Matches copies before
     *  it compares. What a prepared launch compares of the tensors it holds: a step that checked
     *  this runs its launches without comparing them again
     *  (ApplyFusedEmaAdamListLaunch.run(held_checked=True)). */
    bool InPlace() const
    {
        for (size_t i = 0; i < placed_.size(); ++i) {
            PrefetchAhead(i, placed_.size(),
                          [&](size_t j) -> const at::Tensor& { return placed_[j].tensor; });
            const PlacedTensor& p = placed_[i];
            if (!p.seen.Matches(p.tensor) ||
                p.tensor.unsafeGetTensorImpl()->unsafe_storage().nbytes() != p.storageBytes) {
                return false;
            }
        }
        return true;
    }

private:
    std::vector<MemorySpan> storages_;  // sorted, merged
    std::vector<PlacedTensor> placed_;
};

/**
 * Fetches ahead what reading parameter j's gradient will touch, a few parameters ahead (after a
 * training step's forward and backward none of it is in the caches, and each is reached through
 * the one before): the Python object 16 ahead, its TensorImpl 8 ahead, its autograd meta (where
 * the gradient is) 4 ahead.
 */
void PrefetchParameter(PyObject* params, Py_ssize_t j, Py_ssize_t n)
{
    if (j + 16 < n) __builtin_prefetch(PyList_GET_ITEM(params, j + 16));
    if (j + 8 < n) {
        PyObject* p = PyList_GET_ITEM(params, j + 8);
        if (THPVariable_CheckExact(p)) {
            PrefetchTensorImpl(THPVariable_Unpack(p));
        }
    }
    if (j + 4 < n) {
        PyObject* p = PyList_GET_ITEM(params, j + 4);
        if (THPVariable_CheckExact(p)) {
            __builtin_prefetch(THPVariable_Unpack(p).unsafeGetTensorImpl()->autograd_meta());
        }
    }
}

/** A gradient as the last full check saw it: dtype, device and shape. */
struct GradientKind {
    at::ScalarType dtype;
    at::Device device;
    c10::SmallVector<int64_t, 4> sizes;
};

/**
 * What a cached group's last full check saw of its gradients: the group's parameters (objects),
 * which of them had no gradient, and each gradient's dtype, device and shape. Read() reads this
 * step's gradients and returns them if every one still matches.
 */
class CachedGradients {
public:
    /** `params`: the group's parameters; `kinds`: a tensor of each gradient's dtype, device and
     *  shape, in order, for the parameters not in `absent` (sorted positions without one). */
    CachedGradients(const py::list& params, const std::vector<at::Tensor>& kinds,
                    std::vector<int64_t> absent)
        : params_(py::reinterpret_steal<py::list>(
              PyList_GetSlice(params.ptr(), 0, PyList_GET_SIZE(params.ptr())))),  // a copy
          absent_(std::move(absent))
    {
        if (!params_) throw py::error_already_set();
        TORCH_CHECK(kinds.size() + absent_.size() == py::len(params),
                    "CachedGradients: one gradient kind per parameter with a gradient");
        for (const at::Tensor& k : kinds) {
            kinds_.push_back({k.scalar_type(), k.device(), {k.sizes().begin(), k.sizes().end()}});
        }
    }

    /**
     * The gradients of `params` (the parameters with one, in order) if `params` holds the cached
     * parameters, the same ones lack a gradient, and every gradient is a plain dense torch.Tensor
     * of its cached dtype, device and shape whose storage touches none of `updated` (if given);
     * None otherwise (the full check then decides, and raises the error if there is one).
     */
    std::optional<py::list> Read(const py::list& params, const UpdatedStorages* updated) const
    {
        const Py_ssize_t n = PyList_GET_SIZE(params.ptr());
        if (n != PyList_GET_SIZE(params_.ptr())) return std::nullopt;
        // the C++ read skips Tensor.grad's Python getter: only where that getter would do no
        // more (a Tensor or Parameter, no __torch_function__ mode active)
        const bool modes = at::impl::torch_function_mode_enabled();
        py::list grads(kinds_.size());
        size_t k = 0;
        size_t a = 0;
        for (Py_ssize_t j = 0; j < n; ++j) {
            PrefetchParameter(params.ptr(), j, n);
            PyObject* p = PyList_GET_ITEM(params.ptr(), j);
            if (p != PyList_GET_ITEM(params_.ptr(), j)) return std::nullopt;
            py::object grad;
            if (!modes && THPVariable_CheckExact(p)) {
                const at::Tensor& g = THPVariable_Unpack(p).grad();
                if (g.defined()) grad = py::reinterpret_steal<py::object>(THPVariable_Wrap(g));
            } else {
                grad = py::reinterpret_steal<py::object>(PyObject_GetAttrString(p, "grad"));
                if (!grad) throw py::error_already_set();
                if (grad.is_none()) grad = py::object();
            }
            if (a < absent_.size() && absent_[a] == j) {  // must still lack one
                if (grad) return std::nullopt;
                ++a;
                continue;
            }
            // a plain torch.Tensor (a DTensor or other subclass, or None: the full check)
            if (!grad || Py_TYPE(grad.ptr()) != reinterpret_cast<PyTypeObject*>(THPVariableClass)) {
                return std::nullopt;
            }
            if (k == kinds_.size()) return std::nullopt;  // (cannot be: absent_ and kinds_ add up)
            const at::Tensor& g = THPVariable_Unpack(grad.ptr());
            const GradientKind& kind = kinds_[k];
            if (g.layout() != at::kStrided || g.scalar_type() != kind.dtype ||
                g.device() != kind.device || !SameInts(g.sizes(), kind.sizes)) {
                return std::nullopt;
            }
            if (updated != nullptr && updated->Touches(g)) return std::nullopt;
            PyList_SET_ITEM(grads.ptr(), static_cast<Py_ssize_t>(k), grad.release().ptr());
            ++k;
        }
        if (k != kinds_.size()) return std::nullopt;  // (likewise)
        return grads;
    }

private:
    py::list params_;
    std::vector<int64_t> absent_;
    std::vector<GradientKind> kinds_;
};

/**
 * Whether states[i][key] is columns[k][i] for every (key, column) pair k and every i (by identity;
 * a missing key counts as None): a cached group's state dicts still hold the tensors it cached.
 */
bool SameStateColumns(const py::list& states, const py::list& keys, const py::list& columns)
{
    const Py_ssize_t n = PyList_GET_SIZE(states.ptr());
    const Py_ssize_t keyCount = PyList_GET_SIZE(keys.ptr());
    if (PyList_GET_SIZE(columns.ptr()) != keyCount) return false;
    for (Py_ssize_t k = 0; k < keyCount; ++k) {
        PyObject* column = PyList_GET_ITEM(columns.ptr(), k);
        if (!PyList_Check(column) || PyList_GET_SIZE(column) != n) return false;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {  // each state dict once (they are scattered objects)
        PyObject* state = PyList_GET_ITEM(states.ptr(), i);
        if (!PyDict_Check(state)) return false;
        for (Py_ssize_t k = 0; k < keyCount; ++k) {
            PyObject* value = PyDict_GetItemWithError(state, PyList_GET_ITEM(keys.ptr(), k));
            if (value == nullptr) {  // (borrowed)
                if (PyErr_Occurred()) throw py::error_already_set();
                value = Py_None;
            }
            if (value != PyList_GET_ITEM(PyList_GET_ITEM(columns.ptr(), k), i)) return false;
        }
    }
    return true;
}

/** Whether `dict`'s values are, in order, the objects of `values` (by identity): the optimizer's
 *  state map unchanged since a step (no list built, nothing hashed). */
bool SameDictValues(const py::dict& dict, const py::list& values)
{
    if (PyDict_GET_SIZE(dict.ptr()) != PyList_GET_SIZE(values.ptr())) return false;
    Py_ssize_t position = 0;
    Py_ssize_t i = 0;
    PyObject* key = nullptr;
    PyObject* value = nullptr;
    while (PyDict_Next(dict.ptr(), &position, &key, &value)) {
        if (value != PyList_GET_ITEM(values.ptr(), i++)) return false;
    }
    return true;
}

}  // namespace

void BindOptimizerChecks(py::module_& mod)
{
    py::class_<UpdatedStorages>(mod, "UpdatedStorages",
                                "The storages a step updates, as sorted byte ranges.")
        .def(py::init<const std::vector<at::Tensor>&>(), py::arg("updated"))
        .def("touches_any", &UpdatedStorages::TouchesAny, py::arg("tensors"),
             "Whether some tensor's storage shares a byte with an updated one.")
        .def("in_place", &UpdatedStorages::InPlace,
             "Whether every updated tensor still has the memory it had.");
    py::class_<CachedGradients>(mod, "CachedGradients",
                                "What a cached group's last full check saw of its gradients.")
        .def(py::init<const py::list&, const std::vector<at::Tensor>&, std::vector<int64_t>>(),
             py::arg("params"), py::arg("kinds"), py::arg("absent"))
        .def("read", &CachedGradients::Read, py::arg("params"), py::arg("updated").none(true),
             "This step's gradients if all still match (see the class), else None.");
    mod.def("same_dict_values", &SameDictValues, py::arg("dict"), py::arg("values"),
            "Whether dict's values are, in order, the objects of values (by identity).");
    mod.def("same_state_columns", &SameStateColumns, py::arg("states"), py::arg("keys"),
            py::arg("columns"),
            "Whether states[i][keys[k]] is columns[k][i] for every k and i (a missing key: None).");
}

}  // namespace ascend_ema_adam::ops
