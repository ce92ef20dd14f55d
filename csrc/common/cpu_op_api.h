/**
 * @file cpu_op_api.h
 * @brief What every op's CPU kernel shares: the CPU op-API library (our libascend_ema_adam_acl.so,
 *        next to the _C module), at::Tensor -> aclTensor, the device check, and the two aclnn
 *        phases on the CPU device with a workspace from the torch allocator.
 *
 * Our CPU ACL library exports CANN's symbol names (aclCreateTensor, ...). On an Ascend machine
 * CANN's libraries are loaded too, so the functions are looked up in our library's own handle
 * (dlopen + dlsym, as torch_npu's GetOpApiFuncAddr does for libopapi) instead of by global name.
 */
#ifndef ASCEND_EMA_ADAM_CPU_OP_API_H
#define ASCEND_EMA_ADAM_CPU_OP_API_H

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnn/opdev/op_errno.h"
#include "ascend_ema_adam/cpu_device.h"
#include "acl_dtype.h"

namespace ascend_ema_adam::ops {

/** Symbol `name` of the CPU op-API library (loaded once); raises if it is missing. */
void* CpuOpApiSymbol(const char* name);

/** A typed function of the CPU op-API library, looked up once per call site:
 *      static const auto phase1 =
 *          CpuOpApiFunction<decltype(&aclnnXGetWorkspaceSize)>("aclnnXGetWorkspaceSize"); */
template <class F>
F CpuOpApiFunction(const char* name)
{
    return reinterpret_cast<F>(CpuOpApiSymbol(name));
}

struct AclTensorDeleter {
    void operator()(aclTensor* t) const;
};
using AclTensorPtr = std::unique_ptr<aclTensor, AclTensorDeleter>;

/** A view of the tensor's storage: sizes, strides, storage offset, whole-storage dims. The
 *  handle may be null if aclCreateTensor refused it; phase 1 then names the argument. */
AclTensorPtr ToAclTensor(const at::Tensor& t, bool mutated);

struct AclTensorListDeleter {
    void operator()(aclTensorList* list) const;
};
using AclTensorListPtr = std::unique_ptr<aclTensorList, AclTensorListDeleter>;

/** The tensors as one aclTensorList, which owns their aclTensors (each as ToAclTensor makes it;
 *  an entry aclCreateTensor refused is null, and phase 1 names it). */
AclTensorListPtr ToAclTensorList(at::TensorList tensors, bool mutated);

/** Raises "<op>: <name> is on <device>, expected all tensors on cpu" for the first tensor that is
 *  not: the dispatcher routes a mixed call by its tensors' highest-priority device. */
void CheckAllOnCpu(const char* op,
                   std::initializer_list<std::pair<const char*, const at::Tensor*>> tensors);

/** Raises "call <api> failed (aclnn status <n>), detail: <aclGetRecentErrMsg()><where>" unless
 *  `status` is ACLNN_SUCCESS. */
void CheckAclnnStatus(const char* api, aclnnStatus status, const std::string& where = {});

/** Phase 2 of every aclnn operator. */
using AclnnPhase2 = aclnnStatus (*)(void* workspace, uint64_t workspaceSize,
                                    aclOpExecutor* executor, aclrtStream stream);

/**
 * Runs an aclnn operator on the CPU device: phase1(&workspaceSize, &executor) (the op's
 * GetWorkspaceSize), a workspace from the torch allocator, then phase 2 on the synchronous
 * default stream, so the update is done when this returns. A failed phase raises
 * "call <api> failed (aclnn status <n>), detail: <aclGetRecentErrMsg()>".
 */
void RunAclnn(const char* api, AclnnPhase2 phase2,
              const std::function<aclnnStatus(uint64_t*, aclOpExecutor**)>& phase1);

/**
 * Phase 2 of each launch of a prepared call, in order, on the CPU device's synchronous default
 * stream (done when this returns), with `workspace`. A launch holds `executor` (a unique_ptr,
 * null once a single-use phase 2 consumed it) and `workspaceSize`; a single-use (not
 * `repeatable`) executor goes to the phase 2 that succeeds with it, a refused one stays to be
 * destroyed. Raises "<op>: this prepared call already ran" for a consumed one, and
 * CheckAclnnStatus(phase2Name, ...) for a failure.
 */
template <class Launch>
void RunCpuPhase2s(std::vector<Launch>& launches, AclnnPhase2 phase2, const char* phase2Name,
                   const at::Tensor& workspace, bool repeatable, const char* op)
{
    for (Launch& launch : launches) {
        TORCH_CHECK(launch.executor != nullptr, op,
                    ": this prepared call already ran (it is not repeatable)");
        const aclnnStatus status =
            phase2(launch.workspaceSize > 0 ? workspace.data_ptr() : nullptr,
                   launch.workspaceSize, launch.executor.get(), nullptr);
        if (status == ACLNN_SUCCESS && !repeatable) {
            launch.executor.release();  // consumed by phase 2
        }
        CheckAclnnStatus(phase2Name, status);
    }
}

/** Hands torch's intra-op thread count (torch.get_num_threads()) to the CPU device for the next
 *  launches (aeaSetCpuThreads; ASCEND_EMA_ADAM_NUM_THREADS, when set, still wins), and has them
 *  run on torch's intra-op threads (aeaSetCpuParallelFor with at::parallel_for: the OpenMP threads
 *  torch's own ops leave spinning, which a second pool would fight for the cores), or on the
 *  device's own pool with ASCEND_EMA_ADAM_THREAD_POOL=own. Returns whose threads: "torch" or
 *  "own". */
const char* FollowTorchThreads();

struct CpuThreadsInUse {
    uint32_t next;     // threads the CPU kernels' next launch uses after FollowTorchThreads()
    uint32_t last;     // threads their last launch used
    const char* pool;  // "torch" or "own": whose threads the next launch runs on
};

/** The CPU device's threads (aeaGetCpuThreads), after FollowTorchThreads(). */
CpuThreadsInUse CpuThreads();

/** How the CPU device's 8-bit kernel looks codes up (aeaGetCpuAdam8bitPath). */
std::string CpuAdam8bitPath();

}  // namespace ascend_ema_adam::ops

#endif  // ASCEND_EMA_ADAM_CPU_OP_API_H
