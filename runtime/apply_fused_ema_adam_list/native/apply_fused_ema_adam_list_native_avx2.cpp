/**
 * @file apply_fused_ema_adam_list_native_avx2.cpp
 * @brief ApplyFusedEmaAdamList's native loops with AVX2 and F16C: 8 fp32 lanes, tails one element
 *        at a time. Called only when the CPU reports those extensions.
 */
#include "native_simd_avx2.h"

#include "apply_fused_ema_adam_list_native_impl.h"

namespace ascend_ema_adam::native {

#ifdef AEA_NATIVE_HAVE_AVX2
ApplyFusedEmaAdamListLoop ApplyFusedEmaAdamListAvx2(const ListLoopShape& shape)
{
    return PickListLoop<Avx2>(shape);
}
#else
ApplyFusedEmaAdamListLoop ApplyFusedEmaAdamListAvx2(const ListLoopShape&) { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
