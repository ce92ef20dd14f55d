/**
 * @file apply_fused_ema_adam_list_call.h
 * @brief What the CPU and NPU kernels of apply_fused_ema_adam_list_ do alike before they launch:
 *        the call from the op's arguments (ApplyFusedEmaAdamListKernel,
 *        ApplyFusedEmaAdamListCallOf: the parameters its spec generates), seen as the shared
 *        validation sees it, that validation on the tensors' real shapes, the memory rules over the
 *        whole call, and the split into launches of at most kApplyFusedEmaAdamListMaxTensors (256)
 *        entries, CANN's limit per dynamic list (opbase refuses more).
 *
 * A call of any size is validated as a whole before the first launch, so a bad entry anywhere
 * changes nothing; the launches then cover entries [0, 256), [256, 512), ... (each entry is
 * independent, so the result is bit-identical to one launch).
 */
#ifndef ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_CALL_H
#define ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_CALL_H

#include <ATen/core/Tensor.h>

#include <array>
#include <cstddef>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "apply_fused_ema_adam_list_check.h"
#include "apply_fused_ema_adam_list_signature.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

/** The schema names of the lists, in the shared validation's order (CANN's, the spec's). */
inline constexpr const char* kApplyFusedEmaAdamListTorchNames[] = {
    APPLY_FUSED_EMA_ADAM_LIST_LIST_NAMES};
static_assert(std::size(kApplyFusedEmaAdamListTorchNames) == kApplyFusedEmaAdamListTensorLists);

/** The optional one-element tensors, in CANN's order (after the step). */
enum ApplyFusedEmaAdamListCallScalar : int {
    kCallGradScale,
    kCallFoundInf,
    kCallLr,
    kCallEmaDecay,
    kCallScalars
};
/** The schema names of the step and the ApplyFusedEmaAdamListCallScalar tensors. */
inline constexpr const char* kApplyFusedEmaAdamListTorchTensorNames[] = {
    APPLY_FUSED_EMA_ADAM_LIST_TENSOR_NAMES};
static_assert(std::size(kApplyFusedEmaAdamListTorchTensorNames) == 1 + kCallScalars);

/** One call of the op: every list (an absent optional one is empty; an empty ss with non-empty
 *  vars is a launch without the EMA), step, the optional scalars, the attributes. */
struct ListCall {
    std::array<at::TensorList, kApplyFusedEmaAdamListTensorLists> lists;
    const at::Tensor* step = nullptr;
    std::array<const std::optional<at::Tensor>*, kCallScalars> scalars = {};
    ApplyFusedEmaAdamListAttrs attrs;

    size_t Entries() const { return lists[kApplyFusedEmaAdamListGrads].size(); }
    /** The flat input index of the step in a launch of `entries` entries, as opbase numbers the
     *  instances: after the lists' tensors, every list holding `entries` (the absent ones as
     *  placeholders, ApplyFusedEmaAdamListPlaceholders). The other one-element inputs follow the
     *  step, each in its slot whether given or not (ApplyFusedEmaAdamListScalarPosition). */
    static size_t FirstScalarInput(size_t entries)
    {
        return entries * kApplyFusedEmaAdamListTensorLists;
    }
};

/** The lists the torch op (V2) may leave absent: ss (no EMA on this launch), max_vs, model
 *  copies. */
inline constexpr bool kApplyFusedEmaAdamListOptional[kApplyFusedEmaAdamListTensorLists] = {
    false, false, false, false, true, true, true};

/**
 * An absent optional list as the kernels' aclnn receives it: one zero-element placeholder per
 * entry of [begin, end), of the dtype the list would have (the state's for ss and max_vs, the
 * parameters' for model copies), on the call's device. Never an empty list: opbase keeps the last
 * instances of an empty list in an executor it reuses (a stale max_vs or model copies), keys an
 * empty list's kernel by another tensor's dtype and numbers its instances differently
 * (docs/ACLNN.md, "Absent lists"); the shared validation takes placeholders as absent. Empty for
 * a given list.
 */
std::vector<at::Tensor> ApplyFusedEmaAdamListPlaceholders(const ListCall& call, int list,
                                                          std::pair<size_t, size_t> launch);

/** The flat input index of one-element input `scalar` (-1 the step, then
 *  ApplyFusedEmaAdamListCallScalar) relative to a launch's step: opbase gives every single-tensor
 *  input its slot, given or NULL. */
inline size_t ApplyFusedEmaAdamListScalarPosition(int scalar)
{
    return static_cast<size_t>(scalar + 1);
}

