/**
 * @file acl_rt.h
 * @brief The ACL runtime subset of ascend-ema-adam's CPU device: process init, device, streams,
 *        memory and error messages. CANN's declarations, names and enum values.
 *
 * On the CPU device, "device memory" is host memory: aclrtMalloc returns 64-byte-aligned host
 * memory and every aclrtMemcpy kind is a plain copy. A stream is a FIFO served by its own worker
 * thread; aclrtSynchronizeStream waits until everything queued on it has run.
 */
#ifndef ASCEND_EMA_ADAM_ACL_RT_H
#define ASCEND_EMA_ADAM_ACL_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEFAULT,
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEM_MALLOC_HUGE_ONLY,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
    ACL_MEM_MALLOC_HUGE1G_ONLY,
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000
} aclrtMemMallocPolicy;

/** Initialises the runtime once per process (configPath may be NULL; it is not read). */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
/** Drains and destroys every stream, frees unconsumed executors and all aclrtMalloc memory. */
ACL_FUNC_VISIBILITY aclError aclFinalize();
/**
 * Returns and clears the calling thread's error messages (the newest first), or NULL if there
 * are none. The string stays valid until the thread's next call.
 */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg();

/** Makes device `deviceId` (the CPU device is 0) current for the calling thread. */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
/** Undoes one aclrtSetDevice; the last reset of a device drains and destroys its streams. */
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);

/** Creates a stream on the calling thread's current device. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
/** Waits for the stream's queued work, then destroys it. */
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
/** Blocks until everything queued on the stream has run (NULL: the default stream). */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);

ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                         aclrtMemcpyKind kind);

#ifdef __cplusplus
}
#endif

#endif /* ASCEND_EMA_ADAM_ACL_RT_H */
