/**
 * @file opsnn_tiling.h
 * @brief tools/ascendc_check/run.py --emulate only (never part of a build of the project): the host tiling of CANN's own
 *        ApplyFusedEmaAdam (hicann/ops-nn optim/apply_fused_ema_adam/op_host/apply_fused_ema_adam_tiling.cpp),
 *        written anew as a test helper so that ops-nn's unchanged kernel can run on the inputs of our cases
 *        (opsnn/apply_fused_ema_adam_emulate.cpp). Nothing of ops-nn is copied; the formulas follow, step by step:
 *
 *  - Tiling4ApplyFusedEmaAdam: GetTilingAttr, CheckInputDtype, CheckInputShape, TilingCompute, the tiling struct
 *    saved to the tiling buffer, workspaces[0] = PlatformAscendC::GetLibApiWorkSpaceSize();
 *  - GetTilingAttr: lr, ema_decay, beta1, beta2, eps and weight_decay as the float attributes, mode as the int64
 *    attribute converted to uint64, bias_correction as 1 / 0;
 *  - CheckInputDtype: the tiling key 100 (bf16), 101 (fp16), 102 (fp32); equal dtypes and an int64 step are the
 *    caller's (one dtype here), CheckInputShape's equal shapes too (one element count here);
 *  - TilingCompute: from GetCoreNumAiv() and GetCoreMemSize(UB), with N the element count of v:
 *      front = N % cores, or cores when that is 0;  tail = N <= cores ? 0 : cores - front;  block dim = front + tail;
 *      coreCalcNum = ceil(N / cores);
 *      bytes per element = 9 slots x (4 for fp32, 2 + 4 for fp16/bf16), one slot fewer when mode == 1;
 *      coreCalcMax = (UB - 2 x 32) / bytes per element, rounded down to 8 (fp32) or 16 (16-bit) elements;
 *      loopNum = coreCalcMax < coreCalcNum ? ceil(coreCalcNum / coreCalcMax) : 1;
 *      frontCalcExtra = loopNum == 1 ? coreCalcNum : coreCalcNum - coreCalcMax x (loopNum - 1);
 *      tailCalcExtra = frontCalcExtra - 1 (unsigned: it wraps for N = 0, as upstream's does).
 *
 * Platform numbers the ops-nn source leaves to CANN's closed platform layer are parameters: the AIV core count, the
 * UB size (default 196608, the 192 KiB of an Ascend910B2 core; ops-nn's kernel UT values imply 196352) and the
 * library workspace (default 16 MiB, asc-devkit's RESERVED_WORKSPACE on arch 2201; GetLibApiWorkSpaceSize itself is
 * closed). The kernel reads the workspace pointer only (GetUserWorkspace), never its bytes.
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_OPSNN_TILING_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_OPSNN_TILING_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace opsnn_emulate {

enum class DType { kFloat32, kFloat16, kBFloat16 };

/** The attributes as the host tiling reads them from the op (float, int64, bool: GetTilingAttr). */
struct Attrs {
    float lr = 1e-3f;
    float emaDecay = 0.9999f;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
    int64_t mode = 1;
    bool biasCorrection = true;
    float weightDecay = 0.0f;
};

/** The platform queries of TilingCompute and the workspace query of Tiling4ApplyFusedEmaAdam. */
struct Platform {
    uint32_t aivCoreNum = 48;                          // GetCoreNumAiv()
    uint64_t ubBytes = 196608;                         // GetCoreMemSize(CoreMemType::UB, ...)
    uint64_t libApiWorkspaceBytes = 16 * 1024 * 1024;  // GetLibApiWorkSpaceSize()
};

/** ops-nn's tiling struct, field for field in the order of its BEGIN_TILING_DATA_DEF (op_host/
 *  apply_fused_ema_adam_tiling.h): the byte layout the kernel's GET_TILING_DATA reads (96 bytes). */
struct TilingData {
    float lr;
    float beta1;
    float beta2;
    float eps;
    float emaDecay;
    float weightDecay;
    uint64_t mode;
    uint64_t biasCorrection;
    uint64_t frontCoreNum;
    uint64_t tailCoreNum;
    uint64_t coreCalcNum;
    uint64_t loopNum;
    uint64_t coreCalcMax;
    uint64_t frontCalcExtra;
    uint64_t tailCalcExtra;
};
static_assert(sizeof(TilingData) == 96, "ops-nn's tiling struct is 6 floats and 9 uint64 fields, unpadded");
static_assert(offsetof(TilingData, mode) == 24, "the first uint64 field follows the six floats");

/** What the host hands the launch: the struct's bytes, the tiling key, the block dim and the workspace size. */
struct Tiling {
    TilingData data{};
    uint32_t tilingKey = 0;
    uint32_t blockDim = 0;        // context->SetBlockDim(front + tail)
    uint64_t workspaceSize = 0;   // workspaces[0]
};

/** The key CheckInputDtype sets for `dtype`. */
uint32_t TilingKeyOf(DType dtype);

/**
 * Tiling4ApplyFusedEmaAdam for `numel` elements of `dtype` on `platform`. Returns false, with the reason in `error`,
 * where ops-nn's host fails (no AIV cores: "Fail to get core num."); everything else it accepts, as upstream does
 * (mode is not validated; N = 0 gives the wrapped tailCalcExtra).
 */
bool ComputeTiling(uint64_t numel, DType dtype, const Attrs& attrs, const Platform& platform, Tiling* out,
                   std::string* error);

}  // namespace opsnn_emulate

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_OPSNN_TILING_H
