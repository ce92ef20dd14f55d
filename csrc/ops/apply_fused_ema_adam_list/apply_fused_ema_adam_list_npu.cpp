/**
 * @file apply_fused_ema_adam_list_kernel.cpp
 * @brief NPU (PrivateUse1) kernel of ascend_ema_adam::apply_fused_ema_adam_list_, built only
 *        where torch_npu and CANN are installed.
 *
 * What CANN's side requires, and how this file meets it (docs/ACLNN.md, "The NPU path"):
 *   - Every list reaches the generated aclnn as a real aclTensorList. That aclnn null-checks
 *     every DYNAMIC parameter (161001 for NULL), and op-plugin's EXEC_NPU_CMD turns an empty
 *     at::TensorList into NULL whenever TASK_QUEUE_ENABLE is not 2. So each list is passed as a
 *     DynamicList, whose conversion (found by argument-dependent lookup from EXEC_NPU_CMD's
 *     templates, for both of its task-queue paths) builds an empty list itself with
 *     aclCreateTensorList(nullptr, 0); EXEC_NPU_CMD destroys it after the launch. An absent
 *     max_vs / model_copies, and an empty ss (no EMA on this launch), are such empty lists.
 *   - At most 256 tensors per list (opbase refuses more): a call runs as launches of at most 256
 *     entries, after the whole call was validated (apply_fused_ema_adam_list_call.h), so a bad
 *     entry anywhere changes nothing. What the generated layer and our tiling check on a launch
 *     (nulls, OpDef dtype columns, formats, the shared validation) is implied by that whole-call
 *     validation, so no launch can be refused after an earlier one was queued.
 *   - The device's list decoder reads every shape of a list with the rank of its first tensor
 *     (twin/ascendc/twin_list_tensor.h), so every list holds 1-D views: a contiguous tensor as
 *     view(-1); the tensors of an entry that share one non-overlapping, dense layout as 1-D views
 *     of their memory in storage order (the same strides give the same element order); any other
 *     entry is refused, naming it. Flattening hides shape mismatches, hence the whole-call check
 *     on the real shapes first, with the CPU device's messages.
 *   - Overlaps: the tiling sees shapes, not addresses, so the memory rules of the CPU aclnn layer
 *     (updated tensors address distinct elements and share memory with no other tensor of the
 *     call) are checked here, on the device addresses, before anything is queued.
 * Absent optional tensors (grad_scale, found_inf, lr_tensor, ema_decay_tensor) are empty
 * optionals (op-plugin's ConvertType gives a null aclTensor*, which an OPTIONAL input accepts).
 * A call without elements launches nothing (the tiling would have no core to launch).
 * EXEC_NPU_CMD resolves aclnnApplyFusedEmaAdamListV2 (the OpDef ApplyFusedEmaAdamListV2,
 * op_host/<op>/cann/) from our custom-op package and enqueues it on the current stream.
 */
#include <torch/library.h>

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "apply_fused_ema_adam_list.h"
#include "apply_fused_ema_adam_list_call.h"
#include "op_plugin/utils/op_api_common.h"

namespace ascend_ema_adam::ops {

namespace {

constexpr const char* kOpName = "apply_fused_ema_adam_list_";

/**
 * A DYNAMIC list argument of EXEC_NPU_CMD: converted to an aclTensorList even when empty (op-
 * plugin's own conversion of an empty at::TensorList is NULL on its V1 task-queue path). The
 * overloads below are found by argument-dependent lookup from op-plugin's templates (ConvertType,
 * CopyTypeV2/ConvertTypeV2, the executor-cache key, the log) and are preferred there, as non-
 * templates, to op-plugin's catch-all templates.
 */
struct DynamicList {
    at::TensorList tensors;
};
/** What EXEC_NPU_CMD's V2 path (TASK_QUEUE_ENABLE=2) copies for the task queue. */
struct DynamicListCopy {
    std::vector<TensorStructPtr> tensors;
};

aclTensorList* EmptyAclTensorList()
{
    static const auto create = GET_OP_API_FUNC(aclCreateTensorList);
    TORCH_CHECK(create != nullptr, kOpName, ": aclCreateTensorList not found in ",
                GetOpApiLibName());
    return create(nullptr, 0);  // destroyed by EXEC_NPU_CMD's ReleaseConvertTypes
}

aclTensorList* ConvertType(const DynamicList& list)
{
    return list.tensors.empty() ? EmptyAclTensorList() : ::ConvertType(list.tensors);
}
void add_param_to_buf(const DynamicList& list)
{
    ::add_param_to_buf(list.tensors);  // the tensors, then the count (0 for an empty list)
}
DynamicListCopy CopyTypeV2(const DynamicList& list)
{
    return {::CopyTypeV2(list.tensors)};
}
aclTensorList* ConvertTypeV2(const DynamicListCopy& list)
{
    return list.tensors.empty() ? EmptyAclTensorList() : ::ConvertTypeV2(list.tensors);
}
void add_param_to_buf_v2(const DynamicListCopy& list)
{
    ::add_param_to_buf_v2(list.tensors);
}
std::string convert_info(const DynamicList& list)
{
    return op_plugin::logging::convert_info(list.tensors);
}
std::string convert_debug_info(const DynamicList& list)
{
    return op_plugin::logging::convert_debug_info(list.tensors);
}

// EXEC_NPU_CMD must see these conversions, not its catch-all templates (which would pass the
// struct itself to the aclnn function): on both task-queue paths a DynamicList becomes an
// aclTensorList*.
static_assert(std::is_same_v<decltype(::ConvertTypes(std::declval<DynamicList&>())),
                             std::tuple<aclTensorList*>>,
              "EXEC_NPU_CMD's V1 path must convert a DynamicList with ConvertType(DynamicList)");
static_assert(std::is_same_v<decltype(::ConvertTypesV2(::CopyTypesV2(std::declval<DynamicList&>()),
                                                       nullptr, nullptr)),
                             std::tuple<aclTensorList*, uint64_t*, aclOpExecutor**>>,
              "EXEC_NPU_CMD's V2 path must copy and convert a DynamicList with ours");

/** Entry i of every given list as 1-D views; raises, naming the entry, if it cannot be. */
void FlattenEntry(const ListCall& call, size_t i,
                  std::vector<at::Tensor> (&flat)[kApplyFusedEmaAdamLists])
{
    bool contiguous = true;
    bool oneDenseLayout = true;
    const at::Tensor& first = call.lists[kListGrads][i];
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        if (call.lists[l].empty()) continue;
        const at::Tensor& t = call.lists[l][i];
        contiguous = contiguous && t.is_contiguous();
        oneDenseLayout = oneDenseLayout && t.is_non_overlapping_and_dense() &&
                         t.strides() == first.strides();
    }
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        if (call.lists[l].empty()) continue;
        const at::Tensor& t = call.lists[l][i];
        if (contiguous) {
            flat[l].push_back(t.view(-1));
        } else {
            TORCH_CHECK(oneDenseLayout, kOpName, ": entry ", i, " cannot reach the NPU kernel as "
                        "1-D views: its tensors are not all contiguous and do not share one dense "
                        "layout (", kListTorchNames[l], "[", i, "] has strides ", t.strides(),
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
    ListCall launchArgs;  // not "call": EXEC_NPU_CMD calls op-plugin's call()
    launchArgs.lists = {grads, vars, ms, vs, ss, maxVs.value_or(at::TensorList()),
                  modelCopies.value_or(at::TensorList())};
    launchArgs.step = &step;
    launchArgs.scalars = {&gradScale, &foundInf, &lrTensor, &emaDecayTensor};
    launchArgs.attrs = AttrsInCannOrder(lr, emaDecay, beta1, beta2, eps, mode, biasCorrection,
                                  weightDecay);
    launchArgs.maximize = maximize;
    CheckListCallDevice(kOpName, launchArgs, launchArgs.step->device());
    CheckListCallDescription(kOpName, launchArgs);
    CheckListCallMemory(kOpName, launchArgs);
    std::vector<at::Tensor> flat[kApplyFusedEmaAdamLists];
    int64_t elements = 0;
    for (size_t i = 0; i < launchArgs.Entries(); ++i) {
        FlattenEntry(launchArgs, i, flat);
        elements += grads[i].numel();
    }
    if (elements == 0) {
        return;  // nothing to update: the tiling would have no core to launch
    }
    for (const std::pair<size_t, size_t>& launch : ListLaunches(launchArgs.Entries())) {
        const auto list = [&](int l) { return DynamicList{LaunchSlice(flat[l], launch)}; };
        const DynamicList flatGrads = list(kListGrads);
        const DynamicList flatVars = list(kListVars);
        const DynamicList flatMs = list(kListMs);
        const DynamicList flatVs = list(kListVs);
        const DynamicList flatSs = list(kListSs);
        const DynamicList flatMaxVs = list(kListMaxVs);
        const DynamicList flatCopies = list(kListCopies);
        EXEC_NPU_CMD(aclnnApplyFusedEmaAdamListV2, flatGrads, flatVars, flatMs, flatVs, flatSs,
                     flatMaxVs, flatCopies, step, gradScale, foundInf, lrTensor, emaDecayTensor,
                     lr, emaDecay, beta1, beta2, eps, mode, biasCorrection, weightDecay,
                     maximize);
    }
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
