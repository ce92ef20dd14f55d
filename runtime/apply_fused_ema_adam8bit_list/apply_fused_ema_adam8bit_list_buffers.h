/**
 * @file apply_fused_ema_adam8bit_list_buffers.h
 * @brief The device memory of one ApplyFusedEmaAdam8bitList launch, as the CPU kernels take it.
 *        Every updated tensor is updated in place. Plain struct, no dependency.
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM8BIT_LIST_BUFFERS_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM8BIT_LIST_BUFFERS_H

#include <cstdint>

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

/** Entry i: numels[i] contiguous elements of grads (G), vars (P), ms and vs (uint8 codes), ss
 *  (fp32) and copies (C); ceil(numels[i] / 256) fp32 scales in mAbsmaxes and vAbsmaxes. */
struct ApplyFusedEmaAdam8bitListBuffers {
    uint32_t tensorNum = 0;
    const uint64_t* numels = nullptr;
    const void* const* grads = nullptr;
    void* const* vars = nullptr;
    void* const* ms = nullptr;
    void* const* vs = nullptr;
    void* const* mAbsmaxes = nullptr;
    void* const* vAbsmaxes = nullptr;
    void* const* ss = nullptr;      // null without the EMA (neither read nor written)
    void* const* copies = nullptr;  // null without model copies (written, never read)
    const float* qmapM = nullptr;      // 256 elements: m's map (signed)
    const float* qmapV = nullptr;      // 256 elements: v's map (unsigned)
    const int64_t* step = nullptr;     // one element
    const float* gradScale = nullptr;  // one element, or null when absent
    const float* foundInf = nullptr;   // one element, or null when absent
    const float* lr = nullptr;         // one element, or null: the lr attribute
    const float* emaDecay = nullptr;   // one element, or null: the emaDecay attribute
};

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM8BIT_LIST_BUFFERS_H
