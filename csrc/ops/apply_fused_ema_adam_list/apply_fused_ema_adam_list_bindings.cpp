/**
 * @file apply_fused_ema_adam_list_bindings.cpp
 * @brief ascend_ema_adam._C.ListLaunch: a repeatable prepared call for Python, on the CPU or
 *        (built with torch_npu) the NPU: FusedEmaAdamW's phase-2-only steps
 *        (optim/functional.py, _launch_prepared).
 */
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "apply_fused_ema_adam_list_prepared.h"
#include "op_bindings.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using namespace ops;  // the torch ops' shared part (csrc/ops/common/)

namespace {

namespace py = pybind11;

using Tensors = std::vector<at::Tensor>;
/** lr or the EMA decay: a number, or a one-element fp32 tensor the launches read. */
using Scalar = std::variant<double, at::Tensor>;

ScalarArg ToScalarArg(const Scalar& s)
{
    ScalarArg arg;
    if (const double* value = std::get_if<double>(&s)) {
        arg.value = *value;
    } else {
        arg.tensor = std::get<at::Tensor>(s);
    }
    return arg;
}

// The attributes after lr and the EMA decay, in the spec's order (CANN's): as parameters, their
// types, their Python names, and into the call's ListAttrs.
#define AEA_ATTR_PARAM(type, cpp, name) , type cpp
#define AEA_ATTR_TYPE(type, cpp, name) , type
#define AEA_ATTR_ARG(type, cpp, name) , py::arg(name)
#define AEA_ATTR_SET(type, cpp, name) attrs.cpp = cpp;

/** Phase 1 of every launch of one call, kept for its phase 2s: the op's arguments in CANN's order,
 *  lr and the decay each a number (written into a tensor it owns) or a one-element tensor
 *  (lr_tensor / ema_decay_tensor of the op). */
class ListLaunch {
public:
    ListLaunch(const Tensors& grads, const Tensors& vars, const Tensors& ms, const Tensors& vs,
               const Tensors& ss, const Tensors& maxVs, const Tensors& modelCopies,
               const at::Tensor& step, const std::optional<at::Tensor>& gradScale,
               const std::optional<at::Tensor>& foundInf, const Scalar& lr,
               const Scalar& emaDecay APPLY_FUSED_EMA_ADAM_LIST_NUMBER_ATTR_TABLE(AEA_ATTR_PARAM))
    {
        const ScalarArg lrArg = ToScalarArg(lr);
        const ScalarArg decayArg = ToScalarArg(emaDecay);
        ListAttrs attrs;
        attrs.lr = lrArg.value;
        attrs.emaDecay = decayArg.value;
        APPLY_FUSED_EMA_ADAM_LIST_NUMBER_ATTR_TABLE(AEA_ATTR_SET)
        const ListCall call =
            ListCallOf({grads, vars, ms, vs, ss, maxVs, modelCopies}, step,
                       {&gradScale, &foundInf, &lrArg.tensor, &decayArg.tensor}, attrs);
        if (step.device().is_cpu()) {
            prepared_ = std::make_unique<PreparedListCall>(call, /*repeatable=*/true);
            return;
        }
#if AEA_WITH_NPU
        prepared_ = PrepareNpuListCall(call);
#else
        TORCH_CHECK(false, "ListLaunch: the step is on ", step.device(),
                    "; this build launches on the CPU device only (the NPU needs torch_npu)");
#endif
    }

    /** `grads`: a list of tensors, borrowed (the list holds them during the call); the launch
     *  runs without the GIL. */
    bool Run(const py::list& grads, const at::Tensor& step, const Scalar& lr,
             const Scalar& emaDecay, const std::optional<at::Tensor>& gradScale,
             const std::optional<at::Tensor>& foundInf, bool heldChecked)
    {
        BorrowedTensors borrowed(PyList_GET_SIZE(grads.ptr()));
        for (size_t i = 0; i < borrowed.size(); ++i) {
            PyObject* grad = PyList_GET_ITEM(grads.ptr(), static_cast<Py_ssize_t>(i));
            if (!THPVariable_Check(grad)) {
                throw py::type_error("ListLaunch.run: grads[" + std::to_string(i) + "] is a " +
                                     Py_TYPE(grad)->tp_name + ", not a tensor");
            }
            borrowed[i] = &THPVariable_Unpack(grad);
        }
        const ScalarArg lrArg = ToScalarArg(lr);
        const ScalarArg decayArg = ToScalarArg(emaDecay);
        py::gil_scoped_release released;
        return prepared_->RunAgain(borrowed, step, lrArg, decayArg, gradScale, foundInf,
                                   heldChecked);
    }

    size_t Launches() const { return prepared_->Launches(); }

private:
    std::unique_ptr<RepeatedListCall> prepared_;
};

void Bind(py::module_& mod)
{
    py::class_<ListLaunch>(mod, "ListLaunch",
                           "apply_fused_ema_adam_list_ on the CPU device with phase 1 done once: "
                           "run() is phase 2 only (CANN's repeatable executors).")
        .def(py::init<const Tensors&, const Tensors&, const Tensors&, const Tensors&,
                      const Tensors&, const Tensors&, const Tensors&, const at::Tensor&,
                      const std::optional<at::Tensor>&, const std::optional<at::Tensor>&,
                      const Scalar&, const Scalar&
                      APPLY_FUSED_EMA_ADAM_LIST_NUMBER_ATTR_TABLE(AEA_ATTR_TYPE)>(),
             py::arg("grads"), py::arg("vars"), py::arg("ms"), py::arg("vs"), py::arg("ss"),
             py::arg("max_vs"), py::arg("model_copies"), py::arg("step"), py::arg("grad_scale"),
             py::arg("found_inf"), py::arg("lr"),
             py::arg("ema_decay") APPLY_FUSED_EMA_ADAM_LIST_NUMBER_ATTR_TABLE(AEA_ATTR_ARG),
             "Validates the call as the op does and runs phase 1 of every launch (raises the "
             "op's errors); writes nothing.")
        .def("run", &ListLaunch::Run, py::arg("grads"), py::arg("step"), py::arg("lr"),
             py::arg("ema_decay"), py::arg("grad_scale"), py::arg("found_inf"),
             py::arg("held_checked") = false,
             "The update with these gradients, step, scale, flag, lr and decay, phase 2 only: "
             "True once done; False, with nothing written, if anything phase 1 checked has "
             "changed (then prepare a new ListLaunch). held_checked: the caller has just "
             "compared every tensor the launch holds (parameters, state, model copies) with "
             "what phase 1 saw (_C.UpdatedStorages.in_place over them).")
        .def_property_readonly("launches", &ListLaunch::Launches,
                               "Its launches: one per 256 entries.");
}

}  // namespace

AEA_OP_BINDINGS(apply_fused_ema_adam_list, Bind);

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
