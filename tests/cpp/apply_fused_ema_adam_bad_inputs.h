/**
 * @file apply_fused_ema_adam_bad_inputs.h
 * @brief The bad-input table of ApplyFusedEmaAdam, shared by the two layers that validate a call:
 *
 *   tests/cpp/aclnn/test_aclnn_apply_fused_ema_adam.cpp   the CPU aclnn layer (phase 1), every row
 *   tests/cpp/op_host/test_apply_fused_ema_adam_check.cpp the shared validation the CANN tiling
 *                                                         adapter runs on the NPU path
 *
 * A row describes its call as data (CallSpec: dtypes, shapes, step value, attributes: what the
 * shared validation sees) plus, as a list of AclnnBreak, what only the aclnn layer can see
 * (nulls, destroyed handles, null data addresses, formats, memory layout). Its verdicts are
 * explicit: the aclnn layer's status and message, and the shared validation's (Shared::kAlike,
 * kAclnnOnly, kStepValueOnly: only where the step's value is readable on the host, or kOther).
 */
#ifndef ASCEND_EMA_ADAM_TEST_APPLY_FUSED_EMA_ADAM_BAD_INPUTS_H
#define ASCEND_EMA_ADAM_TEST_APPLY_FUSED_EMA_ADAM_BAD_INPUTS_H

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "acl/acl_base.h"
#include "aclnn/acl_meta.h"
#include "aclnn/opdev/op_errno.h"
#include "ema_adam_bad_inputs.h"  // Hyper, Shared

