/**
 * @file fuzz_apply_fused_ema_adam_list.cpp
 * @brief libFuzzer target: aclnnApplyFusedEmaAdamList (V1) and ...ListV2, both phases and every
 *        executor use (tests/fuzz/fuzz_harness.h has the oracle). The calls are drawn from the
 *        operator's dtype combinations (ApplyFusedEmaAdamListDtypeCombinations), 0 to 300
 *        entries, absent lists empty or as placeholders, the optional tensors given or NULL.
 */
#include "aclnnop/aclnn_apply_fused_ema_adam_list.h"
#include "aclnnop/aclnn_apply_fused_ema_adam_list_v2.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "data_type.h"
#include "fuzz_harness.h"

using namespace aea_fuzz;
namespace aea = ascend_ema_adam;
namespace op = ascend_ema_adam::apply_fused_ema_adam_list;

namespace {

enum List { kGrads, kVars, kMs, kVs, kSs, kMaxVs, kCopies, kLists };
enum Single { kStep, kScale, kFound, kLr, kDecay, kSingles };
constexpr const char* kListNames[kLists] = {"grads", "varsRef",  "msRef",         "vsRef",
                                            "ssRef", "maxVsRef", "modelCopiesRef"};
constexpr Role kRoles[kLists] = {Role::kGrad,         Role::kParam, Role::kMoment,
                                 Role::kSecondMoment, Role::kParam, Role::kSecondMoment,
                                 Role::kCopy};

aclDataType Acl(aea::DataType d) { return static_cast<aclDataType>(aea::CannCodeOf(d)); }

aclnnStatus PhaseV1(const Handles& h, const Attrs& a, uint64_t* size, aclOpExecutor** executor)
{
    const auto& l = h.lists;
    const auto& s = h.singles;
    return aclnnApplyFusedEmaAdamListGetWorkspaceSize(
        l[kGrads], l[kVars], l[kMs], l[kVs], l[kSs], l[kMaxVs], l[kCopies], s[kStep], s[kScale],
        s[kFound], a.lr, a.emaDecay, a.beta1, a.beta2, a.eps, a.mode, a.biasCorrection,
        a.weightDecay, a.maximize, size, executor);
}

aclnnStatus PhaseV2(const Handles& h, const Attrs& a, uint64_t* size, aclOpExecutor** executor)
{
    const auto& l = h.lists;
    const auto& s = h.singles;
    return aclnnApplyFusedEmaAdamListV2GetWorkspaceSize(
        l[kGrads], l[kVars], l[kMs], l[kVs], l[kSs], l[kMaxVs], l[kCopies], s[kStep], s[kScale],
        s[kFound], s[kLr], s[kDecay], a.lr, a.emaDecay, a.beta1, a.beta2, a.eps, a.mode,
        a.biasCorrection, a.weightDecay, a.maximize, size, executor);
}

aclnnStatus MoveGrad(aclOpExecutor* executor, const Handles& h, size_t entry, void* addr)
{
    return aclSetDynamicInputTensorAddr(executor, 0, entry, h.lists[kGrads], addr);
}

const Operator kV1 = {{"aclnnApplyFusedEmaAdamListGetWorkspaceSize", "aclnnApplyFusedEmaAdamList",
                       aclnnApplyFusedEmaAdamList},
                      PhaseV1,
                      true,
                      MoveGrad};
const Operator kV2 = {{"aclnnApplyFusedEmaAdamListV2GetWorkspaceSize",
                       "aclnnApplyFusedEmaAdamListV2", aclnnApplyFusedEmaAdamListV2},
                      PhaseV2,
                      true,
                      MoveGrad};

/** The model's list rules over the final arguments (null lists and entries skipped: their
 *  refusal is expected already): lengths, one dtype per list, the dtype combination, shapes. */
void ExpectListRules(const Args& args, bool v2, const op::ApplyFusedEmaAdamListDtypes& row,
                     Expect* expect)
{
    const auto& l = args.lists;
    const size_t n = l[kGrads].size();
    for (int k = 0; k < kLists; ++k) {
        if (args.nullLists[k]) return;
        if (l[k].size() > 256) expect->Invalid(std::string(kListNames[k]) + " longer than 256");
    }
    // absent optional lists (the placeholders' dtypes are the drawn row's)
    const bool noMaxVs = IsAbsent(l[kMaxVs], Acl(row.state));
    const bool noCopies = IsAbsent(l[kCopies], Acl(row.param));
    const bool noEma = v2 && IsAbsent(l[kSs], Acl(row.state));
    const bool used[kLists] = {true, true, true, true, !noEma, !noMaxVs, !noCopies};
    for (int k = 1; k < kLists; ++k) {
        if (used[k] && l[k].size() != n)
            expect->Invalid(std::string(kListNames[k]) + " of another length");
    }
    int dtypes[kLists];
    for (int k = 0; k < kLists; ++k) {
        dtypes[k] = used[k] ? ListDtype(l[k]) : -2;
        if (dtypes[k] == -1) expect->Invalid(std::string(kListNames[k]) + " of two dtypes");
    }
    if (n > 0 && !expect->Refused()) {
        const int s = dtypes[kMs];
        bool valid = dtypes[kVs] == s && (!used[kSs] || dtypes[kSs] == s) &&
                     (!used[kMaxVs] || dtypes[kMaxVs] == s);
        bool found = false;
        for (const op::ApplyFusedEmaAdamListDtypes& c :
             op::ApplyFusedEmaAdamListDtypeCombinations()) {
            found |= Acl(c.param) == dtypes[kVars] && Acl(c.state) == s &&
                     Acl(c.grad) == dtypes[kGrads] && c.hasCopy == used[kCopies] &&
                     (!c.hasCopy || Acl(c.copy) == dtypes[kCopies]);
        }
        if (!valid || !found) expect->Invalid("a dtype combination outside the contract");
    }
    for (size_t i = 0; i < n; ++i) {
        const Tensor* g = l[kGrads][i];
        if (g == nullptr) continue;
        if (g->sizes.size() > 8) expect->Invalid("more than 8 dimensions");
        for (int k = 1; k < kLists; ++k) {
            if (used[k] && i < l[k].size() && l[k][i] != nullptr && l[k][i]->sizes != g->sizes) {
                expect->Invalid(std::string(kListNames[k]) + " entry of another shape");
            }
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    FuzzedDataProvider in(data, size);
    Stream();
    const ExecutorPlan plan = ExecutorPlan::Draw(in);
    const bool v2 = in.ConsumeBool();
    Values values(in.ConsumeIntegral<uint64_t>(), in.ConsumeBool());
    const std::vector<op::ApplyFusedEmaAdamListDtypes> rows =
        op::ApplyFusedEmaAdamListDtypeCombinations();
    const op::ApplyFusedEmaAdamListDtypes row =
        rows[in.ConsumeIntegralInRange<size_t>(0, rows.size() - 1)];
    const aclDataType dtypes[kLists] = {Acl(row.grad),  Acl(row.param), Acl(row.state),
                                        Acl(row.state), Acl(row.state), Acl(row.state),
                                        Acl(row.copy)};
    size_t n = in.ConsumeIntegralInRange<size_t>(0, 6);
    if (in.ConsumeIntegralInRange<int>(0, 15) == 15)
        n = in.ConsumeIntegralInRange<size_t>(200, 300);
    const int64_t maxNumel = n > 8 ? 16 : 1200;
    const bool amsgrad = in.ConsumeBool();
    const bool ema = !v2 || in.ConsumeBool();

    Call call;
    Args args;
    Expect expect;
    args.lists.resize(kLists);
    args.nullLists.assign(kLists, false);
    std::vector<std::vector<int64_t>> shapes;
    for (size_t i = 0; i < n; ++i) shapes.push_back(DrawShape(in, maxNumel));
    for (int k = 0; k < kLists; ++k) {
        const bool given =
            (k != kSs || ema) && (k != kMaxVs || amsgrad) && (k != kCopies || row.hasCopy);
        if (!given) {
            args.lists[k] =
                AbsentList(in, call, values, n, k == kCopies ? Acl(row.param) : Acl(row.state));
            continue;
        }
        for (size_t i = 0; i < n; ++i) {
            args.lists[k].push_back(
                call.Make(in, values, dtypes[k], shapes[i], kRoles[k], k != kGrads));
        }
    }
    args.singles.resize(v2 ? kSingles : kLr, nullptr);
    args.singles[kStep] = call.Make(in, values, ACL_INT64, {1}, Role::kScalar, false);
    if (in.ConsumeBool())
        args.singles[kScale] =
            ScalarTensor(in, call, values, ACL_FLOAT, DrawScalarValue(in, 1024.0F));
    if (in.ConsumeBool()) {
        args.singles[kFound] = ScalarTensor(
            in, call, values, ACL_FLOAT,
            in.ConsumeIntegralInRange<int>(0, 3) == 3 ? DrawScalarValue(in, 1.0F) : 0.0F);
    }
    if (v2 && in.ConsumeBool())
        args.singles[kLr] = ScalarTensor(in, call, values, ACL_FLOAT, DrawScalarValue(in, 1e-3F));
    if (v2 && in.ConsumeBool())
        args.singles[kDecay] =
            ScalarTensor(in, call, values, ACL_FLOAT, DrawScalarValue(in, 0.99F));
    const Attrs attrs = DrawAttrs(in);

    const ListLayout layout{kListNames,
                            kRoles,
                            dtypes,
                            kLists,
                            kGrads,
                            n,
                            /*maxEntryNumel=*/64,
                            /*maxSingleNumel=*/4,
                            /*oneElementLists=*/0,
                            kStep};
    const int mutations =
        in.ConsumeIntegralInRange<int>(0, 3) >= 2 ? in.ConsumeIntegralInRange<int>(1, 3) : 0;
    for (int m = 0; m < mutations; ++m) {
        MutateList(in, call, values, args, layout,
                   in.ConsumeIntegralInRange<int>(0, kListMutations - 1), &expect);
    }
    ExpectListRules(args, v2, row, &expect);
    ExpectScalar(args.singles[kStep], ACL_INT64, "step", &expect);
    for (size_t s = kScale; s < args.singles.size(); ++s)
        ExpectScalar(args.singles[s], ACL_FLOAT, "a scalar tensor", &expect);
    ExpectStepValue(args.singles[kStep], attrs.biasCorrection, &expect);
    Drive(plan, v2 ? kV2 : kV1, call, args, attrs, expect, values);
    return 0;
}
