/**
 * @file launch_bindings.h
 * @brief What the prepared launches' Python bindings share (csrc/ops/<op>/<op>_bindings.cpp):
 *        lr or the EMA decay as a number or a tensor, the gradients of a run borrowed from a
 *        Python list, and the macros that spell an operator's attribute table (the generated
 *        <OP>_NUMBER_ATTR_TABLE) as constructor parameters.
 */
#ifndef ASCEND_EMA_ADAM_OPS_LAUNCH_BINDINGS_H
#define ASCEND_EMA_ADAM_OPS_LAUNCH_BINDINGS_H

#include <pybind11/pybind11.h>
#include <torch/csrc/autograd/python_variable.h>

#include <string>
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

}  // namespace ascend_ema_adam::ops

// An operator's number attributes (X(C++ type, C++ name, "name")) as constructor parameters, their
// types, their pybind11 arguments, and into the call's attribute struct `attrs`.
#define AEA_ATTR_PARAM(type, cpp, name) , type cpp
#define AEA_ATTR_TYPE(type, cpp, name) , type
#define AEA_ATTR_ARG(type, cpp, name) , pybind11::arg(name)
#define AEA_ATTR_SET(type, cpp, name) attrs.cpp = cpp;

#endif  // ASCEND_EMA_ADAM_OPS_LAUNCH_BINDINGS_H
