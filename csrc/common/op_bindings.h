/**
 * @file op_bindings.h
 * @brief The Python-level objects of the _C module beyond the torch ops: each operator's file
 *        (csrc/ops/<op>/<op>_bindings.cpp) adds its own with AEA_OP_BINDINGS, which module.cpp
 *        calls (csrc/common/module_registry.h).
 */
#ifndef ASCEND_EMA_ADAM_OP_BINDINGS_H
#define ASCEND_EMA_ADAM_OP_BINDINGS_H

#include "module_registry.h"

/** In an operator's bindings file: AEA_OP_BINDINGS(apply_fused_ema_adam_list, Bind); */
#define AEA_OP_BINDINGS(op, bind) \
    static const ::ascend_ema_adam::module_registry::Registration aea_op_bindings_##op(#op, bind)

#endif  // ASCEND_EMA_ADAM_OP_BINDINGS_H
