/**
 * @file platform.cpp
 * @brief CANN's dtype names, the platform presets and the block/chunk arithmetic (see the header).
 */
#include "platform.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace ascend_ema_adam {

namespace {

constexpr uint32_t kUbFullSize = 196608;  // 192 KiB per AIV core on Atlas A2/A3

/** aclDataType's enumerators (include/acl/acl_base_rt.h), by value. */
constexpr struct {
    int32_t code;
    const char* name;
} kCannDataTypeNames[] = {
    {-1, "ACL_DT_UNDEFINED"},  {0, "ACL_FLOAT"},          {1, "ACL_FLOAT16"},
    {2, "ACL_INT8"},           {3, "ACL_INT32"},          {4, "ACL_UINT8"},
    {6, "ACL_INT16"},          {7, "ACL_UINT16"},         {8, "ACL_UINT32"},
    {9, "ACL_INT64"},          {10, "ACL_UINT64"},        {11, "ACL_DOUBLE"},
    {12, "ACL_BOOL"},          {13, "ACL_STRING"},        {16, "ACL_COMPLEX64"},
    {17, "ACL_COMPLEX128"},    {27, "ACL_BF16"},          {29, "ACL_INT4"},
    {30, "ACL_UINT1"},         {33, "ACL_COMPLEX32"},     {34, "ACL_HIFLOAT8"},
    {35, "ACL_FLOAT8_E5M2"},   {36, "ACL_FLOAT8_E4M3FN"}, {37, "ACL_FLOAT8_E8M0"},
    {38, "ACL_FLOAT6_E3M2"},   {39, "ACL_FLOAT6_E2M3"},   {40, "ACL_FLOAT4_E2M1"},
    {41, "ACL_FLOAT4_E1M2"},
};

}  // namespace

const char* CannDataTypeName(int32_t cannCode)
{
    for (const auto& entry : kCannDataTypeNames) {
        if (entry.code == cannCode) {
            return entry.name;
        }
    }
    return "unknown aclDataType";
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

BlockSplit SplitBlocks(uint64_t blocks, uint32_t cores)
{
    BlockSplit split;
    split.usedCores = static_cast<uint32_t>(std::min<uint64_t>(cores, blocks));
    if (split.usedCores > 0) {
        split.blocksPerCore = blocks / split.usedCores;
        split.bigCores = static_cast<uint32_t>(blocks % split.usedCores);
    }
    return split;
}

uint32_t ChunkElems(uint32_t ubBytes, uint32_t bytesPerElem, uint32_t alignElems, uint64_t capElems)
{
    const uint32_t fits = ubBytes / bytesPerElem / alignElems * alignElems;
    return static_cast<uint32_t>(std::min<uint64_t>(fits, capElems));
}

uint32_t SplitChunkElems(const BlockSplit& split, uint32_t ubBytes, uint32_t bytesPerElem,
                         uint32_t alignElems)
{
    if (split.usedCores == 0) {
        return 0;
    }
    const uint64_t largestShare = (split.blocksPerCore + (split.bigCores > 0 ? 1 : 0)) * alignElems;
    return ChunkElems(ubBytes, bytesPerElem, alignElems, largestShare);
}

}  // namespace ascend_ema_adam
