/**
 * @file aclnn_common.h
 * @brief What every operator's two-phase aclnn API on the CPU device is built from: rejections
 *        with their message, the C boundary, the checks that need the tensors themselves (null,
 *        live, format, memory layout), and phase 2 for any executor. An operator's aclnn file
 *        adds its phase 1 (validation order, tiling, its executor) on top.
 */
#ifndef ASCEND_EMA_ADAM_ACLNN_COMMON_H
#define ASCEND_EMA_ADAM_ACLNN_COMMON_H

#include <cstddef>
#include <exception>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "acl_internal.h"
#include "cpu_kernel.h"
#include "validation.h"

namespace ascend_ema_adam::acl {

/** Leaves "<api>: <message>" for the calling thread's aclGetRecentErrMsg; returns `status`. */
aclnnStatus Reject(const char* api, aclnnStatus status, const std::string& message);

/** A refusal of the shared validation (op_host) as ACLNN_ERR_PARAM_INVALID; success if empty. */
aclnnStatus RejectIf(const char* api, const Refusal& refusal);

/** No exception crosses the C boundary: bad_alloc and any other exception are ACLNN_ERR_INNER. */
template <class F>
aclnnStatus Guarded(const char* api, F&& body)
{
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return Reject(api, ACLNN_ERR_INNER, "out of host memory");
    } catch (const std::exception& ex) {
        return Reject(api, ACLNN_ERR_INNER, std::string("internal error: ") + ex.what());
    }
}

/** What the shared validation sees of a (live) tensor argument. */
inline TensorArg ArgOf(const char* name, const aclTensor* t)
{
    return {name, static_cast<int32_t>(t->dataType), t->viewDims};
}

// ---- checks that need the aclTensor (each returns ACLNN_SUCCESS or rejects with its message) --

/** `name` is not null (ACLNN_ERR_PARAM_NULLPTR). */
aclnnStatus CheckNotNull(const char* api, const char* name, const void* pointer);
/** A live handle from aclCreateTensor, and a data address if it has elements. */
aclnnStatus CheckLiveTensor(const char* api, const char* name, const aclTensor* t);
/** ND, or a layout tag torch_npu and MindSpeed put on ND tensors of rank 3/4/5 (NCL, NCHW,
 *  NCDHW): all describe row-major memory. Private NPU layouts (NC1HWC0, FRACTAL_NZ, ...) do not. */
bool IsNdEquivalent(aclFormat format);
/** IsNdEquivalent(t's format), or ACLNN_ERR_PARAM_INVALID naming the format. */
aclnnStatus CheckNdFormat(const char* api, const char* name, const aclTensor* t);

/**
 * The (live) tensor arguments of one call in argument order, each with whether the call writes
 * it, for the checks every operator shares: formats and memory. `nameOf(i)` names argument i
 * ("varRef", "varsRef[3]"); it is called only to word a refusal.
 */
struct CallTensors {
    std::vector<const aclTensor*> tensors;
    std::vector<bool> updated;
    std::function<std::string(size_t)> nameOf;

    void Add(const aclTensor* t, bool isUpdated)
    {
        tensors.push_back(t);
        updated.push_back(isUpdated);
    }
};

/** Every tensor's format, in order: CheckNdFormat. */
aclnnStatus CheckFormats(const char* api, const CallTensors& call);
/**
 * Updated tensors are written in place, so each must address distinct elements and none may
 * overlap another tensor of the call (the result would depend on the order of the writes);
 * read-only tensors may share memory with each other. One sorted sweep over every tensor's bytes
 * (memory_layout.h's FindUpdatedOverlap), whatever the operator.
 */
aclnnStatus CheckMemory(const char* api, const CallTensors& call);

/** The CPU device's kernel for this call (cpu_kernel.h) and, for the native one, its thread count
 *  (native_runtime.h): both read from the environment at every phase 1, so a process (or a test)
 *  can switch. A bad variable is ACLNN_ERR_RUNTIME_ERROR with its message. */
aclnnStatus SelectCpuKernel(const char* api, CpuKernel* kernel, uint32_t* threads);

// ---- phase 2 -----------------------------------------------------------------------------------

/**
 * Phase 2 of `op` for any operator: refuses a null executor (161001), a stream that is not live,
 * an executor that is not live or was created by another operator's phase 1, a workspace smaller
 * than phase 1 asked for (161002, the executor stays usable); then queues executor->Execute on the
 * stream and returns. An empty executor succeeds without queueing anything.
 */
aclnnStatus RunPhase2(const AclnnOp& op, void* workspace, uint64_t workspaceSize,
                      aclOpExecutor* executor, aclrtStream stream);

/** RunPhase2 behind the C boundary (Guarded): an operator's aclnn<Op> function. */
inline aclnnStatus GuardedPhase2(const AclnnOp& op, void* workspace, uint64_t workspaceSize,
                                 aclOpExecutor* executor, aclrtStream stream)
{
    return Guarded(op.phase2,
                   [&] { return RunPhase2(op, workspace, workspaceSize, executor, stream); });
}

}  // namespace ascend_ema_adam::acl

#endif  // ASCEND_EMA_ADAM_ACLNN_COMMON_H
