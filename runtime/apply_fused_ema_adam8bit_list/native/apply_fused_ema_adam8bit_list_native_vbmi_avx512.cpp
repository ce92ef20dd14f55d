/**
 * @file apply_fused_ema_adam8bit_list_native_vbmi_avx512.cpp
 * @brief ApplyFusedEmaAdam8bitList's native loops with AVX-512 (F, BW, VL), F16C and VBMI: the
 *        AVX-512 loops, with the codes decoded by permutes of the maps' byte planes and each line
 *        of 64 new codes stored by byte permutes (VBMI). Called only on CPUs with VBMI
 *        (ApplyFusedEmaAdam8bitListBytePlaneDecode). A file of its own, compiled for VBMI
 *        throughout, so that those permutes inline into the loops: against the decode as a call of
 *        its own target in the AVX-512 file, 7 % fewer cycles in cache (one thread) and 6 % at
 *        16.8M (two threads), outputs identical.
 */
#if defined(__x86_64__) && defined(__AVX512F__)
#pragma GCC target("avx512vbmi")
#define AEA_ADAM8BIT_VBMI 1  // GCC's C++ front end does not define __AVX512VBMI__ for the pragma
#endif

#include "native_simd_avx512.h"

#include "apply_fused_ema_adam8bit_list_native_impl.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native {

#ifdef AEA_ADAM8BIT_BYTE_PLANES
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopAvx512Vbmi(
    const ApplyFusedEmaAdam8bitListLoopShape& shape)
{
    return PickApplyFusedEmaAdam8bitListLoop<Avx512>(shape);
}
#else
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopAvx512Vbmi(
    const ApplyFusedEmaAdam8bitListLoopShape&)
{
    return nullptr;
}
#endif

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native
