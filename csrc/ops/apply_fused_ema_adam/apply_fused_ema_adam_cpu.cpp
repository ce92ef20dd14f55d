/**
 * @file apply_fused_ema_adam_cpu.cpp
 * @brief CPU kernel of ascend_ema_adam::apply_fused_ema_adam_: the tensors go through our aclnn
 *        two phases (the same host layer NPU users reach), with their real sizes, strides and
 *        storage offsets, and a workspace from the torch allocator. The arguments are validated
 *        by aclnn's phase 1; this file only checks that every tensor is on the CPU (a meta or NPU
 *        tensor among CPU tensors is not aclnn's to see) and turns a failed phase into an error.
 */
#include <torch/library.h>

#include "aclnnop/aclnn_apply_fused_ema_adam.h"
#include "apply_fused_ema_adam_signature.h"
#include "cpu_op_api.h"

namespace ascend_ema_adam::apply_fused_ema_adam {

using namespace ops;  // the torch ops' shared part (csrc/common/)

namespace {

/** The op's parameters (APPLY_FUSED_EMA_ADAM_PARAMS, the spec's): grad, var, m, v, s, step and
 *  the attributes. */
void ApplyFusedEmaAdamCpu(APPLY_FUSED_EMA_ADAM_PARAMS)
{
    CheckAllOnCpu("apply_fused_ema_adam_", {{"grad", &grad}, {"var", &var}, {"m", &m},
                                            {"v", &v}, {"s", &s}, {"step", &step}});
    static const auto getWorkspaceSize =
        CpuOpApiFunction<decltype(&aclnnApplyFusedEmaAdamGetWorkspaceSize)>(
            "aclnnApplyFusedEmaAdamGetWorkspaceSize");
    static const auto run =
        CpuOpApiFunction<decltype(&aclnnApplyFusedEmaAdam)>("aclnnApplyFusedEmaAdam");
    const AclTensorPtr aclGrad = ToAclTensor(grad, false);
    const AclTensorPtr aclVar = ToAclTensor(var, true);
    const AclTensorPtr aclM = ToAclTensor(m, true);
    const AclTensorPtr aclV = ToAclTensor(v, true);
    const AclTensorPtr aclS = ToAclTensor(s, true);
    const AclTensorPtr aclStep = ToAclTensor(step, false);
    RunAclnn("aclnnApplyFusedEmaAdam", run, [&](uint64_t* workspaceSize, aclOpExecutor** executor) {
        return getWorkspaceSize(aclGrad.get(), aclVar.get(), aclM.get(), aclV.get(), aclS.get(),
                                aclStep.get(), APPLY_FUSED_EMA_ADAM_ATTRS, workspaceSize,
                                executor);
    });
}

}  // namespace

}  // namespace ascend_ema_adam::apply_fused_ema_adam

TORCH_LIBRARY_IMPL(ascend_ema_adam, CPU, m)
{
    m.impl("apply_fused_ema_adam_", &ascend_ema_adam::apply_fused_ema_adam::ApplyFusedEmaAdamCpu);
}
