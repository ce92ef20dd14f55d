/**
 * @file emu_intrinsics.h
 * @brief tools/ascendc_check/run.py --emulate only (never part of a build of the project): the CCE intrinsics the real
 *        AscendC library emits for our kernels and for CANN's ApplyFusedEmaAdam kernel, with the semantics the
 *        library relies on, so both kernels compute through the unchanged library. The generated stub_fun.h
 *        includes this file and makes every other intrinsic abort by name when reached.
 *
 * Vector instructions (asc-devkit docs, SIMD-API 基础API: 高维切分, 掩码, 通用说明和约束):
 *  - one repeat is 8 blocks of 32 B; lanes per repeat follow the widest operand (64 for fp32, 128 for 16-bit);
 *    lane k of repeat r of an operand of E-byte elements lies at
 *        base + (r * repStride + (k / (32 / E)) * blkStride) * 32 + (k % (32 / E)) * E;
 *  - normal mask mode: `repeat` repeats, lane k active when bit k of the 128-bit mask is set (the low word holds
 *    lanes 0-63); counter mode: the low mask word is an element count, lanes run over as many repeats as it
 *    needs, `repeat` is ignored;
 *  - each repeat reads its operands before it writes (an in-place or narrowing instruction sees its inputs);
 *  - fp32 arithmetic is IEEE single (one rounding per instruction: the file is compiled without contraction);
 *    half arithmetic rounds the exact result once; 16-bit results saturate while CTRL[48] is clear; int32 is exact.
 * The 8-bit kernel's: uint8 <-> half and half / float -> int32 conversions (integer results rounded by the mode and
 * saturated; NaN, and a negative value into uint8, abort: undocumented / an error), int32 arithmetic (exact, aborting
 * past the range), vgather, vcmpv_* into a bit mask, set_cmpmask + vsel in VSEL_TENSOR_TENSOR_MODE (each at its
 * definition below: what the documentation says and what the CPU-debug library hands the intrinsic).
 * GM <-> UB copies (DataCopyPad's align forms): burst i of `len` bytes at gm + i * (len + gmGap bytes) and at
 * ub + i * (AlignUp32(pads + len) + ubGap * 32 bytes); GM -> UB writes the left and right padding with the MOV
 * pad value and the bytes up to the 32-B boundary ("dummy") with the burst's first element when there is no padding,
 * else with the pad value (DataCopyPad（GMToUB非对齐数据搬运）.md); a count or length of 0 does nothing. Plain
 * copies move whole 32-B blocks, lengths and gaps in blocks.
 * Every instruction is issued to its pipe (V, MTE2, MTE3) and its UB bytes go to the hazard checker (emu_core.h).
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_EMU_INTRINSICS_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_EMU_INTRINSICS_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "emu_convert.h"
#include "emu_core.h"

namespace ascendc_emu {

// ---- element types ----------------------------------------------------------------------------------------
enum class Kind : uint8_t { kF32, kF16, kBf16, kI16, kI32, kOther };

template <class T>
constexpr Kind KindOf()
{
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, float>) return Kind::kF32;
    else if constexpr (std::is_same_v<U, half>) return Kind::kF16;
    else if constexpr (std::is_same_v<U, bfloat16::Bf16T>) return Kind::kBf16;
    else if constexpr (std::is_same_v<U, int16_t>) return Kind::kI16;
    else if constexpr (std::is_same_v<U, int32_t>) return Kind::kI32;
    else return Kind::kOther;
}

template <class T>
constexpr bool kFloatKind = KindOf<T>() == Kind::kF32 || KindOf<T>() == Kind::kF16 || KindOf<T>() == Kind::kBf16;

/** An element's value as a float (16-bit floats widen exactly). */
template <class T>
inline float Load(const void* p)
{
    if constexpr (KindOf<T>() == Kind::kF32) {
        float v;
        std::memcpy(&v, p, 4);
        return v;
    } else {
        uint16_t b;
        std::memcpy(&b, p, 2);
        return KindOf<T>() == Kind::kF16 ? HalfToFloat(b) : Bf16ToFloat(b);
    }
}

/** Stores a float result in T: fp32 as it is, 16-bit with `mode` and the saturation rule. */
template <class T>
inline void Store(void* p, float v, Round mode = Round::kRint)
{
    if constexpr (KindOf<T>() == Kind::kF32) {
        std::memcpy(p, &v, 4);
    } else {
        const bool isHalf = KindOf<T>() == Kind::kF16;
        uint16_t b = isHalf ? FloatToHalf(v, mode) : FloatToBf16(v, mode);
        if (Saturating()) b = Saturate16(b, isHalf);
        std::memcpy(p, &b, 2);
    }
}

/** A scalar argument (float, half, bf16 or an integer) as a float. */
template <class S>
inline float ScalarValue(const S& s)
{
    if constexpr (std::is_arithmetic_v<S>) return static_cast<float>(s);
    else {
        uint16_t b;
        std::memcpy(&b, &s, 2);
        return KindOf<S>() == Kind::kF16 ? HalfToFloat(b) : Bf16ToFloat(b);
    }
}

// ---- addressing and masks ---------------------------------------------------------------------------------
struct Operand {
    uint8_t* base;
    uint32_t elemBytes;
    uint32_t blkStride;
    uint32_t repStride;
    uint8_t* Lane(uint64_t repeat, uint32_t k) const
    {
        const uint32_t perBlock = 32 / elemBytes;
        return base + (repeat * repStride + uint64_t{k / perBlock} * blkStride) * 32 + uint64_t{k % perBlock} * elemBytes;
    }
};

