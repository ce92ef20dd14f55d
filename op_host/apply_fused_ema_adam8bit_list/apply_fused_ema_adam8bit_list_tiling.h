/**
 * @file apply_fused_ema_adam8bit_list_tiling.h
 * @brief ApplyFusedEmaAdam8bitList's host tiling: the launch's quantization blocks (256 elements of
 *        an entry each) split over the cores balanced to one block, the UB chunk in whole blocks
 *        (the kernel's ApplyFusedEmaAdam8bitListUbBytes), the key and the flags. Trusts its inputs:
 *        CheckApplyFusedEmaAdam8bitList runs before it.
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM8BIT_LIST_TILING_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM8BIT_LIST_TILING_H

#include <cstdint>
#include <vector>

#include "apply_fused_ema_adam8bit_list_check.h"
#include "apply_fused_ema_adam8bit_list_tiling_data.h"
#include "ema_adam_attrs.h"
#include "platform.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

struct ApplyFusedEmaAdam8bitListTilingResult {
    ApplyFusedEmaAdam8bitListTilingData data{};
    ApplyFusedEmaAdam8bitListDtypes dtypes{DataType::kFloat32, DataType::kFloat32};
    uint32_t tilingKey = 0;
    uint32_t blockDim = 0;        // cores used (0: nothing to do)
    uint64_t workspaceSize = 0;   // the kernel needs none
    uint32_t ubBytesPerCore = 0;  // ApplyFusedEmaAdam8bitListUbBytes of the chunk
};

/** The tiling of a launch of entries of numels[i] elements (see the file comment). */
ApplyFusedEmaAdam8bitListTilingResult ComputeApplyFusedEmaAdam8bitListTiling(
    const std::vector<uint64_t>& numels, const ApplyFusedEmaAdam8bitListDtypes& dtypes,
    const Attrs& attrs, const ApplyFusedEmaAdam8bitListOptions& options, const Platform& platform);

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM8BIT_LIST_TILING_H
