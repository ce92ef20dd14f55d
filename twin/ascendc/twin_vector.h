/**
 * @file twin_vector.h
 * @brief Level-2 (count form) vector instructions of the CPU twin: exactly count elements per call, one
 *        IEEE rounding per element for fp32; half computes in fp32 and rounds once to half.
 *
 * Each call runs its O(1) rule checks (DTYPE, UB_RANGE, UB_ALIGN, QUE_HAZARD, OVERLAP, CAST_MODE) and then
 * one loop from twin_kernels.cpp. Dtype tables follow the 910B (A2/A3) column of ascendc_api.md section 7
 * and are checked at run time so a test can watch the abort.
 */
#ifndef ASCEND_EMA_ADAM_TWIN_VECTOR_H
#define ASCEND_EMA_ADAM_TWIN_VECTOR_H

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "twin_context.h"
#include "twin_kernels.h"
#include "twin_tensor.h"
#include "twin_types.h"

namespace twin::detail {

template <class T, class... Ts>
constexpr bool kOneOf = (std::is_same_v<T, Ts> || ...);
template <class T>
constexpr bool kArithType = kOneOf<T, int16_t, half, int32_t, float>;
template <class T>
constexpr bool kFloatType = kOneOf<T, half, float>;
template <class T>
constexpr bool kDuplicateType = kOneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>;

constexpr const char* kArithTypes = "int16_t, half, int32_t, float";
constexpr const char* kFloatTypes = "half, float";

template <class T>
constexpr const char* TypeName() {
    if constexpr (std::is_same_v<T, float>) return "float";
    else if constexpr (std::is_same_v<T, half>) return "half";
    else if constexpr (std::is_same_v<T, bfloat16_t>) return "bfloat16_t";
    else if constexpr (std::is_same_v<T, int32_t>) return "int32_t";
    else if constexpr (std::is_same_v<T, uint32_t>) return "uint32_t";
    else if constexpr (std::is_same_v<T, int16_t>) return "int16_t";
    else if constexpr (std::is_same_v<T, uint16_t>) return "uint16_t";
    else if constexpr (std::is_same_v<T, int8_t>) return "int8_t";
    else if constexpr (std::is_same_v<T, uint8_t>) return "uint8_t";
    else return "this element type";
}

inline uint64_t CountArg(const char* call, int64_t count) {
    if (count < 0) Fail("UB_RANGE", call, "count %lld is negative", static_cast<long long>(count));
    return static_cast<uint64_t>(count);
}

// OVERLAP: dst and src cover n elements each; they may be identical (same start and extent) or disjoint.
template <class T, class U>
inline void CheckOverlap(BlockContext& ctx, const char* call, const char* name, const AscendC::LocalTensor<T>& dst,
                         const AscendC::LocalTensor<U>& src, uint64_t n) {
    const uint8_t* d = reinterpret_cast<const uint8_t*>(TensorAccess::Addr(dst));
    const uint8_t* s = reinterpret_cast<const uint8_t*>(TensorAccess::Addr(src));
    const uint64_t dBytes = n * sizeof(T);
    const uint64_t sBytes = n * sizeof(U);
    if (n != 0 && d < s + sBytes && s < d + dBytes && !(d == s && dBytes == sBytes)) {
        Fail("OVERLAP", call,
             "dst [UB %lld, +%llu B) and %s [UB %lld, +%llu B) overlap without being identical",
             static_cast<long long>(d - ctx.ub), static_cast<unsigned long long>(dBytes), name,
             static_cast<long long>(s - ctx.ub), static_cast<unsigned long long>(sBytes));
    }
}

inline void CountVector(BlockContext& ctx, uint64_t n) {
    ++ctx.counters.vectorCalls;
    ctx.counters.vectorElements += n;
}

// The float-overflow mode's rule for a result just written (twin_launch.h, FloatOverflowMode):
// half/bf16 results saturate when the launch runs in saturation mode; other types are untouched.
template <class T>
inline void SaturateResult(const BlockContext& ctx, T* dst, uint64_t n) {
    if constexpr (kOneOf<T, half, bfloat16_t>) {
        if (ctx.saturate16) kern::Saturate(dst, n);
    }
}

template <kern::BinOp kOp, class T>
void BinaryCall(const char* call, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                const AscendC::LocalTensor<T>& src1, int32_t count) {
    BlockContext& ctx = Block(call);
    constexpr bool kDiv = kOp == kern::BinOp::Div;
    if constexpr (!(kDiv ? kFloatType<T> : kArithType<T>)) {
        Fail("DTYPE", call, "%s operands are not supported on 910B (allowed: %s)", TypeName<T>(),
             kDiv ? kFloatTypes : kArithTypes);
    } else {
        const uint64_t n = CountArg(call, count);
        CheckOperand(ctx, call, "dst", dst, n, Use::VecWrite);
        CheckOperand(ctx, call, "src0", src0, n, Use::VecRead);
        CheckOperand(ctx, call, "src1", src1, n, Use::VecRead);
        CheckOverlap(ctx, call, "src0", dst, src0, n);
        CheckOverlap(ctx, call, "src1", dst, src1, n);
        CountVector(ctx, n);
        kern::Binary(kOp, TensorAccess::Addr(dst), TensorAccess::Addr(src0), TensorAccess::Addr(src1), n);
        SaturateResult(ctx, TensorAccess::Addr(dst), n);
    }
}

template <kern::ScalarOp kOp, class T>
void ScalarCall(const char* call, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                const T& scalar, int32_t count) {
    BlockContext& ctx = Block(call);
    if constexpr (!kArithType<T>) {
        Fail("DTYPE", call, "%s operands are not supported on 910B (allowed: %s)", TypeName<T>(), kArithTypes);
    } else {
        const uint64_t n = CountArg(call, count);
        CheckOperand(ctx, call, "dst", dst, n, Use::VecWrite);
        CheckOperand(ctx, call, "src", src, n, Use::VecRead);
        CheckOverlap(ctx, call, "src", dst, src, n);
        CountVector(ctx, n);
        kern::Scalar(kOp, TensorAccess::Addr(dst), TensorAccess::Addr(src), scalar, n);
        SaturateResult(ctx, TensorAccess::Addr(dst), n);
    }
}

template <kern::UnOp kOp, class T>
void UnaryCall(const char* call, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
               int32_t count) {
    BlockContext& ctx = Block(call);
    if constexpr (!kFloatType<T>) {
        Fail("DTYPE", call, "%s operands are not supported on 910B (allowed: %s)", TypeName<T>(), kFloatTypes);
    } else {
        const uint64_t n = CountArg(call, count);
        CheckOperand(ctx, call, "dst", dst, n, Use::VecWrite);
        CheckOperand(ctx, call, "src", src, n, Use::VecRead);
        CheckOverlap(ctx, call, "src", dst, src, n);
        CountVector(ctx, n);
        kern::Unary(kOp, TensorAccess::Addr(dst), TensorAccess::Addr(src), n);
        SaturateResult(ctx, TensorAccess::Addr(dst), n);
    }
}

const char* RoundModeName(AscendC::RoundMode mode);

}  // namespace twin::detail

namespace AscendC {

template <class T>
void Add(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const int32_t& count) {
    twin::detail::BinaryCall<twin::detail::kern::BinOp::Add>("Add", dst, src0, src1, count);
}
template <class T>
void Sub(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const int32_t& count) {
    twin::detail::BinaryCall<twin::detail::kern::BinOp::Sub>("Sub", dst, src0, src1, count);
}
template <class T>
void Mul(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const int32_t& count) {
    twin::detail::BinaryCall<twin::detail::kern::BinOp::Mul>("Mul", dst, src0, src1, count);
}
template <class T>
void Div(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const int32_t& count) {
    twin::detail::BinaryCall<twin::detail::kern::BinOp::Div>("Div", dst, src0, src1, count);
}
// Max/Min with a NaN operand return src1 (x86 maxps/minps order; the device's NaN rule is undocumented).
template <class T>
void Max(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const int32_t& count) {
    twin::detail::BinaryCall<twin::detail::kern::BinOp::Max>("Max", dst, src0, src1, count);
}
template <class T>
void Min(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const int32_t& count) {
    twin::detail::BinaryCall<twin::detail::kern::BinOp::Min>("Min", dst, src0, src1, count);
}

template <class T, bool isSetMask = true>
void Adds(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& count) {
    twin::detail::ScalarCall<twin::detail::kern::ScalarOp::Adds>("Adds", dst, src, scalarValue, count);
}
template <class T, bool isSetMask = true>
void Muls(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& count) {
    twin::detail::ScalarCall<twin::detail::kern::ScalarOp::Muls>("Muls", dst, src, scalarValue, count);
}
// Maxs/Mins with a NaN element return the scalar.
template <class T, bool isSetMask = true>
void Maxs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& count) {
    twin::detail::ScalarCall<twin::detail::kern::ScalarOp::Maxs>("Maxs", dst, src, scalarValue, count);
}
template <class T, bool isSetMask = true>
void Mins(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& count) {
    twin::detail::ScalarCall<twin::detail::kern::ScalarOp::Mins>("Mins", dst, src, scalarValue, count);
}

