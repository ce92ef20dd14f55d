// Per-element loops of the twin's vector instructions (see twin_kernels.h). Built -O3 -ffp-contract=off.
// `#pragma GCC ivdep` tells the vectorizer what the OVERLAP rule guarantees: operands are identical or
// disjoint, so no iteration depends on another and in-place calls vectorize like out-of-place ones.
#include "twin_kernels.h"

#include <cmath>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_THREAD__)
#include <cpuid.h>
#include <immintrin.h>
// Each hot loop is also compiled for AVX2 and picked at load time (ifunc); same source, same results.
// (Not under ThreadSanitizer: ifunc resolvers run before its runtime is up.)
#define TWIN_HOT __attribute__((target_clones("avx2", "default")))
#define TWIN_F16C 1
#else
#define TWIN_HOT
#define TWIN_F16C 0
#endif

namespace twin::detail::kern {
namespace {

using fp::Bf16ToFloat;
using fp::FloatToBf16Rne;
using fp::FloatToHalfRne;
using fp::HalfToFloat;

template <class F>
inline void Each(size_t n, F f) {
#pragma GCC ivdep
    for (size_t i = 0; i < n; ++i) f(i);
}

inline float Hf(half h) { return HalfToFloat(h.bits); }
inline half Fh(float f) {
    half h;
    h.bits = FloatToHalfRne(f);
    return h;
}

// Comparisons written so the compiler emits maxps/minps.
inline float MaxF(float a, float b) { return a > b ? a : b; }
inline float MinF(float a, float b) { return a < b ? a : b; }

// Integer arithmetic wraps (computed unsigned to stay defined).
template <class I>
inline I Wrap(uint32_t v) { return static_cast<I>(v); }

template <class I>
void BinaryInt(BinOp op, I* d, const I* a, const I* b, size_t n) {
    using U = uint32_t;
    switch (op) {
        case BinOp::Add: Each(n, [&](size_t i) { d[i] = Wrap<I>(U(a[i]) + U(b[i])); }); break;
        case BinOp::Sub: Each(n, [&](size_t i) { d[i] = Wrap<I>(U(a[i]) - U(b[i])); }); break;
        case BinOp::Mul: Each(n, [&](size_t i) { d[i] = Wrap<I>(U(a[i]) * U(b[i])); }); break;
        case BinOp::Max: Each(n, [&](size_t i) { d[i] = a[i] > b[i] ? a[i] : b[i]; }); break;
        case BinOp::Min: Each(n, [&](size_t i) { d[i] = a[i] < b[i] ? a[i] : b[i]; }); break;
        case BinOp::Div: break;  // rejected by DTYPE before dispatch
    }
}

template <class I>
void ScalarInt(ScalarOp op, I* d, const I* a, I s, size_t n) {
    using U = uint32_t;
    switch (op) {
        case ScalarOp::Adds: Each(n, [&](size_t i) { d[i] = Wrap<I>(U(a[i]) + U(s)); }); break;
        case ScalarOp::Muls: Each(n, [&](size_t i) { d[i] = Wrap<I>(U(a[i]) * U(s)); }); break;
        case ScalarOp::Maxs: Each(n, [&](size_t i) { d[i] = a[i] > s ? a[i] : s; }); break;
        case ScalarOp::Mins: Each(n, [&](size_t i) { d[i] = a[i] < s ? a[i] : s; }); break;
    }
}

// float -> int32 with saturation; NaN gives 0.
inline int32_t SaturateToInt(float r) {
    if (!(r == r)) return 0;
    if (r >= 2147483648.0f) return INT32_MAX;
    if (r < -2147483648.0f) return INT32_MIN;
    return static_cast<int32_t>(r);
}

#if TWIN_F16C
// x86 F16C converts exactly like FloatToHalfRne / HalfToFloat (checked over all inputs) and is several
// times faster; the scalar functions finish the tail.
// F16C by CPUID leaf 1 (ECX bit 29): clang before 16 has no "f16c" for __builtin_cpu_supports.
bool CpuHasF16c() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
}
const bool kHasF16c = __builtin_cpu_supports("avx") && CpuHasF16c();

__attribute__((target("avx,f16c"))) void FloatToHalfF16c(half* d, const float* s, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
    }
    for (; i < n; ++i) d[i].bits = FloatToHalfRne(s[i]);
}

__attribute__((target("avx,f16c"))) void HalfToFloatF16c(float* d, const half* s, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
    }
    for (; i < n; ++i) d[i] = HalfToFloat(s[i].bits);
}
#endif

}  // namespace

