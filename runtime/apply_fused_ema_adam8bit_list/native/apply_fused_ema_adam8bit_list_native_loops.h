/**
 * @file apply_fused_ema_adam8bit_list_native_loops.h
 * @brief Internal interface between the 8-bit native driver (apply_fused_ema_adam8bit_list_native.cpp)
 *        and its loops per instruction set (*_native_{avx512,avx2,neon,generic}.cpp). Plain structs and
 *        constants only: the loop files are compiled for other instruction sets (native_simd.h
 *        says why nothing else may be shared).
 */
#ifndef APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_LOOPS_H
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_LOOPS_H

#include <cstdint>

#include "apply_fused_ema_adam8bit_list_dtypes.h"
#include "ema_adam_params.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

namespace native {

/** The encode thresholds by binary-search level, for vector lookups: level s (128, 64, ..., 1)
 *  holds T[s - 1 + j * 2s] for j < 128 / s, the thresholds the search compares with at that
 *  step (each level padded to a whole 64-byte line). */
struct ApplyFusedEmaAdam8bitListSearchLevels {
    alignas(64) float l128[16];
    alignas(64) float l64[16];
    alignas(64) float l32[16];
    alignas(64) float l16[16];
    alignas(64) float l8[16];
    alignas(64) float l4[32];
    alignas(64) float l2[64];
    alignas(64) float l1[128];
};

/** Most entries of an encode table (16 KiB: the two maps' tables stay in L1 beside the streams). */
constexpr uint32_t kApplyFusedEmaAdam8bitListTableMax = 4096;

/**
 * A map's encode as one table lookup (the vector loops' fast path; `fast` false: the map does not
 * fit one, and the loops search the thresholds). The thresholds' fp32 values are ordered by a key
 * K of their bits, a non-decreasing function of x; floor is the bits of the smallest power of two
 * below every threshold's magnitude:
 *  - `positive` (every threshold above 0, as the unsigned map's): K = max(x's bits as an int32,
 *    floor), so every negative x and every x below 2^floor has the key of floor;
 *  - else, with a = |x|'s bits and c = max(a, floor) - floor: K = x < 0 ? ~c : c, so every |x|
 *    below 2^floor has the key of 0 or of -0.
 * The key's bucket b = K >> shift (arithmetic) holds at most one threshold, so the code of x is
 * base(b) + [K's low `shift` bits >= L(b)], where base(b) counts the thresholds of the lower
 * buckets and L(b) is the low bits of b's threshold (1 << shift when b has none). One addition
 * does both: entries[b - lo] = ((base(b) + 1) << 24) - L(b) - (b << shift) (mod 2^32) and the
 * code is (entries[b - lo] + K) >> 24, since K - (b << shift) is K's low bits, which carry into
 * the base exactly when they are >= L(b). Keys are clamped to the buckets [lo, hi], below and
 * above every threshold's. Exact for every fp32 x (NaN: code 0) when every threshold is normal,
 * nonzero, below 2 in magnitude and above the smallest normal binade (so no threshold shares a key
 * with 0 or with a tiny x). With `unit`, lo and hi also hold the buckets of every x in [-1, 1]: a
 * block with a finite absmax above 0 has its quotients there, and their codes need neither the
 * clamp nor the NaN case.
 */
struct ApplyFusedEmaAdam8bitListEncodeTable {
    bool fast;
    bool unit;
    bool positive;
    uint32_t shift;  // 1 .. 22
    int32_t floor;
    int32_t lo;  // keys clamped to the buckets [lo, hi]
    int32_t hi;
    alignas(64) uint32_t entries[kApplyFusedEmaAdam8bitListTableMax];
};

/** Buckets of the first level of an encode table's byte planes (a 6-bit byte-permute index). */
constexpr uint32_t kApplyFusedEmaAdam8bitListPlaneBuckets = 64;
/** Entries of their second level (four 128-byte permute tables per byte). */
constexpr uint32_t kApplyFusedEmaAdam8bitListPlaneEntries = 512;
/** The first level's bucket of a key: K >> 23 (arithmetic), taken mod 64. */
constexpr uint32_t kApplyFusedEmaAdam8bitListPlaneShift = 23;

/**
 * The encode table of a `unit` ApplyFusedEmaAdam8bitListEncodeTable in two levels small enough
 * for byte permutes (the AVX-512 VBMI loops: no gather, whose 16 lanes cost about 26 cycles on
 * AMD Zen 4). Same key K. Level one, by b = K >> 23 (a binade of |x|; `fast` needs the buckets of
 * [-1, 1] distinct mod 64): `first` holds d(b) | s(b) << 9, where s(b) is the shift that
 * puts each of b's thresholds in a bucket of its own and d(b) = o(b) - (b << (23 - s(b))) mod 512
 * places b's 2^(23 - s(b)) buckets at o(b) in level two. Level two, by
 * j = ((K >> s(b)) + d(b)) mod 512: the table's folded entry for bucket K >> s(b) (base, low bits
 * and bucket start: the code is (entry + K) >> 24), as bytes. Every x in [-1, 1] gets the table's
 * code. `fast` false: no such split fits (the loops use the table).
 */
struct ApplyFusedEmaAdam8bitListEncodePlanes {
    bool fast;
    alignas(64) uint8_t first[2][kApplyFusedEmaAdam8bitListPlaneBuckets];  // low, high byte
    alignas(64) uint8_t second[4][kApplyFusedEmaAdam8bitListPlaneEntries];  // byte k of entries
};

/** One map, its byte planes and what its encode needs. */
struct ApplyFusedEmaAdam8bitListCodebook {
    alignas(64) float map[256];
    alignas(64) uint8_t planes[4][256];  // planes[k][j]: byte k of map[j] (the VBMI decode's)
    alignas(64) float thresholds[256];   // 255 used: ApplyFusedEmaAdam8bitListEncodeThreshold of
                                         // neighbours
    float positiveFloor;  // ApplyFusedEmaAdam8bitListPositiveFloor (v's quotients raised to it)
    ApplyFusedEmaAdam8bitListSearchLevels levels;
    ApplyFusedEmaAdam8bitListEncodeTable table;
    ApplyFusedEmaAdam8bitListEncodePlanes tablePlanes;  // the table's byte planes, if `unit`
};

/** How a launch's loops encode the moments (every way gives the same codes). */
enum class ApplyFusedEmaAdam8bitListEncodeWay : uint8_t {
    kTable,   // the maps' encode tables where both have one (a gather per vector), else kSearch
    kPlanes,  // the VBMI loops: reciprocal blocks by the tables' byte planes where both maps have
              // them, other blocks as kTable
    kSearch,  // the binary search over the thresholds
};

/** What one launch's loop is compiled for. */
struct ApplyFusedEmaAdam8bitListLoopShape {
    ApplyFusedEmaAdam8bitListDtypes types;
    uint32_t mode;      // 0: Adam + L2; 1: AdamW
    uint32_t prologue;  // 0: none; 1: g / gradDivisor first (grad scale, maximize)
    bool ema;           // ss given (false: the EMA is neither read nor written)
};

/** One launch: every entry updated in place. */
struct ApplyFusedEmaAdam8bitListJob {
    UpdateScalars k;
    float gradDivisor;
    const ApplyFusedEmaAdam8bitListCodebook* m;
    const ApplyFusedEmaAdam8bitListCodebook* v;
    bool bytePlanes;  // AVX-512 VBMI loops: decode whole blocks by the maps' byte planes
    ApplyFusedEmaAdam8bitListEncodeWay encode;
    const uint64_t* numels;
    const void* const* grads;
    void* const* vars;
    void* const* ms;
    void* const* vs;
    void* const* mAbsmaxes;
    void* const* vAbsmaxes;
    void* const* ss;      // the EMA only
    void* const* copies;  // model copies only
};

/** One instruction set's loop for one shape: `blocks` quantization blocks of the launch's block
 *  sequence, from block `block` of entry `entry` on, continuing into the next entries. */
using ApplyFusedEmaAdam8bitListLoop = void (*)(const ApplyFusedEmaAdam8bitListJob& job,
                                               uint32_t entry, uint64_t block, uint64_t blocks);

// Defined in apply_fused_ema_adam8bit_list_native_<isa>.cpp: the loop for `shape`, null for
// storage types outside the contract or (AVX, NEON) a build for another architecture. The VBMI loops
// (*_native_vbmi_avx512.cpp) run on CPUs with AVX-512 VBMI only.
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopAvx512Vbmi(
    const ApplyFusedEmaAdam8bitListLoopShape& shape);
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopAvx512(
    const ApplyFusedEmaAdam8bitListLoopShape& shape);
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopAvx2(
    const ApplyFusedEmaAdam8bitListLoopShape& shape);
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopNeon(
    const ApplyFusedEmaAdam8bitListLoopShape& shape);
ApplyFusedEmaAdam8bitListLoop ApplyFusedEmaAdam8bitListLoopGeneric(
    const ApplyFusedEmaAdam8bitListLoopShape& shape);

}  // namespace native
}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

#endif  // APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_LOOPS_H
