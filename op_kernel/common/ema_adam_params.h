/**
 * @file ema_adam_params.h
 * @brief Plain structs shared by every EMA-Adam operator's host and kernels: the hyper-parameters
 *        as a tiling struct carries them, and the fp32 scalars a launch folds from them
 *        (ema_adam_scalar.h). Fixed-width fields, no functions: the native kernel's ISA
 *        translation units include it too.
 */
#ifndef ASCEND_EMA_ADAM_EMA_ADAM_PARAMS_H
#define ASCEND_EMA_ADAM_EMA_ADAM_PARAMS_H

#include <cstdint>

namespace ascend_ema_adam {

/** The update's hyper-parameters, narrowed to fp32 on the host (the operator contract). */
struct EmaAdamHyperParams {
    float lr;
    float emaDecay;
    float beta1;
    float beta2;
    float eps;
    float weightDecay;
    uint32_t mode;            // 0: Adam + L2 (decay added to the gradient); 1: AdamW (decoupled)
    uint32_t biasCorrection;  // 0 or 1
};

/** The fp32 scalars of one launch, each fold one fp32 operation (FoldScalars). */
struct UpdateScalars {
    float lr;
    float beta1;
    float beta2;
    float oneMinusBeta1;
    float oneMinusBeta2;
    float eps;
    float weightDecay;
    float decay;
    float oneMinusDecay;
    float invC1;
    float invC2;
    uint32_t mode;
};

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_EMA_ADAM_PARAMS_H