TWIN_HOT void Binary(BinOp op, float* d, const float* a, const float* b, size_t n) {
    switch (op) {
        case BinOp::Add: Each(n, [&](size_t i) { d[i] = a[i] + b[i]; }); break;
        case BinOp::Sub: Each(n, [&](size_t i) { d[i] = a[i] - b[i]; }); break;
        case BinOp::Mul: Each(n, [&](size_t i) { d[i] = a[i] * b[i]; }); break;
        case BinOp::Div: Each(n, [&](size_t i) { d[i] = a[i] / b[i]; }); break;
        case BinOp::Max: Each(n, [&](size_t i) { d[i] = MaxF(a[i], b[i]); }); break;
        case BinOp::Min: Each(n, [&](size_t i) { d[i] = MinF(a[i], b[i]); }); break;
    }
}

TWIN_HOT void Binary(BinOp op, half* d, const half* a, const half* b, size_t n) {
    switch (op) {
        case BinOp::Add: Each(n, [&](size_t i) { d[i] = Fh(Hf(a[i]) + Hf(b[i])); }); break;
        case BinOp::Sub: Each(n, [&](size_t i) { d[i] = Fh(Hf(a[i]) - Hf(b[i])); }); break;
        case BinOp::Mul: Each(n, [&](size_t i) { d[i] = Fh(Hf(a[i]) * Hf(b[i])); }); break;
        case BinOp::Div: Each(n, [&](size_t i) { d[i] = Fh(Hf(a[i]) / Hf(b[i])); }); break;
        case BinOp::Max: Each(n, [&](size_t i) { d[i] = Fh(MaxF(Hf(a[i]), Hf(b[i]))); }); break;
        case BinOp::Min: Each(n, [&](size_t i) { d[i] = Fh(MinF(Hf(a[i]), Hf(b[i]))); }); break;
    }
}

void Binary(BinOp op, int32_t* d, const int32_t* a, const int32_t* b, size_t n) { BinaryInt(op, d, a, b, n); }
void Binary(BinOp op, int16_t* d, const int16_t* a, const int16_t* b, size_t n) { BinaryInt(op, d, a, b, n); }

TWIN_HOT void Scalar(ScalarOp op, float* d, const float* a, float s, size_t n) {
    switch (op) {
        case ScalarOp::Adds: Each(n, [&](size_t i) { d[i] = a[i] + s; }); break;
        case ScalarOp::Muls: Each(n, [&](size_t i) { d[i] = a[i] * s; }); break;
        case ScalarOp::Maxs: Each(n, [&](size_t i) { d[i] = MaxF(a[i], s); }); break;
        case ScalarOp::Mins: Each(n, [&](size_t i) { d[i] = MinF(a[i], s); }); break;
    }
}

TWIN_HOT void Scalar(ScalarOp op, half* d, const half* a, half s, size_t n) {
    const float sf = Hf(s);
    switch (op) {
        case ScalarOp::Adds: Each(n, [&](size_t i) { d[i] = Fh(Hf(a[i]) + sf); }); break;
        case ScalarOp::Muls: Each(n, [&](size_t i) { d[i] = Fh(Hf(a[i]) * sf); }); break;
        case ScalarOp::Maxs: Each(n, [&](size_t i) { d[i] = Fh(MaxF(Hf(a[i]), sf)); }); break;
        case ScalarOp::Mins: Each(n, [&](size_t i) { d[i] = Fh(MinF(Hf(a[i]), sf)); }); break;
    }
}

void Scalar(ScalarOp op, int32_t* d, const int32_t* a, int32_t s, size_t n) { ScalarInt(op, d, a, s, n); }
void Scalar(ScalarOp op, int16_t* d, const int16_t* a, int16_t s, size_t n) { ScalarInt(op, d, a, s, n); }

TWIN_HOT void Unary(UnOp op, float* d, const float* a, size_t n) {
    switch (op) {
        case UnOp::Sqrt: Each(n, [&](size_t i) { d[i] = std::sqrt(a[i]); }); break;
        case UnOp::Abs: Each(n, [&](size_t i) { d[i] = std::fabs(a[i]); }); break;
        case UnOp::Exp: Each(n, [&](size_t i) { d[i] = std::exp(a[i]); }); break;
        case UnOp::Reciprocal: Each(n, [&](size_t i) { d[i] = 1.0f / a[i]; }); break;
        case UnOp::Rsqrt: Each(n, [&](size_t i) { d[i] = 1.0f / std::sqrt(a[i]); }); break;
    }
}

