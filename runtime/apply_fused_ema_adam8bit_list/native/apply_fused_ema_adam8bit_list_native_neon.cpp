/**
 * @file apply_fused_ema_adam8bit_list_native_neon.cpp
 * @brief ApplyFusedEmaAdam8bitList's native loops with aarch64 NEON: 4 lanes, codes looked up by lane loads. Compiled only for aarch64.
 */
#include "native_simd_neon.h"

#include "apply_fused_ema_adam8bit_list_native_impl.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native {

#ifdef AEA_NATIVE_HAVE_NEON
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopNeon(
    const ApplyFusedEmaAdam8bitListLoopShape& shape)
{
    return PickApplyFusedEmaAdam8bitListLoop<Neon>(shape);
}
#else
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopNeon(
    const ApplyFusedEmaAdam8bitListLoopShape&)
{
    return nullptr;
}
#endif

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native
