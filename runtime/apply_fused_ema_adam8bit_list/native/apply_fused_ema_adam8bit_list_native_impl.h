/**
 * @file apply_fused_ema_adam8bit_list_native_impl.h
 * @brief The 8-bit loops, written once over a vector backend A (runtime/native/native_simd*.h) and
 *        instantiated by each instruction set's translation unit: per quantization block of 256
 *        elements, decode -> the shared fp32 update (ema_adam_native_update.h's Update, the
 *        AscendC kernels' op order) -> the block's new scales -> exact-nearest encode, the encode
 *        of a block interleaved with the update of the next. Decode by permutes of the map's
 *        byte planes (AVX-512 with VBMI), a gather from the map (AVX-512, AVX2; four lane loads
 *        on NEON) or indexing; encode by the map's encode table (one gather or load, for
 *        maps that have one) or the binary search over the thresholds (in-register
 *        permutes on AVX-512, gathers on AVX2, lane loads on NEON, indexing); every way computes
 *        the same codes.
 *        Internal linkage only (see native_simd.h).
 */
#ifndef APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_IMPL_H
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_IMPL_H

#include <cstdint>
#include <type_traits>

#include "apply_fused_ema_adam8bit_list_native_loops.h"
#include "apply_fused_ema_adam8bit_list_tiling_key.h"
#include "ema_adam_native_update.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native {
namespace {

using ascend_ema_adam::native::Consts;
using ascend_ema_adam::native::Kind;
using ascend_ema_adam::native::Lanes;
using ascend_ema_adam::native::NoCopy;
using ascend_ema_adam::native::Prologue;
using ascend_ema_adam::native::Scalar;

/** Elements per pair of scales (the codebook header's kApplyFusedEmaAdam8bitListBlock, which this
 *  translation unit must not include: its inline functions would be compiled for this instruction
 *  set). */
constexpr uint32_t kBlock = 256;

inline uint32_t BitsOf(float x)
{
    uint32_t u;
    __builtin_memcpy(&u, &x, sizeof u);
    return u;
}

inline float FloatOf(uint32_t u)
{
    float x;
    __builtin_memcpy(&x, &u, sizeof x);
    return x;
}

/** The address entry 0 of a table would have if its entries started at bucket 0 rather than lo
 *  (outside the table unless lo is 0): a gather by bucket from it reads entries[bucket - lo],
 *  without the subtraction. Only ever an operand of a gather, never dereferenced itself. */
inline const void* EntriesAtBucketZero(const ApplyFusedEmaAdam8bitListEncodeTable& t)
{
    return reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(t.entries) -
                                         static_cast<uintptr_t>(static_cast<intptr_t>(t.lo)) *
                                             sizeof(uint32_t));
}

/** The first key of bucket b of a table (b << shift, computed without overflowing int32). */
inline int32_t KeyOfBucket(const ApplyFusedEmaAdam8bitListEncodeTable& t, int32_t b)
{
    return static_cast<int32_t>(int64_t{b} * (int64_t{1} << t.shift));
}

/**
 * Codes<A>: I, a vector of A::kLanes 32-bit code lanes; Load / Store of kLanes uint8 codes;
 * Decode(map, i) = map[i]; Encode(book, x) = the number of thresholds <= x (the binary search
 * i += s where x >= T[i + s - 1], s = 128 .. 1: false for NaN); AbsBits(x) = the bits of |x|;
 * MaxU / ReduceMaxU: unsigned maxima (NaN's bits above inf's above any finite value's); Table, a
 * map's ApplyFusedEmaAdam8bitListEncodeTable (in registers for vector backends) whose call is that
 * count too; kQuotientByReciprocal: the encode's quotients of a reciprocal block (ReciprocalAbsmax)
 * come from QuotientByReciprocal, without a division.
 */
template <class A>
struct Codes;

template <>
struct Codes<Scalar> {
    using I = uint32_t;
    static constexpr bool kQuotientByReciprocal = false;
    static I Zero() { return 0; }
    static I Load(const uint8_t* c) { return *c; }
    static void Store(uint8_t* c, I i) { *c = static_cast<uint8_t>(i); }
    static float Decode(const float* map, I i) { return map[i]; }
    /** v's quotient x = value / divisor before its encode: floor where value > 0 and x < floor
     *  (the codebook header; a NaN x compares false and stays). */
    static float RaisePositive(float x, float value, float floor)
    {
        return value > 0.0f && x < floor ? floor : x;
    }
    static I Encode(const ApplyFusedEmaAdam8bitListCodebook& book, float x)
    {
        I i = 0;
        for (I s = 128; s > 0; s >>= 1) {
            i += x >= book.thresholds[i + s - 1U] ? s : 0U;
        }
        return i;
    }
    /** A map's encode table (ApplyFusedEmaAdam8bitListEncodeTable): the code of x by one load. */
    struct Table {
        explicit Table(const ApplyFusedEmaAdam8bitListEncodeTable& table)
            : t(&table),
              keyLo(KeyOfBucket(table, table.lo)),
              keyHi(KeyOfBucket(table, table.hi + 1) - 1)
        {
        }
        I operator()(float x) const
        {
            int32_t key = Key(x);
            key = key < keyLo ? keyLo : (key > keyHi ? keyHi : key);
            const uint32_t entry = t->entries[(key >> t->shift) - t->lo];
            return x == x ? (entry + static_cast<uint32_t>(key)) >> 24 : 0U;  // NaN: code 0
        }
        /** x in [-1, 1] of a `unit` table: the same lookup (the clamp and the NaN case cost
         *  nothing here). */
        I Unit(float x) const { return (*this)(x); }
        int32_t Key(float x) const
        {
            const uint32_t bits = BitsOf(x);
            if (t->positive) {
                const auto k = static_cast<int32_t>(bits);
                return k > t->floor ? k : t->floor;
            }
            const auto magnitude = static_cast<int32_t>(bits & 0x7fffffffU);
            const int32_t c = (magnitude > t->floor ? magnitude : t->floor) - t->floor;
            return (bits >> 31) != 0U ? ~c : c;
        }
        const ApplyFusedEmaAdam8bitListEncodeTable* t;
        int32_t keyLo, keyHi;  // the first key of bucket lo, the last of hi
    };
    static I AbsBits(float x) { return BitsOf(x) & 0x7fffffffU; }
    static I MaxU(I a, I b) { return a > b ? a : b; }
    static uint32_t ReduceMaxU(I a) { return a; }
};

#ifdef AEA_NATIVE_HAVE_AVX512
using ascend_ema_adam::native::Avx512;

template <>
struct Codes<Avx512> {
    using I = __m512i;
    /** The divider bounded this loop (three divisions and a square root per element, against the
     *  fp32 loop's one and one): taking the encode's two off it made the loop 8 % faster in cache
     *  and 6-8 % at 16.8M on two threads. AVX2 keeps its divisions: the same change made its
     *  loop 6 % slower. */
    static constexpr bool kQuotientByReciprocal = true;
    /**
     * x / a rounded to nearest from y = RN(1 / a), with no division (Markstein's correction):
     * q = RN(x * y) is within an ulp of x / a, its residual q * a - x is exact in an FMA, and
     * q - residual * y rounds to x / a. The residual taken this way round keeps the sign of a
     * zero x. Exact where ReciprocalAbsmax says.
     */
    static __m512 QuotientByReciprocal(__m512 x, __m512 a, __m512 y)
    {
        const __m512 q = _mm512_mul_ps(x, y);
        return _mm512_fnmadd_ps(_mm512_fmsub_ps(q, a, x), y, q);
    }
    static I Zero() { return _mm512_setzero_si512(); }
    static I Load(const uint8_t* c)
    {
        return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c)));
    }
    static void Store(uint8_t* c, I i)
    {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(c), _mm512_cvtepi32_epi8(i));
    }
    /** One gather from the map (in L1): measured faster than a tree of eight two-register
     *  permutes and seven blends (4.3 against 4.8 cycles per element of the whole loop, in cache,
     *  one thread; interleaved runs). */
    static __m512 Decode(const float* map, I i) { return _mm512_i32gather_ps(i, map, 4); }
    static __m512 RaisePositive(__m512 x, __m512 value, __m512 floor)
    {
        const __mmask16 positive = _mm512_cmp_ps_mask(value, _mm512_setzero_ps(), _CMP_GT_OQ);
        return _mm512_mask_mov_ps(x, _mm512_mask_cmp_ps_mask(positive, x, floor, _CMP_LT_OQ),
                                  floor);
    }
    __attribute__((always_inline)) static void Step(__m512 x, __m512 t, int s, I& i)
    {
        const __mmask16 ge = _mm512_cmp_ps_mask(x, t, _CMP_GE_OQ);
        i = _mm512_mask_add_epi32(i, ge, i, _mm512_set1_epi32(s));
    }
    /** The binary search with each level's candidates looked up in registers: level s compares
     *  with levels.l<s>[i / 2s]. */
    __attribute__((always_inline)) static I Encode(const ApplyFusedEmaAdam8bitListCodebook& book,
                                                   __m512 x)
    {
        const ApplyFusedEmaAdam8bitListSearchLevels& l = book.levels;
        I i = Zero();
        Step(x, _mm512_set1_ps(l.l128[0]), 128, i);
        Step(x, _mm512_permutexvar_ps(_mm512_srli_epi32(i, 7), _mm512_load_ps(l.l64)), 64, i);
        Step(x, _mm512_permutexvar_ps(_mm512_srli_epi32(i, 6), _mm512_load_ps(l.l32)), 32, i);
        Step(x, _mm512_permutexvar_ps(_mm512_srli_epi32(i, 5), _mm512_load_ps(l.l16)), 16, i);
        Step(x, _mm512_permutexvar_ps(_mm512_srli_epi32(i, 4), _mm512_load_ps(l.l8)), 8, i);
        {
            const I j = _mm512_srli_epi32(i, 3);  // 0..31
            Step(x, _mm512_permutex2var_ps(_mm512_load_ps(l.l4), j, _mm512_load_ps(l.l4 + 16)), 4,
                 i);
        }
        {
            const I j = _mm512_srli_epi32(i, 2);  // 0..63
            const __m512 lo = _mm512_permutex2var_ps(_mm512_load_ps(l.l2), j,
                                                     _mm512_load_ps(l.l2 + 16));
            const __m512 hi = _mm512_permutex2var_ps(_mm512_load_ps(l.l2 + 32), j,
                                                     _mm512_load_ps(l.l2 + 48));
            const __mmask16 b5 = _mm512_test_epi32_mask(j, _mm512_set1_epi32(32));
            Step(x, _mm512_mask_blend_ps(b5, lo, hi), 2, i);
        }
        {
            const I j = _mm512_srli_epi32(i, 1);  // 0..127
            __m512 q[4];
            for (int k = 0; k < 4; ++k) {
                q[k] = _mm512_permutex2var_ps(_mm512_load_ps(l.l1 + 32 * k), j,
                                              _mm512_load_ps(l.l1 + 32 * k + 16));
            }
            const __mmask16 b5 = _mm512_test_epi32_mask(j, _mm512_set1_epi32(32));
            const __mmask16 b6 = _mm512_test_epi32_mask(j, _mm512_set1_epi32(64));
            Step(x, _mm512_mask_blend_ps(b6, _mm512_mask_blend_ps(b5, q[0], q[1]),
                                         _mm512_mask_blend_ps(b5, q[2], q[3])), 1, i);
        }
        return i;
    }
    /** A map's encode table (ApplyFusedEmaAdam8bitListEncodeTable) in registers: the code of x by
     *  one gather. */
    struct Table {
        explicit Table(const ApplyFusedEmaAdam8bitListEncodeTable& t)
            : floor(_mm512_set1_epi32(t.floor)),
              keyLo(_mm512_set1_epi32(KeyOfBucket(t, t.lo))),
              keyHi(_mm512_set1_epi32(KeyOfBucket(t, t.hi + 1) - 1)),
              shift(_mm512_set1_epi32(static_cast<int>(t.shift))),
              entriesAtZero(EntriesAtBucketZero(t)),
              positive(t.positive)
        {
        }
        __attribute__((always_inline)) I operator()(__m512 x) const
        {
            const I key = _mm512_min_epi32(_mm512_max_epi32(Key(x), keyLo), keyHi);
            const __mmask16 number = _mm512_cmp_ps_mask(x, x, _CMP_ORD_Q);  // NaN: code 0
            return _mm512_maskz_srli_epi32(number, _mm512_add_epi32(Entry(key), key), 24);
        }
        /** x in [-1, 1] of a `unit` table: its key is in [keyLo, keyHi] and it is not NaN. */
        __attribute__((always_inline)) I Unit(__m512 x) const { return CodeOfSum(UnitSum(x)); }
        /** Unit's code in the top byte of each lane, the lower bytes not cleared. */
        __attribute__((always_inline)) I UnitSum(__m512 x) const
        {
            const I key = Key(x);
            return _mm512_add_epi32(Entry(key), key);
        }
        __attribute__((always_inline)) I Key(__m512 x) const
        {
            const I bits = _mm512_castps_si512(x);
            if (positive) {  // the same way all launch
                return _mm512_max_epi32(bits, floor);
            }
            const I magnitude = _mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff));
            const I c = _mm512_sub_epi32(_mm512_max_epu32(magnitude, floor), floor);
            return _mm512_xor_si512(c, _mm512_srai_epi32(bits, 31));
        }
        /** The entries of the keys' buckets (a per-lane shift: one uop, where a shift by a
         *  register count takes two). */
        __attribute__((always_inline)) I Entry(I key) const
        {
            return _mm512_i32gather_epi32(_mm512_srav_epi32(key, shift), entriesAtZero, 4);
        }
        I floor, keyLo, keyHi, shift;
        const void* entriesAtZero;
        bool positive;
    };
    /** The code in the top byte of each lane of a Table::UnitSum. */
    static I CodeOfSum(I sum) { return _mm512_srli_epi32(sum, 24); }
    /** A code as the top byte of a sum, as CodeOfSum reads it. */
    static I SumOfCode(I code) { return _mm512_slli_epi32(code, 24); }
    static I AbsBits(__m512 x)
    {
        return _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
    }
    static I MaxU(I a, I b) { return _mm512_max_epu32(a, b); }
    static uint32_t ReduceMaxU(I a) { return _mm512_reduce_max_epu32(a); }
};
#endif

#if defined(AEA_NATIVE_HAVE_AVX512) && defined(AEA_ADAM8BIT_VBMI)
/** The byte-plane decode and code lines: only in the translation unit compiled for AVX-512 VBMI
 *  (*_native_vbmi_avx512.cpp), whose loops run on CPUs with it
 *  (ApplyFusedEmaAdam8bitListBytePlaneDecode). */
#define AEA_ADAM8BIT_BYTE_PLANES 1

/** Codes decoded at once by DecodeBytePlanes. */
constexpr uint32_t kBytePlaneCodes = 64;

/** Lane 16l + 4q + d of InterleaveBytePlanes's input holds value 16q + 4l + d of its output. */
alignas(64) constexpr uint8_t kBytePlaneOrder[kBytePlaneCodes] = {
    0,  1,  2,  3,  16, 17, 18, 19, 32, 33, 34, 35, 48, 49, 50, 51,
    4,  5,  6,  7,  20, 21, 22, 23, 36, 37, 38, 39, 52, 53, 54, 55,
    8,  9,  10, 11, 24, 25, 26, 27, 40, 41, 42, 43, 56, 57, 58, 59,
    12, 13, 14, 15, 28, 29, 30, 31, 44, 45, 46, 47, 60, 61, 62, 63};

