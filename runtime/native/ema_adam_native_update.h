/**
 * @file ema_adam_native_update.h
 * @brief The EMA-Adam update of the native CPU kernels, written once over a vector backend `A`
 *        (native_simd.h) and a compile-time Kind (storage types and options): the EMA-Adam
 *        entries loops every operator runs (ema_adam_entries_impl.h) instantiate VectorLoop from
 *        here.
 *        Compiled with -ffp-contract=off and without fast-math, one backend call per operation:
 *        the arithmetic is the AscendC kernels', operation for operation, and
 *        golden.emulate_entry's. Internal linkage only (see native_simd.h).
 */
#ifndef ASCEND_EMA_ADAM_EMA_ADAM_NATIVE_UPDATE_H
#define ASCEND_EMA_ADAM_EMA_ADAM_NATIVE_UPDATE_H

#include <cstdint>

#include "ema_adam_params.h"
#include "native_simd.h"

namespace ascend_ema_adam::native {
namespace {

/** What happens to the widened gradient before the update (LaunchPrologue's, ema_adam_scalar.h). */
enum class Prologue : uint32_t {
    kNone,
    kDivide,  // g = g / divisor, LaunchScalars::gradDivisor: the grad scale (1 without one),
              // negated to ascend the gradient. Exactly the golden's (-g) / scale, and -g: IEEE
              // division rounds the exact quotient, whose sign is the product of the signs, so
              // (-g)/s and g/(-s) are the same number, and g/(-1) is -g (NaN aside). One loop
              // for both halves the loops a negation of its own would instantiate.
};

/** No model copy (the C of a Kind without one). */
struct NoCopy {};

/**
 * One loop's compile-time shape: storage types of grad (G), var (P), state m/v/s/max_v (S) and the
 * model copy (C, or NoCopy), the weight-decay mode, the gradient prologue, AMSGrad and the EMA
 * (without it, s is neither loaded nor stored). Every combination of options is its own loop, so
 * the hot loops never branch on them.
 */
template <class G, class P, class S, class C, uint32_t kModeV, Prologue kProV, bool kAmsgradV,
          bool kEmaV = true>
struct Kind {
    using Grad = G;
    using Param = P;
    using State = S;
    using Copy = C;
    static constexpr uint32_t kMode = kModeV;
    static constexpr Prologue kPro = kProV;
    static constexpr bool kAmsgrad = kAmsgradV;
    static constexpr bool kEma = kEmaV;
    static constexpr bool kHasCopy = !__is_same(C, NoCopy);
    /** One storage type for every stream: the backend's Full policies (any lane order). */
    static constexpr bool kUniform =
        __is_same(G, P) && __is_same(P, S) && (!kHasCopy || __is_same(C, P));
};

/** The tensors of one range of one entry. An output either is its input (in place) or overlaps
 *  no input; maxV/maxVOut are used only with AMSGrad, copy only with a model copy, s/sOut only
 *  with the EMA. */
template <class K>
struct Streams {
    const typename K::Grad* g;
    const typename K::Param* p;
    const typename K::State* m;
    const typename K::State* v;
    const typename K::State* s;
    const typename K::State* maxV;
    typename K::Param* pOut;
    typename K::State* mOut;
    typename K::State* vOut;
    typename K::State* sOut;
    typename K::State* maxVOut;
    typename K::Copy* copy;
};

/** The launch scalars broadcast once per range. */
template <class A>
struct Consts {
    using V = typename A::V;
    Consts(const UpdateScalars& k, float gradDivisor)
        : lr(A::Set1(k.lr)), beta1(A::Set1(k.beta1)), beta2(A::Set1(k.beta2)),
          oneMinusBeta1(A::Set1(k.oneMinusBeta1)), oneMinusBeta2(A::Set1(k.oneMinusBeta2)),
          eps(A::Set1(k.eps)), weightDecay(A::Set1(k.weightDecay)), decay(A::Set1(k.decay)),
          oneMinusDecay(A::Set1(k.oneMinusDecay)), invC1(A::Set1(k.invC1)), invC2(A::Set1(k.invC2)),
          gradDivisor(A::Set1(gradDivisor))
    {
    }
    V lr, beta1, beta2, oneMinusBeta1, oneMinusBeta2, eps, weightDecay, decay, oneMinusDecay, invC1,
        invC2, gradDivisor;
};

/** One vector of every stream, widened to fp32 (maxV only with AMSGrad). */
template <class V>
struct Lanes {
    V g, p, m, v, s, maxV;
};

/**
 * The fp32 update of one vector, in the order of the kernels' update (and of
 * golden.emulate_entry): one rounding per line. Without options it is exactly the single op's
 * UpdateFp32. Writes only `out` (the caller stores after all inputs are loaded: in place is safe).
 */
template <class A, class K>
inline void Update(const Consts<A>& c, Lanes<typename A::V> in, Lanes<typename A::V>& out)
{
    using V = typename A::V;
    V g = in.g;
    if constexpr (K::kPro == Prologue::kDivide) {
        g = A::Div(g, c.gradDivisor);                                       // g / (+-scale)
    }
    if constexpr (K::kMode == 0) {        // Adam + L2
        g = A::Add(A::Mul(in.p, c.weightDecay), g);                         // g = wd*var + g
    }
    out.m = A::Add(A::Mul(g, c.oneMinusBeta1), A::Mul(in.m, c.beta1));      // m' = (1-b1)*g + b1*m
    const V mHat = A::Mul(out.m, c.invC1);                                  // m' * (1/c1)
    out.v = A::Add(A::Mul(A::Mul(g, g), c.oneMinusBeta2), A::Mul(in.v, c.beta2));  // g*g*(1-b2) + b2*v
    V vHat;
    if constexpr (K::kAmsgrad) {
        out.maxV = A::Max(in.maxV, out.v);                                  // maxV > v' ? maxV : v'
        vHat = A::Mul(out.maxV, c.invC2);
    } else {
        vHat = A::Mul(out.v, c.invC2);                                      // v' * (1/c2)
    }
    V u = A::Div(mHat, A::Add(A::Sqrt(vHat), c.eps));                       // m_hat / (sqrt + eps)
    if constexpr (K::kMode == 1) {        // AdamW: decoupled decay
        u = A::Add(u, A::Mul(in.p, c.weightDecay));
    }
    out.p = A::Sub(in.p, A::Mul(u, c.lr));                                  // var' = var - lr*u
    if constexpr (K::kEma) {
        out.s = A::Add(A::Mul(in.s, c.decay), A::Mul(out.p, c.oneMinusDecay));  // s' = d*s + (1-d)*var'
    }
}

/**
 * Whole packs of kUnroll x Policy<T> (Policy: a backend's Full or Ordered) for every stream of a
 * step: the same kVecs vectors, lanes in the same order, whatever the storage type. Unrolling
 * gives the core independent vectors to overlap across the latency of sqrt and div.
 */
template <class A, template <class> class Policy, int kUnroll, class Lead>
struct Packs {
    static constexpr int kVecsEach = Policy<Lead>::kVecs;
    static constexpr int kVecs = kVecsEach * kUnroll;
    static constexpr uint64_t kElems = kVecs * A::kLanes;
    using P = Pack<typename A::V, kVecs>;

