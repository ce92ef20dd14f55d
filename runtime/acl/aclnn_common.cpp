/**
 * @file aclnn_common.cpp
 * @brief Rejections, tensor checks and phase 2 shared by every operator (see the header).
 */
#include "aclnn_common.h"

#include <memory>
#include <stdexcept>

#include "acl_view.h"
#include "native_runtime.h"

namespace ascend_ema_adam::acl {

aclnnStatus Reject(const char* api, aclnnStatus status, const std::string& message)
{
    AddErrorMessage(std::string(api) + ": " + message);
    return status;
}

aclnnStatus RejectIf(const char* api, const Refusal& refusal)
{
    return refusal.empty() ? ACLNN_SUCCESS : Reject(api, ACLNN_ERR_PARAM_INVALID, refusal);
}

aclnnStatus CheckNotNull(const char* api, const char* name, const void* pointer)
{
    return pointer != nullptr
               ? ACLNN_SUCCESS
               : Reject(api, ACLNN_ERR_PARAM_NULLPTR, std::string(name) + " is null");
}

aclnnStatus CheckLiveTensor(const char* api, const char* name, const aclTensor* t)
{
    if (!IsLiveTensor(t)) {
        return Reject(api, ACLNN_ERR_PARAM_INVALID,
                      std::string(name) +
                          " is not a live aclTensor (already destroyed, or not from "
                          "aclCreateTensor)");
    }
    const int64_t numel = Numel(t->viewDims);
    if (t->data == nullptr && numel > 0) {
        return Reject(api, ACLNN_ERR_PARAM_NULLPTR,
                      std::string(name) + " has " + std::to_string(numel) +
                          " elements but a null data address");
    }
    return ACLNN_SUCCESS;
}

bool IsNdEquivalent(aclFormat f)
{
    return f == ACL_FORMAT_ND || f == ACL_FORMAT_NCL || f == ACL_FORMAT_NCHW ||
           f == ACL_FORMAT_NCDHW;
}

aclnnStatus CheckNdFormat(const char* api, const char* name, const aclTensor* t)
{
    const aclFormat f = t->format;
    if (IsNdEquivalent(f)) {
        return ACLNN_SUCCESS;
    }
    return Reject(api, ACLNN_ERR_PARAM_INVALID,
                  std::string(name) + " has format " + FormatToString(f) +
                      ", expected ACL_FORMAT_ND (NCL, NCHW and NCDHW are accepted as ND)");
}

aclnnStatus CheckFormats(const char* api, const CallTensors& call)
{
    for (size_t i = 0; i < call.tensors.size(); ++i) {
        if (!IsNdEquivalent(call.tensors[i]->format)) {
            return CheckNdFormat(api, call.nameOf(i).c_str(), call.tensors[i]);
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus CheckMemory(const char* api, const CallTensors& call)
{
    for (size_t i = 0; i < call.tensors.size(); ++i) {
        const ViewLayout layout = LayoutOf(call.tensors[i]);
        if (call.updated[i] && !HasDistinctElements(layout)) {
            return Reject(api, ACLNN_ERR_PARAM_INVALID,
                          RepeatedElementsRefusal(call.nameOf(i).c_str(), layout));
        }
    }
    std::vector<MemorySpan> spans;
    spans.reserve(call.tensors.size());
    for (size_t i = 0; i < call.tensors.size(); ++i) {
        spans.push_back(SpanOf(call.tensors[i], i, call.updated[i]));
    }
    uint64_t first = 0;
    uint64_t second = 0;
    if (!FindUpdatedOverlap(&spans, &first, &second)) {
        return ACLNN_SUCCESS;
    }
    return Reject(api, ACLNN_ERR_PARAM_INVALID,
                  OverlapRefusal(call.nameOf(first).c_str(), call.nameOf(second).c_str()));
}

aclnnStatus SelectCpuKernel(const char* api, CpuKernel* kernel, uint32_t* threads)
{
    try {
        *kernel = SelectedCpuKernel();
        *threads = *kernel == CpuKernel::kNative ? NativeThreads() : 0;
    } catch (const std::invalid_argument& ex) {
        return Reject(api, ACLNN_ERR_RUNTIME_ERROR, ex.what());
    }
    return ACLNN_SUCCESS;
}

aclnnStatus RunPhase2(const AclnnOp& op, void* workspace, uint64_t workspaceSize,
                      aclOpExecutor* executor, aclrtStream stream)
{
    if (executor == nullptr) {
        return Reject(op.phase2, ACLNN_ERR_PARAM_NULLPTR, "executor is null");
    }
    if (!IsValidStream(stream)) {
        return Reject(op.phase2, ACLNN_ERR_PARAM_INVALID,
                      "stream is not a live stream (not from aclrtCreateStream, or destroyed)");
    }
    std::unique_ptr<aclOpExecutor> taken;
    const aclnnStatus status = TakeExecutor(op, executor, workspace, workspaceSize, &taken);
    if (status != ACLNN_SUCCESS) {
        return status;
    }
    std::shared_ptr<const aclOpExecutor> e(std::move(taken));
    if (e->empty) {
        return ACLNN_SUCCESS;  // nothing to queue
    }
    char* ws = static_cast<char*>(workspace);
    if (SubmitToStream(stream, [e, ws] { e->Execute(ws); }) != ACL_SUCCESS) {
        return Reject(op.phase2, ACLNN_ERR_RUNTIME_ERROR, "could not run on the stream");
    }
    return ACLNN_SUCCESS;
}

}  // namespace ascend_ema_adam::acl
