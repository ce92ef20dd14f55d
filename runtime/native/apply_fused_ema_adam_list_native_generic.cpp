/**
 * @file apply_fused_ema_adam_list_native_generic.cpp
 * @brief ApplyFusedEmaAdamList's native loops in portable C++, one element at a time: the
 *        fallback on CPUs (or architectures) without AVX2.
 */
#include "apply_fused_ema_adam_list_native_impl.h"

namespace ascend_ema_adam::native {

ApplyFusedEmaAdamListLoop ApplyFusedEmaAdamListGeneric(const ListLoopShape& shape)
{
    return PickListLoop<Scalar>(shape);
}

}  // namespace ascend_ema_adam::native
