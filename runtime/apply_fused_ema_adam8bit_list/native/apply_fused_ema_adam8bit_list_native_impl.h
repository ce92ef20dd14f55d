/**
 * @file apply_fused_ema_adam8bit_list_native_impl.h
 * @brief The 8-bit loops, written once over a vector backend A (runtime/native/native_simd*.h) and
 *        instantiated by each instruction set's translation unit: per quantization block of 256
 *        elements, decode -> the shared fp32 update (ema_adam_native_update.h's Update, the
 *        AscendC kernels' op order) -> the block's new scales -> exact-nearest encode. Code
 *        lookups per backend (Codes<A>): AVX-512 decodes by gathers and encodes by in-register
 *        permutes, AVX2 by gathers, the portable backend by indexing; every backend computes the same comparisons, so the codes
 *        are the same bits. Internal linkage only (see native_simd.h).
 */
#ifndef APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_IMPL_H
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_IMPL_H

#include <cstdint>

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
using ascend_ema_adam::native::Update;

/** Elements per pair of scales (the codebook header's kAdam8bitBlock, which this translation unit
 *  must not include: its inline functions would be compiled for this instruction set). */
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

/**
 * Codes<A>: I, a vector of A::kLanes 32-bit code lanes; Load / Store of kLanes uint8 codes;
 * Decode(map, i) = map[i]; Encode(book, x) = the number of thresholds <= x (the binary search
 * i += s where x >= T[i + s - 1], s = 128 .. 1: false for NaN); AbsBits(x) = the bits of |x|;
 * MaxU / ReduceMaxU: unsigned maxima (NaN's bits above inf's above any finite value's).
 */
template <class A>
struct Codes;

template <>
struct Codes<Scalar> {
    using I = uint32_t;
    static I Zero() { return 0; }
    static I Load(const uint8_t* c) { return *c; }
    static void Store(uint8_t* c, I i) { *c = static_cast<uint8_t>(i); }
    static float Decode(const float* map, I i) { return map[i]; }
    static I Encode(const Adam8bitCodebook& book, float x)
    {
        I i = 0;
        for (I s = 128; s > 0; s >>= 1) {
            i += x >= book.thresholds[i + s - 1U] ? s : 0U;
        }
        return i;
    }
    static I AbsBits(float x) { return BitsOf(x) & 0x7fffffffU; }
    static I MaxU(I a, I b) { return a > b ? a : b; }
    static uint32_t ReduceMaxU(I a) { return a; }
};

#ifdef AEA_NATIVE_HAVE_AVX512
using ascend_ema_adam::native::Avx512;

