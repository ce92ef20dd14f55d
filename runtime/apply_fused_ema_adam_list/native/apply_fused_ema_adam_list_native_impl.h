/**
 * @file apply_fused_ema_adam_list_native_impl.h
 * @brief ApplyFusedEmaAdamList's native loops: a chunk of the launch's flat element sequence,
 *        entry by entry, through the shared update (ema_adam_native_update.h); and the choice of
 *        the instantiation for a launch's shape (the operator's 13 dtype combinations x mode x
 *        gradient prologue x AMSGrad x EMA or none x streaming or cache-resident). Instantiated by each ISA translation unit
 *        (apply_fused_ema_adam_list_native_<isa>.cpp). Internal linkage only (see native_simd.h).
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_NATIVE_IMPL_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_NATIVE_IMPL_H

#include <cstdint>

#include "apply_fused_ema_adam_list_native_kernel.h"
#include "ema_adam_native_update.h"

namespace ascend_ema_adam::native {
namespace {

/** `count` elements from (tensor, offset) on; an entry's range is one VectorLoop, in place. */
template <class A, class K, int kUnroll>
void RunChunk(const ApplyFusedEmaAdamListJob& job, uint32_t tensor, uint64_t offset,
              uint64_t count)
{
    using G = typename K::Grad;
    using P = typename K::Param;
    using S = typename K::State;
    using C = typename K::Copy;
    for (; count > 0; ++tensor, offset = 0) {
        const uint64_t left = job.numels[tensor] - offset;  // 0 for an empty entry
        const uint64_t take = left < count ? left : count;
        if (take == 0) {
            continue;
        }
        P* const p = static_cast<P*>(job.vars[tensor]);
        S* const m = static_cast<S*>(job.ms[tensor]);
        S* const v = static_cast<S*>(job.vs[tensor]);
        S* const s = K::kEma ? static_cast<S*>(job.ss[tensor]) : nullptr;
        S* const maxV = K::kAmsgrad ? static_cast<S*>(job.maxVs[tensor]) : nullptr;
        C* const copy = K::kHasCopy ? static_cast<C*>(job.copies[tensor]) : nullptr;
        const Streams<K> t{static_cast<const G*>(job.grads[tensor]), p, m, v, s, maxV,
                           p, m, v, s, maxV, copy};
        VectorLoop<A, K, kUnroll>(job.k, job.gradDivisor, t, offset, offset + take);
        count -= take;
    }
}

template <class A, class K>
ApplyFusedEmaAdamListLoop PickUnroll(bool streaming)
{
    if constexpr (UnrollFor<A>(true) > 1) {
        if (streaming) {
            return &RunChunk<A, K, UnrollFor<A>(true)>;
        }
    }
    return &RunChunk<A, K, 1>;
}

template <class A, class G, class P, class S, class C, uint32_t kMode, Prologue kPro, bool kAmsgrad>
ApplyFusedEmaAdamListLoop PickEma(const ListLoopShape& shape)
{
    return shape.ema
               ? PickUnroll<A, Kind<G, P, S, C, kMode, kPro, kAmsgrad, true>>(shape.streaming)
               : PickUnroll<A, Kind<G, P, S, C, kMode, kPro, kAmsgrad, false>>(shape.streaming);
}

template <class A, class G, class P, class S, class C, uint32_t kMode, Prologue kPro>
ApplyFusedEmaAdamListLoop PickAmsgrad(const ListLoopShape& shape)
{
    return shape.amsgrad ? PickEma<A, G, P, S, C, kMode, kPro, true>(shape)
                         : PickEma<A, G, P, S, C, kMode, kPro, false>(shape);
}

template <class A, class G, class P, class S, class C, uint32_t kMode>
ApplyFusedEmaAdamListLoop PickPrologue(const ListLoopShape& shape)
{
    switch (static_cast<Prologue>(shape.prologue)) {
        case Prologue::kNone: return PickAmsgrad<A, G, P, S, C, kMode, Prologue::kNone>(shape);
        case Prologue::kNegate: return PickAmsgrad<A, G, P, S, C, kMode, Prologue::kNegate>(shape);
        case Prologue::kDivide: return PickAmsgrad<A, G, P, S, C, kMode, Prologue::kDivide>(shape);
    }
    return nullptr;
}

template <class A, class G, class P, class S, class C = NoCopy>
ApplyFusedEmaAdamListLoop PickMode(const ListLoopShape& shape)
{
    return shape.mode == 0 ? PickPrologue<A, G, P, S, C, 0>(shape)
                           : PickPrologue<A, G, P, S, C, 1>(shape);
}

/** A 16-bit param P with state S (P or fp32) and grads in P or fp32. */
template <class A, class P, class S>
ApplyFusedEmaAdamListLoop PickHalfGrad(const ListLoopShape& shape)
{
    return shape.grad == DataType::kFloat32 ? PickMode<A, float, P, S>(shape)
                                            : PickMode<A, P, P, S>(shape);
}

/** fp32 master weights with 16-bit model copies C, grads in C or fp32. */
template <class A, class C>
ApplyFusedEmaAdamListLoop PickCopyGrad(const ListLoopShape& shape)
{
    return shape.grad == DataType::kFloat32 ? PickMode<A, float, float, float, C>(shape)
                                            : PickMode<A, C, float, float, C>(shape);
}

/** The operator's dtype contract (op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_tiling.cpp's key table). */
inline bool InContract(const ListLoopShape& s)
{
    const DataType f32 = DataType::kFloat32;
    const bool sixteen = s.param == DataType::kFloat16 || s.param == DataType::kBFloat16;
    if (s.hasCopy) {
        const bool copy16 = s.copy == DataType::kFloat16 || s.copy == DataType::kBFloat16;
        return s.param == f32 && s.state == f32 && copy16 && (s.grad == f32 || s.grad == s.copy);
    }
    if (s.param == f32) {
        return s.state == f32 && s.grad == f32;
    }
    return sixteen && (s.state == s.param || s.state == f32) &&
           (s.grad == s.param || s.grad == f32);
}

/** The ApplyFusedEmaAdamListLoop of backend A for `shape`, null outside the contract. */
template <class A>
ApplyFusedEmaAdamListLoop PickListLoop(const ListLoopShape& s)
{
    if (!InContract(s) || s.prologue > static_cast<uint32_t>(Prologue::kDivide)) {
        return nullptr;
    }
    const bool fp32State = s.state == DataType::kFloat32;
    switch (s.param) {
        case DataType::kFloat32:
            if (!s.hasCopy) {
                return PickMode<A, float, float, float>(s);
            }
            return s.copy == DataType::kFloat16 ? PickCopyGrad<A, F16>(s) : PickCopyGrad<A, Bf16>(s);
        case DataType::kFloat16:
            return fp32State ? PickHalfGrad<A, F16, float>(s) : PickHalfGrad<A, F16, F16>(s);
        case DataType::kBFloat16:
            return fp32State ? PickHalfGrad<A, Bf16, float>(s) : PickHalfGrad<A, Bf16, Bf16>(s);
        case DataType::kInt64: break;
    }
    return nullptr;
}

}  // namespace
}  // namespace ascend_ema_adam::native

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_NATIVE_IMPL_H
