/**
 * @file apply_fused_ema_adam8bit_list_tiling.cpp
 * @brief ComputeApplyFusedEmaAdam8bitListTiling (see the header).
 */
#include "kernel_scalar_host.h"  // defines __aicore__ away: first

#include "apply_fused_ema_adam8bit_list_codebook.h"
#include "apply_fused_ema_adam8bit_list_tiling.h"
#include "list_launch_flags.h"

#include <algorithm>

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

ApplyFusedEmaAdam8bitListTilingResult ComputeApplyFusedEmaAdam8bitListTiling(
    const std::vector<uint64_t>& numels, const ApplyFusedEmaAdam8bitListDtypes& dtypes,
    const Attrs& attrs, const ApplyFusedEmaAdam8bitListOptions& options, const Platform& platform)
{
    ApplyFusedEmaAdam8bitListTilingResult r;
    r.dtypes = dtypes;
    r.tilingKey = ApplyFusedEmaAdam8bitListTilingKeyOf(dtypes);
    ApplyFusedEmaAdam8bitListTilingData& t = r.data;
    t.hyper = HyperParamsOf(attrs);
    SetListLaunchFlags(t, options, options.maximize);
    t.tensorNum = static_cast<uint32_t>(numels.size());
    t.bufferNum = 1;

    std::vector<uint64_t> prefix(numels.size() + 1, 0);  // blocks of the entries before entry i
    for (size_t i = 0; i < numels.size(); ++i) {
        prefix[i + 1] = prefix[i] + ApplyFusedEmaAdam8bitListBlocks(numels[i]);
    }
    const uint64_t total = prefix.back();
    const uint32_t cores = std::min({platform.vectorCoreNum, kApplyFusedEmaAdam8bitListMaxCores,
                                     static_cast<uint32_t>(std::min<uint64_t>(total, 1U << 30))});
    t.usedCoreNum = cores;
    r.blockDim = cores;
    // Core c starts at global block total * c / cores: balanced to one block.
    for (uint32_t c = 0; c <= cores; ++c) {
        const uint64_t at = cores == 0 ? 0 : total * c / cores;
        if (c == cores) {
            t.coreStart[c] = {t.tensorNum, 0, 0};
            break;
        }
        const auto tensor = static_cast<uint32_t>(
            std::upper_bound(prefix.begin(), prefix.end(), at) - prefix.begin() - 1);
        t.coreStart[c] = {tensor, 0, at - prefix[tensor]};
    }
    uint64_t mostBlocks = 0;
    for (uint32_t c = 0; c < cores; ++c) {
        mostBlocks = std::max(mostBlocks, total * (c + 1U) / cores - total * c / cores);
    }
    const uint32_t g = DataTypeSize(dtypes.grad);
    const uint32_t p = DataTypeSize(dtypes.param);
    const uint32_t copy = dtypes.hasCopy ? DataTypeSize(dtypes.copy) : 0U;
    const uint32_t limit = std::min(platform.ubSize, kApplyFusedEmaAdam8bitListUbLimit);
    uint32_t blocks = 1;
    while (blocks < kApplyFusedEmaAdam8bitListMaxChunkBlocks && blocks < mostBlocks &&
           ApplyFusedEmaAdam8bitListUbBytes(blocks + 1U, g, p, copy, options.ema,
                                            options.gradScale) <= limit) {
        ++blocks;
    }
    t.chunkBlocks = cores == 0 ? 0 : blocks;
    r.ubBytesPerCore = cores == 0 ? 0
                                  : ApplyFusedEmaAdam8bitListUbBytes(
                                        blocks, g, p, copy, options.ema, options.gradScale);
    return r;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list
