/**
 * @file apply_fused_ema_adam8bit_list_check.h
 * @brief The validation of an ApplyFusedEmaAdam8bitList call that needs no tensor memory (list
 *        lengths, the dtype contract, shapes, the maps' and scalar tensors' shapes, the
 *        attributes), and of a map's values where its memory is readable
 *        (CheckApplyFusedEmaAdam8bitListMap). One function for every path that checks a call before
 *        it touches a tensor; on success it says what a launch needs: its dtypes and options.
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM8BIT_LIST_CHECK_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM8BIT_LIST_CHECK_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "apply_fused_ema_adam8bit_list_dtypes.h"
#include "ema_adam_attrs.h"
#include "list_validation.h"
#include "validation.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

using ascend_ema_adam::ListEntryArg;  // the list operators' entry view (list_validation.h)

/** The list arguments in signature order; the last two are optional. */
enum ApplyFusedEmaAdam8bitListArg : int {
    kApplyFusedEmaAdam8bitListGrads,
    kApplyFusedEmaAdam8bitListVars,
    kApplyFusedEmaAdam8bitListMs,
    kApplyFusedEmaAdam8bitListVs,
    kApplyFusedEmaAdam8bitListMAbsmaxes,
    kApplyFusedEmaAdam8bitListVAbsmaxes,
    kApplyFusedEmaAdam8bitListSs,
    kApplyFusedEmaAdam8bitListCopies,
    kApplyFusedEmaAdam8bitListTensorLists
};
/** Their names in the C API (messages name an entry as "msRef[5]"). */
constexpr const char* kApplyFusedEmaAdam8bitListNames[kApplyFusedEmaAdam8bitListTensorLists] = {
    "grads",        "varsRef",      "msRef", "vsRef",
    "mAbsmaxesRef", "vAbsmaxesRef", "ssRef", "modelCopiesRef"};

/** Which lists the operator updates in place (kAdam8bit* order). */
constexpr bool kApplyFusedEmaAdam8bitListUpdated[kApplyFusedEmaAdam8bitListTensorLists] = {
    false, true, true, true, true, true, true, true};

/** The OpDef's outputs, the in-place lists, in declaration order as input lists (the kernel
 *  entry's order; an executor's output irIndex o is this list): varsRef first (opbase keys an
 *  empty output list by the first output's dtype) and a list that is never empty last (an empty
 *  LAST output list leaves its place holder unfilled, and the runtime writes the argument buffer's
 *  address over the kernel's first argument: docs/ACLNN.md, "D1"), as the list OpDefs do. */
constexpr int kApplyFusedEmaAdam8bitListOutputs = kApplyFusedEmaAdam8bitListTensorLists - 1;
constexpr int kApplyFusedEmaAdam8bitListOutputOrder[kApplyFusedEmaAdam8bitListOutputs] = {
    kApplyFusedEmaAdam8bitListVars,     kApplyFusedEmaAdam8bitListSs,
    kApplyFusedEmaAdam8bitListCopies,   kApplyFusedEmaAdam8bitListMs,
    kApplyFusedEmaAdam8bitListVs,       kApplyFusedEmaAdam8bitListMAbsmaxes,
    kApplyFusedEmaAdam8bitListVAbsmaxes};

/** Most tensors one list of a launch may hold (CANN opbase's dynamic-list limit). */
constexpr size_t kApplyFusedEmaAdam8bitListMaxTensors = 256;
/** Most dimensions a tensor of the lists may have. */
constexpr size_t kApplyFusedEmaAdam8bitListMaxRank = 8;
/** aclDataType of the codes (ACL_UINT8). */
constexpr int32_t kApplyFusedEmaAdam8bitListCodeDtype = CannCodeOf(DataType::kUInt8);

