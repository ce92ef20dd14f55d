/**
 * @file apply_fused_ema_adam_native_impl.h
 * @brief ApplyFusedEmaAdam's native loops, written once over a vector backend `A` (native_simd.h)
 *        and instantiated by each ISA translation unit (apply_fused_ema_adam_native_<isa>.cpp).
 *        Compiled with -ffp-contract=off and without fast-math, one backend call per operation:
 *        the arithmetic is the AscendC kernel's, operation for operation. Internal linkage only
 *        (see native_simd.h).
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_NATIVE_IMPL_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_NATIVE_IMPL_H

#include <cstdint>

#include "apply_fused_ema_adam_native_kernel.h"
#include "native_simd.h"

namespace ascend_ema_adam::native {
namespace {

/** The launch scalars broadcast once per range. */
template <class A>
struct Consts {
    using V = typename A::V;
    explicit Consts(const UpdateScalars& k)
        : lr(A::Set1(k.lr)), beta1(A::Set1(k.beta1)), beta2(A::Set1(k.beta2)),
          oneMinusBeta1(A::Set1(k.oneMinusBeta1)), oneMinusBeta2(A::Set1(k.oneMinusBeta2)),
          eps(A::Set1(k.eps)), weightDecay(A::Set1(k.weightDecay)), decay(A::Set1(k.decay)),
          oneMinusDecay(A::Set1(k.oneMinusDecay)), invC1(A::Set1(k.invC1)), invC2(A::Set1(k.invC2))
    {
    }
    V lr, beta1, beta2, oneMinusBeta1, oneMinusBeta2, eps, weightDecay, decay, oneMinusDecay, invC1,
        invC2;
};

/**
 * The fp32 update of one vector, in the order of the kernel's UpdateFp32 (and of
 * golden.emulate_update): one rounding per line. Results go to the four output references, which
 * the caller stores only after all five inputs are loaded (so in-place updates are safe).
 */
template <class A, uint32_t kMode>
inline void Update(const Consts<A>& c, typename A::V g, typename A::V p, typename A::V m,
                   typename A::V v, typename A::V s, typename A::V& pOut, typename A::V& mOut,
                   typename A::V& vOut, typename A::V& sOut)
{
    using V = typename A::V;
    if constexpr (kMode == 0) {           // Adam + L2
        g = A::Add(A::Mul(p, c.weightDecay), g);  // g = wd*var + g
    }
    mOut = A::Add(A::Mul(g, c.oneMinusBeta1), A::Mul(m, c.beta1));         // m' = (1-b1)*g + b1*m
    const V mHat = A::Mul(mOut, c.invC1);                                   // m' * (1/c1)
    vOut = A::Add(A::Mul(A::Mul(g, g), c.oneMinusBeta2), A::Mul(v, c.beta2));  // v' = g*g*(1-b2) + b2*v
    const V den = A::Add(A::Sqrt(A::Mul(vOut, c.invC2)), c.eps);             // sqrt(v' * (1/c2)) + eps
    V u = A::Div(mHat, den);
    if constexpr (kMode == 1) {           // AdamW: decoupled decay
        u = A::Add(u, A::Mul(p, c.weightDecay));
    }
    pOut = A::Sub(p, A::Mul(u, c.lr));                                      // var' = var - lr*u
    sOut = A::Add(A::Mul(s, c.decay), A::Mul(pOut, c.oneMinusDecay));       // s' = d*s + (1-d)*var'
}

template <class T>
struct Tensors {
    const T* g;
    const T* p;
    const T* m;
    const T* v;
    const T* s;
    T* pOut;
    T* mOut;
    T* vOut;
    T* sOut;
};

/** One memory-policy step at element i: load all five inputs, update, store the four outputs. */
template <class A, uint32_t kMode, class T, class Mem>
inline void Step(const Consts<A>& c, const Tensors<T>& t, uint64_t i, const Mem& mem)
{
    const auto g = mem.Load(t.g + i);
    const auto p = mem.Load(t.p + i);
    const auto m = mem.Load(t.m + i);
    const auto v = mem.Load(t.v + i);
    const auto s = mem.Load(t.s + i);
    decltype(mem.Load(t.g)) pOut, mOut, vOut, sOut;
    for (int k = 0; k < Mem::kVecs; ++k) {
        Update<A, kMode>(c, g.v[k], p.v[k], m.v[k], v.v[k], s.v[k], pOut.v[k], mOut.v[k],
                         vOut.v[k], sOut.v[k]);
    }
    mem.Store(t.pOut + i, pOut);
    mem.Store(t.mOut + i, mOut);
    mem.Store(t.vOut + i, vOut);
    mem.Store(t.sOut + i, sOut);
}

/** The elements of [begin, end) one at a time (a vector backend's tail without masking). */
template <uint32_t kMode, class T>
inline void ScalarLoop(const UpdateScalars& k, const Tensors<T>& t, uint64_t begin, uint64_t end)
{
    const Consts<Scalar> c(k);
    for (uint64_t i = begin; i < end; ++i) {
        Step<Scalar, kMode>(c, t, i, Scalar::Full<T>{});
    }
}

/** Whole packs, then the tail: masked vectors if the backend can, else one element at a time. */
template <class A, uint32_t kMode, class T>
inline void VectorLoop(const UpdateScalars& k, const Tensors<T>& t, uint64_t begin, uint64_t end)
{
    using Full = typename A::template Full<T>;
    constexpr uint64_t kStep = Full::kVecs * A::kLanes;
    const Consts<A> c(k);
    uint64_t i = begin;
    for (; i + kStep <= end; i += kStep) {
        Step<A, kMode>(c, t, i, Full{});
    }
    if constexpr (A::kMaskedTail) {
        for (; i < end; i += A::kLanes) {
            const uint64_t n = end - i < A::kLanes ? end - i : A::kLanes;
            Step<A, kMode>(c, t, i, typename A::Part(n));
        }
    } else {
        ScalarLoop<kMode>(k, t, i, end);
    }
}

template <class A, class T>
inline void UpdateTyped(const ApplyFusedEmaAdamJob& job, uint64_t begin, uint64_t end)
{
    const Tensors<T> t{static_cast<const T*>(job.in[0]), static_cast<const T*>(job.in[1]),
                       static_cast<const T*>(job.in[2]), static_cast<const T*>(job.in[3]),
                       static_cast<const T*>(job.in[4]), static_cast<T*>(job.out[0]),
                       static_cast<T*>(job.out[1]),     static_cast<T*>(job.out[2]),
                       static_cast<T*>(job.out[3])};
    if (job.k.mode == 0) {
        VectorLoop<A, 0>(job.k, t, begin, end);
    } else {
        VectorLoop<A, 1>(job.k, t, begin, end);
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
