/**
 * @file op_errno.h
 * @brief aclnn status codes (CANN ships them in aclnn/opdev/op_errno.h). Macros with plain
 *        literals, so a program that also defines them itself (as CANN's samples do) still compiles.
 */
#ifndef ASCEND_EMA_ADAM_ACLNN_OP_ERRNO_H
#define ASCEND_EMA_ADAM_ACLNN_OP_ERRNO_H

#define ACLNN_SUCCESS 0
#define ACLNN_ERR_PARAM_NULLPTR 161001           /* a required pointer argument is null */
#define ACLNN_ERR_PARAM_INVALID 161002           /* an argument breaks the operator contract */
#define ACLNN_ERR_RUNTIME_ERROR 361001           /* a runtime call failed */
#define ACLNN_ERR_INNER 561000                   /* internal error */
#define ACLNN_ERR_INNER_TILING_ERROR 561002      /* host tiling failed */
#define ACLNN_ERR_INNER_CREATE_EXECUTOR 561101   /* the executor could not be created */
#define ACLNN_ERR_INNER_NULLPTR 561103           /* an internal pointer argument is null */

#endif /* ASCEND_EMA_ADAM_ACLNN_OP_ERRNO_H */
