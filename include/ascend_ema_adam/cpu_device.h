/**
 * @file cpu_device.h
 * @brief The CPU device's own extension of the ACL runtime in libascend_ema_adam_acl.so: not part of
 *        CANN's API (a program for an NPU never needs it).
 */
#ifndef ASCEND_EMA_ADAM_CPU_DEVICE_H
#define ASCEND_EMA_ADAM_CPU_DEVICE_H

#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Threads the CPU device's kernels use for later launches of this process: `threads` (at most the
 * CPUs the process may run on), or every such CPU with 0 (the default). ASCEND_EMA_ADAM_NUM_THREADS,
 * when set, overrides it. The torch op sets torch.get_num_threads() before each launch, so the
 * optimizer follows torch.set_num_threads.
 */
ACL_FUNC_VISIBILITY aclError aeaSetCpuThreads(uint32_t threads);

/**
 * The threads later launches use (`next`: ASCEND_EMA_ADAM_NUM_THREADS, else the count set above, else
 * every CPU) and the threads the last launch used (`last`; 0 before any; fewer than `next` for a
 * small launch). Fails with ACL_ERROR_INVALID_PARAM when the variable is not a positive integer.
 */
ACL_FUNC_VISIBILITY aclError aeaGetCpuThreads(uint32_t* next, uint32_t* last);

#ifdef __cplusplus
}
#endif

#endif  // ASCEND_EMA_ADAM_CPU_DEVICE_H
