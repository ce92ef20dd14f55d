/**
 * @file apply_fused_ema_adam_list.cpp
 * @brief The torch op schemas of ApplyFusedEmaAdamList (namespace ascend_ema_adam) and their
 *        device-independent kernels: autograd handling of the in-place op (the library's shared
 *        kernel), and the functional variant.
 *
 *   apply_fused_ema_adam_list_  mutates every tensor of vars, ms, vs, ss (and max_vs,
 *                               model_copies) in place; returns nothing, so torch.compile
 *                               functionalizes it automatically (auto_functionalized).
 *   apply_fused_ema_adam_list   out-of-place variant: returns new lists (vars, ms, vs, ss, max_vs,
 *                               model_copies); an absent optional list gives an empty one.
 * An empty ss with non-empty vars means "no EMA on this launch" (the only length mismatch
 * allowed): ss is neither read nor written. lr_tensor / ema_decay_tensor: one-element fp32
 * tensors on the parameters' device that replace lr / ema_decay when given (read by the kernel
 * when it runs: no host sync, and torch.compile keeps one graph while their values change).
 * Kernels: apply_fused_ema_adam_list_cpu.cpp (our aclnn list API on the CPU device) and, built
 * with torch_npu, apply_fused_ema_adam_list_npu.cpp (CANN's op-API through torch_npu's task queue).
 * Fake (meta) kernels live in ascend_ema_adam/_meta_registrations.py.
 */
#include "apply_fused_ema_adam_list.h"

#include <torch/library.h>

#include <tuple>
#include <vector>

#include "op_library.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using namespace ops;  // the torch ops' shared part (csrc/ops/common/)

void ApplyFusedEmaAdamListInplace(at::TensorList grads, at::TensorList vars, at::TensorList ms,
                                  at::TensorList vs, at::TensorList ss, const at::Tensor& step,
                                  double lr, double emaDecay, double beta1, double beta2,
                                  double eps, int64_t mode, bool biasCorrection,
                                  double weightDecay, std::optional<at::TensorList> maxVs,
                                  std::optional<at::TensorList> modelCopies,
                                  const std::optional<at::Tensor>& gradScale,
                                  const std::optional<at::Tensor>& foundInf, bool maximize,
                                  const std::optional<at::Tensor>& lrTensor,
                                  const std::optional<at::Tensor>& emaDecayTensor)
{
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("ascend_ema_adam::apply_fused_ema_adam_list_", "")
                               .typed<decltype(ApplyFusedEmaAdamListInplace)>();
    op.call(grads, vars, ms, vs, ss, step, lr, emaDecay, beta1, beta2, eps, mode, biasCorrection,
            weightDecay, maxVs, modelCopies, gradScale, foundInf, maximize, lrTensor,
            emaDecayTensor);
}

namespace {

using Lists = std::vector<at::Tensor>;

Lists Clones(std::optional<at::TensorList> tensors)
{
    Lists out;
    if (tensors) {
        out.reserve(tensors->size());
        for (const at::Tensor& t : *tensors) out.push_back(t.clone());
    }
    return out;
}

std::tuple<Lists, Lists, Lists, Lists, Lists, Lists> ApplyFusedEmaAdamListFunctional(
    at::TensorList grads, at::TensorList vars, at::TensorList ms, at::TensorList vs,
    at::TensorList ss, const at::Tensor& step, double lr, double emaDecay, double beta1,
    double beta2, double eps, int64_t mode, bool biasCorrection, double weightDecay,
    std::optional<at::TensorList> maxVs, std::optional<at::TensorList> modelCopies,
    const std::optional<at::Tensor>& gradScale, const std::optional<at::Tensor>& foundInf,
    bool maximize, const std::optional<at::Tensor>& lrTensor,
    const std::optional<at::Tensor>& emaDecayTensor)
{
    Lists varsOut = Clones(vars), msOut = Clones(ms), vsOut = Clones(vs), ssOut = Clones(ss);
    Lists maxVsOut = Clones(maxVs), copiesOut = Clones(modelCopies);
    ApplyFusedEmaAdamListInplace(
        grads, varsOut, msOut, vsOut, ssOut, step, lr, emaDecay, beta1, beta2, eps, mode,
        biasCorrection, weightDecay, maxVs ? std::optional<at::TensorList>(maxVsOut) : std::nullopt,
        modelCopies ? std::optional<at::TensorList>(copiesOut) : std::nullopt, gradScale, foundInf,
        maximize, lrTensor, emaDecayTensor);
    return {varsOut, msOut, vsOut, ssOut, maxVsOut, copiesOut};
}

}  // namespace

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

TORCH_LIBRARY_FRAGMENT(ascend_ema_adam, m)
{
    ascend_ema_adam::ops::DefineInplaceUpdate(
        m,
        "apply_fused_ema_adam_list_(Tensor[] grads, Tensor(a!)[] vars, Tensor(b!)[] ms, "
        "Tensor(c!)[] vs, Tensor(d!)[] ss, Tensor step, float lr, float ema_decay, float beta1, "
        "float beta2, float eps, int adam_mode, bool bias_correction, float weight_decay, *, "
        "Tensor(e!)[]? max_vs=None, Tensor(f!)[]? model_copies=None, Tensor? grad_scale=None, "
        "Tensor? found_inf=None, bool maximize=False, Tensor? lr_tensor=None, "
        "Tensor? ema_decay_tensor=None) -> ()",
        "apply_fused_ema_adam_list(Tensor[] grads, Tensor[] vars, Tensor[] ms, Tensor[] vs, "
        "Tensor[] ss, Tensor step, float lr, float ema_decay, float beta1, float beta2, "
        "float eps, int adam_mode, bool bias_correction, float weight_decay, *, "
        "Tensor[]? max_vs=None, Tensor[]? model_copies=None, Tensor? grad_scale=None, "
        "Tensor? found_inf=None, bool maximize=False, Tensor? lr_tensor=None, "
        "Tensor? ema_decay_tensor=None) -> (Tensor[] vars, Tensor[] ms, "
        "Tensor[] vs, Tensor[] ss, Tensor[] max_vs, Tensor[] model_copies)",
        &ascend_ema_adam::apply_fused_ema_adam_list::ApplyFusedEmaAdamListFunctional);
}
