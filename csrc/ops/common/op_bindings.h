/**
 * @file op_bindings.h
 * @brief The Python-level objects of the _C module beyond the torch ops: each operator's file
 *        (csrc/ops/<op>/<op>_bindings.cpp) adds its own with AEA_OP_BINDINGS, which module.cpp calls.
 */
#ifndef ASCEND_EMA_ADAM_OP_BINDINGS_H
#define ASCEND_EMA_ADAM_OP_BINDINGS_H

#include <pybind11/pybind11.h>

namespace ascend_ema_adam::ops {

/** One operator's bindings, called once when _C is imported. */
using BindFn = void (*)(pybind11::module_& mod);

/** Adds an operator's bindings to _C (at static initialisation: AEA_OP_BINDINGS). */
struct OpBindingsRegistration {
    OpBindingsRegistration(const char* op, BindFn bind);
};

/** The registered bindings, in registration order. */
void BindAllOps(pybind11::module_& mod);

}  // namespace ascend_ema_adam::ops

/** In an operator's bindings file: AEA_OP_BINDINGS(apply_fused_ema_adam_list, Bind); */
#define AEA_OP_BINDINGS(op, bind) \
    static const ::ascend_ema_adam::ops::OpBindingsRegistration aea_op_bindings_##op(#op, bind)

#endif  // ASCEND_EMA_ADAM_OP_BINDINGS_H
