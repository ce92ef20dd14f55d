/**
 * @file native_update_generic.cpp
 * @brief The native kernel's loops in portable C++, one element at a time: the fallback on CPUs
 *        (or architectures) without AVX2.
 */
#include "native_update_impl.h"

namespace ascend_ema_adam::native {

const IsaKernels* GenericKernels()
{
    static const IsaKernels kernels{"generic", &UpdateRange<Scalar>, &ProbeRange<Scalar>};
    return &kernels;
}

}  // namespace ascend_ema_adam::native
