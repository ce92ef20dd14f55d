/**
 * @file apply_fused_ema_adam_native.h
 * @brief The native CPU kernel of ApplyFusedEmaAdam: the CPU device's fast implementation, beside
 *        the AscendC kernel run on the twin (RunApplyFusedEmaAdamOnTwin), which stays the
 *        verification path.
 *
 * One entry of the shared EMA-Adam entries loops (runtime/native/ema_adam_entries.h): one pass
 * over memory, each element of each input loaded once and each output stored once (36 B/elem
 * fp32, 18 B/elem fp16/bf16), in SIMD vectors chosen at run time (AVX-512, AVX2, or portable C++),
 * by the calling thread and a persistent pool (native_runtime.h). The arithmetic is the kernel's
 * fp32 operation order with one IEEE rounding per operation, and the launch scalars come from the
 * kernel's own FoldScalars, so the results equal the twin's and golden.emulate_update's bit for
 * bit, for any split.
 */
#ifndef APPLY_FUSED_EMA_ADAM_NATIVE_H
#define APPLY_FUSED_EMA_ADAM_NATIVE_H

#include <cstdint>

#include "apply_fused_ema_adam_buffers.h"
#include "apply_fused_ema_adam_tiling.h"
#include "native_runtime.h"

namespace ascend_ema_adam::apply_fused_ema_adam {

/**
 * Runs the update of tiling.data.totalLength elements (dtype from the tiling key, scalars from the
 * tiling) on the calling thread and the pool. Each output buffer is its input (in place) or
 * overlaps no input (then the input is copied to it first and the update runs there in place).
 * Returns the threads used (0 for an empty tensor). Throws std::invalid_argument for an unknown
 * tiling key or an unsupported isa.
 */
uint32_t RunApplyFusedEmaAdamNative(const ApplyFusedEmaAdamTilingResult& tiling,
                                    const ApplyFusedEmaAdamBuffers& buffers,
                                    const NativeOptions& options = {});

}  // namespace ascend_ema_adam::apply_fused_ema_adam

#endif  // APPLY_FUSED_EMA_ADAM_NATIVE_H
