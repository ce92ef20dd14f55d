/**
 * @file apply_fused_ema_adam_native.cpp
 * @brief RunApplyFusedEmaAdamNative: ApplyFusedEmaAdam's launch as one entry of the shared
 *        EMA-Adam entries loops (one dtype for param, state and grad, an EMA, none of the list
 *        op's options), with the kernel's FoldScalars.
 */
#include "apply_fused_ema_adam_native.h"

#include <cstring>

#include "ema_adam_entries.h"
#include "kernel_scalar_host.h"

namespace ascend_ema_adam::apply_fused_ema_adam {

static_assert(HasEmaAdamEntryLoops({DataType::kFloat32, DataType::kFloat32, DataType::kFloat32}) &&
                  HasEmaAdamEntryLoops({DataType::kFloat16, DataType::kFloat16, DataType::kFloat16}) &&
                  HasEmaAdamEntryLoops({DataType::kBFloat16, DataType::kBFloat16, DataType::kBFloat16}),
              "every dtype of the kernel has its loops among the shared ones");

uint32_t RunApplyFusedEmaAdamNative(const ApplyFusedEmaAdamTilingResult& tiling,
                                    const ApplyFusedEmaAdamBuffers& b, const NativeOptions& options)
{
    const uint64_t n = tiling.data.totalLength;
    const DataType dtype = ApplyFusedEmaAdamDtypeOfKey(tiling.tilingKey);
    const EmaAdamHyperParams& h = tiling.data.hyper;
    // The kernel reads the step only for bias correction.
    const UpdateScalars k = FoldScalars(h, h.biasCorrection != 0U ? *b.step : 0);

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
    EmaAdamEntries e;
    e.types = {dtype, dtype, dtype};
    e.k = k;
    e.count = 1;
    e.numels = &n;
    e.grads = grads;
    e.vars = vars;
    e.ms = ms;
    e.vs = vs;
    e.ss = ss;
    return RunEmaAdamEntries(e, options);
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam
