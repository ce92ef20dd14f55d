/**
 * @file native_update_impl.h
 * @brief The native kernel's update, written once over a vector backend `A` and instantiated by each
 *        ISA translation unit (native_update_<isa>.cpp). Everything here has internal linkage, so
 *        the AVX-512 copy of a helper can never be picked by the linker for the generic build.
 *
 * A backend provides: V (a vector of kLanes floats); Set1, Add, Sub, Mul, Div, Sqrt (one IEEE
 * rounding each, lane by lane); LoadFloat, Stream (a store that bypasses the caches, to an address
 * aligned to the vector) and StreamFence for the bandwidth probes; and memory policies that move a Pack of kVecs vectors: Full<T>
 * (kVecs * kLanes elements of storage type T) and, if kMaskedTail, Part (n <= kLanes elements, any
 * T). A policy may assign elements to lanes in any order, as long as Store inverts Load's order:
 * the update is elementwise. Narrowing is round to nearest even; widening is exact. This file is compiled with -ffp-contract=off and without fast-math, and
 * the backends call one intrinsic per operation, so the arithmetic is the AscendC kernel's, operation
 * for operation. Only compiler builtins are used (no inline library functions): a library inline
 * compiled here with AVX-512 could otherwise be merged into, and run by, the generic code.
 */
#ifndef ASCEND_EMA_ADAM_NATIVE_UPDATE_IMPL_H
#define ASCEND_EMA_ADAM_NATIVE_UPDATE_IMPL_H

#include <cstdint>

#include "native_kernel.h"

namespace ascend_ema_adam::native {
namespace {

/** 16-bit storage formats (the bit pattern only). */
struct F16 {
    uint16_t bits;
};
struct Bf16 {
    uint16_t bits;
};

/** kVecs vectors moved by one load or store of a memory policy. */
template <class V, int kVecs>
struct Pack {
    V v[kVecs];
};

/** The launch scalars broadcast once per range. */
template <class A>
struct Consts {
    using V = typename A::V;
    explicit Consts(const Scalars& k)
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

/**
 * Portable backend: one element at a time (the generic build, and the tails of backends without
 * masked memory access). F16 uses the compiler's _Float16, whose conversions round to nearest even.
 */
struct Scalar {
    using V = float;
    static constexpr uint64_t kLanes = 1;
    static constexpr bool kMaskedTail = false;
    static V Set1(float x) { return x; }
    static V Add(V a, V b) { return a + b; }
    static V Sub(V a, V b) { return a - b; }
    static V Mul(V a, V b) { return a * b; }
    static V Div(V a, V b) { return a / b; }
    static V Sqrt(V a) { return __builtin_sqrtf(a); }
    static V LoadFloat(const float* x) { return *x; }
    static void Stream(float* x, V y) { *x = y; }
    static void StreamFence() {}

    using P = Pack<V, 1>;

    template <class T>
    struct Full {
        static constexpr int kVecs = 1;
        static P Load(const T* x) { return {{Widen(*x)}}; }
        static void Store(T* x, const P& y) { *x = Narrow(y.v[0], x); }
    };