// Sqrt of a negative input gives NaN (undefined on the device).
template <class T>
void Sqrt(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    twin::detail::UnaryCall<twin::detail::kern::UnOp::Sqrt>("Sqrt", dst, src, count);
}
template <class T>
void Abs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    twin::detail::UnaryCall<twin::detail::kern::UnOp::Abs>("Abs", dst, src, count);
}
// Exp is the host libm expf (the device instruction is itself approximate: compare with a tolerance).
template <class T>
void Exp(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    twin::detail::UnaryCall<twin::detail::kern::UnOp::Exp>("Exp", dst, src, count);
}
template <class T>
void Reciprocal(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    twin::detail::UnaryCall<twin::detail::kern::UnOp::Reciprocal>("Reciprocal", dst, src, count);
}
// 1 / sqrt(x) with two roundings (sqrt, then divide).
template <class T>
void Rsqrt(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    twin::detail::UnaryCall<twin::detail::kern::UnOp::Rsqrt>("Rsqrt", dst, src, count);
}

template <class T>
void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count) {
    using namespace twin::detail;
    const char* call = "Duplicate";
    BlockContext& ctx = Block(call);
    if constexpr (!kDuplicateType<T>) {
        Fail("DTYPE", call, "%s is not supported on 910B (allowed: int16_t, uint16_t, half, bfloat16_t, int32_t, "
             "uint32_t, float)", TypeName<T>());
    } else {
        const uint64_t n = CountArg(call, count);
        CheckOperand(ctx, call, "dst", dst, n, Use::VecWrite);
        CountVector(ctx, n);
        if constexpr (sizeof(T) == 2) {
            uint16_t bits;
            std::memcpy(&bits, &scalarValue, sizeof bits);
            kern::Fill(reinterpret_cast<uint16_t*>(TensorAccess::Addr(dst)), bits, n);
        } else {
            uint32_t bits;
            std::memcpy(&bits, &scalarValue, sizeof bits);
            kern::Fill(reinterpret_cast<uint32_t*>(TensorAccess::Addr(dst)), bits, n);
        }
    }
}

// dst = src * scalar + dst, rounded after the multiply and after the add (two roundings, no FMA).
// (T, U) in {(half, half), (float, float), (float, half)}; the mixed form forbids any dst/src overlap.
template <class T, class U>
void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, const int32_t& count) {
    using namespace twin::detail;
    const char* call = "Axpy";
    BlockContext& ctx = Block(call);
    constexpr bool kOk = (std::is_same_v<T, U> && kFloatType<T>) || (std::is_same_v<T, float> && std::is_same_v<U, half>);
    if constexpr (!kOk) {
        Fail("DTYPE", call, "(dst %s, src %s) is not supported on 910B (allowed: (half, half), (float, float), "
             "(float, half))", TypeName<T>(), TypeName<U>());
    } else {
        const uint64_t n = CountArg(call, count);
        CheckOperand(ctx, call, "dst", dst, n, Use::VecWrite);
        CheckOperand(ctx, call, "dst", dst, n, Use::VecRead);
        CheckOperand(ctx, call, "src", src, n, Use::VecRead);
        CheckOverlap(ctx, call, "src", dst, src, n);
        CountVector(ctx, n);
        kern::Axpy(TensorAccess::Addr(dst), TensorAccess::Addr(src), scalarValue, n);
        SaturateResult(ctx, TensorAccess::Addr(dst), n);
    }
}

// Conversions and modes of the 910B table (ascendc_api.md section 9), plus int32 <-> float:
//   half/bfloat16_t -> float: CAST_NONE (exact)
//   float -> half: CAST_NONE (= RINT), RINT, FLOOR, CEIL, ROUND, TRUNC, ODD
//   float -> bfloat16_t: RINT, FLOOR, CEIL, ROUND, TRUNC
//   int32_t -> float: CAST_NONE or CAST_RINT (nearest even; exact below 2^24). The device also has FLOOR, CEIL,
//                     ROUND, TRUNC here; the twin does not model them and rejects them.
//   float -> int32_t: RINT, FLOOR, CEIL, ROUND, TRUNC (saturating; NaN gives 0)
//   uint8_t -> half: CAST_NONE (exact)
//   half -> int32_t, half -> uint8_t: RINT, FLOOR, CEIL, ROUND, TRUNC (saturating; NaN gives 0)
// Any other mode (UNKNOWN, out-of-range values) aborts, as the library's default branches do. A launch in
// saturation mode (LaunchConfig::overflowMode) saturates the half/bf16 results, as every half arithmetic.
template <class T, class U>
void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint32_t count) {
    using namespace twin::detail;
    const char* call = "Cast";
    BlockContext& ctx = Block(call);
    constexpr bool kWiden16 = std::is_same_v<T, float> && kOneOf<U, half, bfloat16_t>;
    constexpr bool kToHalf = std::is_same_v<T, half> && std::is_same_v<U, float>;
    constexpr bool kToBf16 = std::is_same_v<T, bfloat16_t> && std::is_same_v<U, float>;
    constexpr bool kFromInt = std::is_same_v<T, float> && std::is_same_v<U, int32_t>;
    constexpr bool kToInt = std::is_same_v<T, int32_t> && std::is_same_v<U, float>;
    constexpr bool kU8ToHalf = std::is_same_v<T, half> && std::is_same_v<U, uint8_t>;
    constexpr bool kHalfToInt = std::is_same_v<T, int32_t> && std::is_same_v<U, half>;
    constexpr bool kHalfToU8 = std::is_same_v<T, uint8_t> && std::is_same_v<U, half>;
    if constexpr (!(kWiden16 || kToHalf || kToBf16 || kFromInt || kToInt || kU8ToHalf || kHalfToInt ||
                    kHalfToU8)) {
        Fail("DTYPE", call, "%s -> %s is not a supported conversion", TypeName<U>(), TypeName<T>());
    } else {
        // Each conversion accepts exactly the modes its dav-c220 switch lists; anything else (CAST_ODD where it
        // has no instruction, UNKNOWN, an out-of-range value) takes the library's aborting default branch.
        const bool directed = roundMode == RoundMode::CAST_RINT || roundMode == RoundMode::CAST_FLOOR ||
                              roundMode == RoundMode::CAST_CEIL || roundMode == RoundMode::CAST_ROUND ||
                              roundMode == RoundMode::CAST_TRUNC;
        bool modeOk = false;
        const char* allowed = "";
        if constexpr (kWiden16 || kU8ToHalf) {
            modeOk = roundMode == RoundMode::CAST_NONE;
            allowed = "CAST_NONE";
        } else if constexpr (kToHalf) {
            modeOk = directed || roundMode == RoundMode::CAST_NONE || roundMode == RoundMode::CAST_ODD;
            allowed = "CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD";
        } else if constexpr (kFromInt) {
            modeOk = roundMode == RoundMode::CAST_NONE || roundMode == RoundMode::CAST_RINT;
            allowed = "CAST_NONE, CAST_RINT";
        } else {
            modeOk = directed;
            allowed = "CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC";
        }
        if (!modeOk) {
            Fail("CAST_MODE", call, "%s -> %s does not take %s (allowed: %s)", TypeName<U>(), TypeName<T>(),
                 RoundModeName(roundMode), allowed);
        }
        const uint64_t n = count;
        CheckOperand(ctx, call, "dst", dst, n, Use::VecWrite);
        CheckOperand(ctx, call, "src", src, n, Use::VecRead);
        CheckOverlap(ctx, call, "src", dst, src, n);
        CountVector(ctx, n);
        if constexpr (kWiden16 || kFromInt || kU8ToHalf) {
            kern::Cast(TensorAccess::Addr(dst), TensorAccess::Addr(src), n);
        } else {
            kern::Cast(TensorAccess::Addr(dst), TensorAccess::Addr(src), n, roundMode);
        }
        SaturateResult(ctx, TensorAccess::Addr(dst), n);
    }
}

// dst[i] = src[(srcBaseOffset + srcOffset[i]) / sizeof(T)]: byte offsets, each a multiple of sizeof(T)
// and inside src (the device's behaviour outside is undefined: UB_RANGE), srcBaseOffset likewise
// (the library asserts it). T: half, float, int16_t, uint16_t, int32_t, uint32_t.
template <class T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
            const uint32_t srcBaseOffset, const uint32_t count) {
    using namespace twin::detail;
    const char* call = "Gather";
    BlockContext& ctx = Block(call);
    if constexpr (!kOneOf<T, half, float, int16_t, uint16_t, int32_t, uint32_t>) {
        Fail("DTYPE", call, "%s is not supported on 910B (allowed: half, float, int16_t, uint16_t, int32_t, "
             "uint32_t)", TypeName<T>());
    } else {
        const uint64_t n = count;
        CheckOperand(ctx, call, "dst", dst, n, Use::VecWrite);
        CheckOperand(ctx, call, "srcOffset", srcOffset, n, Use::VecRead);
        CheckOperand(ctx, call, "src", src, 1, Use::VecRead);
        CheckOverlap(ctx, call, "srcOffset", dst, srcOffset.template ReinterpretCast<T>(), n);
        const uint32_t* offsets = TensorAccess::Addr(srcOffset);
        const uint64_t srcBytes = static_cast<uint64_t>(src.GetSize()) * sizeof(T);
        if (srcBaseOffset % sizeof(T) != 0) {
            Fail("UB_ALIGN", call, "srcBaseOffset %u is not a multiple of sizeof(T) = %zu", srcBaseOffset, sizeof(T));
        }
        for (uint64_t i = 0; i < n; ++i) {
            const uint64_t at = uint64_t{srcBaseOffset} + offsets[i];
            if (at % sizeof(T) != 0 || at + sizeof(T) > srcBytes) {
                Fail("UB_RANGE", call, "element %llu reads byte %llu of src, which holds %llu bytes (aligned to %zu)",
                     static_cast<unsigned long long>(i), static_cast<unsigned long long>(at),
                     static_cast<unsigned long long>(srcBytes), sizeof(T));
            }
        }
        CountVector(ctx, n);
        using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>;
        kern::Gather(reinterpret_cast<Bits*>(TensorAccess::Addr(dst)),
                     reinterpret_cast<const Bits*>(TensorAccess::Addr(src)), offsets, srcBaseOffset, n);
    }
}

