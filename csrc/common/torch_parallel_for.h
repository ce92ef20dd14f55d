/**
 * @file torch_parallel_for.h
 * @brief The CPU device's launches on torch's intra-op threads (aeaCpuParallelFor).
 */
#ifndef ASCEND_EMA_ADAM_TORCH_PARALLEL_FOR_H
#define ASCEND_EMA_ADAM_TORCH_PARALLEL_FOR_H

#include <cstdint>

#include "ascend_ema_adam/cpu_device.h"

namespace ascend_ema_adam::ops {

/** aeaCpuParallelFor by at::parallel_for: one slot per thread of torch's intra-op pool (its OpenMP
 *  team), the slots of a smaller team spread over its threads; inline on the calling thread inside
 *  another parallel region. */
uint32_t TorchParallelFor(void* host, uint32_t slots, aeaCpuTask task, const void* ctx);

}  // namespace ascend_ema_adam::ops

#endif  // ASCEND_EMA_ADAM_TORCH_PARALLEL_FOR_H