namespace aea_test {

constexpr int kGrad = 0, kVar = 1, kM = 2, kV = 3, kS = 4, kStep = 5, kTensors = 6;
inline const char* const kNames[kTensors] = {"grad", "varRef", "mRef", "vRef", "sRef", "step"};
inline const std::vector<int64_t> kShape = {2, 4};

/** One call as data; the default is a valid fp32 [2,4] call at step 7. */
struct CallSpec {
    aclDataType dtype[kTensors] = {ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, ACL_INT64};
    std::vector<int64_t> shape[kTensors] = {kShape, kShape, kShape, kShape, kShape, {1}};
    int64_t stepValue = 7;  // element 0 of step, when it is an int64 with elements
    Hyper h;
};

/** What only the aclnn layer sees: each kind is applied by the aclnn test (a switch over all). */
struct AclnnBreak {
    enum Kind {
        kNullTensor,         // tensor `a` is a null pointer
        kNullWorkspaceSize,  // the workspaceSize out-argument is null
        kNullExecutor,       // the executor out-argument is null
        kNullData,           // tensor `a` has elements but a null data address
        kDestroyed,          // tensor `a` is an already destroyed handle
        kFormat,             // tensor `a` carries `format`
        kBroadcast,          // tensor `a` is [2,4] with strides [0,1]
        kRowsOverlap,        // tensor `a` is [2,4] with strides [2,1]
        kSameHandle,         // tensor `a` is tensor `b`'s handle
        kHalfOverlap,        // tensors `a` and `b` share a buffer, 4 elements apart
        kInterleaved,        // tensors `a` and `b` are the even and odd elements of one buffer
        kStepInsideVar,      // step is an int64 view of varRef's data
    };
    Kind kind;
    int a = -1;
    int b = -1;
    aclFormat format = ACL_FORMAT_ND;
};

struct BadInput {
    std::string name;
    std::function<void(CallSpec&)> describe;  // the call's description (may change nothing)
    std::vector<AclnnBreak> aclnnOnly;
    aclnnStatus status;                       // the aclnn layer's verdict: status ...
    std::string message;                      // ... and a substring of its message
    Shared shared;
    std::string sharedMessage;                // for Shared::kOther
};

inline BadInput Alike(std::string name, std::function<void(CallSpec&)> describe,
                      std::string message)
{
    return {std::move(name), std::move(describe), {}, ACLNN_ERR_PARAM_INVALID,
            std::move(message), Shared::kAlike, ""};
}

inline BadInput AclnnOnly(std::string name, std::vector<AclnnBreak> breaks, aclnnStatus status,
                          std::string message)
{
    return {std::move(name), [](CallSpec&) {}, std::move(breaks), status, std::move(message),
            Shared::kAclnnOnly, ""};
}

inline BadInput StepValue(std::string name, int64_t step)
{
    return {std::move(name), [step](CallSpec& c) { c.stepValue = step; }, {},
            ACLNN_ERR_PARAM_INVALID,
            "step is " + std::to_string(step) +
                ", expected step >= 1 when biasCorrection is true",
            Shared::kStepValueOnly, ""};
}

inline std::vector<BadInput> BadInputs()
{
    const double inf = INFINITY;
    const double nan = NAN;
    using B = AclnnBreak;
    std::vector<BadInput> rows;
    // nulls and handles
    for (int i = 0; i < kTensors; ++i) {
        rows.push_back(AclnnOnly(std::string("null ") + kNames[i], {{B::kNullTensor, i}},
                                 ACLNN_ERR_PARAM_NULLPTR, std::string(kNames[i]) + " is null"));
    }
    rows.push_back(AclnnOnly("null workspaceSize", {{B::kNullWorkspaceSize}},
                             ACLNN_ERR_PARAM_NULLPTR, "workspaceSize is null"));
    rows.push_back(AclnnOnly("null executor", {{B::kNullExecutor}}, ACLNN_ERR_PARAM_NULLPTR,
                             "executor is null"));
    rows.push_back(AclnnOnly("null data address", {{B::kNullData, kM}}, ACLNN_ERR_PARAM_NULLPTR,
                             "mRef has 8 elements but a null data address"));
    rows.push_back(AclnnOnly("destroyed tensor", {{B::kDestroyed, kV}}, ACLNN_ERR_PARAM_INVALID,
                             "vRef is not a live aclTensor"));
    // dtypes
    rows.push_back(Alike("grad fp64", [](CallSpec& c) { c.dtype[kGrad] = ACL_DOUBLE; },
                         "grad has dtype ACL_DOUBLE (11), expected ACL_FLOAT, ACL_FLOAT16 or "
                         "ACL_BF16"));
    rows.push_back(Alike("grad int32", [](CallSpec& c) { c.dtype[kGrad] = ACL_INT32; },
                         "grad has dtype ACL_INT32 (3)"));
    for (int i = kVar; i <= kS; ++i) {
        rows.push_back(Alike(std::string(kNames[i]) + " fp16, grad fp32",
                             [i](CallSpec& c) { c.dtype[i] = ACL_FLOAT16; },
                             std::string(kNames[i]) +
                                 " has dtype ACL_FLOAT16 (1) but grad has ACL_FLOAT (0)"));
    }
    rows.push_back(Alike("varRef bf16, all others fp16",
                         [](CallSpec& c) {
                             for (int i : {kGrad, kM, kV, kS}) c.dtype[i] = ACL_FLOAT16;
                             c.dtype[kVar] = ACL_BF16;
                         },
                         "varRef has dtype ACL_BF16 (27) but grad has ACL_FLOAT16 (1)"));
    rows.push_back(Alike("step fp32", [](CallSpec& c) { c.dtype[kStep] = ACL_FLOAT; },
                         "step has dtype ACL_FLOAT (0), expected ACL_INT64"));
    rows.push_back(Alike("step int32", [](CallSpec& c) { c.dtype[kStep] = ACL_INT32; },
                         "step has dtype ACL_INT32 (3), expected ACL_INT64"));
    // shapes and step
    for (int i = kVar; i <= kS; ++i) {
        rows.push_back(Alike(std::string(kNames[i]) + " [4,2], grad [2,4]",
                             [i](CallSpec& c) { c.shape[i] = {4, 2}; },
                             std::string(kNames[i]) + " has shape [4,2] but grad has shape [2,4]"));
    }
    rows.push_back(Alike("varRef [8], grad [2,4]", [](CallSpec& c) { c.shape[kVar] = {8}; },
                         "varRef has shape [8] but grad has shape [2,4]"));
    rows.push_back(Alike("step [2,2] (the reference sample's step)",
                         [](CallSpec& c) { c.shape[kStep] = {2, 2}; },
                         "step has shape [2,2] (4 elements), expected exactly one element"));
    rows.push_back(Alike("step [0]", [](CallSpec& c) { c.shape[kStep] = {0}; },
                         "step has shape [0] (0 elements)"));
    // attributes
    rows.push_back(Alike("mode 2", [](CallSpec& c) { c.h.mode = 2; },
                         "mode is 2, expected 0 (Adam, L2 weight decay) or 1 (AdamW"));
    rows.push_back(Alike("mode -1", [](CallSpec& c) { c.h.mode = -1; }, "mode is -1"));
    const struct {
        const char* name;
        double Hyper::*field;
    } floats[] = {{"lr", &Hyper::lr},       {"emaDecay", &Hyper::emaDecay},
                  {"beta1", &Hyper::beta1}, {"beta2", &Hyper::beta2},
                  {"eps", &Hyper::eps},     {"weightDecay", &Hyper::weightDecay}};
    for (const auto& f : floats) {
        for (double bad : {inf, -inf, nan}) {
            const std::string shown = std::isnan(bad) ? "nan" : bad > 0 ? "inf" : "-inf";
            rows.push_back(Alike(std::string(f.name) + " " + shown,
                                 [f, bad](CallSpec& c) { c.h.*(f.field) = bad; },
                                 std::string(f.name) + " is " + shown + ", expected a finite value"));
        }
    }
    rows.push_back(Alike("lr 1e300 (overflows fp32)", [](CallSpec& c) { c.h.lr = 1e300; },
                         "lr is 1e+300, expected a finite value (it overflows fp32"));
    rows.push_back(Alike("weightDecay -1e39 (overflows fp32)",
                         [](CallSpec& c) { c.h.weightDecay = -1e39; },
                         "weightDecay is -1e+39, expected a finite value"));
    rows.push_back(Alike("beta1 1", [](CallSpec& c) { c.h.beta1 = 1.0; },
                         "beta1 is 1 (1 in fp32), expected 0 <= beta1 < 1"));
    rows.push_back(Alike("beta1 -0.1", [](CallSpec& c) { c.h.beta1 = -0.1; }, "beta1 is -0.1"));
    rows.push_back(Alike("beta1 0.9999999999 (1 in fp32)",
                         [](CallSpec& c) { c.h.beta1 = 0.9999999999; },
                         "beta1 is 0.9999999999 (1 in fp32), expected 0 <= beta1 < 1"));
    rows.push_back(Alike("beta2 1.5", [](CallSpec& c) { c.h.beta2 = 1.5; },
                         "beta2 is 1.5 (1.5 in fp32), expected 0 <= beta2 < 1"));
    rows.push_back(Alike("beta2 -1e-3", [](CallSpec& c) { c.h.beta2 = -1e-3; },
                         "expected 0 <= beta2 < 1"));
    rows.push_back(Alike("emaDecay 1.01", [](CallSpec& c) { c.h.emaDecay = 1.01; },
                         "emaDecay is 1.01 (1.01 in fp32), expected 0 <= emaDecay <= 1"));
    rows.push_back(Alike("emaDecay -0.5", [](CallSpec& c) { c.h.emaDecay = -0.5; },
                         "expected 0 <= emaDecay <= 1"));
    rows.push_back(Alike("eps -1e-8", [](CallSpec& c) { c.h.eps = -1e-8; },
                         "eps is -1e-08 (-1e-08 in fp32), expected eps >= 0"));
    // formats (on the NPU path CANN's generated aclnn layer matches them against the OpDef)
    for (int i = 0; i < kTensors; ++i) {
        rows.push_back(AclnnOnly(std::string(kNames[i]) + " NC1HWC0",
                                 {{B::kFormat, i, -1, ACL_FORMAT_NC1HWC0}}, ACLNN_ERR_PARAM_INVALID,
                                 std::string(kNames[i]) +
                                     " has format ACL_FORMAT_NC1HWC0 (3), expected ACL_FORMAT_ND"));
    }
    rows.push_back(AclnnOnly("grad FRACTAL_NZ", {{B::kFormat, kGrad, -1, ACL_FORMAT_FRACTAL_NZ}},
                             ACLNN_ERR_PARAM_INVALID, "grad has format ACL_FORMAT_FRACTAL_NZ (29)"));
    rows.push_back(AclnnOnly("sRef NHWC", {{B::kFormat, kS, -1, ACL_FORMAT_NHWC}},
                             ACLNN_ERR_PARAM_INVALID, "sRef has format ACL_FORMAT_NHWC (1)"));
    // memory layout of the updated tensors
    rows.push_back(AclnnOnly("varRef broadcast (stride 0)", {{B::kBroadcast, kVar}},
                             ACLNN_ERR_PARAM_INVALID,
                             "varRef (shape [2,4], stride [0,1]) addresses some elements more than "
                             "once"));
    rows.push_back(AclnnOnly("sRef rows overlap (stride 2 < 4)", {{B::kRowsOverlap, kS}},
                             ACLNN_ERR_PARAM_INVALID,
                             "sRef (shape [2,4], stride [2,1]) addresses some elements"));
    rows.push_back(AclnnOnly("vRef is mRef", {{B::kSameHandle, kV, kM}}, ACLNN_ERR_PARAM_INVALID,
                             "mRef and vRef overlap in memory"));
    rows.push_back(AclnnOnly("mRef and vRef half overlap", {{B::kHalfOverlap, kM, kV}},
                             ACLNN_ERR_PARAM_INVALID, "mRef and vRef overlap in memory"));
    rows.push_back(AclnnOnly("varRef and mRef interleaved (conservatively refused)",
                             {{B::kInterleaved, kVar, kM}}, ACLNN_ERR_PARAM_INVALID,
                             "varRef and mRef overlap in memory"));
    rows.push_back(AclnnOnly("grad is sRef", {{B::kSameHandle, kGrad, kS}}, ACLNN_ERR_PARAM_INVALID,
                             "sRef and grad overlap in memory"));
    rows.push_back(AclnnOnly("step inside varRef", {{B::kStepInsideVar}}, ACLNN_ERR_PARAM_INVALID,
                             "varRef and step overlap in memory"));
    // step's value, with bias correction (without it any value is valid: see the other cases)
    rows.push_back(StepValue("step 0", 0));
    rows.push_back(StepValue("step -7", -7));
    rows.push_back(StepValue("step INT64_MIN", std::numeric_limits<int64_t>::min()));
    // the fixed order: nulls, dtypes, shapes/step, attributes, formats, memory, step value
    rows.push_back({"order: null before dtype", [](CallSpec& c) { c.dtype[kM] = ACL_FLOAT16; },
                    {{B::kNullTensor, kS}}, ACLNN_ERR_PARAM_NULLPTR, "sRef is null", Shared::kOther,
                    "mRef has dtype ACL_FLOAT16 (1) but grad has ACL_FLOAT (0)"});
    rows.push_back(Alike("order: dtype before shape",
                         [](CallSpec& c) {
                             c.shape[kV] = {8};
                             c.dtype[kStep] = ACL_FLOAT;
                         },
                         "step has dtype ACL_FLOAT (0)"));
    rows.push_back(Alike("order: shape before attribute",
                         [](CallSpec& c) {
                             c.shape[kV] = {8};
                             c.h.mode = 3;
                         },
                         "vRef has shape [8]"));
    rows.push_back({"order: attribute before format", [](CallSpec& c) { c.h.eps = -1.0; },
                    {{B::kFormat, kGrad, -1, ACL_FORMAT_NC1HWC0}}, ACLNN_ERR_PARAM_INVALID,
                    "eps is -1", Shared::kAlike, ""});
    rows.push_back(AclnnOnly("order: format before memory",
                             {{B::kFormat, kGrad, -1, ACL_FORMAT_NC1HWC0}, {B::kSameHandle, kV, kM}},
                             ACLNN_ERR_PARAM_INVALID, "grad has format"));
    rows.push_back({"order: memory before step value", [](CallSpec& c) { c.stepValue = 0; },
                    {{B::kSameHandle, kV, kM}}, ACLNN_ERR_PARAM_INVALID,
                    "mRef and vRef overlap in memory", Shared::kStepValueOnly, ""});
    return rows;
}

}  // namespace aea_test

#endif  // ASCEND_EMA_ADAM_TEST_APPLY_FUSED_EMA_ADAM_BAD_INPUTS_H
