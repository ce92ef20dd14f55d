/**
 * @file apply_fused_ema_adam_npu.cpp
 * @brief NPU (PrivateUse1) kernel of ascend_ema_adam::apply_fused_ema_adam_, built only with
 *        torch_npu: aclnnAeaApplyFusedEmaAdam of our custom-op package (its op type is the
 *        package's own, so CANN's built-in ApplyFusedEmaAdam is never taken for it, nor replaced
 *        by it: docs/ACLNN.md "The op type"), phase 1 at the call (a refusal raises there),
 *        phase 2 on the current stream through torch_npu's task queue (npu_op_api.h). The tensors
 *        go with their real sizes, strides and storage offsets, as on the CPU.
 *
 * The memory rules of the CPU aclnn layer (every updated tensor addresses distinct elements and
 * shares no memory with another tensor of the call) are checked here, on the device addresses:
 * neither the generated aclnn nor opbase compares addresses, and the tiling never sees them, so
 * var passed as m would run on the device.
 */
#include <torch/library.h>

#include <array>
#include <memory>
#include <vector>

#include "aclnnop/aclnn_aea_apply_fused_ema_adam.h"
#include "apply_fused_ema_adam_check.h"
#include "apply_fused_ema_adam_signature.h"
#include "memory_layout.h"
#include "npu_op_api.h"

namespace ascend_ema_adam::apply_fused_ema_adam {

using namespace ops;  // the torch ops' shared part (csrc/common/)

namespace {

constexpr const char* kOpName = "apply_fused_ema_adam_";

/** The memory rules over the call's tensors (kGrad ... kStep order), named as the aclnn layer
 *  names them. */
void CheckCallMemory(const std::array<const at::Tensor*, kApplyFusedEmaAdamTensors>& tensors)
{
    constexpr const char* const* kNames = kApplyFusedEmaAdamTensorNames;
    std::vector<MemorySpan> spans;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const at::Tensor& t = *tensors[i];
        const bool updated = i >= kVar && i <= kS;
        const ViewLayout layout{t.sizes().data(), t.strides().data(), static_cast<size_t>(t.dim())};
        TORCH_CHECK(!updated || HasDistinctElements(layout), kOpName, ": ",
                    RepeatedElementsRefusal(kNames[i], layout));
        spans.push_back(SpanOfView(reinterpret_cast<uintptr_t>(t.data_ptr()), layout,
                                   static_cast<uint32_t>(t.itemsize()), i, updated));
    }
    uint64_t first = 0;
    uint64_t second = 0;
    TORCH_CHECK(!FindUpdatedOverlap(&spans, &first, &second), kOpName, ": ",
                OverlapRefusal(kNames[first], kNames[second]));
}

/** The op's parameters (APPLY_FUSED_EMA_ADAM_PARAMS, the spec's): grad, var, m, v, s, step and
 *  the attributes. */
void ApplyFusedEmaAdamNpu(APPLY_FUSED_EMA_ADAM_PARAMS)
{
    CheckAllOnOneNpu(kOpName, {{"var", &var}, {"grad", &grad}, {"m", &m}, {"v", &v}, {"s", &s},
                                {"step", &step}});
    CheckCallMemory({&grad, &var, &m, &v, &s, &step});
    static const auto getWorkspaceSize =
        NpuOpApiFunction<decltype(&aclnnAeaApplyFusedEmaAdamGetWorkspaceSize)>(
            "aclnnAeaApplyFusedEmaAdamGetWorkspaceSize");
    static const auto run =
        NpuOpApiFunction<decltype(&aclnnAeaApplyFusedEmaAdam)>("aclnnAeaApplyFusedEmaAdam");
    auto args = std::make_shared<NpuLaunchArgs>();
    aclTensor* aclGrad = args->Add(ToNpuAclTensor(grad));
    aclTensor* aclVar = args->Add(ToNpuAclTensor(var));
    aclTensor* aclM = args->Add(ToNpuAclTensor(m));
    aclTensor* aclV = args->Add(ToNpuAclTensor(v));
    aclTensor* aclS = args->Add(ToNpuAclTensor(s));
    aclTensor* aclStep = args->Add(ToNpuAclTensor(step));
    RunNpuAclnn(
        "aclnnAeaApplyFusedEmaAdam", run,
        [&](uint64_t* workspaceSize, aclOpExecutor** executor) {
            return getWorkspaceSize(aclGrad, aclVar, aclM, aclV, aclS, aclStep,
                                    APPLY_FUSED_EMA_ADAM_ATTRS, workspaceSize, executor);
        },
        args, var.options());
}

}  // namespace

}  // namespace ascend_ema_adam::apply_fused_ema_adam

TORCH_LIBRARY_IMPL(ascend_ema_adam, PrivateUse1, m)
{
    m.impl("apply_fused_ema_adam_", &ascend_ema_adam::apply_fused_ema_adam::ApplyFusedEmaAdamNpu);
}
