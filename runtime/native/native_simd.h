/**
 * @file native_simd.h
 * @brief The vector backends the native CPU kernels are written over, and the portable one.
 *
 * A backend A provides: V (a vector of kLanes floats); Set1, Add, Sub, Mul, Div, Sqrt (one IEEE
 * rounding each, lane by lane) and Max(a, b) = a > b ? a : b (x86's
 * maxps: b when either is NaN, b for +-0 pairs); LoadFloat, Stream (a store that bypasses the
 * caches, to an address aligned to the vector) and StreamFence; and memory policies that move a
 * Pack of kVecs vectors: Full<T> (kVecs * kLanes elements of storage type T: float, F16, Bf16),
 * Ordered<T> (kLanes elements in lane order, kVecs = 1 for every T: what a loop mixing storage
 * types uses, since all of one step's loads must agree on the lanes) and, if kMaskedTail, Part
 * (n <= kLanes elements, any T, in order). Full may assign elements to lanes in any order, as long
 * as Store inverts Load's order (the kernels are elementwise). Narrowing rounds to nearest even;
 * widening is exact. kStreamingPrefetch: how many elements ahead the loops of streaming launches
 * prefetch their inputs into L2 (0: not at all). native_simd_avx2.h and native_simd_avx512.h
 * hold the x86 backends.
 *
 * Everything here has internal linkage and uses only compiler builtins (no inline library
 * functions): each ISA translation unit compiles its own copy with its own instruction set, and
 * the linker can never hand the AVX-512 copy of a helper to the generic build.
 */
#ifndef ASCEND_EMA_ADAM_NATIVE_SIMD_H
#define ASCEND_EMA_ADAM_NATIVE_SIMD_H

#include <cstdint>

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

/**
 * Portable backend: one element at a time (the generic build, and the tails of backends without
 * masked memory access). F16 converts on the bit pattern, rounding to nearest even and quieting
 * NaNs (keeping their payload's top bits) as F16C's vcvtps2ph/vcvtph2ps and aarch64's fcvt do: no
 * _Float16, which GCC's C++ has on x86 from GCC 12 and on aarch64 only from GCC 13.
 */
struct Scalar {
    using V = float;
    static constexpr uint64_t kLanes = 1;
    static constexpr bool kMaskedTail = false;
    static constexpr uint64_t kStreamingPrefetch = 0;
    static V Set1(float x) { return x; }
    static V Add(V a, V b) { return a + b; }
    static V Sub(V a, V b) { return a - b; }
    static V Mul(V a, V b) { return a * b; }
    static V Div(V a, V b) { return a / b; }
    static V Sqrt(V a) { return __builtin_sqrtf(a); }
    static V Max(V a, V b) { return a > b ? a : b; }
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
    template <class T>
    using Ordered = Full<T>;

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
        const uint32_t sign = static_cast<uint32_t>(x.bits & 0x8000U) << 16;
        const uint32_t exponent = (x.bits >> 10) & 0x1fU;
        const uint32_t mantissa = x.bits & 0x3ffU;
        uint32_t bits;
        if (exponent == 0x1fU) {  // inf, or a NaN made quiet
            bits = sign | 0x7f800000U | (mantissa << 13) | (mantissa != 0U ? 0x00400000U : 0U);
        } else if (exponent != 0U) {
            bits = sign | ((exponent + (127U - 15U)) << 23) | (mantissa << 13);
        } else {  // zero or subnormal: mantissa * 2^-24, exact in fp32
            const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
            __builtin_memcpy(&bits, &magnitude, sizeof bits);
            bits |= sign;
        }
        float f;
        __builtin_memcpy(&f, &bits, sizeof f);
        return f;
    }
    static F16 Narrow(V y, const F16*)
    {
        uint32_t bits;
        __builtin_memcpy(&bits, &y, sizeof bits);
        const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000U);
        const uint32_t magnitude = bits & 0x7fffffffU;
        if (magnitude > 0x7f800000U) {  // NaN: quiet, the payload's top 9 bits kept
            return {static_cast<uint16_t>(sign | 0x7e00U | ((magnitude >> 13) & 0x3ffU))};
        }
        if (magnitude >= 0x477ff000U) {  // 65520 and above round to inf
            return {static_cast<uint16_t>(sign | 0x7c00U)};
        }
        if (magnitude < 0x38800000U) {
            // Below 2^-14, half's subnormals: adding 0.5 (ulp 2^-24, half's subnormal step) rounds
            // the magnitude to nearest even in fp32 arithmetic; the code is in the sum's low bits.
            float f;
            __builtin_memcpy(&f, &magnitude, sizeof f);
            const float sum = f + 0.5f;
            uint32_t sumBits;
            __builtin_memcpy(&sumBits, &sum, sizeof sumBits);
            return {static_cast<uint16_t>(sign | (sumBits - 0x3f000000U))};
        }
        // Normal: rebias the exponent and round the 13 dropped bits to nearest even (a carry into
        // the exponent is the correct result, up to inf).
        const uint32_t odd = (magnitude >> 13) & 1U;
        const uint32_t rounded = magnitude + ((15U - 127U) << 23) + 0xfffU + odd;
        return {static_cast<uint16_t>(sign | (rounded >> 13))};
    }
};

}  // namespace
}  // namespace ascend_ema_adam::native

#endif  // ASCEND_EMA_ADAM_NATIVE_SIMD_H
