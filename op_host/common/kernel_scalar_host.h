/**
 * @file kernel_scalar_host.h
 * @brief The kernels' scalar code (op_kernel/common/ema_adam_scalar.h) for host translation units: the
 *        same source, with __aicore__ defined away as the host build of any AscendC code does.
 */
#ifndef ASCEND_EMA_ADAM_KERNEL_SCALAR_HOST_H
#define ASCEND_EMA_ADAM_KERNEL_SCALAR_HOST_H

#ifndef __aicore__
#define __aicore__
#endif

#include "ema_adam_scalar.h"

#endif  // ASCEND_EMA_ADAM_KERNEL_SCALAR_HOST_H