template <class T>
inline Operand Op(T* p, uint64_t blk, uint64_t rep)
{
    return {reinterpret_cast<uint8_t*>(const_cast<std::remove_cv_t<T>*>(p)), static_cast<uint32_t>(sizeof(T)),
            static_cast<uint32_t>(blk), static_cast<uint32_t>(rep)};
}

/** Runs body(repeat, lane) over the active lanes, repeat by repeat; `lanes` per repeat. */
template <class Body>
inline void ForActiveLanes(uint64_t repeatArg, uint32_t lanes, Body body)
{
    const VectorState& st = State();
    if (st.counterMode) {
        const uint64_t n = st.maskLow;
        for (uint64_t r = 0; r * lanes < n; ++r) {
            const uint32_t active = static_cast<uint32_t>(n - r * lanes < lanes ? n - r * lanes : lanes);
            body(r, active, [](uint32_t) { return true; });
        }
        return;
    }
    for (uint64_t r = 0; r < repeatArg; ++r) {
        body(r, lanes, [&st](uint32_t k) { return k < 64 ? (st.maskLow >> k & 1) != 0 : (st.maskHigh >> (k - 64) & 1) != 0; });
    }
}

/** One vector instruction: `n` source operands, one destination; f(values of the sources) -> result. Lanes per
 *  repeat from the widest operand; each repeat reads before it writes. */
template <class D, class S, int kSources, class F>
inline void VectorInstruction(const char* name, const Operand& dst, const Operand (&src)[kSources], uint64_t repeat, F f)
{
    uint32_t widest = dst.elemBytes;
    for (const Operand& s : src) widest = s.elemBytes > widest ? s.elemBytes : widest;
    const uint32_t lanes = 256 / widest;
    const uint32_t id = Issue(kPipeV, name);
    float results[128];
    ForActiveLanes(repeat, lanes, [&](uint64_t r, uint32_t count, auto active) {
        for (uint32_t k = 0; k < count; ++k) {
            if (!active(k)) continue;
            float in[kSources > 0 ? kSources : 1];
            for (int i = 0; i < kSources; ++i) {
                const uint8_t* p = src[i].Lane(r, k);
                Access(id, p, src[i].elemBytes, false);
                in[i] = Load<S>(p);
            }
            results[k] = f(in);
        }
        for (uint32_t k = 0; k < count; ++k) {
            if (!active(k)) continue;
            uint8_t* p = dst.Lane(r, k);
            Access(id, p, dst.elemBytes, true);
            Store<D>(p, results[k]);
        }
    });
}

template <class T>
inline void RequireFloat(const char* name)
{
    if constexpr (!kFloatKind<T>) Unemulated(name);
}

/** An int32 vector instruction (64 lanes per repeat): f(the sources' values) -> the result, which must fit in int32
 *  (the docs give int32 arithmetic no wrap-around or saturation rule: a result past the range aborts). */
template <int kSources, class F>
inline void Int32Instruction(const char* name, const Operand& dst, const Operand (&src)[kSources], uint64_t repeat, F f)
{
    const uint32_t id = Issue(kPipeV, name);
    int32_t results[64];
    ForActiveLanes(repeat, 64, [&](uint64_t r, uint32_t count, auto active) {
        for (uint32_t k = 0; k < count; ++k) {
            if (!active(k)) continue;
            int64_t in[kSources];
            for (int i = 0; i < kSources; ++i) {
                const uint8_t* p = src[i].Lane(r, k);
                Access(id, p, 4, false);
                int32_t v;
                std::memcpy(&v, p, 4);
                in[i] = v;
            }
            const int64_t v = f(in);
            if (v < INT32_MIN || v > INT32_MAX) Undefined(name);  // int32 overflow
            results[k] = static_cast<int32_t>(v);
        }
        for (uint32_t k = 0; k < count; ++k) {
            if (!active(k)) continue;
            uint8_t* p = dst.Lane(r, k);
            Access(id, p, 4, true);
            std::memcpy(p, &results[k], 4);
        }
    });
}

/** fp32 results as computed; 16-bit results of arithmetic rounded once (nearest even); int32 results exact
 *  (`integer`: the instruction has an int32 form). */
template <class T, class F>
inline void Binary(const char* name, T* dst, T* a, T* b, uint64_t repeat, uint64_t db, uint64_t ab, uint64_t bb,
                   uint64_t dr, uint64_t ar, uint64_t br, F f, bool integer)
{
    if constexpr (KindOf<T>() == Kind::kI32) {
        if (!integer) Unemulated(name);
        const Operand src[2] = {Op(a, ab, ar), Op(b, bb, br)};
        Int32Instruction<2>(name, Op(dst, db, dr), src, repeat, [&f](const int64_t* v) { return f(v[0], v[1]); });
    } else {
        RequireFloat<T>(name);
        if constexpr (kFloatKind<T>) {
            const Operand src[2] = {Op(a, ab, ar), Op(b, bb, br)};
            VectorInstruction<T, T, 2>(name, Op(dst, db, dr), src, repeat,
                                       [&f](const float* v) { return f(v[0], v[1]); });
        }
    }
}

