/**
 * @file apply_fused_ema_adam8bit_list_dtypes.h
 * @brief ApplyFusedEmaAdam8bitList's storage types per launch and the C++ names of its dtype
 *        contract's tokens (APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS). Plain structs and constants
 *        only: the native kernel's instruction-set translation units include it.
 */
#ifndef APPLY_FUSED_EMA_ADAM8BIT_LIST_DTYPES_H
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_DTYPES_H

#include "data_type.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

/** The storage types of a launch (every entry of a list has its list's type; the state is uint8
 *  codes with fp32 scales and an fp32 EMA for every row). */
struct ApplyFusedEmaAdam8bitListDtypes {
    DataType param;                      // P: the updated parameter (fp32 master with copies)
    DataType grad;                       // G
    bool hasCopy = false;                // model copies written from the updated parameter
    DataType copy = DataType::kFloat16;  // C, when hasCopy
};

// The storage types of the contract's tokens.
constexpr DataType kApplyFusedEmaAdam8bitListDtype_FP32 = DataType::kFloat32;
constexpr DataType kApplyFusedEmaAdam8bitListDtype_FP16 = DataType::kFloat16;
constexpr DataType kApplyFusedEmaAdam8bitListDtype_BF16 = DataType::kBFloat16;
constexpr DataType kApplyFusedEmaAdam8bitListDtype_NONE = ApplyFusedEmaAdam8bitListDtypes{}.copy;
constexpr bool kApplyFusedEmaAdam8bitListHasCopy_FP16 = true;
constexpr bool kApplyFusedEmaAdam8bitListHasCopy_BF16 = true;
constexpr bool kApplyFusedEmaAdam8bitListHasCopy_NONE = false;

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

#endif  // APPLY_FUSED_EMA_ADAM8BIT_LIST_DTYPES_H
