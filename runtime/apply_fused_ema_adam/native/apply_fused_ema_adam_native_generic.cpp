/**
 * @file apply_fused_ema_adam_native_generic.cpp
 * @brief ApplyFusedEmaAdam's native loop in portable C++, one element at a time: the fallback on
 *        CPUs (or architectures) without AVX2.
 */
#include "apply_fused_ema_adam_native_impl.h"

namespace ascend_ema_adam::native {

#ifndef AEA_NATIVE_OMITTED  // see cmake/aea_add_operator.cmake
ApplyFusedEmaAdamLoop ApplyFusedEmaAdamGeneric() { return &UpdateRange<Scalar>; }
#else
ApplyFusedEmaAdamLoop ApplyFusedEmaAdamGeneric() { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
