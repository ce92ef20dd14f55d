/**
 * @file apply_fused_ema_adam_native_avx512.cpp
 * @brief ApplyFusedEmaAdam's native loop with AVX-512 (F, BW, VL) and F16C: 16 fp32 lanes per
 *        instruction, masked loads and stores for the tail. Compiled with those extensions
 *        enabled; the driver calls it only when the CPU reports them.
 */
#include "native_simd_avx512.h"

#include "apply_fused_ema_adam_native_impl.h"

namespace ascend_ema_adam::native {

#ifdef AEA_NATIVE_HAVE_AVX512
ApplyFusedEmaAdamLoop ApplyFusedEmaAdamAvx512() { return &UpdateRange<Avx512>; }
#else
ApplyFusedEmaAdamLoop ApplyFusedEmaAdamAvx512() { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
