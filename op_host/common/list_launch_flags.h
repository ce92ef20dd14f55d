/**
 * @file list_launch_flags.h
 * @brief The launch flags both list operators' tiling structs carry (maximize, grad scale,
 *        found_inf, EMA, lr and decay tensors; ema_adam_scalar.h's LaunchPrologue reads them),
 *        set from a call's options in one place.
 */
#ifndef ASCEND_EMA_ADAM_LIST_LAUNCH_FLAGS_H
#define ASCEND_EMA_ADAM_LIST_LAUNCH_FLAGS_H

namespace ascend_ema_adam {

/** `options` has gradScale, foundInf, ema, lrTensor and emaDecayTensor; `maximize` is the
 *  attribute (the list operator's) or the option (the 8-bit operator's). */
template <class TilingData, class Options>
void SetListLaunchFlags(TilingData& t, const Options& options, bool maximize)
{
    t.maximize = maximize ? 1U : 0U;
    t.hasGradScale = options.gradScale ? 1U : 0U;
    t.hasFoundInf = options.foundInf ? 1U : 0U;
    t.hasEma = options.ema ? 1U : 0U;
    t.hasLrTensor = options.lrTensor ? 1U : 0U;
    t.hasEmaDecayTensor = options.emaDecayTensor ? 1U : 0U;
}

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_LIST_LAUNCH_FLAGS_H
