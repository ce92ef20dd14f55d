/**
 * @file rt_error_codes.h
 * @brief The runtime (107xxx) aclError codes the CPU runtime returns; CANN's names and values.
 */
#ifndef ASCEND_EMA_ADAM_ACL_RT_ERROR_CODES_H
#define ASCEND_EMA_ADAM_ACL_RT_ERROR_CODES_H

#define ACL_RT_SUCCESS 0
#define ACL_ERROR_RT_PARAM_INVALID 107000    /* invalid argument */
#define ACL_ERROR_RT_INVALID_DEVICEID 107001 /* no such device */
#define ACL_ERROR_RT_CONTEXT_NULL 107002     /* the calling thread has no current device */

#endif /* ASCEND_EMA_ADAM_ACL_RT_ERROR_CODES_H */
