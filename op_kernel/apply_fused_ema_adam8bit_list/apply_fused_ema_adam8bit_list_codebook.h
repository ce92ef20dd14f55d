/**
 * @file apply_fused_ema_adam8bit_list_codebook.h
 * @brief The 8-bit state's fixed sizes and the encode thresholds every kernel of
 *        ApplyFusedEmaAdam8bitList derives from a launch's map, written once: plain C++ on
 *        __aicore__ inline functions (the AscendC kernel includes it directly, host code with
 *        __aicore__ defined away). golden8bit.encode_thresholds mirrors it in numpy.
 *
 * T[k] is the smallest fp32 value >= (q[k] + q[k+1]) / 2: an fp32 x is at least as near to
 * q[k+1] as to q[k] exactly when x >= T[k], so the count of thresholds <= x is the exactly
 * nearest code, a tie going to the larger code (and a NaN, which compares false, to code 0).
 *
 * The second moment's quotients x = v' / divisor of a v' > 0 below the map's positive floor F
 * (ApplyFusedEmaAdam8bitListPositiveFloor) are first taken as F: a positive v' never takes a code
 * whose value is <= 0. By the nearest code alone, a v' under half the smallest positive code of
 * its block's scale decodes to 0 while its m' keeps a code (m's codes reach the square root of
 * v's range), and the next steps divide m by eps alone: rarely-active weights drift by thousands
 * of learning rates. Raised, such a v decodes to that smallest code, at least the v' it stands
 * for, so its element steps less than in fp32, not more.
 */
#ifndef APPLY_FUSED_EMA_ADAM8BIT_LIST_CODEBOOK_H
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_CODEBOOK_H

#include <cstdint>

