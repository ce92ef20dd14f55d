/**
 * @file apply_fused_ema_adam_list_kernel.cpp
 * @brief NPU (PrivateUse1) kernel of ascend_ema_adam::apply_fused_ema_adam_list_, built only
 *        where torch_npu and CANN are installed.
 *
 * The device's list decoder reads every shape of a list with the rank of the list's first tensor
 * (twin/ascendc/twin_list_tensor.h), so every list reaches the kernel as 1-D views: a contiguous
 * tensor as view(-1); the tensors of an entry that share one non-overlapping, dense layout as
 * 1-D views of their memory in storage order (the same strides give the same element order);
 * any other entry is refused, naming it. Flattening hides shape mismatches, so the call is first
 * checked on its real shapes by the shared validation (op_host), with the CPU device's messages.
 * An absent optional list is passed as an empty list (op-plugin converts an empty TensorList to
 * an empty aclTensorList; CANN's launcher then gives the kernel an empty descriptor); so is an
 * empty ss (no EMA on this launch). Absent optional tensors (grad_scale, found_inf, lr_tensor,
 * ema_decay_tensor) are passed as empty optionals (op-plugin's ConvertType gives a null
 * aclTensor*). A call without elements launches nothing. EXEC_NPU_CMD resolves
 * aclnnApplyFusedEmaAdamListV2 (the OpDef ApplyFusedEmaAdamListV2, op_host/cann/) from our
 * custom-op package and enqueues it on the current stream.
 */
#include <torch/library.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../apply_fused_ema_adam_list.h"
#include "apply_fused_ema_adam_list_check.h"
#include "op_plugin/utils/op_api_common.h"

namespace ascend_ema_adam::ops {

namespace {

constexpr const char* kOpName = "apply_fused_ema_adam_list_";
constexpr const char* kTorchNames[kApplyFusedEmaAdamLists] = {
    "grads", "vars", "ms", "vs", "ss", "max_vs", "model_copies"};

/** The op's lists in the shared validation's order (an absent optional list is empty). */
using TorchLists = at::TensorList[kApplyFusedEmaAdamLists];

/** The optional one-element tensors, in signature order. */
constexpr int kOptionalScalars = 4;
using OptionalScalars = const std::optional<at::Tensor>* [kOptionalScalars];
constexpr const char* kTorchScalarNames[kOptionalScalars] = {"grad_scale", "found_inf",
                                                             "lr_tensor", "ema_decay_tensor"};
constexpr const char* kCheckScalarNames[kOptionalScalars] = {
    kListGradScaleName, kListFoundInfName, kListLrName, kListEmaDecayName};

/** Every tensor on step's NPU device (the dispatcher routes a call by its highest-priority
 *  device, so CPU tensors among NPU tensors reach this kernel). */
void CheckOneDevice(const TorchLists& lists, const at::Tensor& step,
                    const OptionalScalars& scalars)
{
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        for (size_t i = 0; i < lists[l].size(); ++i) {
            TORCH_CHECK(lists[l][i].device() == step.device(), kOpName, ": ", kTorchNames[l], "[",
                        i, "] is on ", lists[l][i].device(), ", step is on ", step.device(),
                        ": all tensors must be on one device");
        }
    }
    for (int s = 0; s < kOptionalScalars; ++s) {
        const std::optional<at::Tensor>& t = *scalars[s];
        TORCH_CHECK(!t.has_value() || t->device() == step.device(), kOpName, ": ",
                    kTorchScalarNames[s], " is on ", t->device(), ", step is on ", step.device(),
                    ": all tensors must be on one device");
    }
}

/** The shared validation on the real shapes and dtypes (the NPU kernel sees flattened ones). */
void CheckDescription(const TorchLists& lists, const at::Tensor& step,
                      const OptionalScalars& scalars, const Attrs& attrs, bool maximize)
{
    std::vector<std::vector<int64_t>> shapes[kApplyFusedEmaAdamLists];
    std::vector<ListEntryArg> entries[kApplyFusedEmaAdamLists];
    ApplyFusedEmaAdamListArgs args;
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        shapes[l].reserve(lists[l].size());
        for (const at::Tensor& t : lists[l]) {
            shapes[l].emplace_back(t.sizes().begin(), t.sizes().end());
            entries[l].push_back({static_cast<int32_t>(ConvertType(t.scalar_type())),
                                  &shapes[l].back()});
        }
        args.lists[l] = &entries[l];
    }
    const std::vector<int64_t> stepShape(step.sizes().begin(), step.sizes().end());
    const TensorArg stepArg{kListStepName, static_cast<int32_t>(ConvertType(step.scalar_type())),
                            stepShape};
    args.step = &stepArg;
    std::vector<int64_t> scalarShapes[kOptionalScalars];
    std::optional<TensorArg> scalarArgs[kOptionalScalars];
    for (int s = 0; s < kOptionalScalars; ++s) {
        if (!scalars[s]->has_value()) continue;
        const at::Tensor& t = **scalars[s];
        scalarShapes[s].assign(t.sizes().begin(), t.sizes().end());
        scalarArgs[s].emplace(
            TensorArg{kCheckScalarNames[s], static_cast<int32_t>(ConvertType(t.scalar_type())),
                      scalarShapes[s]});
    }
    const auto given = [&](int s) { return scalarArgs[s] ? &*scalarArgs[s] : nullptr; };
    args.gradScale = given(0);
    args.foundInf = given(1);
    args.lr = given(2);
    args.emaDecay = given(3);
    args.emaOptional = true;  // an empty ss: no EMA on this launch
    ListDtypes dtypes;
    ListOptions options;
    const Refusal refusal = CheckApplyFusedEmaAdamList(args, attrs, maximize, &dtypes, &options);
    TORCH_CHECK(refusal.empty(), kOpName, ": ", refusal);
}