template <class T, class F>
inline void Unary(const char* name, T* dst, T* a, uint64_t repeat, uint64_t db, uint64_t ab, uint64_t dr, uint64_t ar,
                  F f, bool integer = false)
{
    if constexpr (KindOf<T>() == Kind::kI32) {
        if (!integer) Unemulated(name);
        const Operand src[1] = {Op(a, ab, ar)};
        Int32Instruction<1>(name, Op(dst, db, dr), src, repeat, [&f](const int64_t* v) { return f(v[0]); });
    } else {
        RequireFloat<T>(name);
        if constexpr (kFloatKind<T>) {
            const Operand src[1] = {Op(a, ab, ar)};
            VectorInstruction<T, T, 1>(name, Op(dst, db, dr), src, repeat, [&f](const float* v) { return f(v[0]); });
        }
    }
}

/** A conversion: lanes per repeat from the wider type; convert(source lane, result bytes) per active lane. */
template <class D, class S, class F>
inline void ConvertLanes(const char* name, D* dst, S* src, uint64_t repeat, uint64_t db, uint64_t sb, uint64_t dr,
                         uint64_t sr, F convert)
{
    const Operand in[1] = {Op(src, sb, sr)};
    const Operand out = Op(dst, db, dr);
    uint32_t lanes = 256 / (sizeof(D) > sizeof(S) ? sizeof(D) : sizeof(S));
    const uint32_t id = Issue(kPipeV, name);
    uint8_t results[128][4];
    ForActiveLanes(repeat, lanes, [&](uint64_t r, uint32_t count, auto active) {
        for (uint32_t k = 0; k < count; ++k) {
            if (!active(k)) continue;
            const uint8_t* p = in[0].Lane(r, k);
            Access(id, p, sizeof(S), false);
            convert(p, results[k]);
        }
        for (uint32_t k = 0; k < count; ++k) {
            if (!active(k)) continue;
            uint8_t* p = out.Lane(r, k);
            Access(id, p, sizeof(D), true);
            std::memcpy(p, results[k], sizeof(D));
        }
    });
}

template <class D, class S>
inline void Convert(const char* name, D* dst, S* src, uint64_t repeat, uint64_t db, uint64_t sb, uint64_t dr, uint64_t sr,
                    Round mode, bool integral = false)
{
    ConvertLanes(name, dst, src, repeat, db, sb, dr, sr, [mode, integral](const uint8_t* p, uint8_t* result) {
        float v = Load<S>(p);
        if (integral) v = RoundToIntegral(v, mode);
        Store<D>(result, v, mode);
    });
}

/** half / float -> int32_t or uint8_t (precision_conversion.md): rounded to an integer by `mode`, a value past the
 *  type's range saturated ("溢出默认按照饱和模式处理"); a NaN has no documented result and a negative value into
 *  uint8_t is an error ("负数输入会被视为异常"): both abort. */
template <class D, class S>
inline void ConvertToInteger(const char* name, D* dst, S* src, uint64_t repeat, uint64_t db, uint64_t sb, uint64_t dr,
                             uint64_t sr, Round mode)
{
    ConvertLanes(name, dst, src, repeat, db, sb, dr, sr, [name, mode](const uint8_t* p, uint8_t* result) {
        const float v = Load<S>(p);
        if (std::isnan(v)) Undefined(name);
        if (std::is_same_v<D, uint8_t> && v < 0.0f) Undefined(name);
        const double lo = std::is_same_v<D, uint8_t> ? 0.0 : static_cast<double>(INT32_MIN);
        const double hi = std::is_same_v<D, uint8_t> ? 255.0 : static_cast<double>(INT32_MAX);
        const double r = static_cast<double>(RoundToIntegral(v, mode));  // exact: every float >= 2^23 is integral
        const D out = static_cast<D>(r < lo ? lo : r > hi ? hi : r);
        std::memcpy(result, &out, sizeof(D));
    });
}

inline uint64_t AlignUp32(uint64_t v) { return (v + 31) & ~uint64_t{31}; }

/** DataCopyPad GM -> UB (align form): pads in elements of E bytes, the GM gap in bytes, the UB gap in blocks. */
inline void CopyGmToUbAlign(const char* name, uint8_t* ub, const uint8_t* gm, uint32_t elemBytes, uint64_t nBurst,
                            uint64_t len, uint64_t leftPad, uint64_t rightPad, uint64_t gmGap, uint64_t ubGap)
{
    const uint32_t id = Issue(kPipeMte2, name);
    if (nBurst == 0 || len == 0) return;  // a no-op, padding included (DataCopyPad: blockCount or blockLen 0)
    const uint64_t left = leftPad * elemBytes, right = rightPad * elemBytes;
    const uint64_t filled = left + len + right;
    const uint64_t ubStep = AlignUp32(filled) + ubGap * 32;
    const uint64_t pad = State().movPadValue;
    for (uint64_t i = 0; i < nBurst; ++i) {
        uint8_t* u = ub + i * ubStep;
        const uint8_t* g = gm + i * (len + gmGap);
        Access(id, u, AlignUp32(filled), true);
        for (uint64_t b = 0; b < left; b += elemBytes) std::memcpy(u + b, &pad, elemBytes);
        std::memcpy(u + left, g, len);
        for (uint64_t b = 0; b < right; b += elemBytes) std::memcpy(u + left + len + b, &pad, elemBytes);
        // The dummy bytes up to the 32-B boundary: the burst's first element without padding, else the pad value.
        const uint8_t* dummy = left == 0 && right == 0 ? g : reinterpret_cast<const uint8_t*>(&pad);
        for (uint64_t b = filled; b < AlignUp32(filled); b += elemBytes) {
            std::memcpy(u + b, dummy, AlignUp32(filled) - b < elemBytes ? AlignUp32(filled) - b : elemBytes);
        }
    }
    BlockCounters().mte2Bytes += nBurst * len;
    ++BlockCounters().mte2Copies;
}

