/**
 * @file apply_fused_ema_adam8bit_list_bindings.cpp
 * @brief ascend_ema_adam._C.ApplyFusedEmaAdam8bitListLaunch: a repeatable prepared 8-bit list call
 *        for Python, on the CPU device: FusedEmaAdamW's phase-2-only steps of 8-bit state
 *        (optim/functional.py, _launch_prepared8bit).
 */
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <memory>
#include <optional>
#include <vector>

#include "apply_fused_ema_adam8bit_list_prepared.h"
#include "launch_bindings.h"
#include "op_bindings.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

using namespace ops;  // the torch ops' shared part (csrc/common/)

namespace {

namespace py = pybind11;

using Tensors = std::vector<at::Tensor>;
using Scalar = NumberOrTensor;  // lr or the EMA decay

/** Phase 1 of every launch of one call, kept for its phase 2s: the op's lists and tensors in
 *  CANN's order (an absent model_copies list empty; an empty ss: no EMA), lr and the decay each a
 *  number or a one-element tensor. */
class ApplyFusedEmaAdam8bitListLaunch
    : public PreparedLaunch<ApplyFusedEmaAdam8bitListPreparedCall> {
public:
    ApplyFusedEmaAdam8bitListLaunch(
        const Tensors& grads, const Tensors& vars, const Tensors& ms, const Tensors& vs,
        const Tensors& mAbsmaxes, const Tensors& vAbsmaxes, const Tensors& ss,
        const Tensors& modelCopies, const at::Tensor& qmapM, const at::Tensor& qmapV,
        const at::Tensor& step, const std::optional<at::Tensor>& gradScale,
        const std::optional<at::Tensor>& foundInf, const Scalar& lr,
        const Scalar& emaDecay APPLY_FUSED_EMA_ADAM8BIT_LIST_NUMBER_ATTR_TABLE(AEA_ATTR_PARAM))
        : PreparedLaunch("ApplyFusedEmaAdam8bitListLaunch.run")
    {
        const ScalarArg lrArg = ToScalarArg(lr);
        const ScalarArg decayArg = ToScalarArg(emaDecay);
        ApplyFusedEmaAdam8bitListCall call;
        call.lists = {grads, vars, ms, vs, mAbsmaxes, vAbsmaxes, ss, modelCopies};
        call.tensors = {&qmapM,
                        &qmapV,
                        &step,
                        gradScale ? &*gradScale : nullptr,
                        foundInf ? &*foundInf : nullptr,
                        lrArg.tensor ? &*lrArg.tensor : nullptr,
                        decayArg.tensor ? &*decayArg.tensor : nullptr};
        ApplyFusedEmaAdam8bitListAttrs& attrs = call.attrs;
        attrs.lr = lrArg.value;
        attrs.emaDecay = decayArg.value;
        APPLY_FUSED_EMA_ADAM8BIT_LIST_NUMBER_ATTR_TABLE(AEA_ATTR_SET)
        TORCH_CHECK(step.device().is_cpu(), "ApplyFusedEmaAdam8bitListLaunch: the step is on ",
                    step.device(),
                    "; prepared 8-bit launches run on the CPU device (elsewhere the op runs "
                    "both phases each step)");
        prepared_ =
            std::make_unique<ApplyFusedEmaAdam8bitListPreparedCall>(call, /*repeatable=*/true);
    }
};

void Bind(py::module_& mod)
{
    py::class_<ApplyFusedEmaAdam8bitListLaunch> cls(
        mod, "ApplyFusedEmaAdam8bitListLaunch",
        "apply_fused_ema_adam8bit_list_ on the CPU device with phase 1 done once: run() is "
        "phase 2 only (CANN's repeatable executors).");
    cls.def(py::init<const Tensors&, const Tensors&, const Tensors&, const Tensors&,
                     const Tensors&, const Tensors&, const Tensors&, const Tensors&,
                     const at::Tensor&, const at::Tensor&, const at::Tensor&,
                     const std::optional<at::Tensor>&, const std::optional<at::Tensor>&,
                     const Scalar&, const Scalar&
                     APPLY_FUSED_EMA_ADAM8BIT_LIST_NUMBER_ATTR_TABLE(AEA_ATTR_TYPE)>(),
            py::arg("grads"), py::arg("vars"), py::arg("ms"), py::arg("vs"),
            py::arg("m_absmaxes"), py::arg("v_absmaxes"), py::arg("ss"),
            py::arg("model_copies"), py::arg("qmap_m"), py::arg("qmap_v"), py::arg("step"),
            py::arg("grad_scale"), py::arg("found_inf"), py::arg("lr"),
            py::arg("ema_decay") APPLY_FUSED_EMA_ADAM8BIT_LIST_NUMBER_ATTR_TABLE(AEA_ATTR_ARG),
            "Validates the call as the op does and runs phase 1 of every launch (raises the "
            "op's errors); writes nothing.");
    DefPreparedLaunchMethods(cls, "ApplyFusedEmaAdam8bitListLaunch", "every tensor of the lists");
}

}  // namespace

AEA_OP_BINDINGS(apply_fused_ema_adam8bit_list, Bind);

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list