    static V Widen(float x) { return x; }
    static float Narrow(V y, const float*) { return y; }
    static V Widen(Bf16 x)
    {
        const uint32_t bits = static_cast<uint32_t>(x.bits) << 16;
        float f;
        __builtin_memcpy(&f, &bits, sizeof f);
        return f;
    }
    static Bf16 Narrow(V y, const Bf16*)
    {
        uint32_t bits;
        __builtin_memcpy(&bits, &y, sizeof bits);
        const bool nan = (bits & 0x7fffffffU) > 0x7f800000U;
        return {static_cast<uint16_t>(nan ? (bits >> 16) | 0x0040U  // quiet the NaN
                                          : (bits + 0x7fffU + ((bits >> 16) & 1U)) >> 16)};
    }
    static V Widen(F16 x)
    {
        _Float16 h;
        __builtin_memcpy(&h, &x.bits, sizeof h);
        return static_cast<float>(h);
    }
    static F16 Narrow(V y, const F16*)
    {
        const _Float16 h = static_cast<_Float16>(y);
        F16 x;
        __builtin_memcpy(&x.bits, &h, sizeof h);
        return x;
    }
};

/** The elements of [begin, end) one at a time (a vector backend's tail without masking). */
template <uint32_t kMode, class T>
inline void ScalarLoop(const Scalars& k, const Tensors<T>& t, uint64_t begin, uint64_t end)
{
    const Consts<Scalar> c(k);
    for (uint64_t i = begin; i < end; ++i) {
        Step<Scalar, kMode>(c, t, i, Scalar::Full<T>{});
    }
}

/** Whole packs, then the tail: masked vectors if the backend can, else one element at a time. */
template <class A, uint32_t kMode, class T>
inline void VectorLoop(const Scalars& k, const Tensors<T>& t, uint64_t begin, uint64_t end)
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
inline void UpdateTyped(const Job& job, uint64_t begin, uint64_t end)
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

/** IsaKernels::update for backend A. */
template <class A>
void UpdateRange(const Job& job, uint64_t begin, uint64_t end)
{
    switch (job.dtype) {
        case Dtype::kFloat32: UpdateTyped<A, float>(job, begin, end); break;
        case Dtype::kFloat16: UpdateTyped<A, F16>(job, begin, end); break;
        case Dtype::kBFloat16: UpdateTyped<A, Bf16>(job, begin, end); break;
    }
}

/** Element(s) i of the copy or triad probe (fp32). */
template <class A>
inline typename A::V ProbeValue(const ProbeJob& job, typename A::V scalar, uint64_t i)
{
    const typename A::V b = A::LoadFloat(job.x[1] + i);
    return job.kind == Probe::kCopy ? b : A::Add(b, A::Mul(scalar, A::LoadFloat(job.x[2] + i)));
}

/** The update probe: the kernel's access pattern (five loads, four in-place stores) with one add
 *  per output instead of the update's arithmetic. */
template <class A, class Mem>
inline void UpdatePatternStep(const ProbeJob& job, uint64_t i, const Mem& mem)
{
    const auto g = mem.Load(job.x[0] + i);
    for (int t = 1; t < 5; ++t) {
        auto y = mem.Load(job.x[t] + i);
        for (int k = 0; k < Mem::kVecs; ++k) {
            y.v[k] = A::Add(y.v[k], g.v[k]);
        }
        mem.Store(job.x[t] + i, y);
    }
}

/**
 * IsaKernels::probe for backend A. With streamingStores, copy and triad store around the caches
 * (A::Stream) once the destination is aligned, so it is not read first (write-allocate): what a
 * large copy can reach. Cached stores are what a copy that fits in the caches can reach. The
 * update probe stores like the kernel (in place, through the caches).
 */
template <class A>
void ProbeRange(const ProbeJob& job, uint64_t begin, uint64_t end)
{
    uint64_t i = begin;
    if (job.kind == Probe::kUpdate) {
        using Full = typename A::template Full<float>;
        for (; i + A::kLanes <= end; i += A::kLanes) {
            UpdatePatternStep<A>(job, i, Full{});
        }
        for (; i < end; ++i) {
            UpdatePatternStep<Scalar>(job, i, Scalar::Full<float>{});
        }
        return;
    }
    constexpr uint64_t kAlign = A::kLanes * sizeof(float);
    const typename A::V scalar = A::Set1(job.scalar);
    float* a = job.x[0];
    for (; i < end && reinterpret_cast<uintptr_t>(a + i) % kAlign != 0; ++i) {
        a[i] = ProbeValue<Scalar>(job, job.scalar, i);
    }
    if (job.streamingStores) {
        for (; i + A::kLanes <= end; i += A::kLanes) {
            A::Stream(a + i, ProbeValue<A>(job, scalar, i));
        }
        A::StreamFence();
    } else {
        using Full = typename A::template Full<float>;
        for (; i + A::kLanes <= end; i += A::kLanes) {
            Full::Store(a + i, {{ProbeValue<A>(job, scalar, i)}});
        }
    }
    for (; i < end; ++i) {
        a[i] = ProbeValue<Scalar>(job, job.scalar, i);
    }
}

}  // namespace
}  // namespace ascend_ema_adam::native

#endif  // ASCEND_EMA_ADAM_NATIVE_UPDATE_IMPL_H