/** 64 32-bit values, out[q] lanes 16q .. 16q + 15, from their four byte planes (bytes[k]: byte
 *  k of each value, in kBytePlaneOrder): the in-lane interleaves leave the values in order. */
__attribute__((always_inline)) inline void InterleaveBytePlanes(const __m512i* bytes, __m512i* out)
{
    const __m512i low01 = _mm512_unpacklo_epi8(bytes[0], bytes[1]);
    const __m512i high01 = _mm512_unpackhi_epi8(bytes[0], bytes[1]);
    const __m512i low23 = _mm512_unpacklo_epi8(bytes[2], bytes[3]);
    const __m512i high23 = _mm512_unpackhi_epi8(bytes[2], bytes[3]);
    out[0] = _mm512_unpacklo_epi16(low01, low23);
    out[1] = _mm512_unpackhi_epi16(low01, low23);
    out[2] = _mm512_unpacklo_epi16(high01, high23);
    out[3] = _mm512_unpackhi_epi16(high01, high23);
}

/**
 * map[codes[j]] for 64 codes, out[q] lanes 16q .. 16q + 15, by permutes of the map's byte planes
 * (AVX-512 VBMI: each byte of the 64 values from two register pairs by the code's low 7 bits, the
 * pair chosen by its top bit), then the four bytes interleaved into values. The codes go in
 * shuffled (kBytePlaneOrder) so that the interleave leaves the values in order. No loads beside
 * the planes (L1): the gathers it replaces load every lane on their own, and the loop was bound
 * by its loads (one thread, 65,536 fp32 elements in L2: 7 % fewer cycles than gathering).
 */
__attribute__((always_inline)) inline void DecodeBytePlanes(const uint8_t (*planes)[256],
                                                            const uint8_t* codes, __m512* out)
{
    const __m512i c = _mm512_permutexvar_epi8(_mm512_load_si512(kBytePlaneOrder),
                                              _mm512_loadu_si512(codes));
    const __mmask64 upper = _mm512_movepi8_mask(c);  // codes 128 .. 255
    __m512i bytes[4];
    for (int k = 0; k < 4; ++k) {
        const __m512i lower = _mm512_permutex2var_epi8(_mm512_load_si512(planes[k]), c,
                                                       _mm512_load_si512(planes[k] + 64));
        const __m512i higher = _mm512_permutex2var_epi8(_mm512_load_si512(planes[k] + 128), c,
                                                        _mm512_load_si512(planes[k] + 192));
        bytes[k] = _mm512_mask_blend_epi8(upper, lower, higher);
    }
    __m512i values[4];
    InterleaveBytePlanes(bytes, values);
    for (int q = 0; q < 4; ++q) {
        out[q] = _mm512_castsi512_ps(values[q]);
    }
}

/** Byte k (0 or 1) of 64 32-bit lanes (four vectors, lane order) in kBytePlaneOrder: an index
 *  vector for plane lookups whose results InterleaveBytePlanes puts back in lane order. */
__attribute__((always_inline)) inline __m512i BytesInPlaneOrder(const __m512i* lanes, int k)
{
    // position j: byte k of lane kBytePlaneOrder[j], from the pair (lanes[0], lanes[1]) or, where
    // kFromSecondPair has bit j, (lanes[2], lanes[3])
    alignas(64) static constexpr uint8_t kFrom[kBytePlaneCodes] = {
        0,  4,  8,  12, 64, 68, 72, 76, 0,  4,  8,  12, 64, 68, 72, 76,
        16, 20, 24, 28, 80, 84, 88, 92, 16, 20, 24, 28, 80, 84, 88, 92,
        32, 36, 40, 44, 96, 100, 104, 108, 32, 36, 40, 44, 96, 100, 104, 108,
        48, 52, 56, 60, 112, 116, 120, 124, 48, 52, 56, 60, 112, 116, 120, 124};
    constexpr __mmask64 kFromSecondPair = 0xff00ff00ff00ff00ULL;
    const __m512i from = _mm512_add_epi8(_mm512_load_si512(kFrom), _mm512_set1_epi8(k));
    return _mm512_mask_blend_epi8(kFromSecondPair,
                                  _mm512_permutex2var_epi8(lanes[0], from, lanes[1]),
                                  _mm512_permutex2var_epi8(lanes[2], from, lanes[3]));
}

/**
 * Table::UnitSum of 64 keys (four vectors) by the table's byte planes
 * (ApplyFusedEmaAdam8bitListEncodePlanes): level one's shift and offset by two 64-byte permutes,
 * level two's entry by four 128-byte permutes per byte and three blends; about 50 shuffles per 64
 * lanes where the table's gathers take four of 26 cycles each on Zen 4.
 */
__attribute__((always_inline)) inline void PlaneSums(
    const ApplyFusedEmaAdam8bitListEncodePlanes& p, const __m512i* keys, __m512i* sums)
{
    __m512i first[4];
    {
        __m512i buckets[4];
        for (int q = 0; q < 4; ++q) {
            buckets[q] = _mm512_srai_epi32(keys[q], kApplyFusedEmaAdam8bitListPlaneShift);
        }
        const __m512i b = BytesInPlaneOrder(buckets, 0);  // vpermb reads its low 6 bits
        const __m512i bytes[4] = {_mm512_permutexvar_epi8(b, _mm512_load_si512(p.first[0])),
                                  _mm512_permutexvar_epi8(b, _mm512_load_si512(p.first[1])),
                                  _mm512_setzero_si512(), _mm512_setzero_si512()};
        InterleaveBytePlanes(bytes, first);
    }
    __m512i second[4];  // (K >> s) + d: its low 9 bits are the level-two entry
    for (int q = 0; q < 4; ++q) {
        second[q] = _mm512_add_epi32(_mm512_srlv_epi32(keys[q], _mm512_srli_epi32(first[q], 9)),
                                     first[q]);
    }
    const __m512i low = BytesInPlaneOrder(second, 0);
    const __mmask64 bit7 = _mm512_movepi8_mask(low);
    const __mmask64 bit8 = _mm512_test_epi8_mask(BytesInPlaneOrder(second, 1), _mm512_set1_epi8(1));
    __m512i bytes[4];
    for (int k = 0; k < 4; ++k) {
        const uint8_t* t = p.second[k];
        __m512i quarter[4];
        for (int h = 0; h < 4; ++h) {
            quarter[h] = _mm512_permutex2var_epi8(_mm512_load_si512(t + 128 * h), low,
                                                  _mm512_load_si512(t + 128 * h + 64));
        }
        bytes[k] =
            _mm512_mask_blend_epi8(bit8, _mm512_mask_blend_epi8(bit7, quarter[0], quarter[1]),
                                   _mm512_mask_blend_epi8(bit7, quarter[2], quarter[3]));
    }
    InterleaveBytePlanes(bytes, sums);
    for (int q = 0; q < 4; ++q) {
        sums[q] = _mm512_add_epi32(sums[q], keys[q]);
    }
}

/**
 * The codes of 64 lanes from four vectors of Table::UnitSum (the code in each 32-bit lane's top
 * byte), stored as 64 bytes: two byte permutes pick the top bytes of two vectors each, a blend
 * joins the halves (VBMI: 3 uops where narrowing each vector takes a shift and a two-uop store).
 */
__attribute__((always_inline)) inline void StoreCodeLine(uint8_t* codes, const __m512i* sums)
{
    // byte k < 32 of a permute of (a, b): the top byte of lane k % 16 of a (k < 16) or b; the
    // upper half of the line the same from the second pair
    alignas(64) static constexpr uint8_t kTopBytes[kBytePlaneCodes] = {
        3,  7,  11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63,
        67, 71, 75, 79, 83, 87, 91, 95, 99, 103, 107, 111, 115, 119, 123, 127,
        3,  7,  11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63,
        67, 71, 75, 79, 83, 87, 91, 95, 99, 103, 107, 111, 115, 119, 123, 127};
    const __m512i top = _mm512_load_si512(kTopBytes);
    const __m512i low = _mm512_permutex2var_epi8(sums[0], top, sums[1]);
    const __m512i high = _mm512_permutex2var_epi8(sums[2], top, sums[3]);
    _mm512_storeu_si512(codes, _mm512_mask_blend_epi8(0xffffffff00000000ULL, low, high));
}
#endif

