/**
 * @file apply_fused_ema_adam_twin_run.h
 * @brief Runs the AscendC kernel on the CPU through the twin: the CPU device's verification
 *        kernel (ASCEND_EMA_ADAM_CPU_KERNEL=twin) and _kernels's kernel-fidelity path.
 */
#ifndef APPLY_FUSED_EMA_ADAM_TWIN_RUN_H
#define APPLY_FUSED_EMA_ADAM_TWIN_RUN_H

#include <cstddef>
#include <cstdint>

#include "apply_fused_ema_adam_buffers.h"
#include "apply_fused_ema_adam_tiling.h"
#include "twin_launch.h"

namespace ascend_ema_adam::apply_fused_ema_adam {

/**
 * Launches aea_apply_fused_ema_adam with the tiling's block dim and key on the twin, blocks spread
 * over `threads` host threads (0: all), in the device's float-overflow mode `overflowMode`. Every
 * tensor holds tiling.data.totalLength elements.
 */
twin::LaunchResult RunApplyFusedEmaAdamOnTwin(
    const ApplyFusedEmaAdamTilingResult& tiling, const Platform& platform,
    const ApplyFusedEmaAdamBuffers& buffers, uint32_t threads = 0,
    twin::FloatOverflowMode overflowMode = twin::FloatOverflowMode::InfNan);

}  // namespace ascend_ema_adam::apply_fused_ema_adam

#endif  // APPLY_FUSED_EMA_ADAM_TWIN_RUN_H
