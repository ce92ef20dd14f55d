/**
 * @file fuzz_apply_fused_ema_adam8bit_list.cpp
 * @brief libFuzzer target: aclnnApplyFusedEmaAdam8bitList, both phases and every executor use
 *        (tests/fuzz/fuzz_harness.h has the oracle). The calls are drawn from the operator's
 *        dtype rows (APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS), 0 to 300 entries, the EMA and model
 *        copies absent as empty lists or placeholders, maps sorted (ties too) or broken.
 */
#include <cmath>

#include "aclnnop/aclnn_apply_fused_ema_adam8bit_list.h"
#include "apply_fused_ema_adam8bit_list_dtypes.h"
#include "apply_fused_ema_adam8bit_list_tiling_key.h"
#include "data_type.h"
#include "fuzz_harness.h"

using namespace aea_fuzz;
namespace aea = ascend_ema_adam;
namespace op8 = ascend_ema_adam::apply_fused_ema_adam8bit_list;

namespace {

enum List { kGrads, kVars, kMs, kVs, kMAbs, kVAbs, kSs, kCopies, kLists };
enum Single { kQmapM, kQmapV, kStep, kScale, kFound, kLr, kDecay, kSingles };
constexpr const char* kListNames[kLists] = {"grads", "varsRef",       "msRef",
                                            "vsRef", "mAbsmaxesRef",  "vAbsmaxesRef",
                                            "ssRef", "modelCopiesRef"};
constexpr Role kRoles[kLists] = {Role::kGrad,   Role::kParam,  Role::kCode,  Role::kCode,
                                 Role::kAbsmax, Role::kAbsmax, Role::kParam, Role::kCopy};
constexpr int64_t kBlock = 256;

/** The contract's rows: parameters, gradients, copies (-1: none). */
struct Row {
    aclDataType param, grad;
    int copy;
};
const Row kRows[] = {
#define AEA_ROW(key, P, G, C)                                                             \
    {static_cast<aclDataType>(aea::CannCodeOf(op8::kApplyFusedEmaAdam8bitListDtype_##P)), \
     static_cast<aclDataType>(aea::CannCodeOf(op8::kApplyFusedEmaAdam8bitListDtype_##G)), \
     op8::kApplyFusedEmaAdam8bitListHasCopy_##C                                           \
         ? aea::CannCodeOf(op8::kApplyFusedEmaAdam8bitListDtype_##C)                      \
         : -1},
    APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ROW)
#undef AEA_ROW
};

std::vector<int64_t> ScalesShape(const std::vector<int64_t>& entry)
{
    int64_t n = 1;
    for (int64_t s : entry) n *= s;
    return {(n + kBlock - 1) / kBlock};
}

aclnnStatus Phase1(const Handles& h, const Attrs& a, uint64_t* size, aclOpExecutor** executor)
{
    const auto& l = h.lists;
    const auto& s = h.singles;
    return aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize(
        l[kGrads], l[kVars], l[kMs], l[kVs], l[kMAbs], l[kVAbs], l[kSs], l[kCopies], s[kQmapM],
        s[kQmapV], s[kStep], s[kScale], s[kFound], s[kLr], s[kDecay], a.lr, a.emaDecay, a.beta1,
        a.beta2, a.eps, a.mode, a.biasCorrection, a.weightDecay, a.maximize, size, executor);
}

aclnnStatus MoveGrad(aclOpExecutor* executor, const Handles& h, size_t entry, void* addr)
{
    return aclSetDynamicInputTensorAddr(executor, 0, entry, h.lists[kGrads], addr);
}

const Operator k8bit = {{"aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize",
                         "aclnnApplyFusedEmaAdam8bitList", aclnnApplyFusedEmaAdam8bitList},
                        Phase1,
                        true,
                        MoveGrad};

/** A map: 256 sorted values from -1 (signed) or 0 to 1, distinct. */
void FillMap(Tensor* map, bool isSigned, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::vector<float> v;
    while (v.size() < 256) {
        v.clear();
        v.push_back(isSigned ? -1.0F : 0.0F);
        v.push_back(1.0F);
        for (int k = 0; k < 254; ++k) {
            v.push_back(std::uniform_real_distribution<float>(isSigned ? -1.0F : 0.0F, 1.0F)(rng));
        }
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    const std::vector<size_t> at = map->ElementOffsets();
    for (size_t k = 0; k < 256; ++k) std::memcpy(map->base + at[k], &v[k], 4);
}

/** The map rule: fp32 [256] (ExpectShape's part), finite, within [-1, 1], non-decreasing. */
void ExpectMap(const Tensor* map, const char* name, Expect* expect)
{
    if (map == nullptr) return;
    if (map->dtype != ACL_FLOAT || map->sizes != std::vector<int64_t>{256}) {
        expect->Invalid(std::string(name) + " not fp32 [256]");
        return;
    }
    if (map->nullData) return;
    const std::vector<size_t> at = map->ElementOffsets();
    float previous = -INFINITY;
    for (size_t k = 0; k < at.size(); ++k) {
        float x = 0;
        std::memcpy(&x, map->base + at[k], 4);
        if (!std::isfinite(x) || x < -1 || x > 1 || x < previous) {
            expect->Invalid(std::string(name) + " unsorted or outside [-1, 1]");
            return;
        }
        previous = x;
    }
}

/** The model's list rules over the final arguments (null lists and entries skipped). */
void ExpectListRules(const Args& args, const Row& row, Expect* expect)
{
    const auto& l = args.lists;
    const size_t n = l[kGrads].size();
    for (int k = 0; k < kLists; ++k) {
        if (args.nullLists[k]) return;
        if (l[k].size() > 256) expect->Invalid(std::string(kListNames[k]) + " longer than 256");
    }
    const bool noEma = IsAbsent(l[kSs], ACL_FLOAT);
    const bool noCopies = IsAbsent(l[kCopies], row.param);
    const bool used[kLists] = {true, true, true, true, true, true, !noEma, !noCopies};
    for (int k = 1; k < kLists; ++k) {
        if (used[k] && l[k].size() != n)
            expect->Invalid(std::string(kListNames[k]) + " of another length");
    }
    int d[kLists];
    for (int k = 0; k < kLists; ++k) {
        d[k] = used[k] ? ListDtype(l[k]) : -2;
        if (d[k] == -1) expect->Invalid(std::string(kListNames[k]) + " of two dtypes");
    }
    if (n > 0 && !expect->Refused()) {
        bool found = false;
        for (const Row& r : kRows) {
            found |= r.param == d[kVars] && r.grad == d[kGrads] &&
                     r.copy == (used[kCopies] ? d[kCopies] : -1);
        }
        const bool state = d[kMs] == ACL_UINT8 && d[kVs] == ACL_UINT8 && d[kMAbs] == ACL_FLOAT &&
                           d[kVAbs] == ACL_FLOAT && (!used[kSs] || d[kSs] == ACL_FLOAT);
        if (!found || !state) expect->Invalid("a dtype combination outside the contract");
    }
    for (size_t i = 0; i < n; ++i) {
        const Tensor* g = l[kGrads][i];
        if (g == nullptr) continue;
        if (g->sizes.size() > 8) expect->Invalid("more than 8 dimensions");
        for (int k = 1; k < kLists; ++k) {
            if (!used[k] || i >= l[k].size() || l[k][i] == nullptr) continue;
            const bool scales = k == kMAbs || k == kVAbs;
            if (l[k][i]->sizes != (scales ? ScalesShape(g->sizes) : g->sizes)) {
                expect->Invalid(std::string(kListNames[k]) + " entry of another shape");
            }
        }
    }
}

/** A map entry tied with its neighbour (valid), swapped with it, NaN or beyond 1. */
void MutateMap(FuzzedDataProvider& in, Args& args)
{
    Tensor* map = args.singles[in.ConsumeBool() ? kQmapM : kQmapV];
    if (map == nullptr || map->dtype != ACL_FLOAT || map->Numel() != 256) return;
    const std::vector<size_t> at = map->ElementOffsets();
    const size_t j = in.ConsumeIntegralInRange<size_t>(0, 254);
    float a = 0, b = 0;
    std::memcpy(&a, map->base + at[j], 4);
    std::memcpy(&b, map->base + at[j + 1], 4);
    const float choices[] = {b, b, a, std::nanf(""), 1.5F};
    const float x = choices[in.ConsumeIntegralInRange<int>(0, 4)];
    std::memcpy(map->base + at[j], &x, 4);
    if (x == a) {  // swapped
        std::memcpy(map->base + at[j], &b, 4);
        std::memcpy(map->base + at[j + 1], &a, 4);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    FuzzedDataProvider in(data, size);
    Stream();
    const ExecutorPlan plan = ExecutorPlan::Draw(in);
    Values values(in.ConsumeIntegral<uint64_t>(), in.ConsumeBool());
    const Row row = kRows[in.ConsumeIntegralInRange<size_t>(0, std::size(kRows) - 1)];
    const aclDataType dtypes[kLists] = {
        row.grad,  row.param,
        ACL_UINT8, ACL_UINT8,
        ACL_FLOAT, ACL_FLOAT,
        ACL_FLOAT, row.copy >= 0 ? static_cast<aclDataType>(row.copy) : ACL_FLOAT16};
    size_t n = in.ConsumeIntegralInRange<size_t>(0, 5);
    if (in.ConsumeIntegralInRange<int>(0, 15) == 15)
        n = in.ConsumeIntegralInRange<size_t>(200, 300);
    const int64_t maxNumel = n > 8 ? 16 : 700;
    const bool ema = in.ConsumeBool();

    Call call;
    Args args;
    Expect expect;
    args.lists.resize(kLists);
    args.nullLists.assign(kLists, false);
    std::vector<std::vector<int64_t>> shapes;
    for (size_t i = 0; i < n; ++i) shapes.push_back(DrawShape(in, maxNumel));
    for (int k = 0; k < kLists; ++k) {
        if ((k == kSs && !ema) || (k == kCopies && row.copy < 0)) {
            args.lists[k] = AbsentList(in, call, values, n, k == kSs ? ACL_FLOAT : row.param);
            continue;
        }
        for (size_t i = 0; i < n; ++i) {
            const std::vector<int64_t> shape =
                k == kMAbs || k == kVAbs ? ScalesShape(shapes[i]) : shapes[i];
            args.lists[k].push_back(
                call.Make(in, values, dtypes[k], shape, kRoles[k], k != kGrads));
        }
    }
    args.singles.assign(kSingles, nullptr);
    for (int k : {kQmapM, kQmapV}) {
        args.singles[k] = call.Make(in, values, ACL_FLOAT, {256}, Role::kScalar, false);
        FillMap(args.singles[k], k == kQmapM, in.ConsumeIntegral<uint64_t>());
    }
    args.singles[kStep] = call.Make(in, values, ACL_INT64, {1}, Role::kScalar, false);
    if (in.ConsumeBool())
        args.singles[kScale] =
            ScalarTensor(in, call, values, ACL_FLOAT, DrawScalarValue(in, 1024.0F));
    if (in.ConsumeBool()) {
        args.singles[kFound] = ScalarTensor(
            in, call, values, ACL_FLOAT,
            in.ConsumeIntegralInRange<int>(0, 3) == 3 ? DrawScalarValue(in, 1.0F) : 0.0F);
    }
    if (in.ConsumeBool())
        args.singles[kLr] = ScalarTensor(in, call, values, ACL_FLOAT, DrawScalarValue(in, 1e-3F));
    if (in.ConsumeBool())
        args.singles[kDecay] =
            ScalarTensor(in, call, values, ACL_FLOAT, DrawScalarValue(in, 0.99F));
    const Attrs attrs = DrawAttrs(in);

    const ListLayout layout{kListNames,
                            kRoles,
                            dtypes,
                            kLists,
                            kGrads,
                            n,
                            /*maxEntryNumel=*/600,
                            /*maxSingleNumel=*/300,
                            /*oneElementLists=*/(1U << kMAbs) | (1U << kVAbs),
                            kStep};
    const int mutations =
        in.ConsumeIntegralInRange<int>(0, 3) >= 2 ? in.ConsumeIntegralInRange<int>(1, 3) : 0;
    for (int m = 0; m < mutations; ++m) {
        const int choice = in.ConsumeIntegralInRange<int>(0, kListMutations);
        if (choice < kListMutations)
            MutateList(in, call, values, args, layout, choice, &expect);
        else
            MutateMap(in, args);
    }
    ExpectListRules(args, row, &expect);
    ExpectMap(args.singles[kQmapM], "qmapM", &expect);
    ExpectMap(args.singles[kQmapV], "qmapV", &expect);
    ExpectScalar(args.singles[kStep], ACL_INT64, "step", &expect);
    for (int s = kScale; s < kSingles; ++s)
        ExpectScalar(args.singles[s], ACL_FLOAT, "a scalar tensor", &expect);
    ExpectStepValue(args.singles[kStep], attrs.biasCorrection, &expect);
    Drive(plan, k8bit, call, args, attrs, expect, values);
    return 0;
}
