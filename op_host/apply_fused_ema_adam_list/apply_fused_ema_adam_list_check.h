/**
 * @file apply_fused_ema_adam_list_check.h
 * @brief The validation of an ApplyFusedEmaAdamList call that needs no tensor memory: list
 *        lengths, the dtype contract, shapes, the scalar tensors and the attributes. One function
 *        for both paths, as for the single op: the CPU aclnn layer (runtime/acl/, between its
 *        null/liveness and its format/memory checks) and the CANN tiling adapter (op_host/<op>/cann/).
 *        On success it says what the tiling needs: the launch's dtypes and options.
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_CHECK_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_CHECK_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "apply_fused_ema_adam_list_tiling.h"
#include "ema_adam_attrs.h"
#include "list_validation.h"
#include "validation.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using ascend_ema_adam::ListEntryArg;  // the list operators' entry view (list_validation.h)

/** The list arguments in signature order; the last two are optional. */
enum ApplyFusedEmaAdamListArg : int {
    kApplyFusedEmaAdamListGrads,
    kApplyFusedEmaAdamListVars,
    kApplyFusedEmaAdamListMs,
    kApplyFusedEmaAdamListVs,
    kApplyFusedEmaAdamListSs,
    kApplyFusedEmaAdamListMaxVs,
    kApplyFusedEmaAdamListCopies,
    kApplyFusedEmaAdamListTensorLists
};
/** Their names in the aclnn API, as CANN's op_build generates them from the OpDef (messages name
 *  an entry as "msRef[5]"). A DYNAMIC parameter is never "Optional" in CANN's naming: an absent
 *  list is an empty one. */
constexpr const char* kApplyFusedEmaAdamListNames[kApplyFusedEmaAdamListTensorLists] = {
    "grads", "varsRef", "msRef", "vsRef", "ssRef", "maxVsRef", "modelCopiesRef"};
/** The list arguments the kernel writes. */
constexpr bool kApplyFusedEmaAdamListUpdated[kApplyFusedEmaAdamListTensorLists] = {
    false, true, true, true, true, true, true};
/** The one-element tensor arguments. */
constexpr const char* kApplyFusedEmaAdamListStepName = "step";
constexpr const char* kApplyFusedEmaAdamListGradScaleName = "gradScaleOptional";
constexpr const char* kApplyFusedEmaAdamListFoundInfName = "foundInfOptional";
constexpr const char* kApplyFusedEmaAdamListLrName = "lrTensorOptional";
constexpr const char* kApplyFusedEmaAdamListEmaDecayName = "emaDecayTensorOptional";

/** Most tensors one list of a launch may hold: CANN's opbase refuses a longer dynamic list
 *  (NNOPBASE_DYNAMIC_PARAM_DEF_NUM, ACLNN_ERR_PARAM_INVALID), and the CPU aclnn layer keeps that
 *  contract. Callers with more entries launch once per slice of at most this many. */
constexpr size_t kApplyFusedEmaAdamListMaxTensors = 256;

/** Most dimensions a tensor of the lists may have (CANN's shapes hold at most 8). */
constexpr size_t kApplyFusedEmaAdamListMaxRank = 8;

/** A call as the checks see it. */
struct ApplyFusedEmaAdamListArgs {
    /** Entries of each list, in order. An optional list (max_vs, model copies; ss with
     *  emaOptional) is absent when empty (a dynamic input with no instance in CANN's tiling) or
     *  when it holds placeholders: one tensor per entry, every one without elements, of the dtype
     *  the list would have (the state's for ss and max_vs, the parameters' for model copies). The
     *  NPU path passes placeholders: opbase keeps stale state for an empty list in a reused
     *  executor, and numbers the instances of an empty list differently (docs/ACLNN.md, "Absent
     *  lists"). Null here means empty (the aclnn layers refuse a NULL list before this check). */
    const std::vector<ListEntryArg>* lists[kApplyFusedEmaAdamListTensorLists] = {};
    const TensorArg* step = nullptr;       // required
    const TensorArg* gradScale = nullptr;  // null: absent
    const TensorArg* foundInf = nullptr;   // null: absent
    const TensorArg* lr = nullptr;         // null: absent (the lr attribute is used)
    const TensorArg* emaDecay = nullptr;   // null: absent (the emaDecay attribute is used)
    /** The EMA list may be absent (empty: no EMA on this launch). False for the V1 API, whose
     *  ssRef must hold one tensor per entry. */
    bool emaOptional = false;
};

/** "msRef[5]": how the messages name entry `index` of list `list`. */
std::string ApplyFusedEmaAdamListEntryName(int list, size_t index);

/** List `list` holds values: it has tensors, and (an optional list) not only placeholders. */
bool ApplyFusedEmaAdamListPresent(const ApplyFusedEmaAdamListArgs& args, int list);

/**
 * In this order, the first failure wins:
 *   lengths:    every list that is not empty holds grads' number of tensors (ssRef may be
 *               absent with emaOptional: no EMA);
 *   dtypes:     every tensor of a list has the list's dtype (its entry 0's); then the contract on
 *               the entries 0: varsRef fp32/fp16/bf16 (P); msRef P or fp32 (S); vsRef, ssRef and
 *               maxVsRef S; modelCopiesRef fp16/bf16 (C), only with P fp32; grads P or fp32
 *               (C or fp32 with copies) (placeholders of another dtype hold values); step int64;
 *               gradScaleOptional, foundInfOptional, lrTensorOptional and
 *               emaDecayTensorOptional fp32;
 *   shapes:     grads[i] at most kApplyFusedEmaAdamListMaxRank dims; entry i of every list that
 * holds values grads[i]'s shape; step and the optional scalar tensors exactly one element;
 *   attributes: CheckAttrs.
 * On success fills *dtypes (a combination ComputeApplyFusedEmaAdamListTiling has a kernel for) and
 * *options (which optional inputs the launch has). The step's value (CheckStepValue) is checked by
 * callers that can read it.
 */
Refusal CheckApplyFusedEmaAdamList(const ApplyFusedEmaAdamListArgs& args,
                                   const ApplyFusedEmaAdamListAttrs& attrs,
                                   ApplyFusedEmaAdamListDtypes* dtypes,
                                   ApplyFusedEmaAdamListOptions* options);

/**
 * The NPU path's extra condition (the CANN tiling adapter's): every tensor of every list is 1-D.
 * The device's list decoder (dav-c220 ListTensorDesc) reads every shape descriptor of a list with
 * the rank of the list's first tensor, so a list of mixed ranks is misread on the device
 * (twin/ascendc/twin_list_tensor.h); the torch op and the aclnn layers pass flattened views.
 */
Refusal CheckApplyFusedEmaAdamListFlat(const ApplyFusedEmaAdamListArgs& args);

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_CHECK_H
