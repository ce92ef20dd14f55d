/**
 * @file acl_meta.h
 * @brief aclnn's tensor and tensor-list handles and status type (CANN's aclnn/acl_meta.h, the
 *        subset the CPU runtime implements). The ACLNN_* status codes live in aclnn/opdev/op_errno.h, as in CANN.
 */
#ifndef ASCEND_EMA_ADAM_ACLNN_ACL_META_H
#define ASCEND_EMA_ADAM_ACLNN_ACL_META_H

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aclOpExecutor aclOpExecutor;
typedef struct aclTensor aclTensor;
typedef struct aclTensorList aclTensorList;

typedef int32_t aclnnStatus;

/**
 * Describes a view of device memory: viewDims/stride (in elements, row-major meaning) and the
 * element offset of the view's first element from tensorData, whose storage holds
 * prod(storageDims) elements. Returns NULL (message in aclGetRecentErrMsg) if the description is
 * inconsistent: negative sizes, strides or offset, or a view reaching past its storage.
 */
ACL_FUNC_VISIBILITY aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum,
                                               aclDataType dataType, const int64_t *stride,
                                               int64_t offset, aclFormat format,
                                               const int64_t *storageDims, uint64_t storageDimsNum,
                                               void *tensorData);
/** Destroys the description (not the memory). */
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensor(const aclTensor *tensor);

/**
 * A list of `size` tensors, the argument type of the operators that take a tensor list (a
 * DYNAMIC input). The list takes ownership of the tensors: aclDestroyTensorList destroys them,
 * so a tensor belongs to at most one list and is not destroyed on its own. Entries may be NULL
 * (the operator's phase 1 refuses them, naming the entry). Returns NULL (message in
 * aclGetRecentErrMsg) if `value` is NULL while `size` is not 0.
 */
ACL_FUNC_VISIBILITY aclTensorList *aclCreateTensorList(const aclTensor *const *value,
                                                       uint64_t size);
/**
 * Destroys the list and every tensor it holds. Returns ACLNN_ERR_PARAM_NULLPTR for NULL,
 * ACLNN_ERR_PARAM_INVALID for a list that is not live, and ACLNN_ERR_PARAM_INVALID (after
 * freeing the list and its live tensors) if an entry was no longer a live tensor.
 */
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensorList(const aclTensorList *array);

/**
 * Destroys an executor that phase 1 returned and phase 2 has not consumed (a caller that
 * prepared several launches and gives up before running them all). Returns
 * ACLNN_ERR_INNER_NULLPTR for NULL and ACLNN_ERR_INNER for a pointer that is not a live executor
 * (already run, destroyed, freed by aclFinalize), as CANN's opbase does.
 */
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);

/**
 * Makes an executor from phase 1 repeatable: phase 2 no longer consumes it, so it runs any number
 * of times (each launch as the executor stands when it is queued) until aclDestroyAclOpExecutor.
 * Call it before the first phase 2. ACLNN_ERR_INNER_NULLPTR for NULL, ACLNN_ERR_INNER for a
 * pointer that is not a live executor.
 */
ACL_FUNC_VISIBILITY aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);

/**
 * Address updates of a (repeatable) executor, for memory that moved while its description (dtype,
 * shape, strides, offset, format) stayed: each sets the tensor's storage address to `addr`, then
 * the executor's. Nothing phase 1 checked is checked again; the new memory must be a valid place
 * for the same view under the operator's memory rules.
 *   aclSetInputTensorAddr / aclSetOutputTensorAddr: `index` counts the executor's input (output)
 *     tensors flat, every list's entries in order; aclSetTensorAddr the inputs', then the outputs'.
 *   aclSetDynamic{Input,Output,}TensorAddr: entry `relativeIndex` of `tensors`, the list given to
 *     phase 1 as input (output) `irIndex`; irIndex counts the operator's inputs (outputs) in OpDef
 *     order, an absent OPTIONAL input skipped; aclSetDynamicTensorAddr the inputs, then the outputs.
 * An in-place list is one input and one output over the same memory: updating either updates both.
 * ACLNN_ERR_INNER_NULLPTR for a NULL tensor, list entry or executor, ACLNN_ERR_PARAM_INVALID for an
 * index out of range or a NULL address of a tensor with elements, ACLNN_ERR_INNER for a pointer
 * that is not a live executor.
 */
ACL_FUNC_VISIBILITY aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index,
                                                      aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index,
                                                       aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index,
                                                 aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetDynamicInputTensorAddr(aclOpExecutor *executor,
                                                             size_t irIndex,
                                                             const size_t relativeIndex,
                                                             aclTensorList *tensors, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetDynamicOutputTensorAddr(aclOpExecutor *executor,
                                                              size_t irIndex,
                                                              const size_t relativeIndex,
                                                              aclTensorList *tensors, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                        const size_t relativeIndex,
                                                        aclTensorList *tensors, void *addr);
/** A tensor's storage address (aclCreateTensor's tensorData), set or read; no executor changes. */
ACL_FUNC_VISIBILITY aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr);

#ifdef __cplusplus
}
#endif

#endif /* ASCEND_EMA_ADAM_ACLNN_ACL_META_H */
