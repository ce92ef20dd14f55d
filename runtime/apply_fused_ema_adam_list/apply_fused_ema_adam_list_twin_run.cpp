/**
 * @file apply_fused_ema_adam_list_twin_run.cpp
 * @brief RunApplyFusedEmaAdamListOnTwin: encodes the lists as CANN's launcher does, registers the
 *        launch's GM regions and starts the list kernel's blocks.
 */
#include "apply_fused_ema_adam_list_twin_run.h"

#include <stdexcept>

#include "twin_launch_memory.h"

// The V2 entry: V1 is V2 without the lr/decay tensors (the same kernel, see
// op_kernel/apply_fused_ema_adam_list/apply_fused_ema_adam_list_v2.cpp). The outputs in the
// OpDef's order (varsRef, ssRef, maxVsRef, modelCopiesRef, msRef, vsRef: a never-empty list last,
// docs/ACLNN.md D1).
extern "C" void apply_fused_ema_adam_list_v2(GM_ADDR grads, GM_ADDR vars, GM_ADDR ms, GM_ADDR vs,
                                             GM_ADDR ss, GM_ADDR maxVs, GM_ADDR modelCopies,
                                             GM_ADDR step, GM_ADDR gradScale, GM_ADDR foundInf,
                                             GM_ADDR lr, GM_ADDR emaDecay, GM_ADDR varsRef,
                                             GM_ADDR ssRef, GM_ADDR maxVsRef,
                                             GM_ADDR modelCopiesRef, GM_ADDR msRef, GM_ADDR vsRef,
                                             GM_ADDR workspace, GM_ADDR tiling);

namespace ascend_ema_adam::apply_fused_ema_adam_list {

twin::LaunchResult RunApplyFusedEmaAdamListOnTwin(const ApplyFusedEmaAdamListTilingResult& tiling,
                                                  const Platform& platform,
                                                  const ApplyFusedEmaAdamListBuffers& b,
                                                  uint32_t threads,
                                                  twin::FloatOverflowMode overflowMode)
{
    const ApplyFusedEmaAdamListTilingData& t = tiling.data;
    const ApplyFusedEmaAdamListDtypes& d = tiling.dtypes;
    if (b.tensorNum != t.tensorNum || (t.amsgrad != 0U) != (b.maxVs != nullptr) ||
        d.hasCopy != (b.copies != nullptr) || (t.hasGradScale != 0U) != (b.gradScale != nullptr) ||
        (t.hasFoundInf != 0U) != (b.foundInf != nullptr) || b.step == nullptr ||
        (b.tensorNum > 0 && (t.hasEma != 0U) != (b.ss != nullptr)) ||
        (t.hasLrTensor != 0U) != (b.lr != nullptr) ||
        (t.hasEmaDecayTensor != 0U) != (b.emaDecay != nullptr)) {
        throw std::invalid_argument(
            "RunApplyFusedEmaAdamListOnTwin: the buffers do not match the tiling (tensor count, "
            "ss, max_vs, model "
            "copies, grad_scale, found_inf, lr, ema_decay or step)");
    }
    if (tiling.blockDim == 0) {
        return {};
    }
    const uint32_t p = DataTypeSize(d.param);
    const uint32_t s = DataTypeSize(d.state);
    const uint32_t g = DataTypeSize(d.grad);
    const uint32_t c = d.hasCopy ? DataTypeSize(d.copy) : 0U;
    TwinLaunchMemory mem(b.numels, b.tensorNum);
    // Inputs and in-place outputs are separate descriptors of the same tensors, as on the device.
    GM_ADDR grads = mem.List(b.grads, g);
    GM_ADDR vars = mem.List(b.vars, p);
    GM_ADDR ms = mem.List(b.ms, s);
    GM_ADDR vs = mem.List(b.vs, s);
    GM_ADDR ss = mem.List(b.ss, s);
    GM_ADDR maxVsIn = mem.List(b.maxVs, s);
    GM_ADDR copiesIn = mem.List(b.copies, c);
    GM_ADDR step = mem.Tensor(b.step, sizeof(int64_t));
    GM_ADDR gradScale = mem.Tensor(b.gradScale, sizeof(float));
    GM_ADDR foundInf = mem.Tensor(b.foundInf, sizeof(float));
    GM_ADDR lr = mem.Tensor(b.lr, sizeof(float));
    GM_ADDR emaDecay = mem.Tensor(b.emaDecay, sizeof(float));
    GM_ADDR varsRef = mem.List(b.vars, 0);
    GM_ADDR msRef = mem.List(b.ms, 0);
    GM_ADDR vsRef = mem.List(b.vs, 0);
    GM_ADDR ssRef = mem.List(b.ss, 0);
    GM_ADDR maxVsRef = mem.List(b.maxVs, 0);
    GM_ADDR copiesRef = mem.List(b.copies, 0);

    ApplyFusedEmaAdamListTilingData tilingData = tiling.data;  // the launch's own GM copy
    const twin::LaunchConfig cfg = mem.Config(tiling.blockDim, tiling.tilingKey, platform, threads,
                                              overflowMode, &tilingData);
    return twin::Launch(&apply_fused_ema_adam_list_v2, cfg, grads, vars, ms, vs, ss, maxVsIn,
                        copiesIn, step, gradScale, foundInf, lr, emaDecay, varsRef, ssRef,
                        maxVsRef, copiesRef, msRef, vsRef, nullptr, GmAddr(&tilingData));
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
