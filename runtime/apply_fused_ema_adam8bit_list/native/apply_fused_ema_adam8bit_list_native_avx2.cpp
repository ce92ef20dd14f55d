/**
 * @file apply_fused_ema_adam8bit_list_native_avx2.cpp
 * @brief ApplyFusedEmaAdam8bitList's native loops with AVX2 and F16C: 8 lanes, codes looked up by gathers. Called only when the CPU reports those extensions.
 */
#include "native_simd_avx2.h"

#include "apply_fused_ema_adam8bit_list_native_impl.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native {

#ifdef AEA_NATIVE_HAVE_AVX2
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopAvx2(
    const ApplyFusedEmaAdam8bitListLoopShape& shape)
{
    return PickApplyFusedEmaAdam8bitListLoop<Avx2>(shape);
}
#else
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopAvx2(
    const ApplyFusedEmaAdam8bitListLoopShape&)
{
    return nullptr;
}
#endif

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native
