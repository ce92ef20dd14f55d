/**
 * @file apply_fused_ema_adam_list_native.cpp
 * @brief RunApplyFusedEmaAdamListNative: reads found_inf, folds the launch scalars with the
 *        kernel's LaunchPrologue and runs the lists as the shared EMA-Adam entries
 *        (ema_adam_entries.h).
 */
#include "apply_fused_ema_adam_list_native.h"

#include <stdexcept>

#include "apply_fused_ema_adam_list_tiling_key.h"
#include "ema_adam_entries.h"
#include "kernel_scalar_host.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

namespace {

// Every row of the operator's dtype contract has its loops among the shared ones.
#define AEA_LIST_ROW_HAS_LOOPS(key, P, S, G, C)                                                   \
    static_assert(                                                                                \
        HasEmaAdamEntryLoops({kApplyFusedEmaAdamListDtype_##P, kApplyFusedEmaAdamListDtype_##S,   \
                              kApplyFusedEmaAdamListDtype_##G, kApplyFusedEmaAdamListHasCopy_##C, \
                              kApplyFusedEmaAdamListDtype_##C}),                                  \
        "APPLY_FUSED_EMA_ADAM_LIST_KEYS row " #key " is not in EMA_ADAM_ENTRY_TYPES");
APPLY_FUSED_EMA_ADAM_LIST_KEYS(AEA_LIST_ROW_HAS_LOOPS)
#undef AEA_LIST_ROW_HAS_LOOPS

/** LaunchPrologue's reader (ema_adam_scalar.h): the one-element tensors in host memory. */
struct HostScalarReader {
    const ApplyFusedEmaAdamListBuffers& b;

    float FoundInf() const { return *b.foundInf; }
    float GradScale() const { return *b.gradScale; }
    int64_t Step() const { return *b.step; }
    float Lr() const { return *b.lr; }
    float EmaDecay() const { return *b.emaDecay; }
};

}  // namespace

uint32_t RunApplyFusedEmaAdamListNative(const ApplyFusedEmaAdamListTilingResult& tiling,
                                        const ApplyFusedEmaAdamListBuffers& b,
                                        const NativeOptions& options)
{
    const ApplyFusedEmaAdamListTilingData& t = tiling.data;
    const ApplyFusedEmaAdamListDtypes dtypes = ApplyFusedEmaAdamListDtypesOfKey(tiling.tilingKey);
    if ((t.hasLrTensor != 0U && b.lr == nullptr) ||
        (t.hasEmaDecayTensor != 0U && b.emaDecay == nullptr) ||
        (t.hasGradScale != 0U && b.gradScale == nullptr) ||
        (t.hasFoundInf != 0U && b.foundInf == nullptr) || t.tensorNum != b.tensorNum) {
        throw std::invalid_argument("native list kernel: the buffers do not match the tiling");
    }
    EmaAdamEntries e;
    e.types = {dtypes.param, dtypes.state, dtypes.grad, dtypes.hasCopy, dtypes.copy};
    e.amsgrad = t.amsgrad != 0U;
    e.ema = t.hasEma != 0U;
    e.count = b.tensorNum;
    e.numels = b.numels;
    e.grads = b.grads;
    e.vars = b.vars;
    e.ms = b.ms;
    e.vs = b.vs;
    e.ss = b.ss;
    e.maxVs = b.maxVs;
    e.copies = b.copies;

    // The kernel's launch prologue: found_inf first (nonzero, NaN included: nothing more is read
    // or written), step only when it is used, the lr and decay tensors replacing the attributes.
    HostScalarReader read{b};
    const LaunchScalars launch = LaunchPrologue(t, read);
    if (launch.skip) {
        return 0;
    }
    e.k = launch.k;
    e.divideGrad = launch.divideGrad;  // one division serves both (native::Prologue::kDivide)
    e.gradDivisor = launch.gradDivisor;
    return RunEmaAdamEntries(e, options);
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
