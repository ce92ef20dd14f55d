/**
 * @file apply_fused_ema_adam8bit_list_npu.cpp
 * @brief NPU (PrivateUse1) kernel of ascend_ema_adam::apply_fused_ema_adam8bit_list_, built only
 *        with torch_npu: CANN's aclnnApplyFusedEmaAdam8bitList of our custom-op package (the OpDef
 *        of op_host/apply_fused_ema_adam8bit_list/cann/) through torch_npu's task queue, as the list
 *        op's NPU kernel (docs/ACLNN.md, "The NPU path"):
 *   - every list is a real aclTensorList; an absent ss (no EMA on this launch) or model_copies is a
 *     list of zero-element placeholders (fp32; the parameters' dtype), never an empty list
 *     (opbase keeps an empty list's last instances in a reused executor, "D2", and keys an empty
 *     list's kernel by another tensor's dtype);
 *   - at most 256 tensors per list: a call runs as launches of at most 256 entries; the whole call
 *     is validated first (the shared validation on the real shapes, the memory rules on the device
 *     addresses), then phase 1 of every launch, and only then are the phase 2s queued;
 *   - every entry reaches the kernel as 1-D views (the device's list decoder reads every shape of a
 *     list with its first tensor's rank): contiguous tensors as view(-1); a strided tensor is
 *     refused, naming it (a flat view of its storage would regroup the 256-element quantization
 *     blocks, which are runs of the entry's row-major order; the CPU device stages such views).
 * The maps' values are device memory and are not read here (the tiling sees shapes only); the
 * CPU path checks them. A call without elements launches nothing.
 */
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <array>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "aclnnop/aclnn_apply_fused_ema_adam8bit_list.h"
#include "apply_fused_ema_adam8bit_list_call.h"
#include "npu_op_api.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

using namespace ops;  // the torch ops' shared part (csrc/common/)

