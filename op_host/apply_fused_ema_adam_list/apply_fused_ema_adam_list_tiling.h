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
struct ApplyFusedEmaAdamListDtypes {
    DataType param;               // P: vars (the fp32 master with model copies)
    DataType state;               // S: ms, vs, ss and max_vs; P or fp32
    DataType grad;                // G: P's (or with copies C's) dtype, or fp32
    bool hasCopy = false;         // model copies given
    DataType copy = DataType::kFloat16;  // C, when hasCopy: fp16 or bf16
};

// The host's dtypes of the dtype contract's tokens (APPLY_FUSED_EMA_ADAM_LIST_KEYS in
// apply_fused_ema_adam_list_tiling_key.h), pasted as kApplyFusedEmaAdamListDtype_##P and
// kApplyFusedEmaAdamListHasCopy_##C by the host's key table and the native driver's check of the
// contract; without model copies (NONE) the copy dtype is ApplyFusedEmaAdamListDtypes' default.
constexpr DataType kApplyFusedEmaAdamListDtype_FP32 = DataType::kFloat32;
constexpr DataType kApplyFusedEmaAdamListDtype_FP16 = DataType::kFloat16;
constexpr DataType kApplyFusedEmaAdamListDtype_BF16 = DataType::kBFloat16;
constexpr DataType kApplyFusedEmaAdamListDtype_NONE = ApplyFusedEmaAdamListDtypes{}.copy;
constexpr bool kApplyFusedEmaAdamListHasCopy_FP16 = true;
constexpr bool kApplyFusedEmaAdamListHasCopy_BF16 = true;
constexpr bool kApplyFusedEmaAdamListHasCopy_NONE = false;

/** The operator's attributes, its spec's (apply_fused_ema_adam_list_signature.json, whose C++
 *  names these are): the EMA-Adam ones and its own. Passed whole from the caller to the tiling. */
struct ApplyFusedEmaAdamListAttrs : Attrs {
    bool maximize = false;  // negate the gradient first (gradient ascent)
};

/** Which optional inputs a launch has (what it reads and writes beyond the single op's). */
struct ApplyFusedEmaAdamListOptions {
    bool amsgrad = false;    // max_vs given
    bool gradScale = false;  // grad_scale given
    bool foundInf = false;   // found_inf given
    bool ema = true;         // ss given: the EMA is updated (false: no EMA traffic at all)
    bool lrTensor = false;        // lr read from a one-element fp32 tensor at launch
    bool emaDecayTensor = false;  // the EMA decay likewise
};

struct ApplyFusedEmaAdamListTilingResult {
    ApplyFusedEmaAdamListTilingData data;
    uint64_t tilingKey;
    ApplyFusedEmaAdamListDtypes dtypes;  // what tilingKey instantiates
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
ApplyFusedEmaAdamListTilingResult ComputeApplyFusedEmaAdamListTiling(
    const std::vector<uint64_t>& numels, const ApplyFusedEmaAdamListDtypes& dtypes,
    const ApplyFusedEmaAdamListAttrs& attrs, const ApplyFusedEmaAdamListOptions& options,
    const Platform& platform);

/** The key of the kernel instantiation for `dtypes`; throws std::invalid_argument for a
 *  combination outside the operator's contract. */
uint64_t ApplyFusedEmaAdamListTilingKeyOf(const ApplyFusedEmaAdamListDtypes& dtypes);
/** The dtypes a list tiling key instantiates; throws std::invalid_argument for an unknown key. */
ApplyFusedEmaAdamListDtypes ApplyFusedEmaAdamListDtypesOfKey(uint64_t tilingKey);
/** Every dtype combination the operator accepts (one per key), in key order. */
std::vector<ApplyFusedEmaAdamListDtypes> ApplyFusedEmaAdamListDtypeCombinations();

/** One core's part of one tensor: elements [begin, end) of entry `tensor`. */
struct ApplyFusedEmaAdamListSegment {
    uint32_t tensor;
    uint64_t begin;
    uint64_t end;
};

/**
 * The segments core `core` updates under tiling `t` for tensors of numels[i] elements, in the
 * order the kernel walks them (its ApplyFusedEmaAdamListTensorStop /
 * ApplyFusedEmaAdamListTensorRange); tensors of which the core has no element are left out. Empty
 * for a core past t.usedCoreNum.
 */
std::vector<ApplyFusedEmaAdamListSegment> ApplyFusedEmaAdamListCoreSegments(
    const ApplyFusedEmaAdamListTilingData& t, const std::vector<uint64_t>& numels, uint32_t core);

/**
 * UB bytes per element of a chunk for this launch, exactly what the list kernel allocates: a
 * VECIN and a VECOUT queue of bufferNum buffers, each buffer one slot per input (G, P, M, V
 * (, S) (, MaxV)) / output (P, M, V (, S) (, MaxV) (, C)) in its own dtype (S only with the EMA:
 * an EMA-less launch gets the larger chunk the freed UB allows), plus one fp32 work slot per
 * 16-bit input (widened) and per 16-bit output (computed in fp32, then narrowed), plus one fp32
 * slot for the broadcast grad scale. The twin's UB counter holds the kernel to it.
 */
uint32_t ApplyFusedEmaAdamListUbBytesPerElement(const ApplyFusedEmaAdamListDtypes& dtypes,
                                                const ApplyFusedEmaAdamListOptions& options,
                                                uint32_t bufferNum);

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // APPLY_FUSED_EMA_ADAM_LIST_TILING_H
