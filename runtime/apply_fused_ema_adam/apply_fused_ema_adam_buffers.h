/**
 * @file apply_fused_ema_adam_buffers.h
 * @brief The device memory of one ApplyFusedEmaAdam launch: what both CPU kernels (the native one
 *        and the AscendC kernel on the twin) take. Plain struct, no dependency.
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_BUFFERS_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_BUFFERS_H

#include <cstdint>

namespace ascend_ema_adam::apply_fused_ema_adam {

/** Device (here: host) memory of one launch. Outputs may alias the inputs (the in-place call). */
struct ApplyFusedEmaAdamBuffers {
    const void* grad;
    const void* var;
    const void* m;
    const void* v;
    const void* s;
    const int64_t* step;
    void* varOut;
    void* mOut;
    void* vOut;
    void* sOut;
};

}  // namespace ascend_ema_adam::apply_fused_ema_adam

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_BUFFERS_H
