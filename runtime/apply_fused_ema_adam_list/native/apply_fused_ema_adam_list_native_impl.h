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
#include "apply_fused_ema_adam_list_tiling.h"
#include "apply_fused_ema_adam_list_tiling_key.h"
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

// The native storage types of the contract's dtype tokens (apply_fused_ema_adam_list_tiling_key.h);
// their DataTypes are the host's (kListDtype_*, kListHasCopy_* of apply_fused_ema_adam_list_tiling.h).
using ListType_FP32 = float;
using ListType_FP16 = F16;
using ListType_BF16 = Bf16;
using ListType_NONE = NoCopy;

/** The ApplyFusedEmaAdamListLoop of backend A for `shape`: the loop of its row of the operator's
 *  dtype contract, null outside it. */
template <class A>
ApplyFusedEmaAdamListLoop PickListLoop(const ListLoopShape& s)
{
    if (s.prologue > static_cast<uint32_t>(Prologue::kDivide)) {
        return nullptr;
    }
#define AEA_LIST_NATIVE_KEY(key, P, S, G, C)                                                 \
    if (s.param == kListDtype_##P && s.state == kListDtype_##S && s.grad == kListDtype_##G && \
        s.hasCopy == kListHasCopy_##C && (!s.hasCopy || s.copy == kListDtype_##C)) {   \
        return PickMode<A, ListType_##G, ListType_##P, ListType_##S, ListType_##C>(s);       \
    }
    APPLY_FUSED_EMA_ADAM_LIST_KEYS(AEA_LIST_NATIVE_KEY)
#undef AEA_LIST_NATIVE_KEY
    return nullptr;
}

}  // namespace
}  // namespace ascend_ema_adam::native

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_NATIVE_IMPL_H
