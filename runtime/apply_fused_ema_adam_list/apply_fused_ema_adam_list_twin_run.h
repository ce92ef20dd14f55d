/**
 * @file apply_fused_ema_adam_list_twin_run.h
 * @brief Runs the AscendC list kernel on the CPU through the twin: the launcher encodes every
 *        list as CANN's framework does for a DYNAMIC input (1-D descriptors, see
 *        twin/ascendc/twin_list_launch.h), registers all memory as GM regions and starts
 *        the tiling's blocks.
 */
#ifndef APPLY_FUSED_EMA_ADAM_LIST_TWIN_RUN_H
#define APPLY_FUSED_EMA_ADAM_LIST_TWIN_RUN_H

#include <cstdint>

#include "apply_fused_ema_adam_list_buffers.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "twin_launch.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

/** Launches apply_fused_ema_adam_list with the tiling's block dim and key on the twin, blocks
 *  spread over `threads` host threads (0: all), in the device's float-overflow mode
 *  `overflowMode`. */
twin::LaunchResult RunApplyFusedEmaAdamListOnTwin(
    const ApplyFusedEmaAdamListTilingResult& tiling, const Platform& platform,
    const ApplyFusedEmaAdamListBuffers& buffers, uint32_t threads = 0,
    twin::FloatOverflowMode overflowMode = twin::FloatOverflowMode::InfNan);

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // APPLY_FUSED_EMA_ADAM_LIST_TWIN_RUN_H
