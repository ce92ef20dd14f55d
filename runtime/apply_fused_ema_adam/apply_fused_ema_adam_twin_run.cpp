/**
 * @file apply_fused_ema_adam_twin_run.cpp
 * @brief RunApplyFusedEmaAdamOnTwin: registers the launch's GM regions and starts the kernel's blocks.
 */
#include "apply_fused_ema_adam_twin_run.h"

extern "C" void aea_apply_fused_ema_adam(GM_ADDR grad, GM_ADDR var, GM_ADDR m, GM_ADDR v,
                                         GM_ADDR s, GM_ADDR step, GM_ADDR varRef, GM_ADDR mRef,
                                         GM_ADDR vRef, GM_ADDR sRef, GM_ADDR workspace,
                                         GM_ADDR tiling);

namespace ascend_ema_adam::apply_fused_ema_adam {

namespace {

GM_ADDR Gm(const void* p)
{
    return reinterpret_cast<GM_ADDR>(const_cast<void*>(p));
}

}  // namespace

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

    twin::LaunchConfig cfg;
    cfg.blockDim = tiling.blockDim;
    cfg.tilingKey = tiling.tilingKey;
    cfg.ubBytes = platform.ubSize;
    cfg.threads = threads;
    cfg.overflowMode = overflowMode;
    for (const void* p : {b.grad, b.var, b.m, b.v, b.s, static_cast<const void*>(b.varOut),
                          static_cast<const void*>(b.mOut), static_cast<const void*>(b.vOut),
                          static_cast<const void*>(b.sOut)}) {
        cfg.gm.push_back({p, tensorBytes});
    }
    cfg.gm.push_back({b.step, sizeof(int64_t)});
    cfg.gm.push_back({&tilingData, sizeof(tilingData)});

    return twin::Launch(&aea_apply_fused_ema_adam, cfg, Gm(b.grad), Gm(b.var), Gm(b.m), Gm(b.v),
                        Gm(b.s), Gm(b.step), Gm(b.varOut), Gm(b.mOut), Gm(b.vOut), Gm(b.sOut),
                        nullptr, Gm(&tilingData));
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam
