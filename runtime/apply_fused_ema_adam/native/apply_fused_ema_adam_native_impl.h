/**
 * @file apply_fused_ema_adam_native_impl.h
 * @brief ApplyFusedEmaAdam's native loops: the shared update (ema_adam_native_update.h) with
 *        one storage type and no options, instantiated by each ISA translation unit
 *        (apply_fused_ema_adam_native_<isa>.cpp). Internal linkage only (see native_simd.h).
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_NATIVE_IMPL_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_NATIVE_IMPL_H

#include <cstdint>

#include "apply_fused_ema_adam_native_kernel.h"
#include "ema_adam_native_update.h"

namespace ascend_ema_adam::native {
namespace {

/** The single op's update: one storage type, no options (the list op's Kind with all off). */
template <class T, uint32_t kMode>
using SingleKind = Kind<T, T, T, NoCopy, kMode, Prologue::kNone, false>;

template <class A, class T, uint32_t kMode>
inline void UpdateMode(const ApplyFusedEmaAdamJob& job, uint64_t begin, uint64_t end)
{
    const Streams<SingleKind<T, kMode>> t{
        static_cast<const T*>(job.in[0]), static_cast<const T*>(job.in[1]),
        static_cast<const T*>(job.in[2]), static_cast<const T*>(job.in[3]),
        static_cast<const T*>(job.in[4]), nullptr, static_cast<T*>(job.out[0]),
        static_cast<T*>(job.out[1]),     static_cast<T*>(job.out[2]),
        static_cast<T*>(job.out[3]),     nullptr, nullptr};
    if (job.streaming && UnrollFor<A>(true) > 1) {
        VectorLoop<A, SingleKind<T, kMode>, UnrollFor<A>(true)>(job.k, 1.0f, t, begin, end);
    } else {
        VectorLoop<A, SingleKind<T, kMode>, 1>(job.k, 1.0f, t, begin, end);
    }
}

template <class A, class T>
inline void UpdateTyped(const ApplyFusedEmaAdamJob& job, uint64_t begin, uint64_t end)
{
    if (job.k.mode == 0) {
        UpdateMode<A, T, 0>(job, begin, end);
    } else {
        UpdateMode<A, T, 1>(job, begin, end);
    }
}

/** The ApplyFusedEmaAdamLoop of backend A. */
template <class A>
void UpdateRange(const ApplyFusedEmaAdamJob& job, uint64_t begin, uint64_t end)
{
    switch (job.dtype) {
        case DataType::kFloat32: UpdateTyped<A, float>(job, begin, end); break;
        case DataType::kFloat16: UpdateTyped<A, F16>(job, begin, end); break;
        case DataType::kBFloat16: UpdateTyped<A, Bf16>(job, begin, end); break;
        case DataType::kInt64: break;  // no kernel: the driver never builds such a job
    }
}

}  // namespace
}  // namespace ascend_ema_adam::native

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_NATIVE_IMPL_H
