/**
 * @file apply_fused_ema_adam_list_range.h
 * @brief A list kernel core's part of each tensor, from its slice of the lists' global block
 *        sequence: the kernel walks it, the host tiling (ApplyFusedEmaAdamListCoreSegments) reports
 *        it. Plain C++ on __aicore__ inline functions, as ema_adam_scalar.h: host code includes it
 *        after op_host/common/kernel_scalar_host.h, which defines __aicore__ away.
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_RANGE_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_RANGE_H

#include <cstdint>

#include "ema_adam_scalar.h"  // ElementRange

namespace ascend_ema_adam::apply_fused_ema_adam_list {

/**
 * A list launch's core works from block `startBlock` of tensor `startTensor` up to (excluding)
 * block `endBlock` of tensor `endTensor` of the lists' global block sequence (the tiling's
 * coreStart[core] and coreStart[core + 1]). It touches the tensors from startTensor up to
 * (excluding) ApplyFusedEmaAdamListTensorStop; ApplyFusedEmaAdamListTensorRange is its part of
 * tensor `tensor` (numel elements), empty for a tensor without elements. Only a tensor's last block
 * may be partial.
 */
__aicore__ inline uint32_t ApplyFusedEmaAdamListTensorStop(uint32_t endTensor, uint64_t endBlock)
{
    return endBlock > 0 ? endTensor + 1 : endTensor;  // one past the last tensor the core touches
}

__aicore__ inline ElementRange ApplyFusedEmaAdamListTensorRange(uint32_t startTensor,
                                                                uint64_t startBlock,
                                                                uint32_t endTensor,
                                                                uint64_t endBlock, uint32_t tensor,
                                                                uint64_t numel, uint32_t alignElems)
{
    const uint64_t begin = tensor == startTensor ? startBlock * alignElems : 0;
    const uint64_t end = tensor == endTensor ? endBlock * alignElems : numel;
    const uint64_t clampedEnd = end < numel ? end : numel;
    return {begin < clampedEnd ? begin : clampedEnd, clampedEnd};
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_RANGE_H
