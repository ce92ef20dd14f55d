/**
 * @file ema_adam_attrs.h
 * @brief The EMA-Adam hyper-parameters as callers pass them (doubles, CANN's attribute order),
 *        their checks and their narrowing to the fp32 EmaAdamHyperParams every tiling carries.
 *        Shared by every operator of the family.
 */
#ifndef ASCEND_EMA_ADAM_EMA_ADAM_ATTRS_H
#define ASCEND_EMA_ADAM_EMA_ADAM_ATTRS_H

#include <cstdint>

#include "ema_adam_params.h"
#include "validation.h"

namespace ascend_ema_adam {

/**
 * The operator's attributes (defaults: CANN's graph defaults). Built by name, never by position:
 *     Attrs().SetLr(lr).SetEmaDecay(emaDecay).SetMode(mode)
 * The user-provided constructor makes the struct a non-aggregate, so `Attrs{lr, emaDecay, ...}`
 * (where swapping two doubles would compile) does not compile.
 */
struct Attrs {
    Attrs() {}

    double lr = 1e-3;
    double emaDecay = 0.9999;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    int64_t mode = 1;  // 0: Adam + L2 weight decay; 1: AdamW (decoupled)
    bool biasCorrection = true;
    double weightDecay = 0.0;

    Attrs& SetLr(double value) { lr = value; return *this; }
    Attrs& SetEmaDecay(double value) { emaDecay = value; return *this; }
    Attrs& SetBeta1(double value) { beta1 = value; return *this; }
    Attrs& SetBeta2(double value) { beta2 = value; return *this; }
    Attrs& SetEps(double value) { eps = value; return *this; }
    Attrs& SetMode(int64_t value) { mode = value; return *this; }
    Attrs& SetBiasCorrection(bool value) { biasCorrection = value; return *this; }
    Attrs& SetWeightDecay(double value) { weightDecay = value; return *this; }
};

/**
 * The attributes as every EMA-Adam API passes them, in CANN's order (the aclnn signatures, the
 * OpDefs and the torch schemas share it): the one place that order is spelled out.
 */
inline Attrs AttrsInCannOrder(double lr, double emaDecay, double beta1, double beta2, double eps,
                              int64_t mode, bool biasCorrection, double weightDecay)
{
    return Attrs()
        .SetLr(lr)
        .SetEmaDecay(emaDecay)
        .SetBeta1(beta1)
        .SetBeta2(beta2)
        .SetEps(eps)
        .SetMode(mode)
        .SetBiasCorrection(biasCorrection)
        .SetWeightDecay(weightDecay);
}

/**
 * mode 0 or 1; lr and weightDecay finite; 0 <= emaDecay <= 1; 0 <= beta1, beta2 < 1; eps >= 0;
 * ranges judged on the fp32 values the kernels use (0.9999999999 is a beta of 1).
 */
Refusal CheckAttrs(const Attrs& attrs);

/** The attributes narrowed to fp32 with round-to-nearest-even (what the kernels compute with). */
EmaAdamHyperParams HyperParamsOf(const Attrs& attrs);

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_EMA_ADAM_ATTRS_H