// Bit i of dst (uint8_t, LSB first per byte) = src0[i] <cmpMode> src1[i]; a NaN compares false (NE: true).
// count elements must fill whole 256-byte blocks: the instruction leaves the others out (UB_ALIGN here).
template <class T, class U>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             uint32_t count) {
    using namespace twin::detail;
    const char* call = "Compare";
    BlockContext& ctx = Block(call);
    if constexpr (!(kFloatType<T> && std::is_same_v<U, uint8_t>)) {
        Fail("DTYPE", call, "(dst %s, src %s) is not supported (allowed: a uint8_t mask of half or float)",
             TypeName<U>(), TypeName<T>());
    } else {
        const uint64_t n = count;
        if ((n * sizeof(T)) % 256 != 0) {
            Fail("UB_ALIGN", call, "count %llu of %s does not fill whole 256-byte blocks",
                 static_cast<unsigned long long>(n), TypeName<T>());
        }
        CheckOperand(ctx, call, "dst", dst, n / 8, Use::VecWrite);
        CheckOperand(ctx, call, "src0", src0, n, Use::VecRead);
        CheckOperand(ctx, call, "src1", src1, n, Use::VecRead);
        CountVector(ctx, n);
        kern::Compare(TensorAccess::Addr(dst), TensorAccess::Addr(src0), TensorAccess::Addr(src1), cmpMode, n);
    }
}

// VSEL_TENSOR_TENSOR_MODE: dst[i] = bit i of selMask ? src0[i] : src1[i] (the twin models no other mode).
// count elements must fill whole 256-byte blocks, as for Compare.
template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, uint32_t count) {
    using namespace twin::detail;
    const char* call = "Select";
    BlockContext& ctx = Block(call);
    if constexpr (!(kFloatType<T> && std::is_same_v<U, uint8_t>)) {
        Fail("DTYPE", call, "(dst %s, mask %s) is not supported (allowed: half or float with a uint8_t mask)",
             TypeName<T>(), TypeName<U>());
    } else {
        if (selMode != SELMODE::VSEL_TENSOR_TENSOR_MODE) {
            Fail("SEL_MODE", call, "the twin models VSEL_TENSOR_TENSOR_MODE only");
        }
        const uint64_t n = count;
        if ((n * sizeof(T)) % 256 != 0) {
            Fail("UB_ALIGN", call, "count %llu of %s does not fill whole 256-byte blocks",
                 static_cast<unsigned long long>(n), TypeName<T>());
        }
        CheckOperand(ctx, call, "dst", dst, n, Use::VecWrite);
        CheckOperand(ctx, call, "selMask", selMask, n / 8, Use::VecRead);
        CheckOperand(ctx, call, "src0", src0, n, Use::VecRead);
        CheckOperand(ctx, call, "src1", src1, n, Use::VecRead);
        CheckOverlap(ctx, call, "src0", dst, src0, n);
        CheckOverlap(ctx, call, "src1", dst, src1, n);
        CountVector(ctx, n);
        using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>;
        kern::Select(reinterpret_cast<Bits*>(TensorAccess::Addr(dst)), TensorAccess::Addr(selMask),
                     reinterpret_cast<const Bits*>(TensorAccess::Addr(src0)),
                     reinterpret_cast<const Bits*>(TensorAccess::Addr(src1)), n);
    }
}

}  // namespace AscendC

#endif  // ASCEND_EMA_ADAM_TWIN_VECTOR_H
