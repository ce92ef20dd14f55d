/**
 * @file twin_types.h
 * @brief CPU twin of the AscendC scalar vocabulary: kernel qualifiers, half/bfloat16_t storage types,
 *        the AscendC enums (TPosition, RoundMode, HardEvent, TBufState), pipe_t, and the exact
 *        float <-> half/bf16 conversions every other part of the twin uses.
 */
#ifndef ASCEND_EMA_ADAM_TWIN_TYPES_H
#define ASCEND_EMA_ADAM_TWIN_TYPES_H

#include <cstdint>
#include <cstring>
#include <type_traits>

// Kernel qualifiers are empty on the host, exactly as in AscendC CPU-debug mode.
#define __global__
#define __aicore__
#define __gm__
#define __ubuf__
#define GM_ADDR __gm__ uint8_t*

// CCE pipes (global scope, as in the CCE headers).
enum pipe_t : uint8_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX = 10 };

// Kernel-type annotations for KERNEL_TASK_TYPE_DEFAULT (global scope; names and values as in asc-devkit
// impl/basic_api/utils/kernel_utils_macros.h).
enum KernelMetaType : uint8_t {
    KERNEL_TYPE_AIV_ONLY,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
    KERNEL_TYPE_AICORE,
    KERNEL_TYPE_VECTORCORE,
    KERNEL_TYPE_MIX_AICORE,
    KERNEL_TYPE_MIX_VECTOR_CORE,
    KERNEL_TYPE_MAX,
};

namespace AscendC {

// Enumerators and values as in asc-devkit (impl/basic_api/common_types.h, utils/kernel_utils_mode.h,
// kernel_event.h, kernel_tensor_base.h) for dav-c220.
enum class TPosition : uint8_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    C2PIPE2GM,
    C2PIPE2LOCAL,
    MAX,
};
using QuePosition = TPosition;

enum class RoundMode : uint8_t {
    CAST_NONE = 0,
    CAST_RINT,
    CAST_FLOOR,
    CAST_CEIL,
    CAST_ROUND,
    CAST_TRUNC,
    CAST_ODD,
    UNKNOWN = 0xFF,
};

// Compare's and Select's modes, as upstream (impl/basic_api/utils/kernel_utils_mode.h).
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

// Names read SRC_DST; order as upstream so the values match.
enum class HardEvent : uint8_t {
    MTE2_MTE1,
    MTE1_MTE2,
    MTE1_M,
    M_MTE1,
    MTE2_V,
    V_MTE2,
    MTE3_V,
    V_MTE3,
    M_V,
    V_M,
    V_V,
    MTE3_MTE1,
    MTE1_MTE3,
    MTE1_V,
    MTE2_M,
    M_MTE2,
    V_MTE1,
    M_FIX,
    FIX_M,
    MTE3_MTE2,
    MTE2_MTE3,
    S_V,
    V_S,
    S_MTE2,
    MTE2_S,
    S_MTE3,
    MTE3_S,
    MTE2_FIX,
    FIX_MTE2,
    FIX_S,
    M_S,
    FIX_MTE3,
    MTE1_FIX,
    FIX_MTE1,
    FIX_FIX,
    MAX,
};

enum class TBufState : uint8_t { FREE = 0, OCCUPIED, ENQUE, DEQUE };

using TEventID = int8_t;

}  // namespace AscendC