#ifdef AEA_NATIVE_HAVE_AVX2
using ascend_ema_adam::native::Avx2;

template <>
struct Codes<Avx2> {
    using I = __m256i;
    static constexpr bool kQuotientByReciprocal = false;  // measured slower (Codes<Avx512> says)
    static I Zero() { return _mm256_setzero_si256(); }
    static I Load(const uint8_t* c)
    {
        return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(c)));
    }
    static void Store(uint8_t* c, I i)
    {
        const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(i),
                                               _mm256_extracti128_si256(i, 1));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(c), _mm_packus_epi16(words, words));
    }
    static __m256 Decode(const float* map, I i) { return _mm256_i32gather_ps(map, i, 4); }
    static __m256 RaisePositive(__m256 x, __m256 value, __m256 floor)
    {
        const __m256 raise = _mm256_and_ps(_mm256_cmp_ps(value, _mm256_setzero_ps(), _CMP_GT_OQ),
                                           _mm256_cmp_ps(x, floor, _CMP_LT_OQ));
        return _mm256_blendv_ps(x, floor, raise);
    }
    __attribute__((always_inline)) static I Encode(const ApplyFusedEmaAdam8bitListCodebook& book,
                                                   __m256 x)
    {
        I i = Zero();
        for (int s = 128; s > 0; s >>= 1) {
            const __m256 t = _mm256_i32gather_ps(book.thresholds + s - 1, i, 4);
            const I ge = _mm256_castps_si256(_mm256_cmp_ps(x, t, _CMP_GE_OQ));
            i = _mm256_add_epi32(i, _mm256_and_si256(ge, _mm256_set1_epi32(s)));
        }
        return i;
    }
    /** A map's encode table (ApplyFusedEmaAdam8bitListEncodeTable) in registers: the code of x by
     *  one gather. */
    struct Table {
        explicit Table(const ApplyFusedEmaAdam8bitListEncodeTable& t)
            : floor(_mm256_set1_epi32(t.floor)),
              keyLo(_mm256_set1_epi32(KeyOfBucket(t, t.lo))),
              keyHi(_mm256_set1_epi32(KeyOfBucket(t, t.hi + 1) - 1)),
              shift(_mm256_set1_epi32(static_cast<int>(t.shift))),
              entriesAtZero(static_cast<const int*>(EntriesAtBucketZero(t))),
              positive(t.positive)
        {
        }
        __attribute__((always_inline)) I operator()(__m256 x) const
        {
            const I key = _mm256_min_epi32(_mm256_max_epi32(Key(x), keyLo), keyHi);
            const I code = _mm256_srli_epi32(_mm256_add_epi32(Entry(key), key), 24);
            return _mm256_and_si256(code, _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_ORD_Q)));
        }
        /** x in [-1, 1] of a `unit` table: its key is in [keyLo, keyHi] and it is not NaN. */
        __attribute__((always_inline)) I Unit(__m256 x) const
        {
            const I key = Key(x);
            return _mm256_srli_epi32(_mm256_add_epi32(Entry(key), key), 24);
        }
        __attribute__((always_inline)) I Key(__m256 x) const
        {
            const I bits = _mm256_castps_si256(x);
            if (positive) {  // the same way all launch
                return _mm256_max_epi32(bits, floor);
            }
            const I magnitude = _mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff));
            const I c = _mm256_sub_epi32(_mm256_max_epu32(magnitude, floor), floor);
            return _mm256_xor_si256(c, _mm256_srai_epi32(bits, 31));
        }
        /** The entries of the keys' buckets (a per-lane shift: one uop, where a shift by a
         *  register count takes two). */
        __attribute__((always_inline)) I Entry(I key) const
        {
            return _mm256_i32gather_epi32(entriesAtZero, _mm256_srav_epi32(key, shift), 4);
        }
        I floor, keyLo, keyHi, shift;
        const int* entriesAtZero;
        bool positive;
    };
    static I AbsBits(__m256 x)
    {
        return _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff));
    }
    static I MaxU(I a, I b) { return _mm256_max_epu32(a, b); }
    static uint32_t ReduceMaxU(I a)
    {
        __m128i m = _mm_max_epu32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
        m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0x4e));
        m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0xb1));
        return static_cast<uint32_t>(_mm_cvtsi128_si32(m));
    }
};
#endif

#ifdef AEA_NATIVE_HAVE_NEON
using ascend_ema_adam::native::Neon;

/** NEON has no gather: a lookup is four lane loads (ld1 {v.s}[lane]) from L1-resident tables. */
template <>
struct Codes<Neon> {
    using I = uint32x4_t;
    static constexpr bool kQuotientByReciprocal = false;  // no reciprocal table path measured here
    static I Zero() { return vdupq_n_u32(0); }
    static I Load(const uint8_t* c)
    {
        uint32_t word;
        __builtin_memcpy(&word, c, sizeof word);
        return vmovl_u16(vget_low_u16(vmovl_u8(vreinterpret_u8_u32(vdup_n_u32(word)))));
    }
    static void Store(uint8_t* c, I i)
    {
        const uint16x4_t words = vmovn_u32(i);
        const uint8x8_t bytes = vmovn_u16(vcombine_u16(words, words));
        const uint32_t word = vget_lane_u32(vreinterpret_u32_u8(bytes), 0);
        __builtin_memcpy(c, &word, sizeof word);
    }
    static float32x4_t Gather(const float* table, I i)
    {
        float32x4_t x = vld1q_dup_f32(table + vgetq_lane_u32(i, 0));
        x = vld1q_lane_f32(table + vgetq_lane_u32(i, 1), x, 1);
        x = vld1q_lane_f32(table + vgetq_lane_u32(i, 2), x, 2);
        return vld1q_lane_f32(table + vgetq_lane_u32(i, 3), x, 3);
    }
    static float32x4_t Decode(const float* map, I i) { return Gather(map, i); }
    static float32x4_t RaisePositive(float32x4_t x, float32x4_t value, float32x4_t floor)
    {
        const uint32x4_t raise =
            vandq_u32(vcgtq_f32(value, vdupq_n_f32(0.0f)), vcltq_f32(x, floor));
        return vbslq_f32(raise, floor, x);
    }
    static I Encode(const ApplyFusedEmaAdam8bitListCodebook& book, float32x4_t x)
    {
        I i = Zero();
        for (uint32_t s = 128; s > 0; s >>= 1) {
            const float32x4_t t = Gather(book.thresholds + s - 1, i);
            i = vaddq_u32(i, vandq_u32(vcgeq_f32(x, t), vdupq_n_u32(s)));  // false for NaN
        }
        return i;
    }
    /** A map's encode table (ApplyFusedEmaAdam8bitListEncodeTable): the key and the code in
     *  registers, the bucket's entry by four lane loads. */
    struct Table {
        explicit Table(const ApplyFusedEmaAdam8bitListEncodeTable& t)
            : floor(vdupq_n_s32(t.floor)),
              keyLo(vdupq_n_s32(KeyOfBucket(t, t.lo))),
              keyHi(vdupq_n_s32(KeyOfBucket(t, t.hi + 1) - 1)),
              shiftRight(vdupq_n_s32(-static_cast<int32_t>(t.shift))),
              lo(t.lo),
              entries(t.entries),
              positive(t.positive)
        {
        }
        I operator()(float32x4_t x) const
        {
            const int32x4_t key = vminq_s32(vmaxq_s32(Key(x), keyLo), keyHi);
            const I code = vshrq_n_u32(vaddq_u32(Entry(key), vreinterpretq_u32_s32(key)), 24);
            return vandq_u32(code, vceqq_f32(x, x));  // NaN: code 0
        }
        /** x in [-1, 1] of a `unit` table: its key is in [keyLo, keyHi] and it is not NaN. */
        I Unit(float32x4_t x) const
        {
            const int32x4_t key = Key(x);
            return vshrq_n_u32(vaddq_u32(Entry(key), vreinterpretq_u32_s32(key)), 24);
        }
        int32x4_t Key(float32x4_t x) const
        {
            const int32x4_t bits = vreinterpretq_s32_f32(x);
            if (positive) {  // the same way all launch
                return vmaxq_s32(bits, floor);
            }
            const uint32x4_t magnitude = vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x7fffffffU));
            const int32x4_t c = vsubq_s32(
                vreinterpretq_s32_u32(vmaxq_u32(magnitude, vreinterpretq_u32_s32(floor))), floor);
            return veorq_s32(c, vshrq_n_s32(bits, 31));
        }
        /** The entries of the keys' buckets (an arithmetic shift by a register: sshl by -shift). */
        I Entry(int32x4_t key) const
        {
            const int32x4_t bucket = vsubq_s32(vshlq_s32(key, shiftRight), vdupq_n_s32(lo));
            uint32x4_t e = vld1q_dup_u32(entries + vgetq_lane_s32(bucket, 0));
            e = vld1q_lane_u32(entries + vgetq_lane_s32(bucket, 1), e, 1);
            e = vld1q_lane_u32(entries + vgetq_lane_s32(bucket, 2), e, 2);
            return vld1q_lane_u32(entries + vgetq_lane_s32(bucket, 3), e, 3);
        }
        int32x4_t floor, keyLo, keyHi, shiftRight;
        int32_t lo;
        const uint32_t* entries;
        bool positive;
    };
    static I AbsBits(float32x4_t x)
    {
        return vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x7fffffffU));
    }
    static I MaxU(I a, I b) { return vmaxq_u32(a, b); }
    static uint32_t ReduceMaxU(I a) { return vmaxvq_u32(a); }
};
#endif

