/**
 * @file npu_op_api.h
 * @brief What every op's NPU kernel shares (built only with torch_npu): CANN's op-API functions
 *        as torch_npu finds them, at::Tensor -> aclTensor, and the two aclnn phases on the current
 *        NPU stream through torch_npu's task queue: cpu_op_api.h's counterpart.
 *
 * Only what the torch_npu wheels export (nm -D of libtorch_npu.so, x86_64 and aarch64) is used:
 * GetOpApiFuncAddr, GetAclStream / InitExecSubTheadCtx (the stream's resources on the thread
 * that enqueues / runs a launch), OpCommand::RunOpApiV2 (the task queue), getCurrentNPUStream.
 * op-plugin's EXEC_NPU_CMD is not: its inline code reaches about 27 internals libtorch_npu.so
 * does not export (g_hash_buf, OptionsManager::GetTaskQueueEnable, ...), so an extension using it
 * links and then fails to import. `make test`'s ABI check (tools/npu_abi_check/abi_check.py) holds
 * every NPU object to the exported set.
 *
 * Phase 1 runs on the calling thread in every TASK_QUEUE_ENABLE mode, so a refusal raises at the
 * call, before anything is queued; phase 2 runs where torch_npu runs launches (queued when the
 * task queue is on, 1 or 2; at once when 0), in stream order, with its workspace from torch_npu's
 * caching allocator on that stream, and the call's aclTensors alive until it has run.
 */
#ifndef ASCEND_EMA_ADAM_NPU_OP_API_H
#define ASCEND_EMA_ADAM_NPU_OP_API_H

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "aclnn/acl_meta.h"

namespace ascend_ema_adam::ops {

/** Function `name` of CANN's op-API libraries, found as torch_npu finds an aclnn function
 *  (GetOpApiFuncAddr: the packages of ASCEND_CUSTOM_OPP_PATH first, then the vendors of
 *  $ASCEND_OPP_PATH, then libopapi.so); raises naming it if none has it. */
void* NpuOpApiSymbol(const char* name);

/** A typed function of CANN's op-API libraries, looked up once per call site:
 *      static const auto phase1 =
 *          NpuOpApiFunction<decltype(&aclnnXGetWorkspaceSize)>("aclnnXGetWorkspaceSize"); */
template <class F>
F NpuOpApiFunction(const char* name)
{
    return reinterpret_cast<F>(NpuOpApiSymbol(name));
}

/** Raises "<op>: <name> is on <device>, expected all tensors on <device of the first>" for the
 *  first tensor that is not on the first one's device (the dispatcher routes a call with one NPU
 *  tensor among CPU tensors here). */
void CheckAllOnOneNpu(const char* op,
                      std::initializer_list<std::pair<const char*, const at::Tensor*>> tensors);

/** Raises "call <api> failed (aclnn status <n>), detail: <aclGetRecentErrMsg()><where>" unless
 *  `status` is 0. */
void CheckNpuAclnnStatus(const char* api, aclnnStatus status, const std::string& where = {});

struct NpuAclTensorDeleter {
    void operator()(aclTensor* t) const;
};
using NpuAclTensorPtr = std::unique_ptr<aclTensor, NpuAclTensorDeleter>;
struct NpuAclTensorListDeleter {
    void operator()(aclTensorList* list) const;
};
using NpuAclTensorListPtr = std::unique_ptr<aclTensorList, NpuAclTensorListDeleter>;

/** A view of the tensor's storage (sizes, strides, storage offset, whole-storage dims, ND), as
 *  aclCreateTensor of CANN's op-API library makes it; null for an absent optional tensor. */
NpuAclTensorPtr ToNpuAclTensor(const at::Tensor& t);
NpuAclTensorPtr ToNpuAclTensor(const std::optional<at::Tensor>& t);

/** The tensors as one aclTensorList (which owns their aclTensors). An empty list is a real empty
 *  aclTensorList, never NULL: the generated aclnn null-checks every DYNAMIC input. */
NpuAclTensorListPtr ToNpuAclTensorList(at::TensorList tensors);

/** What one launch's phase 2 reads after the call returns: its aclTensors and lists (alive until
 *  phase 2 has run) and any tensor it must keep alive. */
struct NpuLaunchArgs {
    std::vector<NpuAclTensorPtr> tensors;
    std::vector<NpuAclTensorListPtr> lists;
    std::vector<at::Tensor> keep;

    /** The handle, owned here. */
    aclTensor* Add(NpuAclTensorPtr t) { return tensors.emplace_back(std::move(t)).get(); }
    aclTensorList* Add(NpuAclTensorListPtr l) { return lists.emplace_back(std::move(l)).get(); }
};

/** Phase 2 of every aclnn operator. */
using NpuAclnnPhase2 = aclnnStatus (*)(void* workspace, uint64_t workspaceSize,
                                       aclOpExecutor* executor, aclrtStream stream);

/** The aclnn stream of the current NPU stream, with its resources bound to this thread
 *  (GetAclStream). */
aclrtStream CurrentNpuAclStream();

/**
 * Queues phase 2 of an aclnn call on `stream` (the current NPU stream, CurrentNpuAclStream) as
 * torch_npu queues its own (OpCommand::RunOpApiV2): `beforeLaunch` (may be empty) then
 * phase2(workspace, workspaceSize, executor, stream) on the thread that runs launches. The
 * workspace is taken from torch_npu's caching allocator on that stream now (stream-ordered: freed
 * once the launch was issued, reused only by later work on the stream). `args` lives until the
 * launch ran. A failure there (non-zero status) is reported by torch_npu as for its own launches.
 * `api`: the name torch_npu records (profiler, errors).
 */
void EnqueueNpuPhase2(const char* api, NpuAclnnPhase2 phase2, aclOpExecutor* executor,
                      uint64_t workspaceSize, const at::TensorOptions& device, aclrtStream stream,
                      std::shared_ptr<const void> args,
                      std::function<aclnnStatus()> beforeLaunch = {});

/**
 * Runs an aclnn operator once on the current NPU stream: phase1(&workspaceSize, &executor) now
 * (a refusal raises "call <api> failed ..." before anything is queued), then phase 2 queued
 * (EnqueueNpuPhase2) with `args` kept until it ran. `device`: any tensor of the call's options.
 */
void RunNpuAclnn(const char* api, NpuAclnnPhase2 phase2,
                 const std::function<aclnnStatus(uint64_t*, aclOpExecutor**)>& phase1,
                 std::shared_ptr<NpuLaunchArgs> args, const at::TensorOptions& device);

}  // namespace ascend_ema_adam::ops

#endif  // ASCEND_EMA_ADAM_NPU_OP_API_H
