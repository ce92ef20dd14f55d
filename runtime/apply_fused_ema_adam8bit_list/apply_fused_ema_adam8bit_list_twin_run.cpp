/**
 * @file apply_fused_ema_adam8bit_list_twin_run.cpp
 * @brief RunApplyFusedEmaAdam8bitListOnTwin: encodes the lists as CANN's launcher does (1-D
 *        entries), registers the launch's GM regions and starts the kernel's blocks.
 */
#include "apply_fused_ema_adam8bit_list_twin_run.h"

#include <stdexcept>
#include <vector>

#include "twin_launch_memory.h"

extern "C" void apply_fused_ema_adam8bit_list(
    GM_ADDR grads, GM_ADDR vars, GM_ADDR ms, GM_ADDR vs, GM_ADDR mAbsmaxes, GM_ADDR vAbsmaxes,
    GM_ADDR ss, GM_ADDR modelCopies, GM_ADDR qmapM, GM_ADDR qmapV, GM_ADDR step,
    GM_ADDR gradScale, GM_ADDR foundInf, GM_ADDR lr, GM_ADDR emaDecay, GM_ADDR varsRef,
    GM_ADDR ssRef, GM_ADDR modelCopiesRef, GM_ADDR msRef, GM_ADDR vsRef, GM_ADDR mAbsmaxesRef,
    GM_ADDR vAbsmaxesRef, GM_ADDR workspace, GM_ADDR tiling);

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

twin::LaunchResult RunApplyFusedEmaAdam8bitListOnTwin(
    const ApplyFusedEmaAdam8bitListTilingResult& tiling, const Platform& platform,
    const ApplyFusedEmaAdam8bitListBuffers& b, uint32_t threads,
    twin::FloatOverflowMode overflowMode)
{
    const ApplyFusedEmaAdam8bitListTilingData& t = tiling.data;
    const ApplyFusedEmaAdam8bitListDtypes& d = tiling.dtypes;
    if (b.tensorNum != t.tensorNum || d.hasCopy != (b.copies != nullptr) ||
        (t.hasGradScale != 0U) != (b.gradScale != nullptr) ||
        (t.hasFoundInf != 0U) != (b.foundInf != nullptr) || b.step == nullptr ||
        b.qmapM == nullptr || b.qmapV == nullptr ||
        (b.tensorNum > 0 && (t.hasEma != 0U) != (b.ss != nullptr)) ||
        (t.hasLrTensor != 0U) != (b.lr != nullptr) ||
        (t.hasEmaDecayTensor != 0U) != (b.emaDecay != nullptr)) {
        throw std::invalid_argument(
            "RunApplyFusedEmaAdam8bitListOnTwin: the buffers do not match the tiling");
    }
    if (tiling.blockDim == 0) {
        return {};
    }
    std::vector<uint64_t> blocks;  // of 256 elements: one scale each
    for (uint32_t i = 0; i < b.tensorNum; ++i) {
        blocks.push_back((b.numels[i] + 255U) / 256U);
    }
    const uint32_t g = DataTypeSize(d.grad);
    const uint32_t p = DataTypeSize(d.param);
    const uint32_t c = d.hasCopy ? DataTypeSize(d.copy) : 0U;
    TwinLaunchMemory mem(b.numels, b.tensorNum);
    const auto scales = [&](const void* const* entries, uint32_t elemBytes) {
        return mem.List(entries, blocks.data(), b.tensorNum, elemBytes);
    };
    GM_ADDR grads = mem.List(b.grads, g);
    GM_ADDR vars = mem.List(b.vars, p);
    GM_ADDR ms = mem.List(b.ms, 1);
    GM_ADDR vs = mem.List(b.vs, 1);
    GM_ADDR mAbsmaxes = scales(b.mAbsmaxes, 4);
    GM_ADDR vAbsmaxes = scales(b.vAbsmaxes, 4);
    GM_ADDR ss = mem.List(b.ss, 4);
    GM_ADDR copiesIn = mem.List(b.copies, c);
    GM_ADDR qmapM = mem.Tensor(b.qmapM, 256 * sizeof(float));
    GM_ADDR qmapV = mem.Tensor(b.qmapV, 256 * sizeof(float));
    GM_ADDR step = mem.Tensor(b.step, sizeof(int64_t));
    GM_ADDR gradScale = mem.Tensor(b.gradScale, sizeof(float));
    GM_ADDR foundInf = mem.Tensor(b.foundInf, sizeof(float));
    GM_ADDR lr = mem.Tensor(b.lr, sizeof(float));
    GM_ADDR emaDecay = mem.Tensor(b.emaDecay, sizeof(float));
    GM_ADDR varsRef = mem.List(b.vars, 0);
    GM_ADDR msRef = mem.List(b.ms, 0);
    GM_ADDR vsRef = mem.List(b.vs, 0);
    GM_ADDR mAbsmaxesRef = scales(b.mAbsmaxes, 0);
    GM_ADDR vAbsmaxesRef = scales(b.vAbsmaxes, 0);
    GM_ADDR ssRef = mem.List(b.ss, 0);
    GM_ADDR copiesRef = mem.List(b.copies, 0);

    ApplyFusedEmaAdam8bitListTilingData tilingData = tiling.data;  // the launch's own GM copy
    const twin::LaunchConfig cfg = mem.Config(tiling.blockDim, tiling.tilingKey, platform, threads,
                                              overflowMode, &tilingData);
    return twin::Launch(&::apply_fused_ema_adam8bit_list, cfg, grads, vars, ms, vs, mAbsmaxes,
                        vAbsmaxes, ss, copiesIn, qmapM, qmapV, step, gradScale, foundInf, lr,
                        emaDecay, varsRef, ssRef, copiesRef, msRef, vsRef, mAbsmaxesRef,
                        vAbsmaxesRef, nullptr, GmAddr(&tilingData));
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list
