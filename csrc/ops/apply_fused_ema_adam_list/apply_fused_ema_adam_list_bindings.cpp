/**
 * @file apply_fused_ema_adam_list_bindings.cpp
 * @brief ascend_ema_adam._C.ApplyFusedEmaAdamListLaunch: a repeatable prepared call for Python, on
 *        the CPU or (built with torch_npu) the NPU: FusedEmaAdamW's phase-2-only steps
 *        (optim/functional.py, _launch_prepared).
 */
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <memory>
#include <optional>
#include <vector>

#include "apply_fused_ema_adam_list_prepared.h"
#include "launch_bindings.h"
#include "op_bindings.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using namespace ops;  // the torch ops' shared part (csrc/common/)

namespace {

namespace py = pybind11;

using Tensors = std::vector<at::Tensor>;
using Scalar = NumberOrTensor;  // lr or the EMA decay

/** Phase 1 of every launch of one call, kept for its phase 2s: the op's arguments in CANN's order,
 *  lr and the decay each a number (written into a tensor it owns) or a one-element tensor
 *  (lr_tensor / ema_decay_tensor of the op). */
class ApplyFusedEmaAdamListLaunch : public PreparedLaunch<RepeatedApplyFusedEmaAdamListCall> {
public:
    ApplyFusedEmaAdamListLaunch(
        const Tensors& grads, const Tensors& vars, const Tensors& ms, const Tensors& vs,
        const Tensors& ss, const Tensors& maxVs, const Tensors& modelCopies, const at::Tensor& step,
        const std::optional<at::Tensor>& gradScale, const std::optional<at::Tensor>& foundInf,
        const Scalar& lr,
        const Scalar& emaDecay APPLY_FUSED_EMA_ADAM_LIST_NUMBER_ATTR_TABLE(AEA_ATTR_PARAM))
        : PreparedLaunch("ApplyFusedEmaAdamListLaunch.run")
    {
        const ScalarArg lrArg = ToScalarArg(lr);
        const ScalarArg decayArg = ToScalarArg(emaDecay);
        ApplyFusedEmaAdamListAttrs attrs;
        attrs.lr = lrArg.value;
        attrs.emaDecay = decayArg.value;
        APPLY_FUSED_EMA_ADAM_LIST_NUMBER_ATTR_TABLE(AEA_ATTR_SET)
        const ListCall call = ApplyFusedEmaAdamListCallOf(
            {grads, vars, ms, vs, ss, maxVs, modelCopies}, step,
            {&gradScale, &foundInf, &lrArg.tensor, &decayArg.tensor}, attrs);
        if (step.device().is_cpu()) {
            prepared_ =
                std::make_unique<PreparedApplyFusedEmaAdamListCall>(call, /*repeatable=*/true);
            return;
        }
#if AEA_WITH_NPU
        prepared_ = PrepareNpuApplyFusedEmaAdamListCall(call);
#else
        TORCH_CHECK(false, "ApplyFusedEmaAdamListLaunch: the step is on ", step.device(),
                    "; this build launches on the CPU device only (the NPU needs torch_npu)");
#endif
    }
};

void Bind(py::module_& mod)
{
    py::class_<ApplyFusedEmaAdamListLaunch> cls(
        mod, "ApplyFusedEmaAdamListLaunch",
        "apply_fused_ema_adam_list_ on the CPU device with phase 1 done once: "
        "run() is phase 2 only (CANN's repeatable executors).");
    cls.def(py::init<const Tensors&, const Tensors&, const Tensors&, const Tensors&,
                     const Tensors&, const Tensors&, const Tensors&, const at::Tensor&,
                     const std::optional<at::Tensor>&, const std::optional<at::Tensor>&,
                     const Scalar&, const Scalar&
                     APPLY_FUSED_EMA_ADAM_LIST_NUMBER_ATTR_TABLE(AEA_ATTR_TYPE)>(),
            py::arg("grads"), py::arg("vars"), py::arg("ms"), py::arg("vs"), py::arg("ss"),
            py::arg("max_vs"), py::arg("model_copies"), py::arg("step"), py::arg("grad_scale"),
            py::arg("found_inf"), py::arg("lr"),
            py::arg("ema_decay") APPLY_FUSED_EMA_ADAM_LIST_NUMBER_ATTR_TABLE(AEA_ATTR_ARG),
            "Validates the call as the op does and runs phase 1 of every launch (raises the "
            "op's errors); writes nothing.");
    DefPreparedLaunchMethods(cls, "ApplyFusedEmaAdamListLaunch",
                             "every tensor the launch holds (parameters, state, model copies)");
}

}  // namespace

AEA_OP_BINDINGS(apply_fused_ema_adam_list, Bind);

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