/** Entry i of every given list as 1-D views; raises, naming the entry, if it cannot be. */
void FlattenEntry(const TorchLists& lists, size_t i, std::vector<at::Tensor> (&flat)[kApplyFusedEmaAdamLists])
{
    bool contiguous = true;
    bool oneDenseLayout = true;
    const at::Tensor& first = lists[kListGrads][i];
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        if (lists[l].empty()) continue;
        const at::Tensor& t = lists[l][i];
        contiguous = contiguous && t.is_contiguous();
        oneDenseLayout = oneDenseLayout && t.is_non_overlapping_and_dense() &&
                         t.strides() == first.strides();
    }
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        if (lists[l].empty()) continue;
        const at::Tensor& t = lists[l][i];
        if (contiguous) {
            flat[l].push_back(t.view(-1));
        } else {
            TORCH_CHECK(oneDenseLayout, kOpName, ": entry ", i, " cannot reach the NPU kernel as "
                        "1-D views: its tensors are not all contiguous and do not share one dense "
                        "layout (", kTorchNames[l], "[", i, "] has strides ", t.strides(),
                        ", grads[", i, "] ", first.strides(),
                        "); make the entry's tensors contiguous");
            flat[l].push_back(t.as_strided({t.numel()}, {1}, t.storage_offset()));
        }
    }
}

void ApplyFusedEmaAdamListNpu(at::TensorList grads, at::TensorList vars, at::TensorList ms,
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
    const TorchLists lists = {grads, vars, ms, vs, ss, maxVs.value_or(at::TensorList()),
                              modelCopies.value_or(at::TensorList())};
    const Attrs attrs = AttrsInCannOrder(lr, emaDecay, beta1, beta2, eps, mode, biasCorrection,
                                         weightDecay);
    const OptionalScalars scalars = {&gradScale, &foundInf, &lrTensor, &emaDecayTensor};
    CheckOneDevice(lists, step, scalars);
    CheckDescription(lists, step, scalars, attrs, maximize);
    std::vector<at::Tensor> flat[kApplyFusedEmaAdamLists];
    int64_t elements = 0;
    for (size_t i = 0; i < grads.size(); ++i) {
        FlattenEntry(lists, i, flat);
        elements += grads[i].numel();
    }
    if (elements == 0) {
        return;  // nothing to update: the tiling would have no core to launch
    }
    const at::TensorList flatGrads(flat[kListGrads]);
    const at::TensorList flatVars(flat[kListVars]);
    const at::TensorList flatMs(flat[kListMs]);
    const at::TensorList flatVs(flat[kListVs]);
    const at::TensorList flatSs(flat[kListSs]);
    const at::TensorList flatMaxVs(flat[kListMaxVs]);
    const at::TensorList flatCopies(flat[kListCopies]);
    EXEC_NPU_CMD(aclnnApplyFusedEmaAdamListV2, flatGrads, flatVars, flatMs, flatVs, flatSs,
                 flatMaxVs, flatCopies, step, gradScale, foundInf, lrTensor, emaDecayTensor, lr,
                 emaDecay, beta1, beta2, eps, mode, biasCorrection, weightDecay, maximize);
}

static_assert(std::is_same_v<decltype(ApplyFusedEmaAdamListNpu),
                             decltype(ApplyFusedEmaAdamListInplace)>,
              "the NPU kernel must have the op's signature");

}  // namespace

}  // namespace ascend_ema_adam::ops

TORCH_LIBRARY_IMPL(ascend_ema_adam, PrivateUse1, m)
{
    m.impl("apply_fused_ema_adam_list_", &ascend_ema_adam::ops::ApplyFusedEmaAdamListNpu);
}