template <>
struct Codes<Avx512> {
    using I = __m512i;
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
    static void Step(__m512 x, __m512 t, int s, I& i)
    {
        const __mmask16 ge = _mm512_cmp_ps_mask(x, t, _CMP_GE_OQ);
        i = _mm512_mask_add_epi32(i, ge, i, _mm512_set1_epi32(s));
    }
    /** The binary search with each level's candidates looked up in registers: level s compares
     *  with levels.l<s>[i / 2s]. */
    static I Encode(const Adam8bitCodebook& book, __m512 x)
    {
        const Adam8bitSearchLevels& l = book.levels;
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
    static I AbsBits(__m512 x)
    {
        return _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
    }
    static I MaxU(I a, I b) { return _mm512_max_epu32(a, b); }
    static uint32_t ReduceMaxU(I a) { return _mm512_reduce_max_epu32(a); }
};
#endif

#ifdef AEA_NATIVE_HAVE_AVX2
using ascend_ema_adam::native::Avx2;

template <>
struct Codes<Avx2> {
    using I = __m256i;
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
    static I Encode(const Adam8bitCodebook& book, __m256 x)
    {
        I i = Zero();
        for (int s = 128; s > 0; s >>= 1) {
            const __m256 t = _mm256_i32gather_ps(book.thresholds + s - 1, i, 4);
            const I ge = _mm256_castps_si256(_mm256_cmp_ps(x, t, _CMP_GE_OQ));
            i = _mm256_add_epi32(i, _mm256_and_si256(ge, _mm256_set1_epi32(s)));
        }
        return i;
    }
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

/** Pass 1 over [begin, end) of a block in vectors of backend B: decode, update, store var, the
 *  EMA and the copy, keep m' and v' and their largest magnitudes' bits. */
template <class B, class K>
inline void DecodeAndUpdate(const Consts<B>& c, const Adam8bitJob& job, const BlockTensors<K>& t,
                            uint32_t begin, uint32_t end, float* mNew, float* vNew,
                            uint32_t& maxM, uint32_t& maxV)
{
    using V = typename B::V;
    using Q = Codes<B>;
    using G = typename K::Grad;
    using P = typename K::Param;
    using C = typename K::Copy;
    const V mScale = B::Set1(*t.mScale);
    const V vScale = B::Set1(*t.vScale);
    typename Q::I topM = Q::Zero();
    typename Q::I topV = Q::Zero();
    for (uint32_t i = begin; i < end; i += B::kLanes) {
        Lanes<V> in{};
        Lanes<V> out{};
        in.g = B::template Ordered<G>::Load(t.g + i).v[0];
        in.p = B::template Ordered<P>::Load(t.p + i).v[0];
        in.m = B::Mul(Q::Decode(job.m->map, Q::Load(t.m + i)), mScale);  // qmap[code] * absmax
        in.v = B::Mul(Q::Decode(job.v->map, Q::Load(t.v + i)), vScale);
        if constexpr (K::kEma) {
            in.s = B::template Ordered<float>::Load(t.s + i).v[0];
        }
        Update<B, K>(c, in, out);
        B::template Ordered<P>::Store(t.p + i, {{out.p}});
        if constexpr (K::kEma) {
            B::template Ordered<float>::Store(t.s + i, {{out.s}});
        }
        if constexpr (K::kHasCopy) {
            B::template Ordered<C>::Store(t.copy + i, {{out.p}});  // RNE of the fp32 var'
        }
        B::template Ordered<float>::Store(mNew + i, {{out.m}});
        B::template Ordered<float>::Store(vNew + i, {{out.v}});
        topM = Q::MaxU(topM, Q::AbsBits(out.m));
        topV = Q::MaxU(topV, Q::AbsBits(out.v));
    }
    const uint32_t m = Q::ReduceMaxU(topM);
    const uint32_t v = Q::ReduceMaxU(topV);
    maxM = m > maxM ? m : maxM;
    maxV = v > maxV ? v : maxV;
}

/** Pass 2 over [begin, end): x = m' / divisor, code = the nearest (the same for v). */
template <class B>
inline void Encode(const Adam8bitJob& job, uint8_t* mCodes, uint8_t* vCodes, uint32_t begin,
                   uint32_t end, const float* mNew, const float* vNew, float mDivisor,
                   float vDivisor)
{
    using Q = Codes<B>;
    const typename B::V md = B::Set1(mDivisor);
    const typename B::V vd = B::Set1(vDivisor);
    for (uint32_t i = begin; i < end; i += B::kLanes) {
        Q::Store(mCodes + i, Q::Encode(*job.m, B::Div(B::template Ordered<float>::Load(mNew + i).v[0], md)));
        Q::Store(vCodes + i, Q::Encode(*job.v, B::Div(B::template Ordered<float>::Load(vNew + i).v[0], vd)));
    }
}

/** One quantization block: whole vectors of A, the rest (an entry's last, partial block) one
 *  element at a time with the portable backend, which computes the same roundings. */
template <class A, class K>
inline void RunBlock(const Consts<A>& c, const Consts<Scalar>& one, const Adam8bitJob& job,
                     uint32_t entry, uint64_t block)
{
    const uint64_t begin = block * kBlock;
    const uint64_t left = job.numels[entry] - begin;
    const uint32_t len = left < kBlock ? static_cast<uint32_t>(left) : kBlock;
    const uint32_t whole = len / A::kLanes * A::kLanes;
    const BlockTensors<K> t{
        static_cast<const typename K::Grad*>(job.grads[entry]) + begin,
        static_cast<typename K::Param*>(job.vars[entry]) + begin,
        static_cast<uint8_t*>(job.ms[entry]) + begin,
        static_cast<uint8_t*>(job.vs[entry]) + begin,
        static_cast<float*>(job.mAbsmaxes[entry]) + block,
        static_cast<float*>(job.vAbsmaxes[entry]) + block,
        K::kEma ? static_cast<float*>(job.ss[entry]) + begin : nullptr,
        K::kHasCopy ? static_cast<typename K::Copy*>(job.copies[entry]) + begin : nullptr};
    alignas(64) float mNew[kBlock];
    alignas(64) float vNew[kBlock];
    uint32_t maxM = 0;
    uint32_t maxV = 0;
    DecodeAndUpdate<A, K>(c, job, t, 0, whole, mNew, vNew, maxM, maxV);
    DecodeAndUpdate<Scalar, K>(one, job, t, whole, len, mNew, vNew, maxM, maxV);
    const float mAbsmax = FloatOf(maxM);
    const float vAbsmax = FloatOf(maxV);
    *t.mScale = mAbsmax;
    *t.vScale = vAbsmax;
    // An all-zero block divides by 1 (its codes all encode 0); a NaN scale (NaN > 0 is false)
    // likewise: the block decodes to NaN whatever its codes.
    const float mDivisor = mAbsmax > 0.0f ? mAbsmax : 1.0f;
    const float vDivisor = vAbsmax > 0.0f ? vAbsmax : 1.0f;
    Encode<A>(job, t.m, t.v, 0, whole, mNew, vNew, mDivisor, vDivisor);
    Encode<Scalar>(job, t.m, t.v, whole, len, mNew, vNew, mDivisor, vDivisor);
}

/** How many blocks ahead the loops ask for their inputs' lines (into L2: prefetcht1). A block's
 *  two passes keep too few loads in flight for the hardware prefetchers alone. */
constexpr uint64_t kPrefetchBlocks = 2;

/** Asks for the lines of 256 elements from element i of an entry on (prefetches never fault). */
template <class K>
inline void Prefetch(const Adam8bitJob& job, uint32_t entry, uint64_t i)
{
    constexpr int kRead = 0;
    constexpr int kL2 = 2;
    const auto lines = [&](const auto* x, uint64_t bytes) {
        for (uint64_t b = 0; b < bytes; b += 64) {
            __builtin_prefetch(reinterpret_cast<const char*>(x + i) + b, kRead, kL2);
        }
    };
    lines(static_cast<const typename K::Grad*>(job.grads[entry]), kBlock * sizeof(typename K::Grad));
    lines(static_cast<const typename K::Param*>(job.vars[entry]), kBlock * sizeof(typename K::Param));
    lines(static_cast<const uint8_t*>(job.ms[entry]), kBlock);
    lines(static_cast<const uint8_t*>(job.vs[entry]), kBlock);
    if constexpr (K::kEma) {
        lines(static_cast<const float*>(job.ss[entry]), kBlock * sizeof(float));
    }
}

/** `blocks` blocks from (entry, block) on, into the next entries (empty entries have none). */
template <class A, class K>
void RunBlocks(const Adam8bitJob& job, uint32_t entry, uint64_t block, uint64_t blocks)
{
    const Consts<A> c(job.k, job.gradDivisor);
    const Consts<Scalar> one(job.k, job.gradDivisor);
    while (blocks > 0) {
        const uint64_t have = (job.numels[entry] + kBlock - 1U) / kBlock;
        if (block >= have) {
            ++entry;
            block = 0;
            continue;
        }
        if (block + kPrefetchBlocks < have) {
            Prefetch<K>(job, entry, (block + kPrefetchBlocks) * kBlock);
        }
        RunBlock<A, K>(c, one, job, entry, block);
        ++block;
        --blocks;
    }
}

template <class A, class G, class P, class C, uint32_t kMode, Prologue kPro>
Adam8bitLoop PickEma(const Adam8bitLoopShape& s)
{
    return s.ema ? &RunBlocks<A, Kind<G, P, float, C, kMode, kPro, false, true>>
                 : &RunBlocks<A, Kind<G, P, float, C, kMode, kPro, false, false>>;
}

template <class A, class G, class P, class C, uint32_t kMode>
Adam8bitLoop PickPrologue(const Adam8bitLoopShape& s)
{
    return s.prologue == 0 ? PickEma<A, G, P, C, kMode, Prologue::kNone>(s)
                           : PickEma<A, G, P, C, kMode, Prologue::kDivide>(s);
}

template <class A, class G, class P, class C>
Adam8bitLoop PickMode(const Adam8bitLoopShape& s)
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
Adam8bitLoop PickAdam8bitLoop(const Adam8bitLoopShape& s)
{
    if (s.prologue > 1U) {
        return nullptr;
    }
    const Adam8bitDtypes& t = s.types;
#define AEA_ADAM8BIT_LOOP_ROW(key, P, G, C)                                                     \
    if (t.param == kAdam8bitDtype_##P && t.grad == kAdam8bitDtype_##G &&                        \
        t.hasCopy == kAdam8bitHasCopy_##C && (!t.hasCopy || t.copy == kAdam8bitDtype_##C)) {    \
        return PickMode<A, Type_##G, Type_##P, Type_##C>(s);                                    \
    }
    APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ADAM8BIT_LOOP_ROW)
#undef AEA_ADAM8BIT_LOOP_ROW
    return nullptr;
}

}  // namespace
}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::native

#endif  // APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_IMPL_H
