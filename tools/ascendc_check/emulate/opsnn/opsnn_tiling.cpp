// tools/ascendc_check/run.py --emulate: ops-nn's ApplyFusedEmaAdam host tiling, reimplemented (opsnn_tiling.h).
#include "opsnn_tiling.h"

namespace opsnn_emulate {

namespace {

constexpr uint64_t kSlots = 9;                // 5 inputs + 4 outputs in the UB
constexpr uint64_t kScratchBytes = 2 * 32;    // the two 32-byte buffers of the bias-correction Power
constexpr uint64_t kFp32Bytes = 4;
constexpr uint64_t kHalfBytes = 2;

}  // namespace

uint32_t TilingKeyOf(DType dtype)
{
    switch (dtype) {
        case DType::kFloat32: return 102;
        case DType::kFloat16: return 101;
        case DType::kBFloat16: break;
    }
    return 100;
}

bool ComputeTiling(uint64_t numel, DType dtype, const Attrs& attrs, const Platform& platform, Tiling* out,
                   std::string* error)
{
    Tiling t;
    TilingData& d = t.data;
    // GetTilingAttr
    d.lr = attrs.lr;
    d.emaDecay = attrs.emaDecay;
    d.beta1 = attrs.beta1;
    d.beta2 = attrs.beta2;
    d.eps = attrs.eps;
    d.mode = static_cast<uint64_t>(attrs.mode);
    d.biasCorrection = attrs.biasCorrection ? 1 : 0;
    d.weightDecay = attrs.weightDecay;
    // CheckInputDtype
    t.tilingKey = TilingKeyOf(dtype);
    // TilingCompute
    const uint64_t cores = platform.aivCoreNum;
    if (cores == 0) {
        if (error != nullptr) *error = "Fail to get core num.";
        return false;
    }
    d.frontCoreNum = numel % cores != 0 ? numel % cores : cores;
    d.tailCoreNum = numel <= cores ? 0 : cores - d.frontCoreNum;
    t.blockDim = static_cast<uint32_t>(d.frontCoreNum + d.tailCoreNum);
    d.coreCalcNum = (numel + cores - 1) / cores;

    const bool fp32 = dtype == DType::kFloat32;
    const uint64_t perSlot = fp32 ? kFp32Bytes : kHalfBytes + kFp32Bytes;  // 16-bit: the T slot and its fp32 copy
    uint64_t bytesPerElement = perSlot * kSlots;
    if (d.mode == 1) bytesPerElement -= perSlot;  // AdamW: grad shares var's slot
    const uint64_t align = fp32 ? 8 : 16;           // elements of one 32-byte block
    const uint64_t bufferBytes = platform.ubBytes > kScratchBytes ? platform.ubBytes - kScratchBytes : 0;
    d.coreCalcMax = bufferBytes / bytesPerElement / align * align;
    if (d.coreCalcMax == 0) {  // upstream would wrap or divide by zero (a UB below one block per slot)
        if (error != nullptr) *error = "the UB holds no 32-byte block of every slot";
        return false;
    }
    d.loopNum = d.coreCalcMax < d.coreCalcNum ? (d.coreCalcNum + d.coreCalcMax - 1) / d.coreCalcMax : 1;
    d.frontCalcExtra = d.loopNum == 1 ? d.coreCalcNum : d.coreCalcNum - d.coreCalcMax * (d.loopNum - 1);
    d.tailCalcExtra = d.frontCalcExtra - 1;
    // Tiling4ApplyFusedEmaAdam: the workspace
    t.workspaceSize = platform.libApiWorkspaceBytes;
    *out = t;
    return true;
}

}  // namespace opsnn_emulate
