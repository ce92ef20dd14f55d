/**
 * @file apply_fused_ema_adam8bit_list_native_generic.cpp
 * @brief ApplyFusedEmaAdam8bitList's native loops with portable C++, one element at a time: the fallback on CPUs (or architectures) without AVX2.
 */
#include "apply_fused_ema_adam8bit_list_native_impl.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native {

#ifndef AEA_NATIVE_OMITTED  // see cmake/aea_add_operator.cmake
Adam8bitLoop Adam8bitLoopGeneric(const Adam8bitLoopShape& shape)
{
    return PickAdam8bitLoop<Scalar>(shape);
}
#else
Adam8bitLoop Adam8bitLoopGeneric(const Adam8bitLoopShape&) { return nullptr; }
#endif

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native
