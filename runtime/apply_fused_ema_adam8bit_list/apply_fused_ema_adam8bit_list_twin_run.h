/**
 * @file apply_fused_ema_adam8bit_list_twin_run.h
 * @brief ApplyFusedEmaAdam8bitList's AscendC kernel on the CPU twin: the lists encoded as CANN's
 *        launcher writes them, every tensor, descriptor and scalar a GM region.
 */
#ifndef APPLY_FUSED_EMA_ADAM8BIT_LIST_TWIN_RUN_H
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_TWIN_RUN_H

#include <cstdint>

#include "apply_fused_ema_adam8bit_list_buffers.h"
#include "apply_fused_ema_adam8bit_list_tiling.h"
#include "twin_launch.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

/** Launches apply_fused_ema_adam8bit_list with the tiling's block dim and key on the twin, blocks
 *  spread over `threads` host threads (0: all), in the device's float-overflow mode. */
twin::LaunchResult RunApplyFusedEmaAdam8bitListOnTwin(
    const ApplyFusedEmaAdam8bitListTilingResult& tiling, const Platform& platform,
    const ApplyFusedEmaAdam8bitListBuffers& buffers, uint32_t threads = 0,
    twin::FloatOverflowMode overflowMode = twin::FloatOverflowMode::InfNan);

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

#endif  // APPLY_FUSED_EMA_ADAM8BIT_LIST_TWIN_RUN_H