/** One entry's pointers at the start of one quantization block. */
template <class K>
struct BlockTensors {
    const typename K::Grad* g;
    typename K::Param* p;
    uint8_t* m;
    uint8_t* v;
    float* mScale;
    float* vScale;
    float* s;
    typename K::Copy* copy;
};

template <class K>
inline BlockTensors<K> TensorsOf(const ApplyFusedEmaAdam8bitListJob& job, uint32_t entry,
                                 uint64_t block)
{
    const uint64_t begin = block * kBlock;
    return {static_cast<const typename K::Grad*>(job.grads[entry]) + begin,
            static_cast<typename K::Param*>(job.vars[entry]) + begin,
            static_cast<uint8_t*>(job.ms[entry]) + begin,
            static_cast<uint8_t*>(job.vs[entry]) + begin,
            static_cast<float*>(job.mAbsmaxes[entry]) + block,
            static_cast<float*>(job.vAbsmaxes[entry]) + block,
            K::kEma ? static_cast<float*>(job.ss[entry]) + begin : nullptr,
            K::kHasCopy ? static_cast<typename K::Copy*>(job.copies[entry]) + begin : nullptr};
}

/** A block's m' and v' waiting for their encode, with where the codes go (m null: none). */
struct PendingEncode {
    uint8_t* m;
    uint8_t* v;
    float mDivisor;
    float vDivisor;
    float mReciprocal;  // RN(1 / divisor): the quotients of a reciprocal block
    float vReciprocal;
    bool mUnit;  // the absmax is finite and above 0: every quotient is in [-1, 1], none NaN
    bool vUnit;
    bool reciprocal;  // a unit block for both moments, both absmaxes ReciprocalAbsmax
    alignas(64) float mNew[kBlock];
    alignas(64) float vNew[kBlock];
};

/** The largest magnitudes' bits of a block's m' and v', as vectors of backend B. */
template <class B>
struct Tops {
    typename Codes<B>::I m = Codes<B>::Zero();
    typename Codes<B>::I v = Codes<B>::Zero();
};

/** How far ahead of pass 1's loads the loops ask for its inputs' lines (into L1: prefetcht0),
 *  spread over the vectors, a line of each stream where the last one ends: whole-block bursts of
 *  prefetches into L2 left the update and the encode waiting on memory in turn (16.8M fp32, one
 *  thread, AVX-512: 2 blocks ahead spread beat bursts of 2 blocks ahead into L2 by a quarter). */
constexpr uint32_t kPrefetchElements = 2 * kBlock;

/** The line of element i + kPrefetchElements of stream x, when a vector of backend B at element i
 *  starts a line of x (prefetches never fault: past an entry's end they are dropped or wasted).
 *  Always inlined, and no lambda: GCC counts a prefetch as free of side effects, so a call of an
 *  outlined helper that only prefetches is deleted as dead code (the loops had lost every prefetch
 *  that way). */
template <class B, class T>
__attribute__((always_inline)) inline void PrefetchLineAhead(const T* x, uint32_t i)
{
    if ((i * sizeof(T)) % 64U < B::kLanes * sizeof(T)) {
        const uintptr_t at = reinterpret_cast<uintptr_t>(x + i) + kPrefetchElements * sizeof(T);
        __builtin_prefetch(reinterpret_cast<const void*>(at), 0, 3);
    }
}

/** The lines of element i + kPrefetchElements of each input stream that a vector of backend B at
 *  element i starts. */
template <class B, class K>
__attribute__((always_inline)) inline void PrefetchAhead(const BlockTensors<K>& t, uint32_t i)
{
    PrefetchLineAhead<B>(t.g, i);
    PrefetchLineAhead<B>(t.p, i);
    PrefetchLineAhead<B>(t.m, i);
    PrefetchLineAhead<B>(t.v, i);
    if constexpr (K::kEma) {
        PrefetchLineAhead<B>(static_cast<const float*>(t.s), i);
    }
}

/** Pass 1 of one vector of backend B at element i of a block, its codes decoded (mMap, vMap: the
 *  maps' values): update, store var, the EMA and the copy, keep m' and v' in `out` and their
 *  largest magnitudes' bits. */
template <class B, class K>
inline void UpdateVector(const Consts<B>& c, const BlockTensors<K>& t, typename B::V mMap,
                         typename B::V vMap, typename B::V mScale, typename B::V vScale, uint32_t i,
                         PendingEncode& out, Tops<B>& top)
{
    using V = typename B::V;
    using Q = Codes<B>;
    using P = typename K::Param;
    Lanes<V> in{};
    Lanes<V> next{};
    if constexpr (B::kLanes > 1) {
        PrefetchAhead<B, K>(t, i);
    }
    in.g = B::template Ordered<typename K::Grad>::Load(t.g + i).v[0];
    in.p = B::template Ordered<P>::Load(t.p + i).v[0];
    in.m = B::Mul(mMap, mScale);  // qmap[code] * absmax
    in.v = B::Mul(vMap, vScale);
    if constexpr (K::kEma) {
        in.s = B::template Ordered<float>::Load(t.s + i).v[0];
    }
    ascend_ema_adam::native::Update<B, K>(c, in, next);  // the shared fp32 update
    B::template Ordered<P>::Store(t.p + i, {{next.p}});
    if constexpr (K::kEma) {
        B::template Ordered<float>::Store(t.s + i, {{next.s}});
    }
    if constexpr (K::kHasCopy) {
        B::template Ordered<typename K::Copy>::Store(t.copy + i, {{next.p}});  // RNE of var'
    }
    B::template Ordered<float>::Store(out.mNew + i, {{next.m}});
    B::template Ordered<float>::Store(out.vNew + i, {{next.v}});
    top.m = Q::MaxU(top.m, Q::AbsBits(next.m));
    top.v = Q::MaxU(top.v, Q::AbsBits(next.v));
}

