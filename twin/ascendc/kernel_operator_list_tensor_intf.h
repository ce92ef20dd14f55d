/**
 * @file kernel_operator_list_tensor_intf.h
 * @brief The upstream header name of ListTensorDesc/TensorDesc, for kernels that include it directly
 *        (asc-devkit's examples do); the twin's definitions live in twin_list_tensor.h.
 */
#ifndef ASCEND_EMA_ADAM_TWIN_KERNEL_OPERATOR_LIST_TENSOR_INTF_H
#define ASCEND_EMA_ADAM_TWIN_KERNEL_OPERATOR_LIST_TENSOR_INTF_H

#include "kernel_operator.h"

#endif  // ASCEND_EMA_ADAM_TWIN_KERNEL_OPERATOR_LIST_TENSOR_INTF_H