    template <class T>
    static P Load(const T* x)
    {
        static_assert(Policy<T>::kVecs == kVecsEach, "one step's streams move the same vectors");
        P out;
        for (int u = 0; u < kUnroll; ++u) {
            const auto part = Policy<T>::Load(x + u * kVecsEach * A::kLanes);
            for (int k = 0; k < kVecsEach; ++k) {
                out.v[u * kVecsEach + k] = part.v[k];
            }
        }
        return out;
    }
    template <class T>
    static void Store(T* x, const P& y)
    {
        for (int u = 0; u < kUnroll; ++u) {
            Pack<typename A::V, kVecsEach> part;
            for (int k = 0; k < kVecsEach; ++k) {
                part.v[k] = y.v[u * kVecsEach + k];
            }
            Policy<T>::Store(x + u * kVecsEach * A::kLanes, part);
        }
    }
};

/** One memory-policy step at element i: load every input, update, store every output. */
template <class A, class K, class Mem>
inline void Step(const Consts<A>& c, const Streams<K>& t, uint64_t i, const Mem& mem)
{
    const auto g = mem.Load(t.g + i);
    const auto p = mem.Load(t.p + i);
    const auto m = mem.Load(t.m + i);
    const auto v = mem.Load(t.v + i);
    decltype(mem.Load(t.m)) s{}, maxV{};
    if constexpr (K::kEma) {
        s = mem.Load(t.s + i);
    }
    if constexpr (K::kAmsgrad) {
        maxV = mem.Load(t.maxV + i);
    }
    decltype(mem.Load(t.m)) pOut, mOut, vOut, sOut, maxVOut;
    for (int k = 0; k < Mem::kVecs; ++k) {
        Lanes<typename A::V> out;
        Update<A, K>(c, {g.v[k], p.v[k], m.v[k], v.v[k], s.v[k], maxV.v[k]}, out);
        pOut.v[k] = out.p;
        mOut.v[k] = out.m;
        vOut.v[k] = out.v;
        sOut.v[k] = out.s;
        maxVOut.v[k] = out.maxV;
    }
    mem.Store(t.pOut + i, pOut);
    mem.Store(t.mOut + i, mOut);
    mem.Store(t.vOut + i, vOut);
    if constexpr (K::kEma) {
        mem.Store(t.sOut + i, sOut);
    }
    if constexpr (K::kAmsgrad) {
        mem.Store(t.maxVOut + i, maxVOut);
    }
    if constexpr (K::kHasCopy) {
        mem.Store(t.copy + i, pOut);  // RNE of the fp32 var'
    }
}

/**
 * Packs per step of a streaming launch (1 for launches the caches hold). In the caches the loop
 * is bound by the floating-point pipes' throughput (div and sqrt share them with the eleven
 * multiplies), not by the div/sqrt latency, and more packs per step only add register spills:
 * fp32, 2^14 elements, one thread on Zen 4, AVX2 5.77 us with 1 pack, 6.50 with 2, 6.99 with 4
 * (llvm-mca's Zen 3 model agrees: 11.0 vs 12.4 cycles per 8 elements). From memory, fewer
 * micro-ops per byte keep more loads in flight: 16.8M elements, AVX2 5-27 % faster with 2 packs
 * than with 1 in each of five interleaved runs, 4 packs no better (docs/PERFORMANCE.md).
 */
constexpr int kStreamingUnroll = 2;

/** Asks for the inputs' lines at element i into L2 (prefetcht1), for backends whose streaming
 *  loops keep too few loads in flight on their own (A::kStreamingPrefetch). Prefetches never
 *  fault: past the end of a tensor they are dropped. */
template <class K>
inline void PrefetchInputs(const Streams<K>& t, uint64_t i)
{
    constexpr int kRead = 0;
    constexpr int kL2 = 2;
    __builtin_prefetch(t.g + i, kRead, kL2);
    __builtin_prefetch(t.p + i, kRead, kL2);
    __builtin_prefetch(t.m + i, kRead, kL2);
    __builtin_prefetch(t.v + i, kRead, kL2);
    if constexpr (K::kEma) {
        __builtin_prefetch(t.s + i, kRead, kL2);
    }
    if constexpr (K::kAmsgrad) {
        __builtin_prefetch(t.maxV + i, kRead, kL2);
    }
}

/** kUnroll for backend A: the portable backend's one-element steps are never unrolled. */
template <class A>
constexpr int UnrollFor(bool streaming)
{
    return A::kLanes > 1 && streaming ? kStreamingUnroll : 1;
}

/**
 * Elements [begin, end) of one range: packs of kUnroll policy loads, then single ones, then the
 * tail (masked vectors if the backend can, else the portable backend one element at a time).
 */
template <class A, class K, int kUnroll>
inline void VectorLoop(const UpdateScalars& k, float gradDivisor, const Streams<K>& t,
                       uint64_t begin, uint64_t end)
{
    using Lead = typename K::Param;
    const Consts<A> c(k, gradDivisor);
    uint64_t i = begin;
    const auto packs = [&](auto mem) {
        using Mem = decltype(mem);
        for (; i + Mem::kElems <= end; i += Mem::kElems) {
            if constexpr (kUnroll > 1 && A::kStreamingPrefetch > 0) {
                PrefetchInputs(t, i + A::kStreamingPrefetch);
            }
            Step<A, K>(c, t, i, mem);
        }
    };
    if constexpr (K::kUniform) {
        packs(Packs<A, A::template Full, kUnroll, Lead>{});
        if constexpr (kUnroll > 1) {
            packs(Packs<A, A::template Full, 1, Lead>{});
        }
    } else {
        packs(Packs<A, A::template Ordered, kUnroll, Lead>{});
        if constexpr (kUnroll > 1) {
            packs(Packs<A, A::template Ordered, 1, Lead>{});
        }
    }
    if constexpr (A::kMaskedTail) {
        for (; i < end; i += A::kLanes) {
            const uint64_t n = end - i < A::kLanes ? end - i : A::kLanes;
            Step<A, K>(c, t, i, typename A::Part(n));
        }
    } else if (i < end) {
        const Consts<Scalar> one(k, gradDivisor);
        for (; i < end; ++i) {
            Step<Scalar, K>(one, t, i, Packs<Scalar, Scalar::Full, 1, Lead>{});
        }
    }
}

}  // namespace
}  // namespace ascend_ema_adam::native

#endif  // ASCEND_EMA_ADAM_EMA_ADAM_NATIVE_UPDATE_H
