/**
 * @file apply_fused_ema_adam_tiling.cpp
 * @brief Host tiling of ApplyFusedEmaAdam (see the header).
 */
#include "apply_fused_ema_adam_tiling.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include "../op_kernel/apply_fused_ema_adam_tiling_key.h"

namespace ascend_ema_adam {

static_assert(std::is_trivially_copyable_v<ApplyFusedEmaAdamTilingData>,
              "the tiling struct is copied byte for byte to the device");
static_assert(sizeof(ApplyFusedEmaAdamTilingData) == 72, "tiling layout changed: update both sides");

namespace {

constexpr uint32_t kBlockBytes = 32;
constexpr uint32_t kInSlots = 5;   // grad, var, m, v, s
constexpr uint32_t kOutSlots = 4;  // var, m, v, s
constexpr uint32_t kUbFullSize = 196608;  // 192 KiB per AIV core on Atlas A2/A3

uint64_t TilingKeyOf(DataType dtype)
{
    switch (dtype) {
        case DataType::kFloat32: return APPLY_FUSED_EMA_ADAM_KEY_FP32;
        case DataType::kFloat16: return APPLY_FUSED_EMA_ADAM_KEY_FP16;
        case DataType::kBFloat16: return APPLY_FUSED_EMA_ADAM_KEY_BF16;
    }
    throw std::invalid_argument("unknown dtype");
}

}  // namespace

uint32_t DataTypeSize(DataType dtype)
{
    return dtype == DataType::kFloat32 ? 4U : 2U;
}

const char* DataTypeName(DataType dtype)
{
    switch (dtype) {
        case DataType::kFloat32: return "float32";
        case DataType::kFloat16: return "float16";
        case DataType::kBFloat16: return "bfloat16";
    }
    return "unknown";
}

std::vector<Platform> PlatformPresets()
{
    // Core counts and UB size: platform ini files as quoted in public CANN code; bandwidths are
    // nominal figures from a third-party performance model (see docs/ARCHITECTURE.md).
    return {
        {"Ascend910B1", 48, kUbFullSize, 1600.0},
        {"Ascend910B2", 48, kUbFullSize, 1600.0},
        {"Ascend910B3", 40, kUbFullSize, 1600.0},
        {"Ascend910B4", 40, kUbFullSize, 800.0},
        {"Ascend910_93", 48, kUbFullSize, 1600.0},  // Atlas A3, per die
        CpuPlatform(),
    };
}

Platform CpuPlatform()
{
    // Read once: hardware_concurrency() opens /sys on every call (~2.5 us per op call).
    static const uint32_t threads = std::max(1U, std::thread::hardware_concurrency());
    return {"cpu", threads, kUbFullSize, 0.0};
}

Platform FindPlatform(const std::string& name)
{
    for (const Platform& p : PlatformPresets()) {
        if (p.name == name) {
            return p;
        }
    }
    throw std::invalid_argument("unknown platform '" + name + "'");
}

uint32_t UbBytesPerElement(DataType dtype, uint32_t bufferNum)
{
    const uint32_t queues = bufferNum * (kInSlots + kOutSlots) * DataTypeSize(dtype);
    // 16-bit tensors are widened into fp32 work slots (5 inputs + 4 unrounded results).
    const uint32_t work = dtype == DataType::kFloat32 ? 0U : (kInSlots + kOutSlots) * 4U;
    return queues + work;
}

void CoreRange(const ApplyFusedEmaAdamTilingData& t, uint32_t core, uint64_t* begin, uint64_t* end)
{
    const uint64_t smallCores = t.usedCoreNum - t.bigCoreNum;
    const uint64_t extraBefore = core > smallCores ? core - smallCores : 0;
    const uint64_t firstBlock = core * t.blocksPerCore + extraBefore;
    const uint64_t blocks = t.blocksPerCore + (core >= smallCores ? 1 : 0);
    *begin = std::min<uint64_t>(firstBlock * t.alignElems, t.totalLength);
    *end = std::min<uint64_t>((firstBlock + blocks) * t.alignElems, t.totalLength);
}

TilingResult ComputeTiling(uint64_t numel, DataType dtype, const Attrs& attrs,
                           const Platform& platform)
{
    TilingResult r;
    std::memset(&r, 0, sizeof(r));
    ApplyFusedEmaAdamTilingData& t = r.data;
    t.lr = static_cast<float>(attrs.lr);
    t.emaDecay = static_cast<float>(attrs.emaDecay);
    t.beta1 = static_cast<float>(attrs.beta1);
    t.beta2 = static_cast<float>(attrs.beta2);
    t.eps = static_cast<float>(attrs.eps);
    t.weightDecay = static_cast<float>(attrs.weightDecay);
    t.mode = static_cast<uint32_t>(attrs.mode);
    t.biasCorrection = attrs.biasCorrection ? 1U : 0U;
    t.totalLength = numel;
    t.alignElems = kBlockBytes / DataTypeSize(dtype);
    t.bufferNum = kBufferNum;
    r.tilingKey = TilingKeyOf(dtype);

    const uint32_t bytesPerElem = UbBytesPerElement(dtype, kBufferNum);
    const uint32_t chunkMax = platform.ubSize / bytesPerElem / t.alignElems * t.alignElems;
    if (chunkMax == 0 || platform.vectorCoreNum == 0) {
        throw std::invalid_argument("platform '" + platform.name +
                                    "' cannot hold one 32-byte block per slot");
    }

    const uint64_t numBlocks = (numel + t.alignElems - 1) / t.alignElems;
    const uint64_t usedCores = std::min<uint64_t>(platform.vectorCoreNum, numBlocks);
    t.usedCoreNum = static_cast<uint32_t>(usedCores);
    if (usedCores > 0) {
        t.blocksPerCore = numBlocks / usedCores;
        t.bigCoreNum = static_cast<uint32_t>(numBlocks % usedCores);
        // No core needs a chunk larger than its own range: small tensors allocate less UB.
        const uint64_t coreElemsMax = (t.blocksPerCore + (t.bigCoreNum > 0 ? 1 : 0)) * t.alignElems;
        t.chunkLength = static_cast<uint32_t>(std::min<uint64_t>(chunkMax, coreElemsMax));
    }
    r.blockDim = t.usedCoreNum;
    r.workspaceSize = 0;
    r.ubBytesPerCore = t.chunkLength * bytesPerElem;
    return r;
}

}  // namespace ascend_ema_adam
