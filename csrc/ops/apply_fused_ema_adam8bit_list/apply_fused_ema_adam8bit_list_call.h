/**
 * @file apply_fused_ema_adam8bit_list_call.h
 * @brief What the CPU and NPU kernels of apply_fused_ema_adam8bit_list_ do alike before they
 *        launch: the call from the op's arguments (ApplyFusedEmaAdam8bitListKernel,
 *        ApplyFusedEmaAdam8bitListCallOf: the parameters its spec generates), the shared validation
 *        on the tensors' real shapes, the memory rules over the whole call, and the split into
 *        launches of at most kApplyFusedEmaAdam8bitListMaxTensors (256) entries, CANN's limit per
 *        dynamic list.
 *
 * A call of any size is validated as a whole before the first launch, so a bad entry anywhere
 * changes nothing; the launches then cover entries [0, 256), [256, 512), ... (each entry is
 * independent, so the result is bit-identical to one launch).
 */
#ifndef ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM8BIT_LIST_CALL_H
#define ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM8BIT_LIST_CALL_H

#include <ATen/core/Tensor.h>

#include <array>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apply_fused_ema_adam8bit_list_check.h"
#include "apply_fused_ema_adam8bit_list_signature.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

inline constexpr const char* kApplyFusedEmaAdam8bitListOpName = "apply_fused_ema_adam8bit_list_";

/** The schema names of the lists, in the shared validation's order (CANN's, the spec's). */
inline constexpr const char* kApplyFusedEmaAdam8bitListTorchListNames[] = {
    APPLY_FUSED_EMA_ADAM8BIT_LIST_LIST_NAMES};
static_assert(std::size(kApplyFusedEmaAdam8bitListTorchListNames) ==
              kApplyFusedEmaAdam8bitListTensorLists);

/** The single-tensor arguments, in CANN's order (the spec's). */
enum ApplyFusedEmaAdam8bitListCallTensor : int {
    kCallQmapM,
    kCallQmapV,
    kCallStep,
    kCallGradScale,
    kCallFoundInf,
    kCallLr,
    kCallEmaDecay,
    kCallTensors
};
/** Their schema names. */
inline constexpr const char* kApplyFusedEmaAdam8bitListTorchTensorNames[] = {
    APPLY_FUSED_EMA_ADAM8BIT_LIST_TENSOR_NAMES};
static_assert(std::size(kApplyFusedEmaAdam8bitListTorchTensorNames) == kCallTensors);

/** One call of the op: every list (an absent optional one is empty; an empty ss with non-empty
 *  vars is a launch without the EMA), the single tensors (null: an absent optional one), the
 *  attributes. Views of the op's arguments, valid while they are. */
struct ApplyFusedEmaAdam8bitListCall {
    std::array<at::TensorList, kApplyFusedEmaAdam8bitListTensorLists> lists;
    std::array<const at::Tensor*, kCallTensors> tensors = {};
    ApplyFusedEmaAdam8bitListAttrs attrs;

    size_t Entries() const { return lists[kApplyFusedEmaAdam8bitListGrads].size(); }
};

namespace detail {

inline at::TensorList ListOrEmpty(at::TensorList list) { return list; }
inline at::TensorList ListOrEmpty(const std::optional<at::TensorList>& list)
{
    return list.value_or(at::TensorList());
}
inline const at::Tensor* TensorOrNull(const at::Tensor& t) { return &t; }
inline const at::Tensor* TensorOrNull(const std::optional<at::Tensor>& t)
{
    return t.has_value() ? &*t : nullptr;
}

/** Every list of the call, in CANN's order. */
template <class... Lists>
std::array<at::TensorList, kApplyFusedEmaAdam8bitListTensorLists> ListsOf(const Lists&... lists)
{
    static_assert(sizeof...(Lists) == kApplyFusedEmaAdam8bitListTensorLists,
                  "the spec's lists are kAdam8bit*'s");
    return {ListOrEmpty(lists)...};
}

/** Every single tensor of the call, in CANN's order. */
template <class... Tensors>
std::array<const at::Tensor*, kCallTensors> TensorsOf(const Tensors&... tensors)
{
    static_assert(sizeof...(Tensors) == kCallTensors, "the spec's tensors are kCall*'s");
    return {TensorOrNull(tensors)...};
}

}  // namespace detail