namespace ascend_ema_adam {

/** Elements per pair of scales (bitsandbytes since 0.44, torchao, CANN's ApplyAdamWQuant). */
constexpr uint32_t kApplyFusedEmaAdam8bitListBlock = 256;
/** Entries of a map (codes are uint8), and thresholds between them. */
constexpr uint32_t kApplyFusedEmaAdam8bitListMapSize = 256;
constexpr uint32_t kApplyFusedEmaAdam8bitListThresholds = kApplyFusedEmaAdam8bitListMapSize - 1;

/** Chunks hold at most this many quantization blocks (and at least one). */
constexpr uint32_t kApplyFusedEmaAdam8bitListMaxChunkBlocks = 16;
/** UB the 8-bit kernel may use: Compare and Select may take the library's scratch above 184 KiB. */
constexpr uint32_t kApplyFusedEmaAdam8bitListUbLimit = 184U * 1024U;

/** Bytes of the per-block scale slot of a chunk of `blocks` blocks (whole 32-byte blocks). */
__aicore__ inline uint32_t ApplyFusedEmaAdam8bitListScaleSlotBytes(uint32_t blocks)
{
    return (blocks * 4U + 31U) / 32U * 32U;
}

/** The kernel's fp32 work slots of a chunk: decode (m, v), the update's outputs (m', v'), the
 *  encode (x, index, candidate, threshold, offsets), plus the widened gradient, the widened var
 *  and var' for 16-bit dtypes, and the broadcast grad scale. */
__aicore__ inline uint32_t ApplyFusedEmaAdam8bitListWorkSlots(uint32_t gradBytes,
                                                              uint32_t paramBytes, bool gradScale)
{
    return 9U + (gradBytes == 4U ? 0U : 1U) + (paramBytes == 4U ? 0U : 2U) + (gradScale ? 1U : 0U);
}

/**
 * UB of one core of the 8-bit kernel with chunks of `blocks` blocks: the one source of this number
 * (the kernel allocates exactly this, the tiling sizes chunks with it). Per chunk element: the
 * input buffer (grad, var, two codes, the EMA), the output buffer (var, two codes, the EMA, the
 * copy), the fp32 work slots, a half slot (code conversions) and a compare-mask bit; plus the two
 * scale slots of the output buffer and 8 KiB of tables (two maps, two threshold tables, the lane
 * index, the divisor, zeros: 256 fp32 each, one spare).
 */
__aicore__ inline uint32_t ApplyFusedEmaAdam8bitListUbBytes(uint32_t blocks, uint32_t gradBytes,
                                                            uint32_t paramBytes, uint32_t copyBytes,
                                                            bool ema, bool gradScale)
{
    const uint32_t elems = blocks * kApplyFusedEmaAdam8bitListBlock;
    const uint32_t emaBytes = ema ? 4U : 0U;
    const uint32_t in = gradBytes + paramBytes + 2U + emaBytes;
    const uint32_t out = paramBytes + 2U + emaBytes + copyBytes;
    const uint32_t work =
        4U * ApplyFusedEmaAdam8bitListWorkSlots(gradBytes, paramBytes, gradScale) + 2U;
    return elems * (in + out + work) + elems / 8U +
           2U * ApplyFusedEmaAdam8bitListScaleSlotBytes(blocks) +
           8U * kApplyFusedEmaAdam8bitListMapSize * 4U;
}

/** Quantization blocks of an n-element entry. */
__aicore__ inline uint64_t ApplyFusedEmaAdam8bitListBlocks(uint64_t n)
{
    return (n + kApplyFusedEmaAdam8bitListBlock - 1U) / kApplyFusedEmaAdam8bitListBlock;
}

/**
 * The smallest fp32 value >= (lo + hi) / 2 for map values lo <= hi in [-1, 1]: the sum rounded up
 * (TwoSum gives the exact error of the rounded sum s; a positive error moves s one ulp up), then
 * halved (exact unless the midpoint is subnormal).
 */
__aicore__ inline float ApplyFusedEmaAdam8bitListEncodeThreshold(float lo, float hi)
{
    union Bits {
        float f;
        uint32_t u;
    };
    const float s = lo + hi;
    const float hiPart = s - lo;
    const float err = (lo - (s - hiPart)) + (hi - hiPart);  // lo + hi = s + err exactly
    Bits up;
    up.f = s;
    if (err > 0.0f) {  // s != 0 here: a zero s would mean lo + hi = err, representable, so err = 0
        up.u = s > 0.0f ? up.u + 1U : up.u - 1U;
    }
    return up.f * 0.5f;
}

/** F from the entry before a map's first positive one and the threshold between the two. */
__aicore__ inline float ApplyFusedEmaAdam8bitListPositiveFloorAt(float previous, float threshold)
{
    return previous > 0.0f || threshold <= 0.0f ? 0.0f : threshold;
}

/**
 * The positive floor F of a map with its thresholds: T[k - 1] for the first k >= 1 with
 * map[k] > 0 (the smallest quotient whose code is at least k), else 0: nothing to raise (map[0]
 * is above 0 already, no entry is, or T[k - 1] <= 0, below every quotient of a v' > 0). A
 * quotient x < F of a v' > 0 taken as F has a code >= k; a NaN x (an infinite v' over an infinite
 * scale) compares false and stays.
 */
__aicore__ inline float ApplyFusedEmaAdam8bitListPositiveFloor(const float* map,
                                                               const float* thresholds)
{
    for (uint32_t k = 1; k < kApplyFusedEmaAdam8bitListMapSize; ++k) {
        if (map[k] > 0.0f) {
            return ApplyFusedEmaAdam8bitListPositiveFloorAt(map[k - 1U], thresholds[k - 1U]);
        }
    }
    return 0.0f;
}

/** thresholds[k] = ApplyFusedEmaAdam8bitListEncodeThreshold(map[k], map[k + 1]) for k < 255. */
__aicore__ inline void BuildApplyFusedEmaAdam8bitListEncodeThresholds(const float* map,
                                                                      float* thresholds)
{
    for (uint32_t k = 0; k < kApplyFusedEmaAdam8bitListThresholds; ++k) {
        thresholds[k] = ApplyFusedEmaAdam8bitListEncodeThreshold(map[k], map[k + 1U]);
    }
}

}  // namespace ascend_ema_adam

#endif  // APPLY_FUSED_EMA_ADAM8BIT_LIST_CODEBOOK_H
