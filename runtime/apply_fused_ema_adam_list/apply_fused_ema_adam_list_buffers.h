/**
 * @file apply_fused_ema_adam_list_buffers.h
 * @brief The device memory of one ApplyFusedEmaAdamList launch, as both CPU kernels take it (the
 *        native one and the AscendC list kernel on the twin). Every updated tensor is updated in
 *        place. Plain struct, no dependency.
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_BUFFERS_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_BUFFERS_H

#include <cstdint>

namespace ascend_ema_adam::apply_fused_ema_adam_list {

/** Entry i of every list is numels[i] contiguous elements in its list's dtype. */
struct ApplyFusedEmaAdamListBuffers {
    uint32_t tensorNum = 0;
    const uint64_t* numels = nullptr;
    const void* const* grads = nullptr;
    void* const* vars = nullptr;
    void* const* ms = nullptr;
    void* const* vs = nullptr;
    void* const* ss = nullptr;      // null without the EMA (neither read nor written)
    void* const* maxVs = nullptr;   // null without AMSGrad
    void* const* copies = nullptr;  // null without model copies (written, never read)
    const int64_t* step = nullptr;     // one element
    const float* gradScale = nullptr;  // one element, or null when absent
    const float* foundInf = nullptr;   // one element, or null when absent
    const float* lr = nullptr;         // one element, or null: the lr attribute
    const float* emaDecay = nullptr;   // one element, or null: the emaDecay attribute
};

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_BUFFERS_H
