/**
 * @file acl_base.h
 * @brief Base ACL types and error codes (CANN's file split: acl_base_rt.h + error_codes/).
 */
#ifndef ASCEND_EMA_ADAM_ACL_BASE_H
#define ASCEND_EMA_ADAM_ACL_BASE_H

#include "acl/acl_base_rt.h"
#include "error_codes/rt_error_codes.h"

#endif /* ASCEND_EMA_ADAM_ACL_BASE_H */
