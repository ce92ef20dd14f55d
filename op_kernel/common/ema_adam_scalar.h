/**
 * @file ema_adam_scalar.h
 * @brief The scalar code every EMA-Adam kernel runs once per launch, written once: the bias
 *        correction, the folding of the launch scalars and a core's element range. Plain C++ on
 *        __aicore__ inline functions: the AscendC kernels include it directly, host code (tiling,
 *        the native CPU kernel) through op_host/common/kernel_scalar_host.h, which defines __aicore__
 *        away.
 *        golden.bias_correction_f32 and golden.emulate_update mirror it in numpy.
 */
#ifndef ASCEND_EMA_ADAM_EMA_ADAM_SCALAR_H
#define ASCEND_EMA_ADAM_EMA_ADAM_SCALAR_H

#include <cstdint>

#include "ema_adam_params.h"

namespace ascend_ema_adam {

/**
 * c = 1 - beta^step in fp32 on the scalar unit, by the binary method on (A, P) = (1 - beta^n,
 * beta^n): doubling A = A*(2-A), P = P*P; increment A = A + P*(1-beta), P = P*beta. No step
 * subtracts nearly equal numbers, so c keeps a few-ulp relative error even when beta^step is
 * close to 1 (CANN evaluates 1 - Power(beta, step) and loses up to 10 bits there).
 * Mirrored bit for bit by golden.bias_correction_f32. step <= 0 yields 0.
 */
__aicore__ inline float BiasCorrection(float beta, int64_t step)
{
    float a = 0.0f;  // 1 - beta^n
    float p = 1.0f;  // beta^n
    if (step <= 0) {
        return a;
    }
    const float q = 1.0f - beta;
    int32_t bit = 62;
    while (((static_cast<uint64_t>(step) >> bit) & 1U) == 0U) {
        --bit;
    }
    for (; bit >= 0; --bit) {
        a = a * (2.0f - a);  // n -> 2n
        p = p * p;
        if (((static_cast<uint64_t>(step) >> bit) & 1U) != 0U) {
            a = a + p * q;  // n -> n + 1
            p = p * beta;
        }
    }
    return a;
}

/**
 * The launch scalars: each fold is one fp32 operation, as the reference's scalar unit rounds.
 * `step` is used only with bias correction (the kernels read it from GM only then).
 */
__aicore__ inline UpdateScalars FoldScalars(const EmaAdamHyperParams& h, int64_t step)
{
    UpdateScalars k{};
    k.lr = h.lr;
    k.beta1 = h.beta1;
    k.beta2 = h.beta2;
    k.oneMinusBeta1 = 1.0f - h.beta1;
    k.oneMinusBeta2 = 1.0f - h.beta2;
    k.eps = h.eps;
    k.weightDecay = h.weightDecay;
    k.decay = h.emaDecay;
    k.oneMinusDecay = 1.0f - h.emaDecay;
    k.mode = h.mode;
    k.invC1 = 1.0f;
    k.invC2 = 1.0f;
    if (h.biasCorrection != 0U) {
        k.invC1 = 1.0f / BiasCorrection(h.beta1, step);
        k.invC2 = 1.0f / BiasCorrection(h.beta2, step);
    }
    return k;
}

/** What a launch reads and folds before it touches a tensor (LaunchPrologue). */
struct LaunchScalars {
    bool skip;            // found_inf is nonzero (NaN included): nothing more is read or written
    bool divideGrad;      // g / gradDivisor changes g: a grad scale is given, or maximize
    float gradDivisor;    // g / gradDivisor: maximize ? -scale : scale (scale 1 without grad_scale)
    UpdateScalars k;      // FoldScalars of the attributes, lr / ema_decay tensors replacing theirs
};

/**
 * The launch prologue of the list kernel and the native kernel, one definition for both: found_inf
 * first (a skipped launch reads nothing else), then the grad scale, step (only when bias
 * correction uses it), the lr and ema_decay tensors, and the fold. `launch` has the tiling's
 * flags (hasFoundInf, hasGradScale, maximize, hasLrTensor, hasEmaDecayTensor, hyper); `read` reads
 * the one-element tensors: FoundInf(), GradScale(), Step(), Lr(), EmaDecay() (the kernel from GM
 * on the scalar unit, the native kernel from host memory).
 */
template <class Launch, class Reader>
__aicore__ inline LaunchScalars LaunchPrologue(const Launch& launch, Reader& read)
{
    LaunchScalars out{};
    if (launch.hasFoundInf != 0U && read.FoundInf() != 0.0f) {
        out.skip = true;
        return out;
    }
    const float scale = launch.hasGradScale != 0U ? read.GradScale() : 1.0f;
    out.divideGrad = launch.hasGradScale != 0U || launch.maximize != 0U;
    out.gradDivisor = launch.maximize != 0U ? -scale : scale;
    EmaAdamHyperParams hyper = launch.hyper;
    const int64_t step = hyper.biasCorrection != 0U ? read.Step() : 0;
    if (launch.hasLrTensor != 0U) {
        hyper.lr = read.Lr();
    }
    if (launch.hasEmaDecayTensor != 0U) {
        hyper.emaDecay = read.EmaDecay();
    }
    out.k = FoldScalars(hyper, step);
    return out;
}

/** [begin, end) elements. */
struct ElementRange {
    uint64_t begin;
    uint64_t end;
};

/**
 * Core `core`'s elements under a balanced split of 32-byte blocks (op_host SplitBlocks): every
 * core owns whole blocks, the last bigCores own one block more, so only the final core may end on
 * a partial block of the totalLength elements.
 */
__aicore__ inline ElementRange CoreElementRange(uint64_t totalLength, uint64_t blocksPerCore,
                                                uint32_t usedCores, uint32_t bigCores,
                                                uint32_t alignElems, uint32_t core)
{
    const uint64_t smallCores = usedCores - bigCores;
    const uint64_t extraBefore = core > smallCores ? core - smallCores : 0;
    const uint64_t firstBlock = core * blocksPerCore + extraBefore;
    const uint64_t blocks = blocksPerCore + (core >= smallCores ? 1 : 0);
    const uint64_t begin = firstBlock * alignElems;
    const uint64_t end = (firstBlock + blocks) * alignElems;
    return {begin < totalLength ? begin : totalLength, end < totalLength ? end : totalLength};
}

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_EMA_ADAM_SCALAR_H
