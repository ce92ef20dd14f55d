/**
 * @file optimizer_checks.h
 * @brief The bindings of FusedEmaAdamW's per-step checks of a cached group (optimizer_checks.cpp).
 */
#ifndef ASCEND_EMA_ADAM_OPS_OPTIMIZER_CHECKS_H
#define ASCEND_EMA_ADAM_OPS_OPTIMIZER_CHECKS_H

#include <pybind11/pybind11.h>

namespace ascend_ema_adam::ops {

/** Adds UpdatedStorages, CachedGradients, same_dict_values and same_state_columns to `mod`
 *  (ascend_ema_adam._C). */
void BindOptimizerChecks(pybind11::module_& mod);

}  // namespace ascend_ema_adam::ops

#endif  // ASCEND_EMA_ADAM_OPS_OPTIMIZER_CHECKS_H