/** A call as the checks see it. An optional list (ssRef: no EMA on this launch; modelCopiesRef)
 *  is absent when empty, or when it holds placeholders: one tensor per entry, every one without
 *  elements, of the dtype the list would have (fp32 for ssRef, varsRef's for modelCopiesRef; what
 *  the NPU path passes, docs/ACLNN.md "Absent lists"); null means empty. */
struct ApplyFusedEmaAdam8bitListArgs {
    const std::vector<ListEntryArg>* lists[kApplyFusedEmaAdam8bitListTensorLists] = {};
    const TensorArg* qmapM = nullptr;      // required: fp32 [256]
    const TensorArg* qmapV = nullptr;      // required: fp32 [256]
    const TensorArg* step = nullptr;       // required: int64, one element
    const TensorArg* gradScale = nullptr;  // null: absent
    const TensorArg* foundInf = nullptr;   // null: absent
    const TensorArg* lr = nullptr;         // null: absent (the lr attribute is used)
    const TensorArg* emaDecay = nullptr;   // null: absent (the emaDecay attribute is used)
    /** Lists of any length: a caller's check of a whole call it launches in slices of at most
     *  kApplyFusedEmaAdam8bitListMaxTensors entries (the torch op's), whose messages then name the
     *  call's own entries. */
    bool wholeCall = false;
};

/** The operator's attributes, its spec's (apply_fused_ema_adam8bit_list_signature.json, whose C++
 *  names these are): the EMA-Adam ones and its own. */
struct ApplyFusedEmaAdam8bitListAttrs : Attrs {
    bool maximize = false;  // negate the gradient first (gradient ascent)
};

/** What a launch does besides the update (the tiling's flags). */
struct ApplyFusedEmaAdam8bitListOptions {
    bool maximize = false;
    bool gradScale = false;
    bool foundInf = false;
    bool ema = true;
    bool lrTensor = false;
    bool emaDecayTensor = false;
};

/** "msRef[5]": how the messages name entry `index` of list `list`. */
std::string ApplyFusedEmaAdam8bitListEntryName(int list, size_t index);

/**
 * In this order, the first failure wins:
 *   lengths:    at most 256 tensors per list (any number with wholeCall); every list but an
 *               absent optional one holds grads' number of tensors;
 *   dtypes:     every tensor of a list has the list's dtype (its entry 0's); varsRef fp32, fp16
 *               or bf16; grads fp32, fp16 or bf16; msRef and vsRef uint8; mAbsmaxesRef,
 *               vAbsmaxesRef and ssRef fp32; modelCopiesRef fp16 or bf16, only with fp32
 *               varsRef; qmapM, qmapV fp32; step int64; the optional scalar tensors fp32;
 *   shapes:     grads[i] at most 8 dims; varsRef[i], msRef[i], vsRef[i], ssRef[i] and
 *               modelCopiesRef[i] grads[i]'s shape; mAbsmaxesRef[i] and vAbsmaxesRef[i]
 *               [ceil(numel / 256)]; qmapM and qmapV [256]; step and the optional scalar tensors
 *               exactly one element;
 *   attributes: CheckAttrs.
 * On success fills *dtypes (a row of APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS) and *options.
 */
Refusal CheckApplyFusedEmaAdam8bitList(const ApplyFusedEmaAdam8bitListArgs& args,
                                       const Attrs& attrs, bool maximize,
                                       ApplyFusedEmaAdam8bitListDtypes* dtypes,
                                       ApplyFusedEmaAdam8bitListOptions* options);

/** A map's values (where the caller can read them): 256 finite values within [-1, 1], sorted
 *  (non-decreasing). `name` is the argument's ("qmapM"). */
Refusal CheckApplyFusedEmaAdam8bitListMap(const float* map, const char* name);

/** The tiling key of a row of the contract (APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_*), 0 outside it. */
uint32_t ApplyFusedEmaAdam8bitListTilingKeyOf(const ApplyFusedEmaAdam8bitListDtypes& dtypes);

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM8BIT_LIST_CHECK_H