// Exact conversions between float and the 16-bit formats. Twin-internal: kernels use half/bfloat16_t.
namespace twin::fp {

inline uint32_t FloatBits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float BitsFloat(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// The three hot conversions below compute every case and select, without branches, so the Cast loops
// vectorize (twin_kernels.cpp is built with -fno-trapping-math to allow the speculation).

// float -> binary16, round to nearest even.
inline uint16_t FloatToHalfRne(float x) {
    const uint32_t f = FloatBits(x);
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t a = f & 0x7fffffffu;
    const int32_t ai = static_cast<int32_t>(a);  // signed compares vectorize on SSE2
    // Normal: rebias the exponent (-112 << 23) and round the 13 dropped bits to nearest even.
    const uint32_t normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
    // |x| < 2^-14 (half subnormal or zero): adding 0.5f aligns the half ulp 2^-24 with the float ulp of 0.5f,
    // so the FPU's own round-to-nearest-even does the rounding.
    const uint32_t subnormal = FloatBits(BitsFloat(a) + 0.5f) - 0x3f000000u;
    // |x| >= 65536 rounds to Inf; NaN is quieted keeping its top payload bits.
    const uint32_t special = ai > 0x7f800000 ? (0x7e00u | ((a >> 13) & 0x3ffu)) : 0x7c00u;
    uint32_t o = ai < 0x38800000 ? subnormal : normal;
    o = ai >= 0x47800000 ? special : o;
    return static_cast<uint16_t>(o | sign);
}

// binary16 -> float, exact; a NaN comes out quiet (as x86 F16C does, so both Cast paths agree).
inline float HalfToFloat(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const int32_t em = h & 0x7fff;
    const uint32_t shifted = static_cast<uint32_t>(em) << 13;
    const uint32_t normal = shifted + 0x38000000u;  // rebias 15 -> 127
    const uint32_t infNan = shifted | (em > 0x7c00 ? 0x7fc00000u : 0x7f800000u);
    const uint32_t subnormal = FloatBits(static_cast<float>(em) * 5.9604644775390625e-8f);  // em * 2^-24, exact
    uint32_t o = em < 0x0400 ? subnormal : normal;
    o = em >= 0x7c00 ? infNan : o;
    return BitsFloat(o | sign);
}

// float -> bfloat16, round to nearest even; NaN is quieted.
inline uint16_t FloatToBf16Rne(float x) {
    const uint32_t f = FloatBits(x);
    const uint32_t rounded = (f + 0x7fffu + ((f >> 16) & 1u)) >> 16;
    const uint32_t quiet = (f >> 16) | 0x0040u;
    return static_cast<uint16_t>(static_cast<int32_t>(f & 0x7fffffffu) > 0x7f800000 ? quiet : rounded);
}

inline float Bf16ToFloat(uint16_t b) { return BitsFloat(static_cast<uint32_t>(b) << 16); }

// float -> a narrower binary format (kExpBits, kMantBits) under any RoundMode; returns the bit pattern.
// Scalar reference used for the directed modes and to cross-check the RNE fast paths above.
// Overflow: RINT/ROUND give Inf; TRUNC/ODD give max finite; FLOOR/CEIL give Inf on the side they round to.
template <int kExpBits, int kMantBits>
inline uint32_t NarrowFloat(float x, AscendC::RoundMode mode) {
    constexpr int kBias = (1 << (kExpBits - 1)) - 1;
    constexpr uint32_t kInf = ((1u << kExpBits) - 1u) << kMantBits;
    const uint32_t f = FloatBits(x);
    const bool neg = (f >> 31) != 0;
    const uint32_t sign = neg ? (1u << (kExpBits + kMantBits)) : 0u;
    const uint32_t a = f & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | kInf | (1u << (kMantBits - 1)) | ((a & 0x7fffffu) >> (23 - kMantBits));
    if (a == 0x7f800000u) return sign | kInf;
    if (a == 0) return sign;

    const int biased = static_cast<int>(a >> 23);
    const uint64_t sig = biased ? ((a & 0x7fffffu) | 0x800000u) : (a & 0x7fffffu);
    const int e = (biased ? biased : 1) - 127 - 23;        // |x| = sig * 2^e
    const int top = 63 - __builtin_clzll(sig);             // floor(log2(sig))
    const int et = top + e;                                 // floor(log2(|x|))
    const int outExp = et > 1 - kBias ? et : 1 - kBias;     // exponent of the result's ulp scale
    int shift = outExp - kMantBits - e;                     // bits of sig below the result's ulp
    if (shift > 40) shift = 40;                             // sig < 2^24: everything is below half an ulp

    uint64_t q;
    uint64_t rem = 0;
    uint64_t halfUlp = 0;
    if (shift <= 0) {
        q = sig << -shift;
    } else {
        q = sig >> shift;
        rem = sig & ((uint64_t{1} << shift) - 1);
        halfUlp = uint64_t{1} << (shift - 1);
    }
    const bool inexact = rem != 0;
    switch (mode) {
        case AscendC::RoundMode::CAST_NONE:
        case AscendC::RoundMode::CAST_RINT: q += (rem > halfUlp || (rem == halfUlp && inexact && (q & 1))); break;
        case AscendC::RoundMode::CAST_ROUND: q += (inexact && rem >= halfUlp); break;
        case AscendC::RoundMode::CAST_FLOOR: q += (inexact && neg); break;
        case AscendC::RoundMode::CAST_CEIL: q += (inexact && !neg); break;
        case AscendC::RoundMode::CAST_TRUNC: break;
        case AscendC::RoundMode::CAST_ODD: q |= inexact ? 1u : 0u; break;
        case AscendC::RoundMode::UNKNOWN: break;  // rejected by Cast before it gets here
    }
    // Subnormal results have outExp + kBias - 1 == 0; a carry out of the mantissa bumps the exponent.
    const uint64_t bits = (static_cast<uint64_t>(outExp + kBias - 1) << kMantBits) + q;
    if (bits >= kInf) {
        bool toInf = false;
        switch (mode) {
            case AscendC::RoundMode::CAST_NONE:
            case AscendC::RoundMode::CAST_RINT:
            case AscendC::RoundMode::CAST_ROUND: toInf = true; break;
            case AscendC::RoundMode::CAST_FLOOR: toInf = neg; break;
            case AscendC::RoundMode::CAST_CEIL: toInf = !neg; break;
            case AscendC::RoundMode::CAST_TRUNC:
            case AscendC::RoundMode::CAST_ODD:
            case AscendC::RoundMode::UNKNOWN: toInf = false; break;
        }
        return sign | (toInf ? kInf : kInf - 1u);
    }
    return sign | static_cast<uint32_t>(bits);
}

}  // namespace twin::fp

// IEEE binary16 storage type. Converts implicitly like the device's native half: from any arithmetic value
// via float with round-to-nearest-even (a double is rounded to float first), to float exactly.
struct half {
    uint16_t bits;

    half() = default;
    template <class A, std::enable_if_t<std::is_arithmetic_v<A>, int> = 0>
    half(A v) : bits(twin::fp::FloatToHalfRne(static_cast<float>(v))) {}
    operator float() const { return twin::fp::HalfToFloat(bits); }
};

// bfloat16 storage type, same conventions as half.
struct bfloat16_t {
    uint16_t bits;

    bfloat16_t() = default;
    template <class A, std::enable_if_t<std::is_arithmetic_v<A>, int> = 0>
    bfloat16_t(A v) : bits(twin::fp::FloatToBf16Rne(static_cast<float>(v))) {}
    operator float() const { return twin::fp::Bf16ToFloat(bits); }
};

static_assert(sizeof(half) == 2 && std::is_trivially_copyable_v<half>, "half must be 2-byte storage");
static_assert(sizeof(bfloat16_t) == 2 && std::is_trivially_copyable_v<bfloat16_t>, "bf16 must be 2-byte storage");

namespace AscendC {
using ::bfloat16_t;
using ::half;
}  // namespace AscendC

#endif  // ASCEND_EMA_ADAM_TWIN_TYPES_H
