/**
 * @file apply_fused_ema_adam_native_generic.cpp
 * @brief ApplyFusedEmaAdam's native loop in portable C++, one element at a time: the fallback on
 *        CPUs (or architectures) without AVX2.
 */
#include "apply_fused_ema_adam_native_impl.h"

namespace ascend_ema_adam::native {

ApplyFusedEmaAdamLoop ApplyFusedEmaAdamGeneric() { return &UpdateRange<Scalar>; }

}  // namespace ascend_ema_adam::native
