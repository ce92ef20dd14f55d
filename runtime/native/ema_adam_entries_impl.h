/**
 * @file ema_adam_entries_impl.h
 * @brief The EMA-Adam entries loops: a chunk of a launch's flat element sequence, entry by entry,
 *        through the shared update (ema_adam_native_update.h); and the choice of the instantiation
 *        for a launch's shape (a row of EMA_ADAM_ENTRY_TYPES x mode x gradient prologue x AMSGrad x
 *        EMA or none x streaming or cache-resident). Instantiated by each ISA translation unit
 *        (ema_adam_entries_<isa>.cpp). Internal linkage only (see native_simd.h).
 */
#ifndef ASCEND_EMA_ADAM_EMA_ADAM_ENTRIES_IMPL_H
#define ASCEND_EMA_ADAM_EMA_ADAM_ENTRIES_IMPL_H

#include <cstdint>

#include "ema_adam_entries_loops.h"
#include "ema_adam_native_update.h"

namespace ascend_ema_adam::native {
namespace {

/** `count` elements from (entry, offset) on; an entry's range is one VectorLoop, in place. */
template <class A, class K, int kUnroll>
void RunChunk(const EntriesJob& job, uint32_t entry, uint64_t offset, uint64_t count)
{
    using G = typename K::Grad;
    using P = typename K::Param;
    using S = typename K::State;
    using C = typename K::Copy;
    for (; count > 0; ++entry, offset = 0) {
        const uint64_t left = job.numels[entry] - offset;  // 0 for an empty entry
        const uint64_t take = left < count ? left : count;
        if (take == 0) {
            continue;
        }
        P* const p = static_cast<P*>(job.vars[entry]);
        S* const m = static_cast<S*>(job.ms[entry]);
        S* const v = static_cast<S*>(job.vs[entry]);
        S* const s = K::kEma ? static_cast<S*>(job.ss[entry]) : nullptr;
        S* const maxV = K::kAmsgrad ? static_cast<S*>(job.maxVs[entry]) : nullptr;
        C* const copy = K::kHasCopy ? static_cast<C*>(job.copies[entry]) : nullptr;
        const Streams<K> t{static_cast<const G*>(job.grads[entry]), p, m, v, s, maxV,
                           p, m, v, s, maxV, copy};
        VectorLoop<A, K, kUnroll>(job.k, job.gradDivisor, t, offset, offset + take);
        count -= take;
    }
}

template <class A, class K>
EntriesLoop PickUnroll(bool streaming)
{
    if constexpr (UnrollFor<A>(true) > 1) {
        if (streaming) {
            return &RunChunk<A, K, UnrollFor<A>(true)>;
        }
    }
    return &RunChunk<A, K, 1>;
}

template <class A, class G, class P, class S, class C, uint32_t kMode, Prologue kPro, bool kAmsgrad>
EntriesLoop PickEma(const EntryLoopShape& shape)
{
    return shape.ema
               ? PickUnroll<A, Kind<G, P, S, C, kMode, kPro, kAmsgrad, true>>(shape.streaming)
               : PickUnroll<A, Kind<G, P, S, C, kMode, kPro, kAmsgrad, false>>(shape.streaming);
}

template <class A, class G, class P, class S, class C, uint32_t kMode, Prologue kPro>
EntriesLoop PickAmsgrad(const EntryLoopShape& shape)
{
    return shape.amsgrad ? PickEma<A, G, P, S, C, kMode, kPro, true>(shape)
                         : PickEma<A, G, P, S, C, kMode, kPro, false>(shape);
}

template <class A, class G, class P, class S, class C, uint32_t kMode>
EntriesLoop PickPrologue(const EntryLoopShape& shape)
{
    switch (static_cast<Prologue>(shape.prologue)) {
        case Prologue::kNone: return PickAmsgrad<A, G, P, S, C, kMode, Prologue::kNone>(shape);
        case Prologue::kDivide: return PickAmsgrad<A, G, P, S, C, kMode, Prologue::kDivide>(shape);
    }
    return nullptr;
}

template <class A, class G, class P, class S, class C = NoCopy>
EntriesLoop PickMode(const EntryLoopShape& shape)
{
    return shape.mode == 0 ? PickPrologue<A, G, P, S, C, 0>(shape)
                           : PickPrologue<A, G, P, S, C, 1>(shape);
}

// The native storage types of EMA_ADAM_ENTRY_TYPES' tokens (their DataTypes: kEntryDtype_*).
using EntryType_FP32 = float;
using EntryType_FP16 = F16;
using EntryType_BF16 = Bf16;
using EntryType_NONE = NoCopy;

/** The EntriesLoop of backend A for `shape`: the loop of its row of EMA_ADAM_ENTRY_TYPES, null
 *  outside the table. */
template <class A>
EntriesLoop PickEntriesLoop(const EntryLoopShape& s)
{
    if (s.prologue > static_cast<uint32_t>(Prologue::kDivide)) {
        return nullptr;
    }
    const EmaAdamEntryTypes& t = s.types;
#define AEA_ENTRY_LOOP_ROW(P, S, G, C)                                                          \
    if (t.param == kEntryDtype_##P && t.state == kEntryDtype_##S && t.grad == kEntryDtype_##G && \
        t.hasCopy == kEntryHasCopy_##C && (!t.hasCopy || t.copy == kEntryDtype_##C)) {          \
        return PickMode<A, EntryType_##G, EntryType_##P, EntryType_##S, EntryType_##C>(s);      \
    }
    EMA_ADAM_ENTRY_TYPES(AEA_ENTRY_LOOP_ROW)
#undef AEA_ENTRY_LOOP_ROW
    return nullptr;
}

}  // namespace
}  // namespace ascend_ema_adam::native

#endif  // ASCEND_EMA_ADAM_EMA_ADAM_ENTRIES_IMPL_H
