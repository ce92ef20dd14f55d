/**
 * @file apply_fused_ema_adam_native_avx2.cpp
 * @brief ApplyFusedEmaAdam's native loop with AVX2 and F16C: 8 fp32 lanes per instruction, tails
 *        one element at a time. Compiled with those extensions enabled; the driver calls it only
 *        when the CPU reports them.
 */
#include "native_simd_avx2.h"

#include "apply_fused_ema_adam_native_impl.h"

namespace ascend_ema_adam::native {

#ifdef AEA_NATIVE_HAVE_AVX2
ApplyFusedEmaAdamLoop ApplyFusedEmaAdamAvx2() { return &UpdateRange<Avx2>; }
#else
ApplyFusedEmaAdamLoop ApplyFusedEmaAdamAvx2() { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
