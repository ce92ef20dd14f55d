/**
 * @file acl_internal.h
 * @brief Shared state of the CPU ACL runtime (not installed): the aclTensor and aclOpExecutor
 *        objects, the thread-local error messages, the executor registry and stream submission.
 *        What an operator's aclnn file builds on is in aclnn_common.h (phases, checks) and
 *        acl_view.h (views, overlap, staging).
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
#include "validation.h"

namespace ascend_ema_adam::acl {

/** An aclnn operator's identity: its op type and the names of its two phases (the messages). */
struct AclnnOp {
    const char* type;    // "ApplyFusedEmaAdam"
    const char* phase1;  // "aclnnApplyFusedEmaAdamGetWorkspaceSize"
    const char* phase2;  // "aclnnApplyFusedEmaAdam"
};

}  // namespace ascend_ema_adam::acl

/** A view of device (here: host) memory, as aclCreateTensor described it. The objects live in
 *  acl_tensor.cpp's pool and are recycled by aclDestroyTensor (see there). */
struct aclTensor {
    std::vector<int64_t> viewDims;
    std::vector<int64_t> strides;      // elements, one per view dim
    int64_t offset = 0;                // elements from data to the view's first element
    aclDataType dataType = ACL_DT_UNDEFINED;
    aclFormat format = ACL_FORMAT_UNDEFINED;
    std::vector<int64_t> storageDims;
    void* data = nullptr;
    bool live = false;                 // the pool's: handed out and not yet destroyed
};

/** A list of tensors, as aclCreateTensorList made it: it owns them (aclDestroyTensorList). */
struct aclTensorList {
    std::vector<const aclTensor*> tensors;  // entries may be null (phase 1 names them)
};

/**
 * Base of every operator's executor: phase 1 of `op` creates it, phase 2 of the same operator
 * takes it once (TakeExecutor refuses an executor of another operator) and queues Execute. A
 * repeatable executor (aclSetAclOpExecutorRepeatable) is not taken: every phase 2 queues a Copy,
 * so an address changed afterwards (aclSet*TensorAddr) reaches only later launches, as on the
 * device, where a launch's arguments are copied when it is queued. It lives until
 * aclDestroyAclOpExecutor or aclFinalize.
 */
struct aclOpExecutor {
    explicit aclOpExecutor(const ascend_ema_adam::acl::AclnnOp& creator) : op(creator) {}
    virtual ~aclOpExecutor() = default;
    aclOpExecutor& operator=(const aclOpExecutor&) = delete;

    /** Phase 2's work, on the stream: `workspace` holds at least workspaceSize bytes. */
    virtual void Execute(char* workspace) const = 0;
    /** What one launch of this executor runs, as it stands now. */
    virtual std::unique_ptr<aclOpExecutor> Copy() const = 0;
    /**
     * Points tensor `relativeIndex` of the executor's input (output: `input` false) `irIndex` at
     * `tensor`'s memory as it is now (its first element; a strided view keeps its staging). irIndex
     * counts the operator's inputs as opbase does: in OpDef order, an absent OPTIONAL input
     * skipped; a single tensor has relativeIndex 0. An in-place list is one input and one output
     * sharing its memory, so either updates both. False if there is no such tensor.
     */
    virtual bool SetAddress(bool input, size_t irIndex, size_t relativeIndex,
                            const aclTensor* tensor) = 0;

    const ascend_ema_adam::acl::AclnnOp& op;  // compared by address
    uint64_t workspaceSize = 0;               // bytes phase 2 must be given
    bool empty = false;                       // nothing to run: phase 2 queues nothing
    bool repeatable = false;                  // phase 2 leaves it registered
    // The number of tensors of each input (output) irIndex, as SetAddress counts them: 1 for a
    // single tensor, a list's length for a dynamic one (set by phase 1).
    std::vector<size_t> inputInstances;
    std::vector<size_t> outputInstances;

protected:
    aclOpExecutor(const aclOpExecutor&) = default;  // for Copy
};

namespace ascend_ema_adam::acl {

/** Appends a message for the calling thread's next aclGetRecentErrMsg. */
void AddErrorMessage(std::string message);

using ascend_ema_adam::Numel;          // op_host/common/validation.h
using ascend_ema_adam::ShapeToString;  // op_host/common/validation.h
/** "ACL_FLOAT16 (1)" */
std::string DataTypeToString(aclDataType dtype);
/** "ACL_FORMAT_NCHW (0)" */
std::string FormatToString(aclFormat format);

/** True while `tensor` was created by aclCreateTensor and not yet destroyed. */
bool IsLiveTensor(const aclTensor* tensor);
/** The index of the first of `n` tensors that is not live (null counts as not live), or n: one
 *  registry look-up for a whole list. */
size_t FirstDeadTensor(const aclTensor* const* tensors, size_t n);
/** True while `list` was created by aclCreateTensorList and not yet destroyed. */
bool IsLiveTensorList(const aclTensorList* list);

/** Keeps `executor` alive until phase 2 takes it or aclFinalize frees it. */
aclOpExecutor* RegisterExecutor(std::unique_ptr<aclOpExecutor> executor);
/** Runs `body` on the live executor `executor` under the registry's lock; false (nothing run) if
 *  it is not live. */
bool WithLiveExecutor(aclOpExecutor* executor, const std::function<void(aclOpExecutor&)>& body);
/**
 * Hands over a registered executor for phase 2 of `op`, after checking that `op`'s phase 1
 * created it and the workspace against it; returns ACLNN_SUCCESS or the status to return (message
 * set). An executor of another operator, or a rejected workspace, leaves the executor registered,
 * so the caller may retry with the right phase 2 or a correct workspace. A repeatable executor
 * stays registered: `taken` receives its Copy.
 */
aclnnStatus TakeExecutor(const AclnnOp& op, aclOpExecutor* executor, const void* workspace,
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