/** DataCopyPad UB -> GM (align form): the UB gap in blocks, the GM gap in bytes. */
inline void CopyUbToGmAlign(const char* name, uint8_t* gm, const uint8_t* ub, uint64_t nBurst, uint64_t len,
                            uint64_t leftPad, uint64_t rightPad, uint64_t ubGap, uint64_t gmGap)
{
    if (leftPad != 0 || rightPad != 0) Unemulated("padding on a UB -> GM copy");
    const uint32_t id = Issue(kPipeMte3, name);
    for (uint64_t i = 0; i < nBurst; ++i) {
        const uint8_t* u = ub + i * (AlignUp32(len) + ubGap * 32);
        Access(id, u, len, false);
        std::memcpy(gm + i * (len + gmGap), u, len);
    }
    BlockCounters().mte3Bytes += nBurst * len;
    ++BlockCounters().mte3Copies;
}

/** DataCopy: whole 32-B blocks; lengths and gaps in blocks. */
inline void CopyBlocks(const char* name, int pipe, uint8_t* dst, const uint8_t* src, bool toUb, uint64_t nBurst,
                       uint64_t blocks, uint64_t srcGap, uint64_t dstGap)
{
    const uint32_t id = Issue(pipe, name);
    const uint64_t len = blocks * 32;
    for (uint64_t i = 0; i < nBurst; ++i) {
        const uint8_t* s = src + i * (len + srcGap * 32);
        uint8_t* d = dst + i * (len + dstGap * 32);
        Access(id, toUb ? d : s, len, toUb);
        std::memcpy(d, s, len);
    }
    if (toUb) {
        BlockCounters().mte2Bytes += nBurst * len;
        ++BlockCounters().mte2Copies;
    } else {
        BlockCounters().mte3Bytes += nBurst * len;
        ++BlockCounters().mte3Copies;
    }
}

}  // namespace ascendc_emu

// ---- the intrinsics, by the names the library calls ------------------------------------------------------
// INTEGER: the instruction has an int32 form (Add / Sub / Mul / Max / Min take int32_t on 910B; Div does not).
#define AEA_EMU_BINARY(NAME, EXPR, INTEGER)                                                                        \
    template <class T, class... R>                                                                                 \
    inline void NAME(T* dst, T* a, T* b, uint64_t repeat, uint64_t db, uint64_t ab, uint64_t bb, uint64_t dr,        \
                     uint64_t ar, uint64_t br)                                                                       \
    {                                                                                                              \
        ascendc_emu::Binary(#NAME, dst, a, b, repeat, db, ab, bb, dr, ar, br, [](auto x, auto y) { return EXPR; },  \
                            INTEGER);                                                                              \
    }
AEA_EMU_BINARY(vadd, x + y, true)
AEA_EMU_BINARY(vsub, x - y, true)
AEA_EMU_BINARY(vmul, x * y, true)
AEA_EMU_BINARY(vdiv, x / y, false)
AEA_EMU_BINARY(vmax, x > y ? x : y, true)
AEA_EMU_BINARY(vmin, x < y ? x : y, true)
#undef AEA_EMU_BINARY

