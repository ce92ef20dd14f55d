/**
 * @file fuzz_apply_fused_ema_adam.cpp
 * @brief libFuzzer target: aclnnApplyFusedEmaAdam and aclnnAeaApplyFusedEmaAdam (the same
 *        operator under CANN's and the package's op type), both phases and every executor use
 *        (tests/fuzz/fuzz_harness.h has the oracle).
 */
#include "aclnnop/aclnn_aea_apply_fused_ema_adam.h"
#include "aclnnop/aclnn_apply_fused_ema_adam.h"
#include "fuzz_harness.h"

using namespace aea_fuzz;

namespace {

enum Single { kGrad, kVar, kM, kV, kS, kStep, kSingles };
constexpr const char* kNames[kSingles] = {"grad", "varRef", "mRef", "vRef", "sRef", "step"};
constexpr aclDataType kFloats[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
constexpr aclDataType kOthers[] = {ACL_DOUBLE, ACL_INT32, ACL_UINT8, ACL_INT64, ACL_INT8};

template <auto Phase1>
aclnnStatus RunPhase1(const Handles& h, const Attrs& a, uint64_t* size, aclOpExecutor** executor)
{
    const auto& t = h.singles;
    return Phase1(t[kGrad], t[kVar], t[kM], t[kV], t[kS], t[kStep], a.lr, a.emaDecay, a.beta1,
                  a.beta2, a.eps, a.mode, a.biasCorrection, a.weightDecay, size, executor);
}

aclnnStatus MoveGrad(aclOpExecutor* executor, const Handles& h, size_t, void* addr)
{
    return aclSetInputTensorAddr(executor, 0, h.singles[kGrad], addr);
}

const Operator kOperators[] = {
    {{"aclnnApplyFusedEmaAdamGetWorkspaceSize", "aclnnApplyFusedEmaAdam", aclnnApplyFusedEmaAdam},
     RunPhase1<aclnnApplyFusedEmaAdamGetWorkspaceSize>,
     false,
     MoveGrad},
    {{"aclnnAeaApplyFusedEmaAdamGetWorkspaceSize", "aclnnAeaApplyFusedEmaAdam",
      aclnnAeaApplyFusedEmaAdam},
     RunPhase1<aclnnAeaApplyFusedEmaAdamGetWorkspaceSize>,
     false,
     MoveGrad},
};

Role RoleOf(int k)
{
    static constexpr Role kRoles[kSingles] = {Role::kGrad,         Role::kParam, Role::kMoment,
                                              Role::kSecondMoment, Role::kParam, Role::kScalar};
    return kRoles[k];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    FuzzedDataProvider in(data, size);
    Stream();
    const ExecutorPlan plan = ExecutorPlan::Draw(in);
    const Operator& op = kOperators[in.ConsumeBool() ? 1 : 0];
    Values values(in.ConsumeIntegral<uint64_t>(), in.ConsumeBool());
    const aclDataType dtype = kFloats[in.ConsumeIntegralInRange<size_t>(0, 2)];
    const std::vector<int64_t> shape = DrawShape(in);
    Call call;
    Args args;
    Expect expect;
    for (int k = 0; k < kStep; ++k) {
        args.singles.push_back(call.Make(in, values, dtype, shape, RoleOf(k), k != kGrad));
    }
    args.singles.push_back(call.Make(in, values, ACL_INT64, {1}, Role::kScalar, false));
    Attrs attrs = DrawAttrs(in);

    const int mutations =
        in.ConsumeIntegralInRange<int>(0, 3) >= 2 ? in.ConsumeIntegralInRange<int>(1, 3) : 0;
    for (int n = 0; n < mutations; ++n) {
        const int k = in.ConsumeIntegralInRange<int>(0, kSingles - 1);
        Tensor*& t = args.singles[k];
        if (t == nullptr) continue;
        switch (in.ConsumeIntegralInRange<int>(0, 9)) {
            case 0:
                t = nullptr;
                expect.Null(std::string(kNames[k]) + " null");
                break;
            case 1:
                t->nullData = true;  // (Drive judges it: a later mutation may replace t)
                break;
            case 2: {  // another dtype: for var/m/v/s a float one (not grad's), else none of them
                const bool other = k == kStep || k == kGrad || in.ConsumeBool();
                const aclDataType d = other ? kOthers[in.ConsumeIntegralInRange<size_t>(0, 4)]
                                            : kFloats[in.ConsumeIntegralInRange<size_t>(0, 2)];
                if (d == t->dtype) break;
                t = call.Make(in, values, d, t->sizes, RoleOf(k), t->updated);
                break;  // (judged below: a second change may restore the drawn dtype)
            }
            case 3: {  // another shape
                std::vector<int64_t> s =
                    k == kStep ? std::vector<int64_t>{in.ConsumeIntegralInRange<int64_t>(0, 3)}
                               : DrawShape(in);
                if (in.ConsumeBool()) s.insert(s.begin(), 1);  // rank differs, elements the same
                const bool differs = k == kStep ? t->Numel() != 1 || s != t->sizes : s != shape;
                t = call.Make(in, values, t->dtype, s, RoleOf(k), t->updated);
                if (k == kStep ? t->Numel() != 1 : differs)
                    expect.Invalid(std::string(kNames[k]) + " of another shape");
                break;
            }
            case 4:
                t->format = DrawFormat(in);
                break;
            case 5:
                ZeroStride(in, t);
                break;  // the model judges it
            case 6:
                call.Alias(in, t, args.All());
                break;  // in another tensor's storage: the model judges it
            case 7:
                args.nullWorkspaceSize = true;
                break;
            case 8:
                args.nullExecutor = true;
                break;
            default: {  // a step of any value
                const Tensor* s = args.singles[kStep];
                if (s != nullptr && s->dtype == ACL_INT64 && s->Numel() == 1) {
                    const int64_t v = in.ConsumeIntegral<int64_t>();
                    std::memcpy(s->base + s->offset * 8, &v, 8);
                }
            }
        }
    }
    for (int k = 0; k < kSingles; ++k) {
        const Tensor* t = args.singles[k];
        if (t != nullptr && t->dtype != (k == kStep ? ACL_INT64 : dtype))
            expect.Invalid(std::string(kNames[k]) + " of another dtype");
    }
    ExpectStepValue(args.singles[kStep], attrs.biasCorrection, &expect);
    Drive(plan, op, call, args, attrs, expect, values);
    return 0;
}
