/**
 * @file kernel_operator_list_tensor_intf.h
 * @brief ListTensorDesc/TensorDesc under their upstream header name. As in asc-devkit, kernel_operator.h
 *        does not reach them: a list kernel includes this header (tools/ascendc_check/run.py proves the real
 *        library needs it; tests/cpp/CMakeLists.txt proves the twin does too). The twin's definitions
 *        live in twin_list_tensor.h.
 */
#ifndef ASCEND_EMA_ADAM_TWIN_KERNEL_OPERATOR_LIST_TENSOR_INTF_H
#define ASCEND_EMA_ADAM_TWIN_KERNEL_OPERATOR_LIST_TENSOR_INTF_H

#include "kernel_operator.h"
#include "twin_list_tensor.h"

#endif  // ASCEND_EMA_ADAM_TWIN_KERNEL_OPERATOR_LIST_TENSOR_INTF_H
