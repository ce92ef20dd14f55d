/**
 * @file native_simd_avx512.h
 * @brief The AVX-512 (F, BW, VL) + F16C backend: 16 fp32 lanes per instruction,
 *        masked tails.
 *        Defines AEA_NATIVE_HAVE_AVX512 (and the backend) only in a translation unit compiled with
 *        those extensions; the kernels call it only when the CPU reports them (BestIsa).
 */
#ifndef ASCEND_EMA_ADAM_NATIVE_SIMD_AVX512_H
#define ASCEND_EMA_ADAM_NATIVE_SIMD_AVX512_H

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__F16C__)

#include <immintrin.h>

#include "native_simd.h"

#define AEA_NATIVE_HAVE_AVX512 1

namespace ascend_ema_adam::native {
namespace {

struct Avx512 {
    using V = __m512;
    static constexpr uint64_t kLanes = 16;
    static constexpr bool kMaskedTail = true;
    static constexpr uint64_t kStreamingPrefetch = 0;  // measured: no gain (AVX2's helps)
    static V Set1(float x) { return _mm512_set1_ps(x); }
    static V Add(V a, V b) { return _mm512_add_ps(a, b); }
    static V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
    static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
    static V Div(V a, V b) { return _mm512_div_ps(a, b); }
    static V Sqrt(V a) { return _mm512_sqrt_ps(a); }
    static V Max(V a, V b) { return _mm512_max_ps(a, b); }
    static V LoadFloat(const float* x) { return _mm512_loadu_ps(x); }
    static void Stream(float* x, V y) { _mm512_stream_ps(x, y); }
    static void StreamFence() { _mm_sfence(); }

    static constexpr int kF16Rne = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    /** bf16 of each lane, round to nearest even on the bit pattern (add 0x7fff plus the kept lsb),
     *  NaN quieted; in the low 16 bits of the 32-bit lane. */
    static __m512i Bf16Bits(V y)
    {
        const __m512i bits = _mm512_castps_si512(y);
        const __m512i high = _mm512_srli_epi32(bits, 16);
        const __m512i lsb = _mm512_and_si512(high, _mm512_set1_epi32(1));
        const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7fff)), lsb), 16);
        const __mmask16 nan = _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q);
        return _mm512_mask_or_epi32(rounded, nan, high, _mm512_set1_epi32(0x0040));
    }

    template <class T>
    struct Full;
    template <class T>
    struct Ordered : Full<T> {};  // float and F16 are in lane order already

    /** The first n (<= 16) lanes, in order; the others are neither read nor written. */
    struct Part {
        using P = Pack<V, 1>;
        static constexpr int kVecs = 1;
        explicit Part(uint64_t n) : mask(static_cast<__mmask16>((1U << n) - 1U)) {}
        P Load(const float* x) const { return {{_mm512_maskz_loadu_ps(mask, x)}}; }
        void Store(float* x, const P& y) const { _mm512_mask_storeu_ps(x, mask, y.v[0]); }
        P Load(const Bf16* x) const
        {
            const __m512i wide = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, x));
            return {{_mm512_castsi512_ps(_mm512_slli_epi32(wide, 16))}};
        }
        void Store(Bf16* x, const P& y) const { _mm256_mask_storeu_epi16(x, mask, _mm512_cvtepi32_epi16(Bf16Bits(y.v[0]))); }
        P Load(const F16* x) const { return {{_mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, x))}}; }
        void Store(F16* x, const P& y) const { _mm256_mask_storeu_epi16(x, mask, _mm512_cvtps_ph(y.v[0], kF16Rne)); }
        __mmask16 mask;
    };
};

template <>
struct Avx512::Full<float> {
    using P = Pack<V, 1>;
    static constexpr int kVecs = 1;
    static P Load(const float* x) { return {{_mm512_loadu_ps(x)}}; }
    static void Store(float* x, const P& y) { _mm512_storeu_ps(x, y.v[0]); }
};

template <>
struct Avx512::Full<F16> {
    using P = Pack<V, 1>;
    static constexpr int kVecs = 1;
    static P Load(const F16* x) { return {{_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)))}}; }
    static void Store(F16* x, const P& y) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(x), _mm512_cvtps_ph(y.v[0], kF16Rne)); }
};

/** 32 bf16 per step. Interleaving with zero words widens exactly (bf16 is the high half of fp32)
 *  in one instruction per vector, but takes the elements per 128-bit lane in the order 0-3 | 4-7;
 *  the per-lane pack of Store restores it. */
template <>
struct Avx512::Full<Bf16> {
    using P = Pack<V, 2>;
    static constexpr int kVecs = 2;
    static P Load(const Bf16* x)
    {
        const __m512i bits = _mm512_loadu_si512(x);
        const __m512i zero = _mm512_setzero_si512();
        return {{_mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, bits)), _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, bits))}};
    }
    static void Store(Bf16* x, const P& y) { _mm512_storeu_si512(x, _mm512_packus_epi32(Bf16Bits(y.v[0]), Bf16Bits(y.v[1]))); }
};

/** 16 bf16 in lane order (zero-extend and shift; narrow with one in-order truncating move of
 *  the rounded bits), for loops that mix bf16 with other storage types. */
template <>
struct Avx512::Ordered<Bf16> {
    using P = Pack<V, 1>;
    static constexpr int kVecs = 1;
    static P Load(const Bf16* x)
    {
        const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
        return {{_mm512_castsi512_ps(_mm512_slli_epi32(wide, 16))}};
    }
    static void Store(Bf16* x, const P& y) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(x), _mm512_cvtepi32_epi16(Bf16Bits(y.v[0]))); }
};

}  // namespace
}  // namespace ascend_ema_adam::native

#endif
#endif  // ASCEND_EMA_ADAM_NATIVE_SIMD_AVX512_H