TWIN_HOT void Unary(UnOp op, half* d, const half* a, size_t n) {
    switch (op) {
        case UnOp::Sqrt: Each(n, [&](size_t i) { d[i] = Fh(std::sqrt(Hf(a[i]))); }); break;
        case UnOp::Abs: Each(n, [&](size_t i) { d[i].bits = static_cast<uint16_t>(a[i].bits & 0x7fffu); }); break;
        case UnOp::Exp: Each(n, [&](size_t i) { d[i] = Fh(std::exp(Hf(a[i]))); }); break;
        case UnOp::Reciprocal: Each(n, [&](size_t i) { d[i] = Fh(1.0f / Hf(a[i])); }); break;
        case UnOp::Rsqrt: Each(n, [&](size_t i) { d[i] = Fh(1.0f / std::sqrt(Hf(a[i]))); }); break;
    }
}

TWIN_HOT void Axpy(float* d, const float* s, float a, size_t n) {
    Each(n, [&](size_t i) {
        const float p = s[i] * a;
        d[i] = p + d[i];
    });
}

// half * half is exact in fp32, so the multiply rounding is a no-op here; the add rounds once.
TWIN_HOT void Axpy(float* d, const half* s, half a, size_t n) {
    const float af = Hf(a);
    Each(n, [&](size_t i) {
        const float p = Hf(s[i]) * af;
        d[i] = p + d[i];
    });
}

TWIN_HOT void Axpy(half* d, const half* s, half a, size_t n) {
    const float af = Hf(a);
    Each(n, [&](size_t i) {
        const float p = Hf(Fh(Hf(s[i]) * af));
        d[i] = Fh(p + Hf(d[i]));
    });
}

TWIN_HOT void Fill(uint16_t* d, uint16_t v, size_t n) { Each(n, [&](size_t i) { d[i] = v; }); }
TWIN_HOT void Fill(uint32_t* d, uint32_t v, size_t n) { Each(n, [&](size_t i) { d[i] = v; }); }

namespace {

TWIN_HOT void CastHalfToFloatSw(float* d, const half* s, size_t n) {
    Each(n, [&](size_t i) { d[i] = HalfToFloat(s[i].bits); });
}

TWIN_HOT void CastFloatToHalfSw(half* d, const float* s, size_t n) {
    Each(n, [&](size_t i) { d[i].bits = FloatToHalfRne(s[i]); });
}

}  // namespace

void Cast(float* d, const half* s, size_t n) {
#if TWIN_F16C
    if (kHasF16c) return HalfToFloatF16c(d, s, n);
#endif
    CastHalfToFloatSw(d, s, n);
}
TWIN_HOT void Cast(float* d, const bfloat16_t* s, size_t n) { Each(n, [&](size_t i) { d[i] = Bf16ToFloat(s[i].bits); }); }

void Cast(half* d, const float* s, size_t n, AscendC::RoundMode mode) {
    if (mode == AscendC::RoundMode::CAST_RINT || mode == AscendC::RoundMode::CAST_NONE) {
#if TWIN_F16C
        if (kHasF16c) return FloatToHalfF16c(d, s, n);
#endif
        CastFloatToHalfSw(d, s, n);
    } else {
        Each(n, [&](size_t i) { d[i].bits = static_cast<uint16_t>(fp::NarrowFloat<5, 10>(s[i], mode)); });
    }
}

TWIN_HOT void Cast(bfloat16_t* d, const float* s, size_t n, AscendC::RoundMode mode) {
    if (mode == AscendC::RoundMode::CAST_RINT) {
        Each(n, [&](size_t i) { d[i].bits = FloatToBf16Rne(s[i]); });
    } else {
        Each(n, [&](size_t i) { d[i].bits = static_cast<uint16_t>(fp::NarrowFloat<8, 7>(s[i], mode)); });
    }
}

TWIN_HOT void Cast(float* d, const int32_t* s, size_t n) { Each(n, [&](size_t i) { d[i] = static_cast<float>(s[i]); }); }

void Cast(int32_t* d, const float* s, size_t n, AscendC::RoundMode mode) {
    switch (mode) {
        case AscendC::RoundMode::CAST_FLOOR: Each(n, [&](size_t i) { d[i] = SaturateToInt(std::floor(s[i])); }); break;
        case AscendC::RoundMode::CAST_CEIL: Each(n, [&](size_t i) { d[i] = SaturateToInt(std::ceil(s[i])); }); break;
        case AscendC::RoundMode::CAST_ROUND: Each(n, [&](size_t i) { d[i] = SaturateToInt(std::round(s[i])); }); break;
        case AscendC::RoundMode::CAST_TRUNC: Each(n, [&](size_t i) { d[i] = SaturateToInt(std::trunc(s[i])); }); break;
        default: Each(n, [&](size_t i) { d[i] = SaturateToInt(std::nearbyint(s[i])); }); break;  // CAST_RINT
    }
}

void Cast(half* d, const uint8_t* s, size_t n) {
    Each(n, [&](size_t i) { d[i].bits = FloatToHalfRne(static_cast<float>(s[i])); });  // exact: < 2^11
}