namespace detail {

inline at::TensorList ListOrEmpty(at::TensorList list)
{
    return list;
}

inline at::TensorList ListOrEmpty(const std::optional<at::TensorList>& list)
{
    return list.value_or(at::TensorList());
}

/** Every list of the call, in CANN's order. */
template <class... Lists>
std::array<at::TensorList, sizeof...(Lists)> ListsOf(const Lists&... lists)
{
    return {ListOrEmpty(lists)...};
}

/** The step, then the optional tensors, in CANN's order. */
template <class... Optional>
void SetTensors(ListCall* call, const at::Tensor& step, const Optional&... optional)
{
    static_assert(sizeof...(Optional) == kCallScalars,
                  "the spec's tensors are ApplyFusedEmaAdamListCallScalar's");
    call->step = &step;
    call->scalars = {&optional...};
}

}  // namespace detail

/** The op's arguments (APPLY_FUSED_EMA_ADAM_LIST_PARAMS, its spec's in the schema's order) as a
 *  ListCall: views of them (valid while they are); an absent optional list is empty. */
inline ListCall ApplyFusedEmaAdamListCallOf(APPLY_FUSED_EMA_ADAM_LIST_PARAMS)
{
    ListCall call;
    call.lists = detail::ListsOf(APPLY_FUSED_EMA_ADAM_LIST_LISTS);
    detail::SetTensors(&call, APPLY_FUSED_EMA_ADAM_LIST_TENSORS);
    APPLY_FUSED_EMA_ADAM_LIST_SET_ATTRS(call.attrs);
    return call;
}

/** The same from the lists, the optional one-element tensors (ApplyFusedEmaAdamListCallScalar) and
 *  the attributes, each in CANN's order (_C.ApplyFusedEmaAdamListLaunch's). */
inline ListCall ApplyFusedEmaAdamListCallOf(
    const std::array<at::TensorList, kApplyFusedEmaAdamListTensorLists>& lists,
    const at::Tensor& step,
    const std::array<const std::optional<at::Tensor>*, kCallScalars>& scalars,
    const ApplyFusedEmaAdamListAttrs& attrs)
{
    ListCall call;
    call.lists = lists;
    call.step = &step;
    call.scalars = scalars;
    call.attrs = attrs;
    return call;
}

/**
 * A device kernel of the op from `kRun`, what the device does with the call: the op's signature
 * (APPLY_FUSED_EMA_ADAM_LIST_PARAMS), running kRun(ApplyFusedEmaAdamListCallOf(its arguments)). The
 * CPU and NPU kernels register it.
 */
template <void (*kRun)(const ListCall&)>
void ApplyFusedEmaAdamListKernel(APPLY_FUSED_EMA_ADAM_LIST_PARAMS)
{
    kRun(ApplyFusedEmaAdamListCallOf(APPLY_FUSED_EMA_ADAM_LIST_ARGS));
}

/** The shared validation (op_host's CheckApplyFusedEmaAdamList) on the call's real shapes and
 *  dtypes, with the aclnn layer's messages ("msRef[300] has dtype ..."); raises
 *  "<op>: <message>". */
void CheckApplyFusedEmaAdamListCallDescription(const char* op, const ListCall& call);

/** Every tensor of the call on `device` (the dispatcher routes a call by its tensors'
 *  highest-priority device, so a CPU tensor among NPU tensors, or a meta one among CPU tensors,
 *  reaches a kernel): the CPU kernel passes the CPU, the NPU kernel step's device. */
void CheckApplyFusedEmaAdamListCallDevice(const char* op, const ListCall& call,
                                          const at::Device& device);

/** The memory rules over the whole call (op_host/common/memory_layout.h): every updated tensor addresses
 *  distinct elements and shares no memory with any other tensor of the call; raises
 *  "<op>: msRef[300] and vsRef[12] overlap in memory; ...". One sorted sweep, O(n log n). */
void CheckApplyFusedEmaAdamListCallMemory(const char* op, const ListCall& call);

/** The launches of a call of `entries` entries: [begin, end) of at most
 *  kApplyFusedEmaAdamListMaxTensors each, in order (one empty launch for a call without entries).
 */
std::vector<std::pair<size_t, size_t>> ApplyFusedEmaAdamListLaunches(size_t entries);

/** The entries [begin, end) of a list; an absent (empty) list stays empty. */
inline at::TensorList LaunchSlice(at::TensorList list, std::pair<size_t, size_t> launch)
{
    return list.empty() ? list : list.slice(launch.first, launch.second - launch.first);
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM_LIST_CALL_H
