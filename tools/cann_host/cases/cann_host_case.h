/**
 * @file cann_host_case.h
 * @brief One case of tools/cann_host's table, the helpers that build cases, and each operator's
 *        part of the table (cases/<op>_cases.cpp: what it runs bit-identically on both layers,
 *        then what both must refuse). cann_host_cases.cpp runs them.
 */
#ifndef CANN_HOST_CASE_H
#define CANN_HOST_CASE_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "acl/acl.h"

namespace cann_host {

enum Dt { F32 = ACL_FLOAT, F16 = ACL_FLOAT16, BF16 = ACL_BF16, I64 = ACL_INT64, U8 = ACL_UINT8 };

inline const char* DtName(int dt)
{
    return dt == F32 ? "f32" : dt == F16 ? "f16" : dt == BF16 ? "bf16" : dt == U8 ? "u8" : "i64";
}

// ---- cases -----------------------------------------------------------------------------------------------
enum class Op { kSingle, kV1, kV2, k8bit };  // k8bit: ApplyFusedEmaAdam8bitList
inline const char* OpName(Op op)
{
    return op == Op::kSingle ? "single" : op == Op::kV1 ? "V1" : op == Op::kV2 ? "V2" : "8bit";
}

struct Combo {
    int grad, param, state, copy;  // copy < 0: none allowed (the list ops' model copies)
};

struct Case {
    std::string name;
    Op op = Op::kV1;
    Combo c{F32, F32, F32, -1};
    std::vector<int64_t> numels{5, 64, 33};
    bool ss = true, maxVs = false, copies = false, gradScale = false, foundInf = false;
    bool lrTensor = false, emaDecayTensor = false, maximize = false;
    int64_t mode = 1;
    bool biasCorrection = true;
    double lr = 1e-3, emaDecay = 0.999, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.01;
    int64_t step = 3;
    float foundInfValue = 0.0f;
    // Mutations for refusals.
    std::string bad;        // "", or what is wrong (see Build)
    int64_t expected = 0;   // 0: must succeed bit-identically; else CANN's refusal code (-1: any)
    std::shared_ptr<Case> before;  // run first on the same layer (executor reuse; may chain)
    // An absent optional list (ss without the EMA, max_vs, model_copies) is passed as
    // placeholders, one zero-element tensor per entry (docs/ACLNN.md, "Absent lists"), or with
    // emptyLists as an empty list: what opbase mishandles (D1, D2, and the kernel keying).
    bool emptyLists = false;
    bool moveLr = false;  // repeats also move the lr tensor (aclSetInputTensorAddr, at its slot)
    // Inputs whose 16-bit results overflow (Overflow below): gradients whose squares pass the
    // state's maximum, +-inf and NaN gradients, master weights beyond the copies' range.
    bool overflowing = false;
    // CANN's side runs with the device in saturation mode (aclrtSetDeviceSatMode): its 16-bit
    // outputs must be our CPU layer's (IEEE) with inf -> +-MAX and NaN -> 0 (docs/ACLNN.md, "The
    // float-overflow mode").
    bool saturation = false;
    // A repeatable executor (aclSetAclOpExecutorRepeatable) run `repeats` more times, each after
    // new gradients (aclSetDynamicInputTensorAddr, input 0), vars entry 0 moved (input 1: an
    // in-place list, so its output follows) and a new step tensor (aclSetInputTensorAddr, its
    // flat input index after every list entry).
    int repeats = 0;
    // An opbase defect this case meets (docs/ACLNN.md): "D2" (executor reuse: stale empty lists,
    // only with emptyLists). Such a case is an expected failure while it fails; once it runs
    // bit-identically it counts like any other.
    std::string defect;
    // A documented difference between the layers: CANN runs the case and our CPU layer refuses
    // it, or (cannRefuses) the reverse.
    std::string difference;
    bool cannRefuses = false;
};

/** Case steps.back() run after the others, in order, on the same layer (executor reuse), named `name`. */
inline Case Chain(std::vector<Case> steps, const std::string& name)
{
    for (size_t i = 1; i < steps.size(); ++i) {
        steps[i].before = std::make_shared<Case>(steps[i - 1]);
    }
    steps.back().name = name;
    return steps.back();
}

/** `k` with bf16 gradients, fp32 masters and state, and bf16 model copies. */
inline Case WithModelCopies(Case k)
{
    k.c = {BF16, F32, F32, BF16};
    k.copies = true;
    return k;
}

/** `on` (with the EMA), then without the EMA, then `on` again on the same layer (ema_every), named `name`. */
inline Case EmaOnOffOn(const Case& on, const std::string& name)
{
    Case off = on;
    off.ss = false;
    return Chain({on, off, on}, name);
}

/** `k` on combination `c` with its absent lists as empty lists (not placeholders) that opbase keys by a dtype no
 *  OpDef column has for them: CANN refuses the call (161002), our CPU layer takes an empty list as absent. */
inline Case EmptyListWithoutAColumn(Case k, const Combo& c, const char* difference, const char* name)
{
    k.c = c;
    k.emptyLists = true;
    k.expected = 161002;
    k.cannRefuses = true;
    k.difference = difference;
    k.name = name;
    return k;
}

/** Each of `bases` (a case and its name) with 16-bit results that overflow (Case::overflowing),
 *  the device in INF_NAN mode (its default on A2/A3: IEEE, as our CPU layer) and in saturation
 *  mode. */
inline void AddOverflowing(std::vector<Case>& t, std::vector<std::pair<Case, std::string>> bases)
{
    for (auto& [k, name] : bases) {
        k.overflowing = true;
        for (bool saturation : {false, true}) {
            k.saturation = saturation;
            k.name = name + "_overflow" + (saturation ? "_saturation_mode" : "_inf_nan_mode");
            t.push_back(k);
        }
    }
}

/** A refusal of operator `op`: what is wrong (`bad`, see the runner's Build), CANN's code for it
 *  (161001 the generated aclnn's null check, 161002 opbase's checks: dtype against the OpDef
 *  columns, the 256-tensor list limit; 561002 our tiling, as opbase reports any tiling failure;
 *  -1 any), `f` setting the rest. */
inline Case Refusal(Op op, const std::string& bad, int64_t code, const std::function<void(Case&)>& f = {})
{
    Case k;
    k.op = op;
    k.bad = bad;
    k.expected = code;
    if (f) {
        f(k);
    }
    k.name = std::string("bad_") + OpName(op) + "_" + bad;
    return k;
}

// Each operator's cases (cases/<op>_cases.cpp): its table, then its refusals.
std::vector<Case> ApplyFusedEmaAdamCases();
std::vector<Case> ApplyFusedEmaAdamListCases();
std::vector<Case> ApplyFusedEmaAdam8bitListCases();

}  // namespace cann_host

#endif  // CANN_HOST_CASE_H
