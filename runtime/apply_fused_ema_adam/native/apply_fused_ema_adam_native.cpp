/**
 * @file apply_fused_ema_adam_native.cpp
 * @brief RunNative: ApplyFusedEmaAdam's launch as the list kernel's one-entry case (one dtype for
 *        param, state and grad, an EMA, no AMSGrad, maximize, grad scale or found_inf), so both
 *        operators run the same native loops (runtime/apply_fused_ema_adam_list/native/).
 */
#include "apply_fused_ema_adam_native.h"

#include <cstring>
#include <vector>

#include "apply_fused_ema_adam_list_native.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "platform.h"

namespace ascend_ema_adam {

uint32_t RunNative(const TilingResult& tiling, const ApplyFusedEmaAdamBuffers& b,
                   const NativeOptions& options)
{
    const uint64_t n = tiling.data.totalLength;
    const DataType dtype = DataTypeOfTilingKey(tiling.tilingKey);
    // The list tiling of the same launch: the attributes are the fp32 values the single tiling
    // folded (fp32 -> double -> fp32 is exact), checked and folded the same way again.
    const EmaAdamHyperParams& h = tiling.data.hyper;
    Attrs attrs;
    attrs.lr = h.lr;
    attrs.emaDecay = h.emaDecay;
    attrs.beta1 = h.beta1;
    attrs.beta2 = h.beta2;
    attrs.eps = h.eps;
    attrs.mode = h.mode;
    attrs.biasCorrection = h.biasCorrection != 0U;
    attrs.weightDecay = h.weightDecay;
    const std::vector<uint64_t> numels = {n};
    const ListTilingResult list =
        ComputeListTiling(numels, ListDtypes{dtype, dtype, dtype}, attrs, ListOptions{}, CpuPlatform());

    // Out of place (each output overlaps no input): the inputs are copied to the outputs, which
    // are then updated in place.
    const uint64_t bytes = n * DataTypeSize(dtype);
    const void* in[] = {b.var, b.m, b.v, b.s};
    void* out[] = {b.varOut, b.mOut, b.vOut, b.sOut};
    for (int i = 0; i < 4; ++i) {
        if (out[i] != in[i] && bytes != 0) {
            std::memcpy(out[i], in[i], bytes);
        }
    }
    const void* grads[] = {b.grad};
    void* vars[] = {b.varOut};
    void* ms[] = {b.mOut};
    void* vs[] = {b.vOut};
    void* ss[] = {b.sOut};
    ApplyFusedEmaAdamListBuffers lb;
    lb.tensorNum = 1;
    lb.numels = numels.data();
    lb.grads = grads;
    lb.vars = vars;
    lb.ms = ms;
    lb.vs = vs;
    lb.ss = ss;
    lb.step = b.step;
    return RunNativeList(list, lb, options);
}

}  // namespace ascend_ema_adam