// (vmaxs / vmins take two more flags, which the c220 library always passes false.)
#define AEA_EMU_SCALAR(NAME, EXPR)                                                                                 \
    template <class T, class S, class... Flags>                                                                    \
    inline void NAME(T* dst, T* a, S scalar, uint64_t repeat, uint64_t db, uint64_t ab, uint64_t dr, uint64_t ar,   \
                     Flags... flags)                                                                               \
    {                                                                                                              \
        if ((static_cast<bool>(flags) || ...)) ascendc_emu::Unemulated(#NAME " with a flag set");                  \
        if constexpr (ascendc_emu::KindOf<T>() == ascendc_emu::Kind::kI32) {                                       \
            const int64_t y = static_cast<int32_t>(scalar);                                                        \
            ascendc_emu::Unary(#NAME, dst, a, repeat, db, ab, dr, ar, [y](auto x) { return EXPR; }, true);         \
        } else {                                                                                                   \
            const float y = ascendc_emu::ScalarValue(scalar);                                                      \
            ascendc_emu::Unary(#NAME, dst, a, repeat, db, ab, dr, ar, [y](auto x) { return EXPR; });               \
        }                                                                                                          \
    }
AEA_EMU_SCALAR(vadds, x + y)
AEA_EMU_SCALAR(vmuls, x * y)
AEA_EMU_SCALAR(vmaxs, x > y ? x : y)
AEA_EMU_SCALAR(vmins, x < y ? x : y)
#undef AEA_EMU_SCALAR

template <class T>
inline void vsqrt(T* dst, T* a, uint64_t repeat, uint64_t db, uint64_t ab, uint64_t dr, uint64_t ar)
{
    ascendc_emu::Unary("vsqrt", dst, a, repeat, db, ab, dr, ar, [](float x) { return std::sqrt(x); });
}
template <class T>
inline void vabs(T* dst, T* a, uint64_t repeat, uint64_t db, uint64_t ab, uint64_t dr, uint64_t ar)
{
    ascendc_emu::Unary("vabs", dst, a, repeat, db, ab, dr, ar, [](float x) { return std::fabs(x); });
}

template <class T, class S>
inline void vector_dup(T* dst, S scalar, uint64_t repeat, uint64_t db, uint64_t, uint64_t dr, uint64_t)
{
    if constexpr (sizeof(T) == 4 || sizeof(T) == 2) {
        const ascendc_emu::Operand none[1] = {ascendc_emu::Op(dst, db, dr)};
        const uint32_t id = ascendc_emu::Issue(ascendc_emu::kPipeV, "vector_dup");
        const ascendc_emu::Operand out = ascendc_emu::Op(dst, db, dr);
        (void)none;
        T value;
        if constexpr (std::is_arithmetic_v<S> && !std::is_arithmetic_v<T>) {
            value = T(static_cast<float>(scalar));
        } else {
            value = static_cast<T>(scalar);
        }
        ascendc_emu::ForActiveLanes(repeat, 256 / sizeof(T), [&](uint64_t r, uint32_t count, auto active) {
            for (uint32_t k = 0; k < count; ++k) {
                if (!active(k)) continue;
                uint8_t* p = out.Lane(r, k);
                ascendc_emu::Access(id, p, sizeof(T), true);
                std::memcpy(p, &value, sizeof(T));
            }
        });
    } else {
        ascendc_emu::Unemulated("vector_dup of this element width");
    }
}

#define AEA_EMU_CONVERT(NAME, D, S, MODE, INTEGRAL)                                                               \
    inline void NAME(D* dst, S* src, uint64_t repeat, uint64_t db, uint64_t sb, uint64_t dr, uint64_t sr)          \
    {                                                                                                              \
        ascendc_emu::Convert(#NAME, dst, src, repeat, db, sb, dr, sr, ascendc_emu::Round::MODE, INTEGRAL);          \
    }
AEA_EMU_CONVERT(vconv_f162f32, float, half, kRint, false)
AEA_EMU_CONVERT(vconv_bf162f32, float, bfloat16::Bf16T, kRint, false)
AEA_EMU_CONVERT(vconv_f322f16, half, float, kRint, false)  // CAST_NONE: round to nearest even
AEA_EMU_CONVERT(vconv_f322f16r, half, float, kRint, false)
AEA_EMU_CONVERT(vconv_f322f16f, half, float, kFloor, false)
AEA_EMU_CONVERT(vconv_f322f16c, half, float, kCeil, false)
AEA_EMU_CONVERT(vconv_f322f16a, half, float, kAway, false)
AEA_EMU_CONVERT(vconv_f322f16z, half, float, kTrunc, false)
AEA_EMU_CONVERT(vconv_f322f16o, half, float, kOdd, false)
AEA_EMU_CONVERT(vconv_f322bf16r, bfloat16::Bf16T, float, kRint, false)
AEA_EMU_CONVERT(vconv_f322bf16f, bfloat16::Bf16T, float, kFloor, false)
AEA_EMU_CONVERT(vconv_f322bf16c, bfloat16::Bf16T, float, kCeil, false)
AEA_EMU_CONVERT(vconv_f322bf16a, bfloat16::Bf16T, float, kAway, false)
AEA_EMU_CONVERT(vconv_f322bf16z, bfloat16::Bf16T, float, kTrunc, false)
AEA_EMU_CONVERT(vconv_f322f32r, float, float, kRint, true)
AEA_EMU_CONVERT(vconv_f322f32f, float, float, kFloor, true)
AEA_EMU_CONVERT(vconv_f322f32c, float, float, kCeil, true)
AEA_EMU_CONVERT(vconv_f322f32a, float, float, kAway, true)
AEA_EMU_CONVERT(vconv_f322f32z, float, float, kTrunc, true)
#undef AEA_EMU_CONVERT

// uint8_t -> half (exact), half -> int32_t / uint8_t and float -> int32_t in the five integer round modes
// (precision_conversion.md; the no-suffix vconv_f162u8 is CAST_NONE: nearest even when inexact).
inline void vconv_u82f16(half* dst, uint8_t* src, uint64_t repeat, uint64_t db, uint64_t sb, uint64_t dr, uint64_t sr)
{
    ascendc_emu::ConvertLanes("vconv_u82f16", dst, src, repeat, db, sb, dr, sr, [](const uint8_t* p, uint8_t* result) {
        const uint16_t bits = ascendc_emu::FloatToHalf(static_cast<float>(*p), ascendc_emu::Round::kRint);
        std::memcpy(result, &bits, 2);
    });
}
#define AEA_EMU_CONVERT_INT(NAME, D, S, MODE)                                                                     \
    inline void NAME(D* dst, S* src, uint64_t repeat, uint64_t db, uint64_t sb, uint64_t dr, uint64_t sr)          \
    {                                                                                                              \
        ascendc_emu::ConvertToInteger(#NAME, dst, src, repeat, db, sb, dr, sr, ascendc_emu::Round::MODE);           \
    }
AEA_EMU_CONVERT_INT(vconv_f162s32r, int32_t, half, kRint)
AEA_EMU_CONVERT_INT(vconv_f162s32f, int32_t, half, kFloor)
AEA_EMU_CONVERT_INT(vconv_f162s32c, int32_t, half, kCeil)
AEA_EMU_CONVERT_INT(vconv_f162s32a, int32_t, half, kAway)
AEA_EMU_CONVERT_INT(vconv_f162s32z, int32_t, half, kTrunc)
AEA_EMU_CONVERT_INT(vconv_f162u8, uint8_t, half, kRint)
AEA_EMU_CONVERT_INT(vconv_f162u8r, uint8_t, half, kRint)
AEA_EMU_CONVERT_INT(vconv_f162u8f, uint8_t, half, kFloor)
AEA_EMU_CONVERT_INT(vconv_f162u8c, uint8_t, half, kCeil)
AEA_EMU_CONVERT_INT(vconv_f162u8a, uint8_t, half, kAway)
AEA_EMU_CONVERT_INT(vconv_f162u8z, uint8_t, half, kTrunc)
AEA_EMU_CONVERT_INT(vconv_f322s32r, int32_t, float, kRint)
AEA_EMU_CONVERT_INT(vconv_f322s32f, int32_t, float, kFloor)
AEA_EMU_CONVERT_INT(vconv_f322s32c, int32_t, float, kCeil)
AEA_EMU_CONVERT_INT(vconv_f322s32a, int32_t, float, kAway)
AEA_EMU_CONVERT_INT(vconv_f322s32z, int32_t, float, kTrunc)
#undef AEA_EMU_CONVERT_INT

// Gather (Gather.md: dst[i] = src[(srcBaseAddr + srcOffset[i]) / sizeof(T)], byte offsets; dav_c220
// kernel_operator_vec_gather_impl.h): vgather(dst, offsets, srcAddr, dstRepStride, repeat), 16- or 32-bit elements,
// 256 / sizeof(T) lanes per repeat under the vector mask; lane k of repeat r takes offset r * lanes + k (uint32) and
// writes dst + r * dstRepStride * 32 + k * sizeof(T). The device gets the table as a 32-bit UB address; the CPU-debug
// library hands its full address (src + srcBaseAddr) and src's length to the model (SetModelGatherbSrc0Tensor), and
// that is the table read here (its low 32 bits must be srcAddr). An offset not a multiple of sizeof(T) ("数据发生错位")
// or past src's end (base 0: the kernels' use) aborts.
template <class T, class O>
inline void vgather(T* dst, O* offsets, uint64_t srcAddr, uint64_t dstRepStride, uint64_t repeat)
{
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "vgather moves 16- or 32-bit elements");
    static_assert(sizeof(O) == 4, "vgather's offsets are uint32");
    ascendc_emu::VectorState& st = ascendc_emu::State();
    const uint8_t* table = st.gatherSource;
    if (table == nullptr || static_cast<uint32_t>(reinterpret_cast<uintptr_t>(table)) != static_cast<uint32_t>(srcAddr)) {
        ascendc_emu::Unemulated("vgather without its table (SetModelGatherbSrc0Tensor)");
    }
    constexpr uint32_t kBytes = sizeof(T);
    const uint64_t tableBytes = st.gatherSourceLength * kBytes;
    const ascendc_emu::Operand out = ascendc_emu::Op(dst, 1, dstRepStride);
    const uint8_t* offsetBase = reinterpret_cast<const uint8_t*>(offsets);
    const uint32_t lanes = 256 / kBytes;
    const uint32_t id = ascendc_emu::Issue(ascendc_emu::kPipeV, "vgather");
    uint8_t results[128][4];
    ascendc_emu::ForActiveLanes(repeat, lanes, [&](uint64_t r, uint32_t count, auto active) {
        for (uint32_t k = 0; k < count; ++k) {
            if (!active(k)) continue;
            const uint8_t* at = offsetBase + (r * lanes + k) * 4;
            ascendc_emu::Access(id, at, 4, false);
            uint32_t offset;
            std::memcpy(&offset, at, 4);
            if (offset % kBytes != 0 || uint64_t{offset} + kBytes > tableBytes) {
                ascendc_emu::Undefined("vgather: an offset not aligned to the element or past the table");
            }
            ascendc_emu::Access(id, table + offset, kBytes, false);
            std::memcpy(results[k], table + offset, kBytes);
        }
        for (uint32_t k = 0; k < count; ++k) {
            if (!active(k)) continue;
            uint8_t* p = out.Lane(r, k);
            ascendc_emu::Access(id, p, kBytes, true);
            std::memcpy(p, results[k], kBytes);
        }
    });
}

// Compare into a bit mask (Compare.md): vcmpv_<mode>(dst, src0, src1, repeat, strides...), half or float (int32: EQ
// only), 256 / sizeof(T) lanes per repeat; bit k of repeat r (bit r * lanes + k of dst, LSB first, "小端顺序") is
// src0 <mode> src1, IEEE (a NaN compares false, NE true). The vector mask is not applied ("保留参数，设置无效" on A2),
// every repeat compares all its lanes. The destination is written contiguously, lanes / 8 bytes a repeat, as the
// count form relies on (CompareCompute steps dst by 252 repeats' bits and passes the default strides, dst block
// stride 1 and repeat stride 8: the only destination strides emulated). Counter mode is not emulated.
namespace ascendc_emu {
enum class CmpMode : uint8_t { kLt, kGt, kEq, kLe, kGe, kNe };

template <class T>
inline void Vcmpv(const char* name, CmpMode mode, uint8_t* dst, T* src0, T* src1, uint64_t repeat, uint64_t db,
                  uint64_t s0b, uint64_t s1b, uint64_t dr, uint64_t s0r, uint64_t s1r)
{
    constexpr bool kInt = KindOf<T>() == Kind::kI32;
    if constexpr (!(kFloatKind<T> && KindOf<T>() != Kind::kBf16) && !kInt) {
        Unemulated(name);
    } else {
        if (kInt && mode != CmpMode::kEq) Unemulated(name);
        if (State().counterMode) Unemulated("vcmpv in counter mode");
        if (db != 1 || dr != 8) Unemulated("vcmpv with destination strides other than the count form's (1, 8)");
        const Operand a = Op(src0, s0b, s0r), b = Op(src1, s1b, s1r);
        constexpr uint32_t lanes = 256 / sizeof(T);
        const uint32_t id = Issue(kPipeV, name);
        for (uint64_t r = 0; r < repeat; ++r) {
            uint8_t bits[lanes / 8] = {};
            for (uint32_t k = 0; k < lanes; ++k) {
                Access(id, a.Lane(r, k), sizeof(T), false);
                Access(id, b.Lane(r, k), sizeof(T), false);
                bool result;
                if constexpr (kInt) {
                    int32_t x, y;
                    std::memcpy(&x, a.Lane(r, k), 4);
                    std::memcpy(&y, b.Lane(r, k), 4);
                    result = x == y;
                } else {
                    const float x = Load<T>(a.Lane(r, k)), y = Load<T>(b.Lane(r, k));
                    switch (mode) {
                        case CmpMode::kLt: result = x < y; break;
                        case CmpMode::kGt: result = x > y; break;
                        case CmpMode::kEq: result = x == y; break;
                        case CmpMode::kLe: result = x <= y; break;
                        case CmpMode::kGe: result = x >= y; break;
                        default: result = x != y; break;
                    }
                }
                bits[k / 8] |= static_cast<uint8_t>(result ? 1u << (k % 8) : 0u);
            }
            uint8_t* out = dst + r * (lanes / 8);
            Access(id, out, lanes / 8, true);
            std::memcpy(out, bits, lanes / 8);
        }
    }
}
}  // namespace ascendc_emu
#define AEA_EMU_VCMPV(NAME, MODE)                                                                                  \
    template <class D, class T>                                                                                    \
    inline void NAME(D* dst, T* src0, T* src1, uint64_t repeat, uint64_t db, uint64_t s0b, uint64_t s1b, uint64_t dr, \
                     uint64_t s0r, uint64_t s1r)                                                                   \
    {                                                                                                              \
        static_assert(sizeof(D) == 1, "vcmpv writes a bit mask of bytes");                                         \
        ascendc_emu::Vcmpv(#NAME, ascendc_emu::CmpMode::MODE, reinterpret_cast<uint8_t*>(dst), src0, src1, repeat, db, \
                           s0b, s1b, dr, s0r, s1r);                                                                \
    }
AEA_EMU_VCMPV(vcmpv_lt, kLt)
AEA_EMU_VCMPV(vcmpv_gt, kGt)
AEA_EMU_VCMPV(vcmpv_eq, kEq)
AEA_EMU_VCMPV(vcmpv_le, kLe)
AEA_EMU_VCMPV(vcmpv_ge, kGe)
AEA_EMU_VCMPV(vcmpv_ne, kNe)
#undef AEA_EMU_VCMPV

// Select (Select.md, dav_c220 kernel_operator_vec_cmpsel_impl.h). set_cmpmask(p) loads the 128-bit CMPMASK register
// from UB. Mode 2 (VSEL_TENSOR_TENSOR_MODE) only: CMPMASK holds the mask tensor's address (the CPU-debug library
// stores the full address there; the device a 32-bit UB address), 256 / sizeof(T) lanes per repeat under the vector
// mask (counter or normal), lane k of repeat r = bit r * lanes + k of the mask tensor ? src0 : src1 ("多轮迭代连续消耗
// selMask的不同部分"), the element's bits copied. Modes 0 and 1 are not emulated.
template <class P>
inline void set_cmpmask(P* p)
{
    const uint32_t id = ascendc_emu::Issue(ascendc_emu::kPipeV, "set_cmpmask");
    ascendc_emu::Access(id, p, 16, false);
    std::memcpy(ascendc_emu::State().cmpMask, p, 16);
}
template <class T, class U, class... Mode>
inline void vsel(T* dst, T* src0, U* src1, uint64_t repeat, uint64_t db, uint64_t s0b, uint64_t s1b, uint64_t dr,
                 uint64_t s0r, uint64_t s1r, Mode... mode)
{
    static_assert(sizeof...(Mode) <= 1, "vsel takes at most a mode");
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "vsel selects 16- or 32-bit elements");
    const uint64_t selMode = (uint64_t{0} + ... + static_cast<uint64_t>(mode));
    if constexpr (!std::is_same_v<T, U>) {
        ascendc_emu::Unemulated("vsel in mode 1 (VSEL_TENSOR_SCALAR_MODE)");
    } else {
        if (selMode != 2) ascendc_emu::Unemulated("vsel in mode 0 (VSEL_CMPMASK_SPR)");
        const uint8_t* mask = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(ascendc_emu::State().cmpMask[0]));
        const ascendc_emu::Operand a = ascendc_emu::Op(src0, s0b, s0r), b = ascendc_emu::Op(src1, s1b, s1r);
        const ascendc_emu::Operand out = ascendc_emu::Op(dst, db, dr);
        constexpr uint32_t lanes = 256 / sizeof(T);
        const uint32_t id = ascendc_emu::Issue(ascendc_emu::kPipeV, "vsel");
        uint8_t results[lanes][sizeof(T)];
        ascendc_emu::ForActiveLanes(repeat, lanes, [&](uint64_t r, uint32_t count, auto active) {
            for (uint32_t k = 0; k < count; ++k) {
                if (!active(k)) continue;
                const uint64_t bit = r * lanes + k;
                ascendc_emu::Access(id, mask + bit / 8, 1, false);
                const bool first = (mask[bit / 8] >> (bit % 8) & 1) != 0;
                const uint8_t* from = first ? a.Lane(r, k) : b.Lane(r, k);
                ascendc_emu::Access(id, a.Lane(r, k), sizeof(T), false);
                ascendc_emu::Access(id, b.Lane(r, k), sizeof(T), false);
                std::memcpy(results[k], from, sizeof(T));
            }
            for (uint32_t k = 0; k < count; ++k) {
                if (!active(k)) continue;
                uint8_t* p = out.Lane(r, k);
                ascendc_emu::Access(id, p, sizeof(T), true);
                std::memcpy(p, results[k], sizeof(T));
            }
        });
    }
}

// GM <-> UB (DataCopyPad align forms: sid, nBurst, len bytes, left pad, right pad, src gap, dst gap).
#define AEA_EMU_COPY_ALIGN(BITS)                                                                                   \
    template <class D, class S>                                                                                    \
    inline void copy_gm_to_ubuf_align_b##BITS(D* ub, S* gm, uint64_t, uint64_t nBurst, uint64_t len, uint64_t left, \
                                              uint64_t right, uint64_t gmGap, uint64_t ubGap)                      \
    {                                                                                                              \
        ascendc_emu::CopyGmToUbAlign("copy_gm_to_ubuf_align_b" #BITS, reinterpret_cast<uint8_t*>(ub),              \
                                     reinterpret_cast<const uint8_t*>(gm), BITS / 8, nBurst, len, left, right, gmGap, \
                                     ubGap);                                                                       \
    }                                                                                                              \
    template <class D, class S>                                                                                    \
    inline void copy_ubuf_to_gm_align_b##BITS(D* gm, S* ub, uint64_t, uint64_t nBurst, uint64_t len, uint64_t left, \
                                              uint64_t right, uint64_t ubGap, uint64_t gmGap)                      \
    {                                                                                                              \
        ascendc_emu::CopyUbToGmAlign("copy_ubuf_to_gm_align_b" #BITS, reinterpret_cast<uint8_t*>(gm),              \
                                     reinterpret_cast<const uint8_t*>(ub), nBurst, len, left, right, ubGap, gmGap); \
    }
