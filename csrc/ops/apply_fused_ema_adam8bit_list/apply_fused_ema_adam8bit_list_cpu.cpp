/**
 * @file apply_fused_ema_adam8bit_list_cpu.cpp
 * @brief CPU kernel of ascend_ema_adam::apply_fused_ema_adam8bit_list_: the lists go through our
 *        aclnn API (aclnnApplyFusedEmaAdam8bitList: aclCreateTensorList, the two phases), every
 *        tensor with its real sizes, strides and storage offset, and a workspace from the torch
 *        allocator.
 *
 * The aclnn contract is CANN's: every list is a real aclTensorList, an absent optional list (and
 * an empty ss with non-empty vars: no EMA) an empty one, at most 256 tensors per list. A call of
 * more entries runs as several launches (apply_fused_ema_adam8bit_list_call.h): first the whole
 * call is validated (the shared validation and the memory rules, with the call's own entry
 * indexes), then phase 1 of every launch (which also checks the maps' values), and only when all
 * succeeded the phase 2s; a failure anywhere writes nothing.
 */
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "aclnnop/aclnn_apply_fused_ema_adam8bit_list.h"
#include "apply_fused_ema_adam8bit_list_call.h"
#include "cpu_op_api.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

using namespace ops;  // the torch ops' shared part (csrc/ops/common/)

namespace {

constexpr const char* kPhase1 = "aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize";
constexpr const char* kPhase2 = "aclnnApplyFusedEmaAdam8bitList";

struct Api {
    decltype(&aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize) phase1;
    decltype(&aclnnApplyFusedEmaAdam8bitList) phase2;
    decltype(&aclDestroyAclOpExecutor) destroy;
};

const Api& CpuApi()
{
    static const Api api{
        CpuOpApiFunction<decltype(Api::phase1)>(kPhase1),
        CpuOpApiFunction<decltype(Api::phase2)>(kPhase2),
        CpuOpApiFunction<decltype(Api::destroy)>("aclDestroyAclOpExecutor")};
    return api;
}

struct ExecutorDeleter {
    void operator()(aclOpExecutor* executor) const { CpuApi().destroy(executor); }
};

/** One launch: its lists (alive until its phase 2 ran) and executor (null once phase 2 took it). */
struct Launch {
    std::array<AclTensorListPtr, kAdam8bitLists> lists;
    std::unique_ptr<aclOpExecutor, ExecutorDeleter> executor;
    uint64_t workspaceSize = 0;
};

/** The CPU kernel's work: phase 1 of every launch after the whole call is validated, then the
 *  phase 2s. */
void RunCpu(const Adam8bitCall& call)
{
    CheckAdam8bitCallDevice(call, at::Device(at::kCPU));
    const std::vector<std::pair<size_t, size_t>> slices = Adam8bitLaunches(call.Entries());
    if (slices.size() > 1) {  // the whole call, named with its own entry indexes
        CheckAdam8bitCallDescription(call);
        CheckAdam8bitCallMemory(call);
    }
    std::array<AclTensorPtr, kCallTensors> tensors;
    for (int t = 0; t < kCallTensors; ++t) {
        if (call.tensors[t] != nullptr) tensors[t] = ToAclTensor(*call.tensors[t], false);
    }
    const Api& api = CpuApi();
    FollowTorchThreads();  // phase 1 fixes the executors' thread count
    std::vector<Launch> launches;
    launches.reserve(slices.size());
    uint64_t maxWorkspace = 0;
    for (const std::pair<size_t, size_t>& slice : slices) {
        Launch& launch = launches.emplace_back();
        for (int l = 0; l < kAdam8bitLists; ++l) {
            // one launch sees the lists as given, for phase 1's messages
            const at::TensorList given = slices.size() > 1
                                             ? Adam8bitLaunchSlice(call.lists[l], slice)
                                             : call.lists[l];
            launch.lists[l] = ToAclTensorList(given, kAdam8bitUpdated[l]);
        }
        const auto list = [&](int l) { return launch.lists[l].get(); };
        const auto tensor = [&](int t) { return tensors[t].get(); };
        aclOpExecutor* executor = nullptr;
        const aclnnStatus status = api.phase1(
            list(kAdam8bitGrads), list(kAdam8bitVars), list(kAdam8bitMs), list(kAdam8bitVs),
            list(kAdam8bitMAbsmaxes), list(kAdam8bitVAbsmaxes), list(kAdam8bitSs),
            list(kAdam8bitCopies), tensor(kCallQmapM), tensor(kCallQmapV), tensor(kCallStep),
            tensor(kCallGradScale), tensor(kCallFoundInf), tensor(kCallLr), tensor(kCallEmaDecay),
            APPLY_FUSED_EMA_ADAM8BIT_LIST_ATTR_VALUES(call.attrs), &launch.workspaceSize,
            &executor);
        launch.executor.reset(executor);
        // raises; the launches prepared so far are destroyed with `launches`
        CheckAclnnStatus(kPhase1, status, Adam8bitLaunchOfCall(slice, slices.size()));
        maxWorkspace = std::max(maxWorkspace, launch.workspaceSize);
    }
    const at::Tensor workspace = at::empty({static_cast<int64_t>(maxWorkspace)},
                                           at::TensorOptions().dtype(at::kByte));
    for (Launch& launch : launches) {
        // The null stream is the CPU device's synchronous default stream: done when this returns.
        const aclnnStatus status =
            api.phase2(launch.workspaceSize > 0 ? workspace.data_ptr() : nullptr,
                       launch.workspaceSize, launch.executor.get(), nullptr);
        if (status == ACLNN_SUCCESS) {
            launch.executor.release();  // consumed by phase 2; a refused one is destroyed
        }
        CheckAclnnStatus(kPhase2, status);
    }
}

}  // namespace

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

TORCH_LIBRARY_IMPL(ascend_ema_adam, CPU, m)
{
    namespace op8 = ascend_ema_adam::apply_fused_ema_adam8bit_list;
    m.impl("apply_fused_ema_adam8bit_list_", &op8::Adam8bitKernel<op8::RunCpu>);
}
