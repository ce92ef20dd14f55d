/**
 * @file apply_fused_ema_adam_list_tiling.cpp
 * @brief Host tiling of ApplyFusedEmaAdamList (see the header).
 */
#include "apply_fused_ema_adam_list_tiling.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "apply_fused_ema_adam_list_tiling_key.h"
#include "list_launch_flags.h"
#include "kernel_scalar_host.h"  // before the kernel's scalar code: defines __aicore__ away
#include "apply_fused_ema_adam_list_range.h"  // ApplyFusedEmaAdamListTensorStop, ApplyFusedEmaAdamListTensorRange

namespace ascend_ema_adam::apply_fused_ema_adam_list {

static_assert(std::is_trivially_copyable_v<ApplyFusedEmaAdamListTilingData>,
              "the tiling struct is copied byte for byte to the device");
static_assert(sizeof(ApplyFusedEmaAdamListTilingData) ==
                  80 + 16 * (kApplyFusedEmaAdamListMaxCores + 1) &&
                  offsetof(ApplyFusedEmaAdamListTilingData, coreStart) == 80,
              "list tiling layout changed: update both sides");

namespace {

/** The kernel's instantiations: one key per dtype combination of the operator's contract. */
const struct {
    ApplyFusedEmaAdamListDtypes dtypes;
    uint64_t key;
} kApplyFusedEmaAdamListKeys[] = {
#define AEA_LIST_HOST_KEY(key, P, S, G, C)                                \
    {{kApplyFusedEmaAdamListDtype_##P, kApplyFusedEmaAdamListDtype_##S,   \
      kApplyFusedEmaAdamListDtype_##G, kApplyFusedEmaAdamListHasCopy_##C, \
      kApplyFusedEmaAdamListDtype_##C},                                   \
     APPLY_FUSED_EMA_ADAM_LIST_KEY_##key},
    APPLY_FUSED_EMA_ADAM_LIST_KEYS(AEA_LIST_HOST_KEY)
#undef AEA_LIST_HOST_KEY
};

bool SameDtypes(const ApplyFusedEmaAdamListDtypes& a, const ApplyFusedEmaAdamListDtypes& b)
{
    return a.param == b.param && a.state == b.state && a.grad == b.grad &&
           a.hasCopy == b.hasCopy && (!a.hasCopy || a.copy == b.copy);
}

std::string Describe(const ApplyFusedEmaAdamListDtypes& d)
{
    std::string s = std::string("param ") + DataTypeName(d.param) + ", state " +
                    DataTypeName(d.state) + ", grad " + DataTypeName(d.grad);
    return d.hasCopy ? s + ", copy " + DataTypeName(d.copy) : s;
}

/** Elements per 32-byte block of the narrowest dtype the launch moves. */
uint32_t AlignElems(const ApplyFusedEmaAdamListDtypes& d)
{
    uint32_t align = std::max({BlockElems(d.param), BlockElems(d.state), BlockElems(d.grad)});
    return d.hasCopy ? std::max(align, BlockElems(d.copy)) : align;
}

/** The global block `block` as (tensor, block within it); tensors without blocks are skipped,
 *  so a position always names a tensor that has the block (or is {tensorNum, 0}). Positions are
 *  asked for in increasing order; `cursor` and `before` carry the walk between calls. */
ApplyFusedEmaAdamListPosition Locate(const std::vector<uint64_t>& blocks, uint64_t block,
                                     uint32_t* cursor, uint64_t* before)
{
    while (*cursor < blocks.size() && *before + blocks[*cursor] <= block) {
        *before += blocks[*cursor];
        ++*cursor;
    }
    ApplyFusedEmaAdamListPosition p{};
    p.tensor = *cursor;
    p.block = *cursor < blocks.size() ? block - *before : 0;
    return p;
}

}  // namespace

uint64_t ApplyFusedEmaAdamListTilingKeyOf(const ApplyFusedEmaAdamListDtypes& dtypes)
{
    for (const auto& entry : kApplyFusedEmaAdamListKeys) {
        if (SameDtypes(entry.dtypes, dtypes)) {
            return entry.key;
        }
    }
    throw std::invalid_argument("ApplyFusedEmaAdamList has no kernel for " + Describe(dtypes));
}

ApplyFusedEmaAdamListDtypes ApplyFusedEmaAdamListDtypesOfKey(uint64_t tilingKey)
{
    for (const auto& entry : kApplyFusedEmaAdamListKeys) {
        if (entry.key == tilingKey) {
            return entry.dtypes;
        }
    }
    throw std::invalid_argument("ApplyFusedEmaAdamList: unknown tiling key " +
                                std::to_string(tilingKey));
}

std::vector<ApplyFusedEmaAdamListDtypes> ApplyFusedEmaAdamListDtypeCombinations()
{
    std::vector<ApplyFusedEmaAdamListDtypes> all;
    for (const auto& entry : kApplyFusedEmaAdamListKeys) {
        all.push_back(entry.dtypes);
    }
    return all;
}

uint32_t ApplyFusedEmaAdamListUbBytesPerElement(const ApplyFusedEmaAdamListDtypes& d,
                                                const ApplyFusedEmaAdamListOptions& o,
                                                uint32_t bufferNum)
{
    const uint32_t p = DataTypeSize(d.param);
    const uint32_t s = DataTypeSize(d.state);
    const uint32_t g = DataTypeSize(d.grad);
    const uint32_t stateSlots = 2U + (o.ema ? 1U : 0U) + (o.amsgrad ? 1U : 0U);  // m, v (, s) (, max_v)
    const uint32_t in = g + p + stateSlots * s;
    const uint32_t out = p + stateSlots * s + (d.hasCopy ? DataTypeSize(d.copy) : 0U);
    // fp32 work slots: a 16-bit input is widened into one, a 16-bit output is computed in one
    // before it is narrowed (fp32 tensors are updated in their queue slots), and the grad scale
    // is broadcast into one for the division.
    const auto wide = [](uint32_t size) { return size == 4U ? 0U : 1U; };
    const uint32_t work = wide(g) + 2U * wide(p) + 2U * stateSlots * wide(s) + (o.gradScale ? 1U : 0U);
    return bufferNum * (in + out) + 4U * work;
}

ApplyFusedEmaAdamListTilingResult ComputeApplyFusedEmaAdamListTiling(
    const std::vector<uint64_t>& numels, const ApplyFusedEmaAdamListDtypes& dtypes,
    const ApplyFusedEmaAdamListAttrs& attrs, const ApplyFusedEmaAdamListOptions& options,
    const Platform& platform)
{
    ApplyFusedEmaAdamListTilingResult r{};
    std::memset(&r.data, 0, sizeof(r.data));  // every byte: the struct is copied to the device
    ApplyFusedEmaAdamListTilingData& t = r.data;
    r.tilingKey = ApplyFusedEmaAdamListTilingKeyOf(dtypes);
    r.dtypes = dtypes;
    t.hyper = HyperParamsOf(attrs);
    SetListLaunchFlags(t, options, attrs.maximize);
    t.amsgrad = options.amsgrad ? 1U : 0U;
    t.tensorNum = static_cast<uint32_t>(numels.size());
    t.alignElems = AlignElems(dtypes);
    t.bufferNum = kBufferNum;

    const uint32_t bytesPerElem =
        ApplyFusedEmaAdamListUbBytesPerElement(dtypes, options, kBufferNum);
    if (platform.vectorCoreNum == 0 ||
        ChunkElems(platform.ubSize, bytesPerElem, t.alignElems, UINT64_MAX) == 0) {
        throw std::invalid_argument("platform '" + platform.name +
                                    "' cannot hold one 32-byte block per slot");
    }
    std::vector<uint64_t> blocks(numels.size());
    uint64_t totalBlocks = 0;
    for (size_t i = 0; i < numels.size(); ++i) {
        blocks[i] = (numels[i] + t.alignElems - 1) / t.alignElems;
        totalBlocks += blocks[i];
    }
    const BlockSplit split = SplitBlocks(
        totalBlocks, std::min(platform.vectorCoreNum, kApplyFusedEmaAdamListMaxCores));
    t.usedCoreNum = split.usedCores;
    uint32_t cursor = 0;
    uint64_t before = 0;
    const uint64_t smallCores = split.usedCores - split.bigCores;
    for (uint32_t core = 0; core <= split.usedCores; ++core) {
        // Core `core` starts where CoreElementRange would start it in the global block sequence.
        const uint64_t extraBefore = core > smallCores ? core - smallCores : 0;
        const uint64_t first = std::min(core * split.blocksPerCore + extraBefore, totalBlocks);
        t.coreStart[core] = Locate(blocks, first, &cursor, &before);
    }
    t.chunkLength = SplitChunkElems(split, platform.ubSize, bytesPerElem, t.alignElems);
    r.blockDim = t.usedCoreNum;
    r.workspaceSize = 0;
    r.ubBytesPerCore = t.chunkLength * bytesPerElem;
    return r;
}

std::vector<ApplyFusedEmaAdamListSegment> ApplyFusedEmaAdamListCoreSegments(
    const ApplyFusedEmaAdamListTilingData& t, const std::vector<uint64_t>& numels, uint32_t core)
{
    std::vector<ApplyFusedEmaAdamListSegment> segments;
    if (core >= t.usedCoreNum) {
        return segments;
    }
    const ApplyFusedEmaAdamListPosition& start = t.coreStart[core];
    const ApplyFusedEmaAdamListPosition& end = t.coreStart[core + 1];
    const uint32_t stop = ApplyFusedEmaAdamListTensorStop(end.tensor, end.block);
    for (uint32_t tensor = start.tensor; tensor < stop && tensor < numels.size(); ++tensor) {
        const ElementRange r = ApplyFusedEmaAdamListTensorRange(
            start.tensor, start.block, end.tensor, end.block, tensor, numels[tensor], t.alignElems);
        if (r.end > r.begin) {
            segments.push_back({tensor, r.begin, r.end});
        }
    }
    return segments;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