AEA_EMU_COPY_ALIGN(8)
AEA_EMU_COPY_ALIGN(16)
AEA_EMU_COPY_ALIGN(32)
#undef AEA_EMU_COPY_ALIGN

// DataCopy: sid, nBurst, len in blocks, src gap, dst gap in blocks.
template <class D, class S>
inline void copy_gm_to_ubuf(D* ub, S* gm, uint64_t, uint64_t nBurst, uint64_t blocks, uint64_t srcGap, uint64_t dstGap)
{
    ascendc_emu::CopyBlocks("copy_gm_to_ubuf", ascendc_emu::kPipeMte2, reinterpret_cast<uint8_t*>(ub),
                            reinterpret_cast<const uint8_t*>(gm), true, nBurst, blocks, srcGap, dstGap);
}
template <class D, class S>
inline void copy_ubuf_to_gm(D* gm, S* ub, uint64_t, uint64_t nBurst, uint64_t blocks, uint64_t srcGap, uint64_t dstGap)
{
    ascendc_emu::CopyBlocks("copy_ubuf_to_gm", ascendc_emu::kPipeMte3, reinterpret_cast<uint8_t*>(gm),
                            reinterpret_cast<const uint8_t*>(ub), false, nBurst, blocks, srcGap, dstGap);
}

