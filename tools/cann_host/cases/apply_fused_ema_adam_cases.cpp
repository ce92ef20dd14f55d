/**
 * @file apply_fused_ema_adam_cases.cpp
 * @brief ApplyFusedEmaAdam's (the single op's, op type AeaApplyFusedEmaAdam) cases of
 *        tools/cann_host: every dtype and mode, bias correction off, overflowing 16-bit results;
 *        then its refusals.
 */
#include "cann_host_case.h"

namespace cann_host {

std::vector<Case> ApplyFusedEmaAdamCases()
{
    std::vector<Case> t;
    // Single op: every dtype, modes, bias correction off.
    for (int d : {F32, F16, BF16}) {
        for (int64_t mode : {0, 1}) {
            Case k;
            k.op = Op::kSingle;
            k.c = {d, d, d, -1};
            k.numels = {1000};
            k.mode = mode;
            k.name = std::string("single_") + DtName(d) + "_mode" + std::to_string(mode);
            t.push_back(k);
        }
    }
    {
        Case k;
        k.op = Op::kSingle;
        k.numels = {4097};
        k.biasCorrection = false;
        k.name = "single_f32_nobc";
        t.push_back(k);
    }
    std::vector<std::pair<Case, std::string>> bases;
    for (int d : {F16, BF16}) {
        Case k;
        k.op = Op::kSingle;
        k.numels = {1000};
        k.c = {d, d, d, -1};
        bases.push_back({k, std::string("single_") + DtName(d)});
    }
    AddOverflowing(t, bases);

    const auto add = [&](const std::string& bad, int64_t code, const std::function<void(Case&)>& f = {}) {
        t.push_back(Refusal(Op::kSingle, bad, code, f));
    };
    add("null-step", 161001);
    add("grad-dtype", 161002, [](Case& k) { k.numels = {64}; });
    add("shape", 561002, [](Case& k) { k.numels = {64}; });
    add("alias-var-m", -1, [](Case& k) {
        k.numels = {64};
        k.difference = "var passed as m: neither the generated aclnn nor opbase compares addresses, and the tiling "
                       "never sees them; our CPU layer refuses overlapping in-place tensors";
    });
    add("step-dtype", 161002, [](Case& k) { k.numels = {64}; });
    add("bad-mode", 561002, [](Case& k) { k.mode = 5; k.numels = {64}; });
    add("step0", -1, [](Case& k) {
        k.step = 0;
        k.numels = {64};
        k.difference = "step is device data: CANN's tiling cannot read it; our CPU layer refuses step < 1";
    });
    return t;
}

}  // namespace cann_host
