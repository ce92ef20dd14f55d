/**
 * @file apply_fused_ema_adam_tiling.h
 * @brief Host tiling of ApplyFusedEmaAdam: a pure function from (element count, dtype,
 *        attributes, platform) to the tiling struct, tiling key, block dim and workspace size.
 *        No CANN dependency: the CPU runtime, the CANN tiling adapter, the Python bindings and the
 *        tests all call this one function.
 */
#ifndef APPLY_FUSED_EMA_ADAM_TILING_H
#define APPLY_FUSED_EMA_ADAM_TILING_H

#include <cstdint>
#include <string>
#include <vector>

#include "../op_kernel/apply_fused_ema_adam_tiling_data.h"

namespace ascend_ema_adam {

enum class DataType { kFloat32, kFloat16, kBFloat16 };

uint32_t DataTypeSize(DataType dtype);
const char* DataTypeName(DataType dtype);

/** What the tiling needs to know about the target. */
struct Platform {
    std::string name;
    uint32_t vectorCoreNum;  // AI vector cores (AIV) on the NPU; hardware threads on the CPU
    uint32_t ubSize;         // unified-buffer bytes per core
    double hbmGBps;          // nominal memory bandwidth, only for projections (0: unknown)
};

/** Atlas A2/A3 presets (AIV cores, UB per core, nominal HBM bandwidth) and the CPU. */
std::vector<Platform> PlatformPresets();
/** Finds a preset by name ("cpu", "Ascend910B2", ...); throws std::invalid_argument. */
Platform FindPlatform(const std::string& name);
/**
 * The CPU "device": one block per hardware thread and a 192 KiB UB, the device's own size, so the
 * twin runs the device's chunk sizes; a block's whole UB (inputs, outputs, work buffers) then
 * stays inside the per-core L2 of any current x86/Arm server core.
 */
Platform CpuPlatform();

/** The operator's attributes as the caller passes them; narrowed to fp32 by the tiling. */
struct Attrs {
    double lr = 1e-3;
    double emaDecay = 0.9999;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    int64_t mode = 1;
    bool biasCorrection = true;
    double weightDecay = 0.0;
};

struct TilingResult {
    ApplyFusedEmaAdamTilingData data;
    uint64_t tilingKey;
    uint32_t blockDim;        // cores launched (0 for an empty tensor: nothing to launch)
    uint64_t workspaceSize;   // user workspace bytes (the kernel needs none)
    uint32_t ubBytesPerCore;  // UB the kernel allocates per core with this tiling
};

/** Number of copy-in / copy-out buffers per queue: 2 = double buffering. */
constexpr uint32_t kBufferNum = 2;

/**
 * Splits numel elements over the platform's cores in whole 32-byte blocks (block counts differ by
 * at most one) and sizes the UB chunk from the budget with double buffering. Trusts its inputs
 * (the aclnn layer validates); throws std::invalid_argument only for a platform whose UB cannot
 * hold one block of every slot.
 */
TilingResult ComputeTiling(uint64_t numel, DataType dtype, const Attrs& attrs,
                           const Platform& platform);

/** UB bytes per element of a chunk: queues (bufferNum x 9 slots) plus the fp32 work slots. */
uint32_t UbBytesPerElement(DataType dtype, uint32_t bufferNum);

/** [begin, end) element range of core `core` under `tiling` (the kernel's own formula). */
void CoreRange(const ApplyFusedEmaAdamTilingData& tiling, uint32_t core, uint64_t* begin,
               uint64_t* end);

}  // namespace ascend_ema_adam

#endif  // APPLY_FUSED_EMA_ADAM_TILING_H