// Mask, control and pad registers (the scalar unit sets them in program order).
inline void set_mask_count() { ascendc_emu::State().counterMode = true; }
inline void set_mask_norm() { ascendc_emu::State().counterMode = false; }
template <class H, class L>
inline void set_vector_mask(H high, L low)
{
    ascendc_emu::State().maskHigh = static_cast<uint64_t>(high);
    ascendc_emu::State().maskLow = static_cast<uint64_t>(low);
}
inline void set_atomic_none() {}
template <class V>
inline void set_mov_pad_val(V value) { ascendc_emu::State().movPadValue = static_cast<uint64_t>(value); }
inline int64_t get_ctrl() { return static_cast<int64_t>(ascendc_emu::State().ctrl); }
template <class V>
inline void set_ctrl(V value) { ascendc_emu::State().ctrl = static_cast<uint64_t>(value); }

// Synchronisation.
template <class P, class Q, class E>
inline void set_flag(P src, Q dst, E event) { ascendc_emu::SetFlag(static_cast<int>(src), static_cast<int>(dst), static_cast<int>(event)); }
template <class P, class Q, class E>
inline void wait_flag(P src, Q dst, E event) { ascendc_emu::WaitFlag(static_cast<int>(src), static_cast<int>(dst), static_cast<int>(event)); }
template <class P>
inline void pipe_barrier(P pipe) { ascendc_emu::Barrier(static_cast<int>(pipe)); }

// Bit scalar intrinsics of TPipe's event-id allocator: find first zero, clear / set a bit.
template <class X>
inline int64_t sff0(X x)
{
    const uint64_t v = static_cast<uint64_t>(x);
    for (int i = 0; i < 64; ++i) {
        if ((v >> i & 1) == 0) return i;
    }
    return -1;
}
// An index outside [0, 63] selects bit (idx % 64 + 64) % 64 (asc_set_nthbit.md / asc_clear_nthbit.md).
namespace ascendc_emu {
template <class I>
inline uint64_t NthBit(I i) { return uint64_t{1} << ((static_cast<int64_t>(i) % 64 + 64) % 64); }
}  // namespace ascendc_emu
template <class X, class I>
inline uint64_t sbitset0(X x, I i) { return static_cast<uint64_t>(x) & ~ascendc_emu::NthBit(i); }
template <class X, class I>
inline uint64_t sbitset1(X x, I i) { return static_cast<uint64_t>(x) | ascendc_emu::NthBit(i); }

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_EMU_INTRINSICS_H
