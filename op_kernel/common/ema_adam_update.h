/**
 * @file ema_adam_update.h
 * @brief The per-chunk update every EMA-Adam AscendC kernel runs, written once: ApplyFusedEmaAdam
 *        calls it with no options, ApplyFusedEmaAdamList with its prologue (maximize, grad scale)
 *        and AMSGrad. Real AscendC only; count-form vector instructions on fp32 UB tensors, one
 *        rounding per instruction. The op order is golden.emulate_entry's (and, with no options,
 *        golden.emulate_update's); keep them in step.
 */
#ifndef ASCEND_EMA_ADAM_EMA_ADAM_UPDATE_H
#define ASCEND_EMA_ADAM_EMA_ADAM_UPDATE_H

#include "kernel_operator.h"
#include "ema_adam_params.h"

namespace ascend_ema_adam {

/**
 * The fp32 UB tensors of one chunk. grad, m and v double as scratch once their last read is done;
 * var, s and maxV are only read. maxV/maxVOut are used only with AMSGrad, gradScale (the scale
 * broadcast over at least n elements) only with the grad-scale option, s/sOut only with the EMA.
 */
struct UpdateTensors {
    AscendC::LocalTensor<float> grad;
    AscendC::LocalTensor<float> var;
    AscendC::LocalTensor<float> m;
    AscendC::LocalTensor<float> v;
    AscendC::LocalTensor<float> s;
    AscendC::LocalTensor<float> varOut;
    AscendC::LocalTensor<float> mOut;
    AscendC::LocalTensor<float> vOut;
    AscendC::LocalTensor<float> sOut;
    AscendC::LocalTensor<float> maxV;
    AscendC::LocalTensor<float> maxVOut;
    AscendC::LocalTensor<float> gradScale;
};

/** What the list operator adds to the single op's update; all off is the single op. */
struct UpdateOptions {
    bool maximize = false;   // g = -g first (the list kernel folds it into a grad scale's sign)
    bool gradScale = false;  // then g = g / scale (true fp32 division; c220 has no Divs)
    bool amsgrad = false;    // maxV' = max(maxV, v'); v_hat from maxV'
    bool ema = true;         // s' = d*s + (1-d)*var'; false: s and sOut are not touched
};

/**
 * The update, one vector instruction (one rounding) per line:
 *   prologue    maximize: g = -g;  grad scale: g = g / scale
 *   1. mode 0:  t = wd*var;  g = t + g
 *   2. a = beta1*m;  b = (1-beta1)*g;  m' = b + a;  m_hat = m' * (1/c1)
 *   3. a = beta2*v;  g2 = g*g;  b = g2*(1-beta2);  v' = b + a
 *      AMSGrad: maxV' = maxV > v' ? maxV : v';  v_hat = maxV' * (1/c2)   else v_hat = v' * (1/c2)
 *   4. den = sqrt(v_hat) + eps;  u = m_hat / den;  mode 1: u = u + wd*var
 *   5. var' = var - lr*u;  s' = d*s + (1-d)*var'   (the EMA only with o.ema)
 */
__aicore__ inline void UpdateFp32(const UpdateTensors& t, const UpdateScalars& k,
                                  const UpdateOptions& o, int32_t n)
{
    using AscendC::Add;
    using AscendC::Div;
    using AscendC::Max;
    using AscendC::Mul;
    using AscendC::Muls;
    if (o.maximize) {
        Muls(t.grad, t.grad, -1.0f, n);        // g = -g (exact)
    }
    if (o.gradScale) {
        Div(t.grad, t.grad, t.gradScale, n);   // g = g / scale (or / -scale: maximize)
    }
    if (k.mode == 0U) {  // Adam + L2: g = wd*var + g (sOut, or mOut without the EMA, is free
                         // scratch until it is written)
        const AscendC::LocalTensor<float>& scratch = o.ema ? t.sOut : t.mOut;
        Muls(scratch, t.var, k.weightDecay, n);
        Add(t.grad, scratch, t.grad, n);
    }
    Muls(t.mOut, t.m, k.beta1, n);            // a = beta1*m
    Muls(t.m, t.grad, k.oneMinusBeta1, n);    // b = (1-beta1)*g         (m is scratch from here)
    Add(t.mOut, t.m, t.mOut, n);              // m' = b + a
    Muls(t.m, t.mOut, k.invC1, n);            // m_hat = m' * (1/c1)
    Muls(t.vOut, t.v, k.beta2, n);            // a = beta2*v
    Mul(t.v, t.grad, t.grad, n);              // g2 = g*g                (v is scratch from here)
    Muls(t.v, t.v, k.oneMinusBeta2, n);       // b = g2*(1-beta2)
    Add(t.vOut, t.v, t.vOut, n);              // v' = b + a
    if (o.amsgrad) {
        // maxV as src0: maxV > v' ? maxV : v' (a NaN v' propagates), golden.amsgrad_max
        Max(t.maxVOut, t.maxV, t.vOut, n);
        Muls(t.v, t.maxVOut, k.invC2, n);     // v_hat = maxV' * (1/c2)
    } else {
        Muls(t.v, t.vOut, k.invC2, n);        // v_hat = v' * (1/c2)
    }
    AscendC::Sqrt(t.v, t.v, n);               // sqrt(v_hat)
    AscendC::Adds(t.v, t.v, k.eps, n);        // den = sqrt(v_hat) + eps
    Div(t.m, t.m, t.v, n);                    // u = m_hat / den
    if (k.mode == 1U) {                       // AdamW: u = u + wd*var
        Muls(t.v, t.var, k.weightDecay, n);
        Add(t.m, t.m, t.v, n);
    }
    Muls(t.m, t.m, k.lr, n);                  // lr*u
    AscendC::Sub(t.varOut, t.var, t.m, n);    // var' = var - lr*u
    if (!o.ema) {
        return;
    }
    Muls(t.grad, t.varOut, k.oneMinusDecay, n);  // t = (1-d)*var'     (g is scratch from here)
    Muls(t.sOut, t.s, k.decay, n);            // a = d*s
    Add(t.sOut, t.sOut, t.grad, n);           // s' = a + t
}

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_EMA_ADAM_UPDATE_H
