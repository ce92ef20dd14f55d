/**
 * @file apply_fused_ema_adam_tiling.cpp
 * @brief Host tiling of ApplyFusedEmaAdam (see the header).
 */
#include "apply_fused_ema_adam_tiling.h"

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "apply_fused_ema_adam_tiling_key.h"

namespace ascend_ema_adam::apply_fused_ema_adam {

static_assert(std::is_trivially_copyable_v<ApplyFusedEmaAdamTilingData>,
              "the tiling struct is copied byte for byte to the device");
static_assert(sizeof(ApplyFusedEmaAdamTilingData) == 72 &&
                  offsetof(ApplyFusedEmaAdamTilingData, totalLength) == 32,
              "tiling layout changed: update both sides");

namespace {

constexpr uint32_t kInSlots = 5;   // grad, var, m, v, s
constexpr uint32_t kOutSlots = 4;  // var, m, v, s

/** The kernel's instantiations: one tiling key per float dtype. */
constexpr struct {
    DataType dtype;
    uint64_t key;
} kTilingKeys[] = {
    {DataType::kFloat32, APPLY_FUSED_EMA_ADAM_KEY_FP32},
    {DataType::kFloat16, APPLY_FUSED_EMA_ADAM_KEY_FP16},
    {DataType::kBFloat16, APPLY_FUSED_EMA_ADAM_KEY_BF16},
};

}  // namespace

uint64_t ApplyFusedEmaAdamTilingKeyOf(DataType dtype)
{
    for (const auto& entry : kTilingKeys) {
        if (entry.dtype == dtype) {
            return entry.key;
        }
    }
    throw std::invalid_argument(std::string("ApplyFusedEmaAdam has no kernel for dtype ") +
                                DataTypeName(dtype));
}

DataType ApplyFusedEmaAdamDtypeOfKey(uint64_t tilingKey)
{
    for (const auto& entry : kTilingKeys) {
        if (entry.key == tilingKey) {
            return entry.dtype;
        }
    }
    throw std::invalid_argument("ApplyFusedEmaAdam: unknown tiling key " +
                                std::to_string(tilingKey));
}

uint32_t ApplyFusedEmaAdamUbBytesPerElement(DataType dtype, uint32_t bufferNum)
{
    const uint32_t queues = bufferNum * (kInSlots + kOutSlots) * DataTypeSize(dtype);
    // 16-bit tensors are widened into fp32 work slots (5 inputs + 4 unrounded results).
    const uint32_t work = dtype == DataType::kFloat32 ? 0U : (kInSlots + kOutSlots) * 4U;
    return queues + work;
}

ApplyFusedEmaAdamTilingResult ComputeApplyFusedEmaAdamTiling(uint64_t numel, DataType dtype,
                                                             const Attrs& attrs,
                                                             const Platform& platform)
{
    ApplyFusedEmaAdamTilingResult r;
    std::memset(&r, 0, sizeof(r));
    ApplyFusedEmaAdamTilingData& t = r.data;
    r.tilingKey = ApplyFusedEmaAdamTilingKeyOf(dtype);
    t.hyper = HyperParamsOf(attrs);
    t.totalLength = numel;
    t.alignElems = BlockElems(dtype);
    t.bufferNum = kBufferNum;

    const uint32_t bytesPerElem = ApplyFusedEmaAdamUbBytesPerElement(dtype, kBufferNum);
    if (platform.vectorCoreNum == 0 ||
        ChunkElems(platform.ubSize, bytesPerElem, t.alignElems, UINT64_MAX) == 0) {
        throw std::invalid_argument("platform '" + platform.name +
                                    "' cannot hold one 32-byte block per slot");
    }
    const BlockSplit split =
        SplitBlocks((numel + t.alignElems - 1) / t.alignElems, platform.vectorCoreNum);
    t.usedCoreNum = split.usedCores;
    t.blocksPerCore = split.blocksPerCore;
    t.bigCoreNum = split.bigCores;
    t.chunkLength = SplitChunkElems(split, platform.ubSize, bytesPerElem, t.alignElems);
    r.blockDim = t.usedCoreNum;
    r.workspaceSize = 0;
    r.ubBytesPerCore = t.chunkLength * bytesPerElem;
    return r;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam
