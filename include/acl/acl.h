/**
 * @file acl.h
 * @brief Entry header of ascend-ema-adam's CPU ACL runtime, as CANN's acl/acl.h. CANN's also
 *        pulls in the op and model APIs (acl_op.h, acl_mdl.h), which the CPU device does not
 *        provide.
 */
#ifndef ASCEND_EMA_ADAM_ACL_H
#define ASCEND_EMA_ADAM_ACL_H

#include "acl_rt.h"

#endif /* ASCEND_EMA_ADAM_ACL_H */
