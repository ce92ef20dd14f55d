/**
 * @file apply_fused_ema_adam8bit_list_native_generic.cpp
 * @brief ApplyFusedEmaAdam8bitList's native loops with portable C++, one element at a time: the fallback on CPUs (or architectures) without AVX2.
 */
#include "apply_fused_ema_adam8bit_list_native_impl.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native {

#ifndef AEA_NATIVE_OMITTED  // see cmake/aea_add_operator.cmake
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopGeneric(
    const ApplyFusedEmaAdam8bitListLoopShape& shape)
{
    return PickApplyFusedEmaAdam8bitListLoop<Scalar>(shape);
}
#else
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopGeneric(
    const ApplyFusedEmaAdam8bitListLoopShape&)
{
    return nullptr;
}
#endif

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native
