/**
 * @file apply_fused_ema_adam_list_native_avx512.cpp
 * @brief ApplyFusedEmaAdamList's native loops with AVX-512 (F, BW, VL) and F16C: 16 fp32 lanes,
 *        masked tails. Called only when the CPU reports those extensions.
 */
#include "native_simd_avx512.h"

#include "apply_fused_ema_adam_list_native_impl.h"

namespace ascend_ema_adam::native {

#ifdef AEA_NATIVE_HAVE_AVX512
ApplyFusedEmaAdamListLoop ApplyFusedEmaAdamListAvx512(const ListLoopShape& shape)
{
    return PickListLoop<Avx512>(shape);
}
#else
ApplyFusedEmaAdamListLoop ApplyFusedEmaAdamListAvx512(const ListLoopShape&) { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
