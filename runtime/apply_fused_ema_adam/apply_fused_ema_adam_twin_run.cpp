/**
 * @file apply_fused_ema_adam_twin_run.cpp
 * @brief RunApplyFusedEmaAdamOnTwin: registers the launch's GM regions and starts the kernel's blocks.
 */
#include "apply_fused_ema_adam_twin_run.h"

#include "twin_launch_memory.h"

extern "C" void aea_apply_fused_ema_adam(GM_ADDR grad, GM_ADDR var, GM_ADDR m, GM_ADDR v,
                                         GM_ADDR s, GM_ADDR step, GM_ADDR varRef, GM_ADDR mRef,
                                         GM_ADDR vRef, GM_ADDR sRef, GM_ADDR workspace,
                                         GM_ADDR tiling);

namespace ascend_ema_adam::apply_fused_ema_adam {

twin::LaunchResult RunApplyFusedEmaAdamOnTwin(const ApplyFusedEmaAdamTilingResult& tiling,
                                              const Platform& platform,
                                              const ApplyFusedEmaAdamBuffers& b, uint32_t threads,
                                              twin::FloatOverflowMode overflowMode)
{
    if (tiling.blockDim == 0) {
        return {};
    }
    ApplyFusedEmaAdamTilingData tilingData = tiling.data;  // the launch's own GM copy
    const size_t elemBytes = 32U / tiling.data.alignElems;  // one 32-byte block = alignElems
    const size_t tensorBytes = tiling.data.totalLength * elemBytes;

    TwinLaunchMemory mem;
    for (const void* p : {b.grad, b.var, b.m, b.v, b.s, static_cast<const void*>(b.varOut),
                          static_cast<const void*>(b.mOut), static_cast<const void*>(b.vOut),
                          static_cast<const void*>(b.sOut)}) {
        mem.Tensor(p, tensorBytes);
    }
    mem.Tensor(b.step, sizeof(int64_t));
    const twin::LaunchConfig cfg = mem.Config(tiling.blockDim, tiling.tilingKey, platform, threads,
                                              overflowMode, &tilingData);
    return twin::Launch(&aea_apply_fused_ema_adam, cfg, GmAddr(b.grad), GmAddr(b.var), GmAddr(b.m),
                        GmAddr(b.v), GmAddr(b.s), GmAddr(b.step), GmAddr(b.varOut), GmAddr(b.mOut),
                        GmAddr(b.vOut), GmAddr(b.sOut), nullptr, GmAddr(&tilingData));
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam
