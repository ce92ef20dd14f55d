/**
 * @file ema_adam_attrs.cpp
 * @brief Checks and fp32 narrowing of the EMA-Adam attributes (see the header).
 */
#include "ema_adam_attrs.h"

#include <string>

namespace ascend_ema_adam {

Refusal CheckAttrs(const Attrs& a)
{
    if (a.mode != 0 && a.mode != 1) {
        return "mode is " + std::to_string(a.mode) +
               ", expected 0 (Adam, L2 weight decay) or 1 (AdamW, decoupled decay)";
    }
    const auto any = [](float) { return true; };
    const auto unitOpen = [](float x) { return x >= 0.0F && x < 1.0F; };
    const auto unitClosed = [](float x) { return x >= 0.0F && x <= 1.0F; };
    const auto nonNegative = [](float x) { return x >= 0.0F; };
    const struct {
        const char* name;
        double value;
        bool (*inRange)(float);
        const char* range;
    } checks[] = {
        {"lr", a.lr, any, ""},
        {"emaDecay", a.emaDecay, unitClosed, "0 <= emaDecay <= 1"},
        {"beta1", a.beta1, unitOpen, "0 <= beta1 < 1"},
        {"beta2", a.beta2, unitOpen, "0 <= beta2 < 1"},
        {"eps", a.eps, nonNegative, "eps >= 0"},
        {"weightDecay", a.weightDecay, any, ""},
    };
    for (const auto& c : checks) {
        Refusal refusal = CheckFloatAttr(c.name, c.value, c.inRange, c.range);
        if (!refusal.empty()) {
            return refusal;
        }
    }
    return {};
}

EmaAdamHyperParams HyperParamsOf(const Attrs& a)
{
    EmaAdamHyperParams h{};
    h.lr = static_cast<float>(a.lr);
    h.emaDecay = static_cast<float>(a.emaDecay);
    h.beta1 = static_cast<float>(a.beta1);
    h.beta2 = static_cast<float>(a.beta2);
    h.eps = static_cast<float>(a.eps);
    h.weightDecay = static_cast<float>(a.weightDecay);
    h.mode = static_cast<uint32_t>(a.mode);
    h.biasCorrection = a.biasCorrection ? 1U : 0U;
    return h;
}

}  // namespace ascend_ema_adam