namespace {

// An integer rounding of a (widened) half in `mode`, as Cast(int32_t*, const float*) rounds.
inline float RoundIn(float x, AscendC::RoundMode mode) {
    switch (mode) {
        case AscendC::RoundMode::CAST_FLOOR: return std::floor(x);
        case AscendC::RoundMode::CAST_CEIL: return std::ceil(x);
        case AscendC::RoundMode::CAST_ROUND: return std::round(x);
        case AscendC::RoundMode::CAST_TRUNC: return std::trunc(x);
        default: return std::nearbyint(x);  // CAST_RINT (and CAST_NONE where allowed)
    }
}

}  // namespace

void Cast(int32_t* d, const half* s, size_t n, AscendC::RoundMode mode) {
    Each(n, [&](size_t i) { d[i] = SaturateToInt(RoundIn(HalfToFloat(s[i].bits), mode)); });
}

void Cast(uint8_t* d, const half* s, size_t n, AscendC::RoundMode mode) {
    Each(n, [&](size_t i) {  // saturating to [0, 255]; NaN gives 0
        const float r = RoundIn(HalfToFloat(s[i].bits), mode);
        d[i] = r >= 255.0f ? uint8_t{255} : r > 0.0f ? static_cast<uint8_t>(r) : uint8_t{0};
    });
}

void Gather(uint32_t* d, const uint32_t* src, const uint32_t* offsets, uint32_t base, size_t n) {
    for (size_t i = 0; i < n; ++i) d[i] = src[(base + offsets[i]) / sizeof(uint32_t)];
}
void Gather(uint16_t* d, const uint16_t* src, const uint32_t* offsets, uint32_t base, size_t n) {
    for (size_t i = 0; i < n; ++i) d[i] = src[(base + offsets[i]) / sizeof(uint16_t)];
}

namespace {

template <class T>
bool Compares(T a, T b, AscendC::CMPMODE mode) {
    switch (mode) {
        case AscendC::CMPMODE::LT: return a < b;
        case AscendC::CMPMODE::GT: return a > b;
        case AscendC::CMPMODE::EQ: return a == b;
        case AscendC::CMPMODE::LE: return a <= b;
        case AscendC::CMPMODE::GE: return a >= b;
        case AscendC::CMPMODE::NE: return a != b;
    }
    return false;
}

template <class Get>
void CompareBits(uint8_t* d, size_t n, const Get& bit) {
    for (size_t byte = 0; byte < (n + 7) / 8; ++byte) {
        uint8_t v = 0;
        for (size_t k = 0; k < 8 && byte * 8 + k < n; ++k) v |= static_cast<uint8_t>(bit(byte * 8 + k) ? 1U << k : 0U);
        d[byte] = v;
    }
}

template <class T>
void SelectBits(T* d, const uint8_t* mask, const T* a, const T* b, size_t n) {
    for (size_t i = 0; i < n; ++i) d[i] = ((mask[i / 8] >> (i % 8)) & 1U) != 0 ? a[i] : b[i];
}

}  // namespace

void Compare(uint8_t* d, const float* a, const float* b, AscendC::CMPMODE mode, size_t n) {
    CompareBits(d, n, [&](size_t i) { return Compares(a[i], b[i], mode); });
}
void Compare(uint8_t* d, const half* a, const half* b, AscendC::CMPMODE mode, size_t n) {
    CompareBits(d, n, [&](size_t i) { return Compares(HalfToFloat(a[i].bits), HalfToFloat(b[i].bits), mode); });
}
void Select(uint32_t* d, const uint8_t* mask, const uint32_t* a, const uint32_t* b, size_t n) {
    SelectBits(d, mask, a, b, n);
}
void Select(uint16_t* d, const uint8_t* mask, const uint16_t* a, const uint16_t* b, size_t n) {
    SelectBits(d, mask, a, b, n);
}

namespace {

// A 16-bit float with `expMask` its exponent field: inf -> sign | maxBits, NaN -> +0.
TWIN_HOT void Saturate16(uint16_t* d, size_t n, uint16_t expMask, uint16_t maxBits) {
    Each(n, [&](size_t i) {
        const uint16_t b = d[i];
        if ((b & expMask) == expMask) {
            d[i] = (b & static_cast<uint16_t>(~0x8000U & ~expMask)) != 0
                       ? uint16_t{0}
                       : static_cast<uint16_t>((b & 0x8000U) | maxBits);
        }
    });
}

}  // namespace

void Saturate(half* d, size_t n) { Saturate16(reinterpret_cast<uint16_t*>(d), n, 0x7C00, 0x7BFF); }
void Saturate(bfloat16_t* d, size_t n) { Saturate16(reinterpret_cast<uint16_t*>(d), n, 0x7F80, 0x7F7F); }

}  // namespace twin::detail::kern
