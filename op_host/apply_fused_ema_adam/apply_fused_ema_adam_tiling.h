/**
 * @file apply_fused_ema_adam_tiling.h
 * @brief Host tiling of ApplyFusedEmaAdam: a pure function from (element count, dtype,
 *        attributes, platform) to the tiling struct, tiling key, block dim and workspace size.
 *        No CANN dependency: the CPU runtime, the CANN tiling adapter, the Python bindings and the
 *        tests all call this one function. The platform, dtypes and the block/chunk arithmetic
 *        are every operator's (platform.h); this file holds only what is ApplyFusedEmaAdam's.
 */
#ifndef APPLY_FUSED_EMA_ADAM_TILING_H
#define APPLY_FUSED_EMA_ADAM_TILING_H

#include <cstdint>

#include "apply_fused_ema_adam_tiling_data.h"
#include "ema_adam_attrs.h"
#include "kernel_scalar_host.h"
#include "platform.h"

namespace ascend_ema_adam::apply_fused_ema_adam {

struct ApplyFusedEmaAdamTilingResult {
    ApplyFusedEmaAdamTilingData data;
    uint64_t tilingKey;
    uint32_t blockDim;        // cores launched (0 for an empty tensor: nothing to launch)
    uint64_t workspaceSize;   // user workspace bytes (the kernel needs none)
    uint32_t ubBytesPerCore;  // UB the kernel allocates per core with this tiling
};

/**
 * Splits numel elements over the platform's cores in whole 32-byte blocks (block counts differ by
 * at most one) and sizes the UB chunk from the budget with kBufferNum buffers per queue. Trusts its
 * inputs (CheckApplyFusedEmaAdam validates); throws std::invalid_argument only for a dtype without
 * a kernel or a platform whose UB cannot hold one block of every slot.
 */
ApplyFusedEmaAdamTilingResult ComputeApplyFusedEmaAdamTiling(uint64_t numel, DataType dtype,
                                                             const Attrs& attrs,
                                                             const Platform& platform);

/** UB bytes per element of a chunk: queues (bufferNum x 9 slots) plus the fp32 work slots. */
uint32_t ApplyFusedEmaAdamUbBytesPerElement(DataType dtype, uint32_t bufferNum);

/** The tiling key of the kernel instantiation for `dtype` (throws for a dtype without one). */
uint64_t ApplyFusedEmaAdamTilingKeyOf(DataType dtype);
/** The dtype a tiling key instantiates the kernel for (throws for an unknown key). */
DataType ApplyFusedEmaAdamDtypeOfKey(uint64_t tilingKey);

/** Core `core`'s [begin, end) element range under `tiling`: the kernel's own function. */
inline ElementRange ApplyFusedEmaAdamCoreRange(const ApplyFusedEmaAdamTilingData& t, uint32_t core)
{
    return CoreElementRange(t.totalLength, t.blocksPerCore, t.usedCoreNum, t.bigCoreNum,
                            t.alignElems, core);
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam

#endif  // APPLY_FUSED_EMA_ADAM_TILING_H