/** The op's arguments (APPLY_FUSED_EMA_ADAM8BIT_LIST_PARAMS, its spec's in the schema's order) as
 *  an ApplyFusedEmaAdam8bitListCall. */
inline ApplyFusedEmaAdam8bitListCall ApplyFusedEmaAdam8bitListCallOf(
    APPLY_FUSED_EMA_ADAM8BIT_LIST_PARAMS)
{
    ApplyFusedEmaAdam8bitListCall call;
    call.lists = detail::ListsOf(APPLY_FUSED_EMA_ADAM8BIT_LIST_LISTS);
    call.tensors = detail::TensorsOf(APPLY_FUSED_EMA_ADAM8BIT_LIST_TENSORS);
    APPLY_FUSED_EMA_ADAM8BIT_LIST_SET_ATTRS(call.attrs);
    return call;
}

/** A device kernel of the op from `kRun`, what the device does with the call: the op's signature
 *  (APPLY_FUSED_EMA_ADAM8BIT_LIST_PARAMS), running kRun(ApplyFusedEmaAdam8bitListCallOf(its
 *  arguments)). */
template <void (*kRun)(const ApplyFusedEmaAdam8bitListCall&)>
void ApplyFusedEmaAdam8bitListKernel(APPLY_FUSED_EMA_ADAM8BIT_LIST_PARAMS)
{
    kRun(ApplyFusedEmaAdam8bitListCallOf(APPLY_FUSED_EMA_ADAM8BIT_LIST_ARGS));
}

/** Every tensor of the call on `device` (the dispatcher routes a call by its tensors'
 *  highest-priority device, so a CPU tensor among NPU tensors, or a meta one among CPU tensors,
 *  reaches a kernel): the CPU kernel passes the CPU, the NPU kernel step's device. */
void CheckApplyFusedEmaAdam8bitListCallDevice(const ApplyFusedEmaAdam8bitListCall& call,
                                              const at::Device& device);

/** The shared validation (op_host's CheckApplyFusedEmaAdam8bitList) on the call's real shapes and
 *  dtypes, with the aclnn layer's messages ("msRef[300] has dtype ..."); raises "<op>: <message>".
 *  Sets *options. */
void CheckApplyFusedEmaAdam8bitListCallDescription(
    const ApplyFusedEmaAdam8bitListCall& call, ApplyFusedEmaAdam8bitListOptions* options = nullptr);

/** The memory rules over the whole call (op_host/common/memory_layout.h): every updated tensor
 *  addresses distinct elements and shares no memory with any other tensor of the call. */
void CheckApplyFusedEmaAdam8bitListCallMemory(const ApplyFusedEmaAdam8bitListCall& call);

/** The launches of a call of `entries` entries: [begin, end) of at most
 *  kApplyFusedEmaAdam8bitListMaxTensors each, in order (one empty launch for a call without
 *  entries). */
std::vector<std::pair<size_t, size_t>> ApplyFusedEmaAdam8bitListLaunches(size_t entries);

/** The entries [begin, end) of a list; an absent (empty) list stays empty. */
inline at::TensorList ApplyFusedEmaAdam8bitListLaunchSlice(at::TensorList list,
                                                           std::pair<size_t, size_t> launch)
{
    return list.empty() ? list : list.slice(launch.first, launch.second - launch.first);
}

/** What a phase-1 refusal of one launch of several adds to the message (empty for a call of one
 *  launch, whose messages name the call's own entries). */
inline std::string ApplyFusedEmaAdam8bitListLaunchOfCall(std::pair<size_t, size_t> slice,
                                                         size_t launches)
{
    if (launches <= 1) return {};
    return " (in the launch of entries " + std::to_string(slice.first) + " to " +
           std::to_string(slice.second - 1) + ": entry i there is entry " +
           std::to_string(slice.first) + " + i of the call)";
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

#endif  // ASCEND_EMA_ADAM_OPS_APPLY_FUSED_EMA_ADAM8BIT_LIST_CALL_H
