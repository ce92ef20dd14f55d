/**
 * @file apply_fused_ema_adam_list_native.h
 * @brief The native CPU kernel of ApplyFusedEmaAdamList: a whole parameter group in ONE pool
 *        launch of the shared EMA-Adam entries loops (runtime/native/ema_adam_entries.h), after
 *        the list kernel's launch prologue. Same fp32 operation order as the AscendC list kernel
 *        and golden.emulate_entry, one IEEE rounding per operation: bit-identical results.
 */
#ifndef APPLY_FUSED_EMA_ADAM_LIST_NATIVE_H
#define APPLY_FUSED_EMA_ADAM_LIST_NATIVE_H

#include <cstdint>

#include "apply_fused_ema_adam_list_buffers.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "native_runtime.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

/**
 * Runs the update of every entry of `buffers` (dtypes from tiling.tilingKey, scalars and flags
 * from tiling.data; the NPU core table is not used) on the calling thread and the pool. Reads
 * found_inf first: nonzero writes nothing. Returns the threads used (0 when nothing ran).
 * Throws std::invalid_argument for an unknown tiling key or an unsupported isa.
 */
uint32_t RunApplyFusedEmaAdamListNative(const ApplyFusedEmaAdamListTilingResult& tiling,
                                        const ApplyFusedEmaAdamListBuffers& buffers,
                                        const NativeOptions& options = {});

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // APPLY_FUSED_EMA_ADAM_LIST_NATIVE_H
