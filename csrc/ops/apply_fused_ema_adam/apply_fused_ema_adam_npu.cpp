/**
 * @file apply_fused_ema_adam_kernel.cpp
 * @brief NPU (PrivateUse1) kernel of ascend_ema_adam::apply_fused_ema_adam_, built only where
 *        torch_npu and CANN are installed. EXEC_NPU_CMD resolves aclnnApplyFusedEmaAdam (our
 *        custom-op package's, or CANN's built-in op of the same name) from the op-API libraries,
 *        converts the tensors to aclTensors (sizes, strides, storage offset), allocates the
 *        workspace from the NPU caching allocator and enqueues phase 2 on the current stream.
 */
#include <torch/library.h>

#include <type_traits>

#include "apply_fused_ema_adam.h"
#include "op_plugin/utils/op_api_common.h"

namespace ascend_ema_adam::ops {

namespace {

void ApplyFusedEmaAdamNpu(const at::Tensor& grad, const at::Tensor& var, const at::Tensor& m,
                          const at::Tensor& v, const at::Tensor& s, const at::Tensor& step,
                          double lr, double emaDecay, double beta1, double beta2, double eps,
                          int64_t mode, bool biasCorrection, double weightDecay)
{
    EXEC_NPU_CMD(aclnnApplyFusedEmaAdam, grad, var, m, v, s, step, lr, emaDecay, beta1, beta2,
                 eps, mode, biasCorrection, weightDecay);
}

static_assert(std::is_same_v<decltype(ApplyFusedEmaAdamNpu), decltype(ApplyFusedEmaAdamInplace)>,
              "the NPU kernel must have the op's signature");

}  // namespace

}  // namespace ascend_ema_adam::ops

TORCH_LIBRARY_IMPL(ascend_ema_adam, PrivateUse1, m)
{
    m.impl("apply_fused_ema_adam_", &ascend_ema_adam::ops::ApplyFusedEmaAdamNpu);
}
