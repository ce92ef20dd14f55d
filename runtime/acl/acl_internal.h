/**
 * @file acl_internal.h
 * @brief Shared state of the CPU ACL runtime (not installed): the aclTensor and aclOpExecutor
 *        objects, the thread-local error messages, the executor registry and stream submission.
 */
#ifndef ASCEND_EMA_ADAM_ACL_INTERNAL_H
#define ASCEND_EMA_ADAM_ACL_INTERNAL_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnn/opdev/op_errno.h"

/** A view of device (here: host) memory, as aclCreateTensor described it. */
struct aclTensor {
    std::vector<int64_t> viewDims;
    std::vector<int64_t> strides;      // elements, one per view dim
    int64_t offset = 0;                // elements from data to the view's first element
    aclDataType dataType = ACL_DT_UNDEFINED;
    aclFormat format = ACL_FORMAT_UNDEFINED;
    std::vector<int64_t> storageDims;
    void* data = nullptr;
};

/** Base of every operator's executor: what phase 2 checks before running it. */
struct aclOpExecutor {
    virtual ~aclOpExecutor() = default;
    uint64_t workspaceSize = 0;  // bytes phase 2 must be given
};

namespace ascend_ema_adam::acl {

/** Appends a message for the calling thread's next aclGetRecentErrMsg. */
void AddErrorMessage(std::string message);

/** Element count of a shape (the caller has checked it does not overflow). */
int64_t Numel(const std::vector<int64_t>& dims);
/** "[2,3,4]" */
std::string ShapeToString(const std::vector<int64_t>& dims);
/** "ACL_FLOAT16 (1)" */
std::string DataTypeToString(aclDataType dtype);
/** "ACL_FORMAT_NCHW (0)" */
std::string FormatToString(aclFormat format);

/** True while `tensor` was created by aclCreateTensor and not yet destroyed. */
bool IsLiveTensor(const aclTensor* tensor);

/** Keeps `executor` alive until phase 2 takes it or aclFinalize frees it. */
aclOpExecutor* RegisterExecutor(std::unique_ptr<aclOpExecutor> executor);
/**
 * Hands over a registered executor for phase 2 of `api`, after checking the workspace against
 * it; returns ACLNN_SUCCESS or the status to return (message set). A rejected workspace leaves
 * the executor registered, so the caller may retry with a correct one.
 */
aclnnStatus TakeExecutor(const char* api, aclOpExecutor* executor, const void* workspace,
                         uint64_t workspaceSize, std::unique_ptr<aclOpExecutor>* taken);

/** True if `stream` is the default stream (NULL) or a live stream from aclrtCreateStream. */
bool IsValidStream(aclrtStream stream);
/**
 * Queues `task` on `stream` behind everything queued before; NULL runs it now on the calling
 * thread. A task that throws makes the stream's next aclrtSynchronizeStream fail with its message.
 * Returns ACL_ERROR_INVALID_PARAM (message set) for a stream that is not live.
 */
aclError SubmitToStream(aclrtStream stream, std::function<void()> task);

}  // namespace ascend_ema_adam::acl

#endif  // ASCEND_EMA_ADAM_ACL_INTERNAL_H
