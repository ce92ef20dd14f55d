/**
 * @file apply_fused_ema_adam_list_kernel.cpp
 * @brief CPU kernel of ascend_ema_adam::apply_fused_ema_adam_list_: the lists go through our
 *        aclnn list API (aclnnApplyFusedEmaAdamListV2: aclCreateTensorList, the two phases),
 *        every tensor with its real sizes, strides and storage offset, and a workspace from the
 *        torch allocator. The arguments are validated by aclnn's phase 1; this file only checks
 *        that every tensor is on the CPU and turns a failed phase into an error. An absent
 *        optional list or tensor is passed as NULL; so is an empty ss with non-empty vars (no EMA).
 */
#include <torch/library.h>

#include <type_traits>

#include "../apply_fused_ema_adam_list.h"
#include "aclnnop/aclnn_apply_fused_ema_adam_list.h"
#include "cpu_op_api.h"

namespace ascend_ema_adam::ops {

namespace {

constexpr const char* kOpName = "apply_fused_ema_adam_list_";

AclTensorListPtr ToAclOptionalList(const std::optional<at::TensorList>& tensors)
{
    return tensors ? ToAclTensorList(*tensors, true) : AclTensorListPtr();
}

AclTensorPtr ToAclOptional(const std::optional<at::Tensor>& t)
{
    return t ? ToAclTensor(*t, false) : AclTensorPtr();
}

void ApplyFusedEmaAdamListCpu(at::TensorList grads, at::TensorList vars, at::TensorList ms,
                              at::TensorList vs, at::TensorList ss, const at::Tensor& step,
                              double lr, double emaDecay, double beta1, double beta2, double eps,
                              int64_t mode, bool biasCorrection, double weightDecay,
                              std::optional<at::TensorList> maxVs,
                              std::optional<at::TensorList> modelCopies,
                              const std::optional<at::Tensor>& gradScale,
                              const std::optional<at::Tensor>& foundInf, bool maximize,
                              const std::optional<at::Tensor>& lrTensor,
                              const std::optional<at::Tensor>& emaDecayTensor)
{
    CheckAllOnCpu(kOpName, "grads", grads);
    CheckAllOnCpu(kOpName, "vars", vars);
    CheckAllOnCpu(kOpName, "ms", ms);
    CheckAllOnCpu(kOpName, "vs", vs);
    CheckAllOnCpu(kOpName, "ss", ss);
    if (maxVs) CheckAllOnCpu(kOpName, "max_vs", *maxVs);
    if (modelCopies) CheckAllOnCpu(kOpName, "model_copies", *modelCopies);
    CheckAllOnCpu(kOpName, {{"step", &step}});
    if (gradScale) CheckAllOnCpu(kOpName, {{"grad_scale", &*gradScale}});
    if (foundInf) CheckAllOnCpu(kOpName, {{"found_inf", &*foundInf}});
    if (lrTensor) CheckAllOnCpu(kOpName, {{"lr_tensor", &*lrTensor}});
    if (emaDecayTensor) CheckAllOnCpu(kOpName, {{"ema_decay_tensor", &*emaDecayTensor}});
    static const auto getWorkspaceSize =
        CpuOpApiFunction<decltype(&aclnnApplyFusedEmaAdamListV2GetWorkspaceSize)>(
            "aclnnApplyFusedEmaAdamListV2GetWorkspaceSize");
    static const auto run =
        CpuOpApiFunction<decltype(&aclnnApplyFusedEmaAdamListV2)>("aclnnApplyFusedEmaAdamListV2");
    const bool noEma = ss.empty() && !vars.empty();
    const AclTensorListPtr aclGrads = ToAclTensorList(grads, false);
    const AclTensorListPtr aclVars = ToAclTensorList(vars, true);
    const AclTensorListPtr aclMs = ToAclTensorList(ms, true);
    const AclTensorListPtr aclVs = ToAclTensorList(vs, true);
    const AclTensorListPtr aclSs = noEma ? AclTensorListPtr() : ToAclTensorList(ss, true);
    const AclTensorListPtr aclMaxVs = ToAclOptionalList(maxVs);
    const AclTensorListPtr aclCopies = ToAclOptionalList(modelCopies);
    const AclTensorPtr aclStep = ToAclTensor(step, false);
    const AclTensorPtr aclGradScale = ToAclOptional(gradScale);
    const AclTensorPtr aclFoundInf = ToAclOptional(foundInf);
    const AclTensorPtr aclLr = ToAclOptional(lrTensor);
    const AclTensorPtr aclEmaDecay = ToAclOptional(emaDecayTensor);
    RunAclnn("aclnnApplyFusedEmaAdamListV2", run,
             [&](uint64_t* workspaceSize, aclOpExecutor** executor) {
                 return getWorkspaceSize(aclGrads.get(), aclVars.get(), aclMs.get(), aclVs.get(),
                                         aclSs.get(), aclMaxVs.get(), aclCopies.get(),
                                         aclStep.get(), aclGradScale.get(), aclFoundInf.get(),
                                         aclLr.get(), aclEmaDecay.get(), lr, emaDecay, beta1,
                                         beta2, eps, mode, biasCorrection, weightDecay, maximize,
                                         workspaceSize, executor);
             });
}

static_assert(std::is_same_v<decltype(ApplyFusedEmaAdamListCpu),
                             decltype(ApplyFusedEmaAdamListInplace)>,
              "the CPU kernel must have the op's signature");

}  // namespace

}  // namespace ascend_ema_adam::ops

TORCH_LIBRARY_IMPL(ascend_ema_adam, CPU, m)
{
    m.impl("apply_fused_ema_adam_list_", &ascend_ema_adam::ops::ApplyFusedEmaAdamListCpu);
}
