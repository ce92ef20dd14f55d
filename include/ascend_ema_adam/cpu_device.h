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

/** One thread's part of a launch (aeaCpuParallelFor): takes work from ctx until none is left. */
typedef void (*aeaCpuTask)(const void* ctx, uint32_t slot);

/**
 * A host's parallel-for: calls task(ctx, slot) once for every slot 0 .. threads - 1, on up to
 * `threads` of the host's threads at once (the calling thread among them; a thread may make several
 * calls, one after another), and returns, after every call has returned, the number of threads
 * that made them.
 */
typedef uint32_t (*aeaCpuParallelFor)(void* host, uint32_t threads, aeaCpuTask task,
                                      const void* ctx);

/**
 * Runs the CPU device's later launches on a host's threads: `run(host, ...)` (a program's OpenMP
 * or task pool, so that the process has one set of compute threads; the torch op sets torch's
 * at::parallel_for), or with a null `run` on the device's own pool (the default). A launch too
 * small to pay for waking other threads runs on the calling thread alone.
 */
ACL_FUNC_VISIBILITY aclError aeaSetCpuParallelFor(aeaCpuParallelFor run, void* host);

/**
 * How the CPU device's ApplyFusedEmaAdam8bitList kernel looks codes up on this CPU, as a launch
 * now would: `*path` set to a text valid until this thread's next call, such as "avx512, decode by
 * byte planes, encode by table (measured)". The encode is ASCEND_EMA_ADAM_8BIT_ENCODE's ("table",
 * "planes": the table by byte permutes, AVX-512 VBMI only, or "search") when set, else on AVX-512
 * the fastest, measured at the process's first 8-bit launch ("(not measured yet)" before it). Fails with ACL_ERROR_INVALID_PARAM when `path` is
 * null or an environment variable the kernel reads is invalid.
 */
ACL_FUNC_VISIBILITY aclError aeaGetCpuAdam8bitPath(const char** path);

#ifdef __cplusplus
}
#endif

#endif  // ASCEND_EMA_ADAM_CPU_DEVICE_H