/** Pass 1 of one vector, its codes decoded by the backend's Decode (a gather from the map). */
template <class B, class K>
inline void DecodeAndUpdate(const Consts<B>& c, const ApplyFusedEmaAdam8bitListJob& job,
                            const BlockTensors<K>& t, typename B::V mScale, typename B::V vScale,
                            uint32_t i, PendingEncode& out, Tops<B>& top)
{
    using Q = Codes<B>;
    UpdateVector<B, K>(c, t, Q::Decode(job.m->map, Q::Load(t.m + i)),
                       Q::Decode(job.v->map, Q::Load(t.v + i)), mScale, vScale, i, out, top);
}

/**
 * Where QuotientByReciprocal's quotients x / a give the division's codes: a unit block whose
 * absmax a is in [2^-40, 2^40] (so |x| <= a), encoded by a unit table whose floor is at least
 * 2^-59. A quotient of magnitude >= 2^-60 then has x, RN(x / a), 1 / a and the residual normal,
 * the conditions of Markstein's correction, so it is exact (also checked on 8e8 pairs next to
 * floats and to midpoints, divisors with all-ones significands among them). A smaller one may miss
 * by an ulp or underflow but stays below 2^-59, and a table keys every magnitude below its floor
 * alike (ApplyFusedEmaAdam8bitListEncodeTable): the same code.
 */
constexpr float kReciprocalAbsmaxMin = 0x1p-40f;
constexpr float kReciprocalAbsmaxMax = 0x1p40f;
constexpr int32_t kReciprocalTableFloorMin = (127 - 59) << 23;  // 2^-59's bits

inline bool ReciprocalAbsmax(float absmax)
{
    return absmax >= kReciprocalAbsmaxMin && absmax <= kReciprocalAbsmaxMax;
}

/** Encoders: the nearest code of fp32 lanes x of backend B, quotients of any block or of a block
 *  whose absmax is finite and above 0 (`unitBlock`: every x in [-1, 1] and none NaN). */
template <class B>
struct SearchEncoder {
    explicit SearchEncoder(const ApplyFusedEmaAdam8bitListCodebook& b)
        : book(&b), positiveFloor(B::Set1(b.positiveFloor))
    {
    }
    __attribute__((always_inline)) typename Codes<B>::I operator()(typename B::V x,
                                                                   bool /* unitBlock */) const
    {
        return Codes<B>::Encode(*book, x);
    }
    const ApplyFusedEmaAdam8bitListCodebook* book;
    typename B::V positiveFloor;  // the map's, broadcast (v's quotients: Codes<B>::RaisePositive)
};

/** The encode tables where both maps have one and the launch encodes by tables (a unit block's
 *  by the lookup without the clamp and the NaN case, where the table covers [-1, 1]), else the
 *  search: chosen per call (branches that go the same way all launch or all block), so that each
 *  loop is compiled once rather than once per encoder (the 8-bit loop files were the slowest of
 *  the build). The encoders and their lookups are always inlined: GCC had left them calls, one
 *  per vector and moment, around which every live vector register was spilled (zmm registers
 *  are caller-saved; docs/PERFORMANCE.md, "The 8-bit step by CPU kind"). */
template <class B>
struct Encoder {
    Encoder(const ApplyFusedEmaAdam8bitListCodebook& b, bool useTable, bool useTablePlanes)
        : table(b.table),
          search(b),
          positiveFloor(B::Set1(b.positiveFloor)),
          useTable(useTable),
          unitTable(useTable && b.table.unit),
          reciprocal((useTable ? unitTable : b.table.fast) &&
                     b.table.floor >= kReciprocalTableFloorMin),
          tablePlanes(useTable && useTablePlanes && reciprocal && b.tablePlanes.fast
                          ? &b.tablePlanes
                          : nullptr)
    {
    }
    __attribute__((always_inline)) typename Codes<B>::I operator()(typename B::V x,
                                                                   bool unitBlock) const
    {
        if (unitTable && unitBlock) {
            return table.Unit(x);
        }
        return useTable ? table(x) : search(x, unitBlock);
    }
    /** The code of x in [-1, 1], not NaN, in the top byte of each lane, the lower bytes not
     *  cleared (Table::UnitSum; the search's code shifted there). */
    __attribute__((always_inline)) typename Codes<B>::I UnitSum(typename B::V x) const
    {
        return useTable ? table.UnitSum(x) : Codes<B>::SumOfCode(search(x, true));
    }
    typename Codes<B>::Table table;
    SearchEncoder<B> search;
    typename B::V positiveFloor;  // the map's, broadcast (v's quotients: Codes<B>::RaisePositive)
    bool useTable;
    bool unitTable;
    /** Quotients of a reciprocal block (ReciprocalAbsmax) encode exactly: by the unit table, or
     *  by the search where every threshold is normal and at least 2^-59 in magnitude (a quotient
     *  that misses by an ulp stays below every threshold's magnitude, so it compares alike). */
    bool reciprocal;
    /** The unit table's byte planes for a reciprocal block's quotients (the VBMI loops), or
     *  null. */
    const ApplyFusedEmaAdam8bitListEncodePlanes* tablePlanes;
};

/** Pass 2 of one vector of backend B at element i of a pending block: both moments' codes of
 *  m' / mDivisor and v' / vDivisor, v's raised to its map's positive floor. */
template <class B, class E>
__attribute__((always_inline)) inline void EncodeAt(const E& m, const E& v,
                                                    const PendingEncode& block,
                                                    typename B::V mDivisor,
                                                    typename B::V vDivisor, uint32_t i)
{
    using Q = Codes<B>;
    const typename B::V mNew = B::template Ordered<float>::Load(block.mNew + i).v[0];
    const typename B::V vNew = B::template Ordered<float>::Load(block.vNew + i).v[0];
    Q::Store(block.m + i, m(B::Div(mNew, mDivisor), block.mUnit));
    Q::Store(block.v + i,
             v(Q::RaisePositive(B::Div(vNew, vDivisor), vNew, v.positiveFloor), block.vUnit));
}

/** A reciprocal block's divisors and their reciprocals (PendingEncode's), broadcast, and v's
 *  positive floor. */
template <class B>
struct ReciprocalDivisors {
    typename B::V m, v, mReciprocal, vReciprocal, vFloor;
};

/** Both moments' quotients at element i of a reciprocal block on a backend with
 *  kQuotientByReciprocal: from the divisors' reciprocals, without a division. */
template <class B>
__attribute__((always_inline)) inline void QuotientsByReciprocalAt(const PendingEncode& block,
                                                                   const ReciprocalDivisors<B>& d,
                                                                   uint32_t i,
                                                                   typename B::V& mQuotient,
                                                                   typename B::V& vQuotient)
{
    using Q = Codes<B>;
    const typename B::V mNew = B::template Ordered<float>::Load(block.mNew + i).v[0];
    const typename B::V vNew = B::template Ordered<float>::Load(block.vNew + i).v[0];
    mQuotient = Q::QuotientByReciprocal(mNew, d.m, d.mReciprocal);
    vQuotient = Q::RaisePositive(Q::QuotientByReciprocal(vNew, d.v, d.vReciprocal), vNew, d.vFloor);
}

/** Both moments' Table::UnitSum at element i of a reciprocal block (both encoders'
 *  `reciprocal`) on a backend with kQuotientByReciprocal, each lane's code in its top byte. */
template <class B, class E>
__attribute__((always_inline)) inline void CodeSumsByReciprocalAt(
    const E& m, const E& v, const PendingEncode& block, const ReciprocalDivisors<B>& d, uint32_t i,
    typename Codes<B>::I& mSum, typename Codes<B>::I& vSum)
{
    typename B::V mQuotient, vQuotient;
    QuotientsByReciprocalAt<B>(block, d, i, mQuotient, vQuotient);
    mSum = m.UnitSum(mQuotient);
    vSum = v.UnitSum(vQuotient);
}

/** EncodeAt of a reciprocal block: the same codes as the division's. */
template <class B, class E>
__attribute__((always_inline)) inline void EncodeByReciprocalAt(const E& m, const E& v,
                                                                const PendingEncode& block,
                                                                const ReciprocalDivisors<B>& d,
                                                                uint32_t i)
{
    using Q = Codes<B>;
    typename Q::I mSum, vSum;
    CodeSumsByReciprocalAt<B>(m, v, block, d, i, mSum, vSum);
    Q::Store(block.m + i, Q::CodeOfSum(mSum));
    Q::Store(block.v + i, Q::CodeOfSum(vSum));
}

/** The block's new scales from its largest magnitudes' bits, and their divisors: an all-zero
 *  block divides by 1 (its codes all encode 0); a NaN scale (NaN > 0 is false) likewise: the
 *  block decodes to NaN whatever its codes. A finite scale above 0 makes a unit block; on a
 *  backend A with kQuotientByReciprocal, the reciprocals and whether it is a reciprocal block. */
template <class A, class K>
inline void Scales(const BlockTensors<K>& t, uint32_t maxM, uint32_t maxV, PendingEncode& out)
{
    const float mAbsmax = FloatOf(maxM);
    const float vAbsmax = FloatOf(maxV);
    *t.mScale = mAbsmax;
    *t.vScale = vAbsmax;
    out.m = t.m;
    out.v = t.v;
    out.mDivisor = mAbsmax > 0.0f ? mAbsmax : 1.0f;
    out.vDivisor = vAbsmax > 0.0f ? vAbsmax : 1.0f;
    constexpr uint32_t kInfBits = 0x7f800000U;  // above it: NaN; the bits are of magnitudes
    out.mUnit = maxM != 0U && maxM < kInfBits;
    out.vUnit = maxV != 0U && maxV < kInfBits;
    out.reciprocal = false;
    if constexpr (Codes<A>::kQuotientByReciprocal) {  // else not worth its two divisions
        out.mReciprocal = 1.0f / out.mDivisor;
        out.vReciprocal = 1.0f / out.vDivisor;
        out.reciprocal = out.mUnit && out.vUnit && ReciprocalAbsmax(mAbsmax) &&
                         ReciprocalAbsmax(vAbsmax);
    }
}

/** Encodes a pending block (if any) whole. */
template <class A, class E>
inline void Flush(const E& m, const E& v, PendingEncode& block)
{
    if (block.m == nullptr) {
        return;
    }
    const typename A::V md = A::Set1(block.mDivisor);
    const typename A::V vd = A::Set1(block.vDivisor);
    for (uint32_t i = 0; i < kBlock; i += A::kLanes) {
        EncodeAt<A>(m, v, block, md, vd, i);
    }
    block.m = nullptr;
}

#ifdef AEA_ADAM8BIT_BYTE_PLANES
/**
 * UpdateEncodingPrevious by byte planes where the previous block is a reciprocal block (its
 * quotients by QuotientByReciprocal): each vector's update beside the previous block's encode of
 * the same lanes, each line of 64 codes stored by StoreCodeLine; with kTablePlanes the line's
 * quotients' keys looked up at once by the tables' byte planes (PlaneSums).
 */
template <bool kTablePlanes, class K, class E>
__attribute__((always_inline)) inline void UpdateEncodingReciprocalByPlanes(
    const Consts<Avx512>& c, const ApplyFusedEmaAdam8bitListJob& job, const E& m, const E& v,
    const BlockTensors<K>& t, __m512 mScale, __m512 vScale, PendingEncode& out,
    const PendingEncode& previous, const ReciprocalDivisors<Avx512>& d, Tops<Avx512>& top)
{
    constexpr uint32_t kLanes = Avx512::kLanes;
    for (uint32_t i = 0; i < kBlock; i += kBytePlaneCodes) {
        __m512 mMap[kBytePlaneCodes / kLanes];
        __m512 vMap[kBytePlaneCodes / kLanes];
        DecodeBytePlanes(job.m->planes, t.m + i, mMap);
        DecodeBytePlanes(job.v->planes, t.v + i, vMap);
        __m512i mSums[kBytePlaneCodes / kLanes];
        __m512i vSums[kBytePlaneCodes / kLanes];
        __m512i mKeys[kBytePlaneCodes / kLanes];  // kTablePlanes: the quotients' keys
        __m512i vKeys[kBytePlaneCodes / kLanes];
        // Unrolled: the decoded values and the sums stay in registers instead of a stack round
        // trip per vector (in cache, one thread: 5-6 % fewer cycles, both orders of an in-process
        // A/B; 16.8M on two threads, bound by memory: unchanged).
#pragma GCC unroll 4
        for (uint32_t q = 0; q < kBytePlaneCodes / kLanes; ++q) {
            const uint32_t at = i + q * kLanes;
            UpdateVector<Avx512, K>(c, t, mMap[q], vMap[q], mScale, vScale, at, out, top);
            if constexpr (kTablePlanes) {
                __m512 mQuotient, vQuotient;
                QuotientsByReciprocalAt<Avx512>(previous, d, at, mQuotient, vQuotient);
                mKeys[q] = m.table.Key(mQuotient);
                vKeys[q] = v.table.Key(vQuotient);
            } else {
                CodeSumsByReciprocalAt<Avx512>(m, v, previous, d, at, mSums[q], vSums[q]);
            }
        }
        if constexpr (kTablePlanes) {
            PlaneSums(*m.tablePlanes, mKeys, mSums);
            PlaneSums(*v.tablePlanes, vKeys, vSums);
        }
        StoreCodeLine(previous.m + i, mSums);
        StoreCodeLine(previous.v + i, vSums);
    }
}
#endif

/**
 * A whole block's pass 1 into `out` (its codes decoded by the maps' byte planes, 64 at a time,
 * where the launch may, else by gathers), with the previous block's pass 2 interleaved vector by
 * vector (then done: its m set null): the update's divisions and square roots keep the divider
 * busy while the encode's lookups and compares use the other units, which two separate passes
 * would leave idle in turn.
 */
template <class A, class K, class E>
inline void UpdateEncodingPrevious(const Consts<A>& c, const ApplyFusedEmaAdam8bitListJob& job,
                                   const E& m, const E& v, const BlockTensors<K>& t,
                                   PendingEncode& out, PendingEncode& previous)
{
    using Q = Codes<A>;
    using V = typename A::V;
    const V mScale = A::Set1(*t.mScale);
    const V vScale = A::Set1(*t.vScale);
    const bool encode = previous.m != nullptr;
    const V md = A::Set1(encode ? previous.mDivisor : 1.0f);
    const V vd = A::Set1(encode ? previous.vDivisor : 1.0f);
    const bool byReciprocal = Q::kQuotientByReciprocal && encode && previous.reciprocal &&
                              m.reciprocal && v.reciprocal;
    const ReciprocalDivisors<A> rd{md, vd,  // the reciprocals are set only then (Scales)
                                   A::Set1(byReciprocal ? previous.mReciprocal : 1.0f),
                                   A::Set1(byReciprocal ? previous.vReciprocal : 1.0f),
                                   v.positiveFloor};
    Tops<A> top;
    const auto step = [&](uint32_t i, V mMap, V vMap) __attribute__((always_inline)) {
        UpdateVector<A, K>(c, t, mMap, vMap, mScale, vScale, i, out, top);
        // both the same way all block
        if constexpr (Q::kQuotientByReciprocal) {
            if (byReciprocal) {
                EncodeByReciprocalAt<A>(m, v, previous, rd, i);
                return;
            }
        }
        if (encode) {
            EncodeAt<A>(m, v, previous, md, vd, i);
        }
    };
    bool bytePlanes = false;  // the same way all launch
#ifdef AEA_ADAM8BIT_BYTE_PLANES
    if constexpr (std::is_same<A, Avx512>::value) {
        bytePlanes = job.bytePlanes;
        if (bytePlanes && byReciprocal && m.tablePlanes != nullptr && v.tablePlanes != nullptr) {
            UpdateEncodingReciprocalByPlanes<true, K>(c, job, m, v, t, mScale, vScale, out,
                                                      previous, rd, top);
        } else if (bytePlanes && byReciprocal) {
            UpdateEncodingReciprocalByPlanes<false, K>(c, job, m, v, t, mScale, vScale, out,
                                                       previous, rd, top);
        } else if (bytePlanes) {
            for (uint32_t i = 0; i < kBlock; i += kBytePlaneCodes) {
                V mMap[kBytePlaneCodes / A::kLanes];
                V vMap[kBytePlaneCodes / A::kLanes];
                DecodeBytePlanes(job.m->planes, t.m + i, mMap);
                DecodeBytePlanes(job.v->planes, t.v + i, vMap);
                for (uint32_t q = 0; q < kBytePlaneCodes / A::kLanes; ++q) {
                    step(i + q * A::kLanes, mMap[q], vMap[q]);
                }
            }
        }
    }
#endif
    if (!bytePlanes) {
        for (uint32_t i = 0; i < kBlock; i += A::kLanes) {
            step(i, Q::Decode(job.m->map, Q::Load(t.m + i)),
                 Q::Decode(job.v->map, Q::Load(t.v + i)));
        }
    }
    previous.m = nullptr;
    Scales<A>(t, Q::ReduceMaxU(top.m), Q::ReduceMaxU(top.v), out);
}

/** An entry's last block of len < 256 elements on its own: whole vectors of A, the rest one
 *  element at a time with the portable backend, which computes the same roundings. */
template <class A, class K, class E>
inline void RunPartialBlock(const Consts<A>& c, const Consts<Scalar>& one,
                            const ApplyFusedEmaAdam8bitListJob& job, const E& m, const E& v,
                            const BlockTensors<K>& t, uint32_t len, PendingEncode& out)
{
    const uint32_t whole = len / A::kLanes * A::kLanes;
    Tops<A> top;
    Tops<Scalar> topOne;
    const float mScale = *t.mScale;
    const float vScale = *t.vScale;
    for (uint32_t i = 0; i < whole; i += A::kLanes) {
        DecodeAndUpdate<A, K>(c, job, t, A::Set1(mScale), A::Set1(vScale), i, out, top);
    }
    for (uint32_t i = whole; i < len; ++i) {
        DecodeAndUpdate<Scalar, K>(one, job, t, mScale, vScale, i, out, topOne);
    }
    const uint32_t maxM = Codes<A>::ReduceMaxU(top.m);
    const uint32_t maxV = Codes<A>::ReduceMaxU(top.v);
    Scales<A>(t, maxM > topOne.m ? maxM : topOne.m, maxV > topOne.v ? maxV : topOne.v, out);
    const typename A::V md = A::Set1(out.mDivisor);
    const typename A::V vd = A::Set1(out.vDivisor);
    for (uint32_t i = 0; i < whole; i += A::kLanes) {
        EncodeAt<A>(m, v, out, md, vd, i);
    }
    const SearchEncoder<Scalar> mOne(*job.m);
    const SearchEncoder<Scalar> vOne(*job.v);
    for (uint32_t i = whole; i < len; ++i) {
        EncodeAt<Scalar>(mOne, vOne, out, out.mDivisor, out.vDivisor, i);
    }
    out.m = nullptr;
}

/** `blocks` blocks from (entry, block) on, into the next entries (empty entries have none): each
 *  whole block's update runs beside the previous block's encode. */
template <class A, class K>
void RunBlocks(const ApplyFusedEmaAdam8bitListJob& job, uint32_t entry, uint64_t block,
               uint64_t blocks)
{
    const Consts<A> c(job.k, job.gradDivisor);
    const Consts<Scalar> one(job.k, job.gradDivisor);
    const bool tables = job.encode != ApplyFusedEmaAdam8bitListEncodeWay::kSearch &&
                        job.m->table.fast && job.v->table.fast;
    const bool tablePlanes = job.encode == ApplyFusedEmaAdam8bitListEncodeWay::kPlanes &&
                             job.bytePlanes;
    const Encoder<A> m(*job.m, tables, tablePlanes);
    const Encoder<A> v(*job.v, tables, tablePlanes);
    PendingEncode pending[2];
    pending[0].m = nullptr;
    pending[1].m = nullptr;
    uint32_t idle = 0;  // pending[idle ^ 1] is the block waiting for its encode, if any
    while (blocks > 0) {
        const uint64_t have = (job.numels[entry] + kBlock - 1U) / kBlock;
        if (block >= have) {
            ++entry;
            block = 0;
            continue;
        }
        const BlockTensors<K> t = TensorsOf<K>(job, entry, block);
        const uint64_t left = job.numels[entry] - block * kBlock;
        if (left >= kBlock) {
            UpdateEncodingPrevious<A, K>(c, job, m, v, t, pending[idle], pending[idle ^ 1U]);
            idle ^= 1U;
        } else {
            Flush<A>(m, v, pending[idle ^ 1U]);
            RunPartialBlock<A, K>(c, one, job, m, v, t, static_cast<uint32_t>(left), pending[idle]);
        }
        ++block;
        --blocks;
    }
    Flush<A>(m, v, pending[idle ^ 1U]);
}

template <class A, class G, class P, class C, uint32_t kMode, Prologue kPro>
ApplyFusedEmaAdam8bitListLoop PickEma(const ApplyFusedEmaAdam8bitListLoopShape& s)
{
    return s.ema ? &RunBlocks<A, Kind<G, P, float, C, kMode, kPro, false, true>>
                 : &RunBlocks<A, Kind<G, P, float, C, kMode, kPro, false, false>>;
}

template <class A, class G, class P, class C, uint32_t kMode>
ApplyFusedEmaAdam8bitListLoop PickPrologue(const ApplyFusedEmaAdam8bitListLoopShape& s)
{
    return s.prologue == 0 ? PickEma<A, G, P, C, kMode, Prologue::kNone>(s)
                           : PickEma<A, G, P, C, kMode, Prologue::kDivide>(s);
}

template <class A, class G, class P, class C>
ApplyFusedEmaAdam8bitListLoop PickMode(const ApplyFusedEmaAdam8bitListLoopShape& s)
{
    return s.mode == 0 ? PickPrologue<A, G, P, C, 0>(s) : PickPrologue<A, G, P, C, 1>(s);
}

// The native storage types of the contract's tokens.
using Type_FP32 = float;
using Type_FP16 = ascend_ema_adam::native::F16;
using Type_BF16 = ascend_ema_adam::native::Bf16;
using Type_NONE = NoCopy;

/** The loop of backend A for `shape`: its row of APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS, null outside
 *  the table. */
template <class A>
ApplyFusedEmaAdam8bitListLoop PickApplyFusedEmaAdam8bitListLoop(
    const ApplyFusedEmaAdam8bitListLoopShape& s)
{
    if (s.prologue > 1U) {
        return nullptr;
    }
    const ApplyFusedEmaAdam8bitListDtypes& t = s.types;
#define AEA_ADAM8BIT_LOOP_ROW(key, P, G, C)                              \
    if (t.param == kApplyFusedEmaAdam8bitListDtype_##P &&                \
        t.grad == kApplyFusedEmaAdam8bitListDtype_##G &&                 \
        t.hasCopy == kApplyFusedEmaAdam8bitListHasCopy_##C &&            \
        (!t.hasCopy || t.copy == kApplyFusedEmaAdam8bitListDtype_##C)) { \
        return PickMode<A, Type_##G, Type_##P, Type_##C>(s);             \
    }
    APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ADAM8BIT_LOOP_ROW)
#undef AEA_ADAM8BIT_LOOP_ROW
    return nullptr;
}

}  // namespace
}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native

#endif  // APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_IMPL_H
