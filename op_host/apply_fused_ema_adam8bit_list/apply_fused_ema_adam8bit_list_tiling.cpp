/**
 * @file apply_fused_ema_adam8bit_list_tiling.cpp
 * @brief ComputeAdam8bitListTiling (see the header).
 */
#include "kernel_scalar_host.h"  // defines __aicore__ away: first

#include "apply_fused_ema_adam8bit_list_codebook.h"
#include "apply_fused_ema_adam8bit_list_tiling.h"
#include "list_launch_flags.h"

#include <algorithm>

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

Adam8bitTilingResult ComputeAdam8bitListTiling(const std::vector<uint64_t>& numels,
                                               const Adam8bitDtypes& dtypes, const Attrs& attrs,
                                               const Adam8bitOptions& options,
                                               const Platform& platform)
{
    Adam8bitTilingResult r;
    r.dtypes = dtypes;
    r.tilingKey = Adam8bitTilingKeyOf(dtypes);
    ApplyFusedEmaAdam8bitListTilingData& t = r.data;
    t.hyper = HyperParamsOf(attrs);
    SetListLaunchFlags(t, options, options.maximize);
    t.tensorNum = static_cast<uint32_t>(numels.size());
    t.bufferNum = 1;

    std::vector<uint64_t> prefix(numels.size() + 1, 0);  // blocks of the entries before entry i
    for (size_t i = 0; i < numels.size(); ++i) {
        prefix[i + 1] = prefix[i] + Adam8bitBlocks(numels[i]);
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
    const uint32_t limit = std::min(platform.ubSize, kAdam8bitUbLimit);
    uint32_t blocks = 1;
    while (blocks < kAdam8bitMaxChunkBlocks && blocks < mostBlocks &&
           Adam8bitUbBytes(blocks + 1U, g, p, copy, options.ema, options.gradScale) <= limit) {
        ++blocks;
    }
    t.chunkBlocks = cores == 0 ? 0 : blocks;
    r.ubBytesPerCore =
        cores == 0 ? 0 : Adam8bitUbBytes(blocks, g, p, copy, options.ema, options.gradScale);
    return r;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list
