/**
 * @file apply_fused_ema_adam8bit_list_native_avx512.cpp
 * @brief ApplyFusedEmaAdam8bitList's native loops with AVX-512 (F, BW, VL) and F16C: 16 lanes, codes
 *        decoded by gathers. Called when the CPU reports those extensions and the launch does not
 *        decode by byte planes (no VBMI, or NativeOptions::bytePlanes false): else the VBMI loops
 *        of *_native_vbmi_avx512.cpp.
 */
#include "native_simd_avx512.h"

#include "apply_fused_ema_adam8bit_list_native_impl.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native {

#ifdef AEA_NATIVE_HAVE_AVX512
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopAvx512(
    const ApplyFusedEmaAdam8bitListLoopShape& shape)
{
    return PickApplyFusedEmaAdam8bitListLoop<Avx512>(shape);
}
#else
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopAvx512(
    const ApplyFusedEmaAdam8bitListLoopShape&)
{
    return nullptr;
}
#endif

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native
