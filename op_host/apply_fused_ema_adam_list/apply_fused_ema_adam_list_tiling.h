/**
 * @file apply_fused_ema_adam_list_tiling.h
 * @brief Host tiling of ApplyFusedEmaAdamList (a whole parameter group per launch): a pure
 *        function from the tensors' element counts, the launch's dtypes, the attributes, its
 *        optional inputs and the platform to the tiling struct, key, block dim and workspace.
 *        Called by the CPU aclnn layer, the CANN tiling adapter, the Python bindings and the
 *        tests. Trusts its inputs (CheckApplyFusedEmaAdamList validates).
 */
#ifndef APPLY_FUSED_EMA_ADAM_LIST_TILING_H
#define APPLY_FUSED_EMA_ADAM_LIST_TILING_H

#include <cstdint>
#include <vector>

#include "apply_fused_ema_adam_list_tiling_data.h"
#include "ema_adam_attrs.h"
#include "platform.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

/** The dtypes of one launch (every entry of a list has its list's dtype). */
struct ListDtypes {
    DataType param;               // P: vars (the fp32 master with model copies)
    DataType state;               // S: ms, vs, ss and max_vs; P or fp32
    DataType grad;                // G: P's (or with copies C's) dtype, or fp32
    bool hasCopy = false;         // model copies given
    DataType copy = DataType::kFloat16;  // C, when hasCopy: fp16 or bf16
};

// The host's dtypes of the dtype contract's tokens (APPLY_FUSED_EMA_ADAM_LIST_KEYS in
// apply_fused_ema_adam_list_tiling_key.h), pasted as kListDtype_##P and kListHasCopy_##C by the
// host's key table and the native driver's check of the contract; without model copies (NONE) the
// copy dtype is ListDtypes' default.
constexpr DataType kListDtype_FP32 = DataType::kFloat32;
constexpr DataType kListDtype_FP16 = DataType::kFloat16;
constexpr DataType kListDtype_BF16 = DataType::kBFloat16;
constexpr DataType kListDtype_NONE = ListDtypes{}.copy;
constexpr bool kListHasCopy_FP16 = true;
constexpr bool kListHasCopy_BF16 = true;
constexpr bool kListHasCopy_NONE = false;

/** The operator's attributes, its spec's (apply_fused_ema_adam_list_signature.json, whose C++
 *  names these are): the EMA-Adam ones and its own. Passed whole from the caller to the tiling. */
struct ListAttrs : Attrs {
    bool maximize = false;  // negate the gradient first (gradient ascent)
};

/** Which optional inputs a launch has (what it reads and writes beyond the single op's). */
struct ListOptions {
    bool amsgrad = false;    // max_vs given
    bool gradScale = false;  // grad_scale given
    bool foundInf = false;   // found_inf given
    bool ema = true;         // ss given: the EMA is updated (false: no EMA traffic at all)
    bool lrTensor = false;        // lr read from a one-element fp32 tensor at launch
    bool emaDecayTensor = false;  // the EMA decay likewise
};

struct ListTilingResult {
    ApplyFusedEmaAdamListTilingData data;
    uint64_t tilingKey;
    ListDtypes dtypes;        // what tilingKey instantiates
    uint32_t blockDim;        // cores launched (0 when there is no element: nothing to launch)
    uint64_t workspaceSize;   // user workspace bytes the kernel needs (0)
    uint32_t ubBytesPerCore;  // UB the kernel allocates per core with this tiling
};

/**
 * Splits the blocks of all tensors (numels[i] elements each, in list order) over the platform's
 * cores (at most kApplyFusedEmaAdamListMaxCores), balanced to one block, and sizes the UB chunk
 * for the launch's slots with double buffering. Throws std::invalid_argument for a dtype
 * combination without a kernel or a platform whose UB cannot hold one block of every slot.
 */
ListTilingResult ComputeListTiling(const std::vector<uint64_t>& numels, const ListDtypes& dtypes,
                                   const ListAttrs& attrs, const ListOptions& options,
                                   const Platform& platform);

/** The key of the kernel instantiation for `dtypes`; throws std::invalid_argument for a
 *  combination outside the operator's contract. */
uint64_t ListTilingKeyOf(const ListDtypes& dtypes);
/** The dtypes a list tiling key instantiates; throws std::invalid_argument for an unknown key. */
ListDtypes ListDtypesOfKey(uint64_t tilingKey);
/** Every dtype combination the operator accepts (one per key), in key order. */
std::vector<ListDtypes> ListDtypeCombinations();

/** One core's part of one tensor: elements [begin, end) of entry `tensor`. */
struct ListSegment {
    uint32_t tensor;
    uint64_t begin;
    uint64_t end;
};

/**
 * The segments core `core` updates under tiling `t` for tensors of numels[i] elements, in the
 * order the kernel walks them (its ListTensorStop / ListTensorRange); tensors of which the core
 * has no element are left out. Empty for a core past t.usedCoreNum.
 */
std::vector<ListSegment> ListCoreSegments(const ApplyFusedEmaAdamListTilingData& t,
                                          const std::vector<uint64_t>& numels, uint32_t core);

/**
 * UB bytes per element of a chunk for this launch, exactly what the list kernel allocates: a
 * VECIN and a VECOUT queue of bufferNum buffers, each buffer one slot per input (G, P, M, V
 * (, S) (, MaxV)) / output (P, M, V (, S) (, MaxV) (, C)) in its own dtype (S only with the EMA:
 * an EMA-less launch gets the larger chunk the freed UB allows), plus one fp32 work slot per
 * 16-bit input (widened) and per 16-bit output (computed in fp32, then narrowed), plus one fp32
 * slot for the broadcast grad scale. The twin's UB counter holds the kernel to it.
 */
uint32_t ListUbBytesPerElement(const ListDtypes& dtypes, const ListOptions& options,
                               uint32_t bufferNum);

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // APPLY_FUSED_EMA_ADAM_LIST_TILING_H
