/**
 * @file acl_dtype.h
 * @brief The aclDataType of a torch dtype: one mapping for every kernel that describes tensors to
 *        an aclnn layer or to the shared validation (whose dtype codes are aclDataType's).
 */
#ifndef ASCEND_EMA_ADAM_OPS_ACL_DTYPE_H
#define ASCEND_EMA_ADAM_OPS_ACL_DTYPE_H

#include <c10/core/ScalarType.h>

#include "acl/acl_base.h"

namespace ascend_ema_adam::ops {

/** ACL_DT_UNDEFINED for a dtype ACL lacks: refused by the validation, naming the argument. */
inline aclDataType ToAclDataType(at::ScalarType type)
{
    switch (type) {
        case at::kFloat: return ACL_FLOAT;
        case at::kHalf: return ACL_FLOAT16;
        case at::kBFloat16: return ACL_BF16;
        case at::kLong: return ACL_INT64;
        case at::kDouble: return ACL_DOUBLE;
        case at::kInt: return ACL_INT32;
        case at::kByte: return ACL_UINT8;
        default: return ACL_DT_UNDEFINED;
    }
}

}  // namespace ascend_ema_adam::ops

#endif  // ASCEND_EMA_ADAM_OPS_ACL_DTYPE_H