namespace {

constexpr const char* kPhase1 = "aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize";
constexpr const char* kPhase2 = "aclnnApplyFusedEmaAdam8bitList";

/** Entry i of every given list as 1-D views; raises, naming the tensor, for one that is not
 *  contiguous: the quantization blocks are runs of 256 elements in the entry's row-major order,
 *  which a flat view of another layout's storage would not keep. */
void FlattenEntry(const ApplyFusedEmaAdam8bitListCall& call, size_t i,
                  std::vector<at::Tensor> (&flat)[kApplyFusedEmaAdam8bitListTensorLists])
{
    for (int l = 0; l < kApplyFusedEmaAdam8bitListTensorLists; ++l) {
        if (call.lists[l].empty()) continue;
        const at::Tensor& t = call.lists[l][i];
        TORCH_CHECK(t.is_contiguous(), kApplyFusedEmaAdam8bitListOpName, ": ",
                    kApplyFusedEmaAdam8bitListTorchListNames[l], "[", i, "] has strides ",
                    t.strides(), " for shape ", t.sizes(),
                    ": on the NPU every "
                    "tensor of the lists is contiguous (the 8-bit state's blocks are runs of 256 "
                    "elements in row-major order); make it contiguous");
        flat[l].push_back(t.view(-1));
    }
}

/** An absent optional list (ss, model_copies) as one zero-element placeholder per entry of the
 *  launch, of the dtype it would have; empty for a given list. */
std::vector<at::Tensor> Placeholders(const ApplyFusedEmaAdam8bitListCall& call, int list,
                                     size_t entries)
{
    if ((list != kApplyFusedEmaAdam8bitListSs && list != kApplyFusedEmaAdam8bitListCopies) ||
        !call.lists[list].empty() || entries == 0 ||
        call.lists[kApplyFusedEmaAdam8bitListVars].empty()) {  // phase 1 refuses the lengths
        return {};
    }
    const at::Tensor& vars0 = call.lists[kApplyFusedEmaAdam8bitListVars][0];
    const at::TensorOptions options =
        list == kApplyFusedEmaAdam8bitListSs ? vars0.options().dtype(at::kFloat) : vars0.options();
    return std::vector<at::Tensor>(entries, at::empty({0}, options));
}

struct ExecutorDeleter {
    void operator()(aclOpExecutor* executor) const
    {
        static const auto destroy =
            NpuOpApiFunction<decltype(&aclDestroyAclOpExecutor)>("aclDestroyAclOpExecutor");
        destroy(executor);
    }
};

/** What one queued launch reads: its lists and tensors, alive until its phase 2 ran. */
struct NpuLaunch {
    std::array<NpuAclTensorListPtr, kApplyFusedEmaAdam8bitListTensorLists> lists;
    std::array<NpuAclTensorPtr, kCallTensors> tensors;
    std::vector<at::Tensor> keep;  // the flat views and placeholders
};

/** The NPU kernel's work: the whole call checked and flattened, phase 1 of every launch, then the
 *  phase 2s queued on the current stream. */
void RunNpu(const ApplyFusedEmaAdam8bitListCall& call)
{
    static const auto phase1 =
        NpuOpApiFunction<decltype(&aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize)>(kPhase1);
    static const auto phase2 = NpuOpApiFunction<decltype(&aclnnApplyFusedEmaAdam8bitList)>(kPhase2);
    const at::Tensor& step = *call.tensors[kCallStep];
    CheckApplyFusedEmaAdam8bitListCallDevice(call, step.device());
    CheckApplyFusedEmaAdam8bitListCallDescription(call);
    CheckApplyFusedEmaAdam8bitListCallMemory(call);
    std::vector<at::Tensor> flat[kApplyFusedEmaAdam8bitListTensorLists];
    int64_t elements = 0;
    for (size_t i = 0; i < call.Entries(); ++i) {
        FlattenEntry(call, i, flat);
        elements += call.lists[kApplyFusedEmaAdam8bitListGrads][i].numel();
    }
    if (elements == 0) return;  // nothing to update: no launch (the tiling has no core)
    const at::TensorOptions device = step.options();
    const aclrtStream stream = CurrentNpuAclStream();
    const std::vector<std::pair<size_t, size_t>> slices =
        ApplyFusedEmaAdam8bitListLaunches(call.Entries());
    struct Prepared {
        std::shared_ptr<NpuLaunch> args;
        std::unique_ptr<aclOpExecutor, ExecutorDeleter> executor;
        uint64_t workspaceSize = 0;
    };
    std::vector<Prepared> prepared;
    prepared.reserve(slices.size());
    for (const std::pair<size_t, size_t>& slice : slices) {
        Prepared& p = prepared.emplace_back();
        p.args = std::make_shared<NpuLaunch>();
        NpuLaunch& launch = *p.args;
        for (int l = 0; l < kApplyFusedEmaAdam8bitListTensorLists; ++l) {
            std::vector<at::Tensor> given =
                Placeholders(call, l, slice.second - slice.first);
            if (given.empty() && !flat[l].empty()) {
                given.assign(flat[l].begin() + static_cast<std::ptrdiff_t>(slice.first),
                             flat[l].begin() + static_cast<std::ptrdiff_t>(slice.second));
            }
            launch.lists[l] = ToNpuAclTensorList(given);
            launch.keep.insert(launch.keep.end(), given.begin(), given.end());
        }
        for (int t = 0; t < kCallTensors; ++t) {
            if (call.tensors[t] != nullptr) launch.tensors[t] = ToNpuAclTensor(*call.tensors[t]);
        }
        const auto list = [&](int l) { return launch.lists[l].get(); };
        const auto tensor = [&](int t) { return launch.tensors[t].get(); };
        aclOpExecutor* executor = nullptr;
        const aclnnStatus status = phase1(
            list(kApplyFusedEmaAdam8bitListGrads), list(kApplyFusedEmaAdam8bitListVars),
            list(kApplyFusedEmaAdam8bitListMs), list(kApplyFusedEmaAdam8bitListVs),
            list(kApplyFusedEmaAdam8bitListMAbsmaxes), list(kApplyFusedEmaAdam8bitListVAbsmaxes),
            list(kApplyFusedEmaAdam8bitListSs), list(kApplyFusedEmaAdam8bitListCopies),
            tensor(kCallQmapM), tensor(kCallQmapV), tensor(kCallStep), tensor(kCallGradScale),
            tensor(kCallFoundInf), tensor(kCallLr), tensor(kCallEmaDecay),
            APPLY_FUSED_EMA_ADAM8BIT_LIST_ATTR_VALUES(call.attrs), &p.workspaceSize, &executor);
        p.executor.reset(executor);
        // raises; the launches prepared so far are destroyed with `prepared`
        CheckNpuAclnnStatus(kPhase1, status,
                            ApplyFusedEmaAdam8bitListLaunchOfCall(slice, slices.size()));
    }
    for (Prepared& p : prepared) {
        EnqueueNpuPhase2(kPhase2, phase2, p.executor.release(), p.workspaceSize, device, stream,
                         p.args);
    }
}

}  // namespace

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

TORCH_LIBRARY_IMPL(ascend_ema_adam, PrivateUse1, m)
{
    namespace op8 = ascend_ema_adam::apply_fused_ema_adam8bit_list;
    m.impl("apply_fused_ema_adam8bit_list_", &op8::ApplyFusedEmaAdam8bitListKernel<op8::RunNpu>);
}
