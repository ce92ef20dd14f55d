/**
 * @file apply_fused_ema_adam_list_native_generic.cpp
 * @brief ApplyFusedEmaAdamList's native loops in portable C++, one element at a time: the
 *        fallback on CPUs (or architectures) without AVX2.
 */
#include "apply_fused_ema_adam_list_native_impl.h"

namespace ascend_ema_adam::native {

#ifndef AEA_NATIVE_OMITTED  // see cmake/aea_add_operator.cmake
ApplyFusedEmaAdamListLoop ApplyFusedEmaAdamListGeneric(const ListLoopShape& shape)
{
    return PickListLoop<Scalar>(shape);
}
#else
ApplyFusedEmaAdamListLoop ApplyFusedEmaAdamListGeneric(const ListLoopShape&) { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
