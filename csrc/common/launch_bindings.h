/**
 * @file launch_bindings.h
 * @brief What the prepared launches' Python bindings share (csrc/ops/<op>/<op>_bindings.cpp):
 *        lr or the EMA decay as a number or a tensor, the gradients of a run borrowed from a
 *        Python list, the run (phase 2) and its methods, and the macros that spell an
 *        operator's attribute table (the generated <OP>_NUMBER_ATTR_TABLE) as constructor
 *        parameters.
 */
#ifndef ASCEND_EMA_ADAM_OPS_LAUNCH_BINDINGS_H
#define ASCEND_EMA_ADAM_OPS_LAUNCH_BINDINGS_H

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "repeated_launch.h"

namespace ascend_ema_adam::ops {

/** lr or the EMA decay from Python: a number, or a one-element fp32 tensor the launches read. */
using NumberOrTensor = std::variant<double, at::Tensor>;

inline ScalarArg ToScalarArg(const NumberOrTensor& s)
{
    ScalarArg arg;
    if (const double* value = std::get_if<double>(&s)) {
        arg.value = *value;
    } else {
        arg.tensor = std::get<at::Tensor>(s);
    }
    return arg;
}

/** The tensors of a Python list, borrowed (the list holds them while the run lasts: no
 *  at::Tensor copies, which would need the GIL to release); `who` names the caller in the
 *  TypeError for an entry that is not a tensor. */
inline BorrowedTensors BorrowTensors(const pybind11::list& grads, const char* who)
{
    BorrowedTensors borrowed(PyList_GET_SIZE(grads.ptr()));
    for (size_t i = 0; i < borrowed.size(); ++i) {
        PyObject* grad = PyList_GET_ITEM(grads.ptr(), static_cast<Py_ssize_t>(i));
        if (!THPVariable_Check(grad)) {
            throw pybind11::type_error(std::string(who) + ": grads[" + std::to_string(i) +
                                       "] is a " + Py_TYPE(grad)->tp_name + ", not a tensor");
        }
        borrowed[i] = &THPVariable_Unpack(grad);
    }
    return borrowed;
}

/** A prepared call as a Python object (FusedEmaAdamW's phase-2-only steps): the operator's class
 *  makes the call in its constructor (phase 1 of every launch); `Prepared` has
 *  RunAgain(grads, step, lr, decay, gradScale, foundInf, heldChecked) and Launches(). */
template <class Prepared>
class PreparedLaunch {
public:
    /** `grads`: a list of tensors, borrowed (the list holds them during the call); the launch
     *  runs without the GIL. */
    bool Run(const pybind11::list& grads, const at::Tensor& step, const NumberOrTensor& lr,
             const NumberOrTensor& emaDecay, const std::optional<at::Tensor>& gradScale,
             const std::optional<at::Tensor>& foundInf, bool heldChecked)
    {
        const BorrowedTensors borrowed = BorrowTensors(grads, who_);
        const ScalarArg lrArg = ToScalarArg(lr);
        const ScalarArg decayArg = ToScalarArg(emaDecay);
        pybind11::gil_scoped_release released;
        return prepared_->RunAgain(borrowed, step, lrArg, decayArg, gradScale, foundInf,
                                   heldChecked);
    }

    size_t Launches() const { return prepared_->Launches(); }

protected:
    /** `who`: "ApplyFusedEmaAdamListLaunch.run", for the TypeError of an entry that is not a
     *  tensor. */
    explicit PreparedLaunch(const char* who) : who_(who) {}

    std::unique_ptr<Prepared> prepared_;

private:
    const char* who_;
};

/** The methods every prepared launch's class has: run() (`held` says what the caller has compared
 *  when it passes held_checked) and the launches property. */
template <class Launch, class... Options>
void DefPreparedLaunchMethods(pybind11::class_<Launch, Options...>& cls, const char* name,
                              const char* held)
{
    namespace py = pybind11;
    cls.def("run", &Launch::Run, py::arg("grads"), py::arg("step"), py::arg("lr"),
            py::arg("ema_decay"), py::arg("grad_scale"), py::arg("found_inf"),
            py::arg("held_checked") = false,
            (std::string("The update with these gradients, step, scale, flag, lr and decay, phase "
                         "2 only: True once done; False, with nothing written, if anything phase "
                         "1 checked has changed (then prepare a new ") +
             name + "). held_checked: the caller has just compared " + held +
             " with what phase 1 saw (_C.UpdatedStorages.in_place over them).")
                .c_str())
        .def_property_readonly("launches", &Launch::Launches, "Its launches: one per 256 entries.");
}

}  // namespace ascend_ema_adam::ops

// An operator's number attributes (X(C++ type, C++ name, "name")) as constructor parameters, their
// types, their pybind11 arguments, and into the call's attribute struct `attrs`.
#define AEA_ATTR_PARAM(type, cpp, name) , type cpp
#define AEA_ATTR_TYPE(type, cpp, name) , type
#define AEA_ATTR_ARG(type, cpp, name) , pybind11::arg(name)
#define AEA_ATTR_SET(type, cpp, name) attrs.cpp = cpp;

#endif  // ASCEND_EMA_ADAM_OPS_LAUNCH_BINDINGS_H
