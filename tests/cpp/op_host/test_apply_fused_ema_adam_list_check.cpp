// The validation ApplyFusedEmaAdamList's NPU path runs (op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_check.h:
// the CANN tiling adapter and the torch NPU kernel), held to the CPU aclnn layer's bad-input table
// row by row (the verdicts of tests/cpp/apply_fused_ema_adam_list_bad_inputs.h), plus the dtype
// contract against the tiling's key table and the adapter's 1-D condition.
#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "../apply_fused_ema_adam_list_bad_inputs.h"
#include "../test_harness.h"
#include "apply_fused_ema_adam_list_check.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "data_type.h"
#include "shared_verdicts.h"

using namespace aea_test;
namespace aea = ascend_ema_adam;
namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;

namespace {

/** A spec as the shared check sees it (absent lists: empty, as CANN's tiling adapter passes them;
 *  absent scalars: null). */
struct Described {
    std::vector<list_op::ListEntryArg> entries[kLists];
    std::vector<aea::TensorArg> scalars;
    list_op::ApplyFusedEmaAdamListArgs args;

    explicit Described(const ApplyFusedEmaAdamListCallSpec& c)
    {
        for (int l = 0; l < kLists; ++l) {
            args.lists[l] = &entries[l];
            if (!c.lists[l].present) continue;
            for (size_t i = 0; i < c.lists[l].shape.size(); ++i) {
                entries[l].push_back({c.lists[l].dtype[i], &c.lists[l].shape[i]});
            }
        }
        scalars.reserve(kScalarCount);
        const aea::TensorArg** slots[kScalarCount] = {&args.step, &args.gradScale, &args.foundInf};
        for (int s = 0; s < kScalarCount; ++s) {
            if (!c.scalars[s].present) continue;
            scalars.push_back({kScalarNames[s], c.scalars[s].dtype, c.scalars[s].shape});
            *slots[s] = &scalars.back();
        }
    }
};

struct Verdict {
    aea::Refusal refusal;
    list_op::ApplyFusedEmaAdamListDtypes dtypes{};
    list_op::ApplyFusedEmaAdamListOptions options;
};

/** The attributes of a table row: the EMA-Adam ones and maximize. */
list_op::ApplyFusedEmaAdamListAttrs ListAttrsOf(const ApplyFusedEmaAdamListCallSpec& c)
{
    list_op::ApplyFusedEmaAdamListAttrs attrs;
    static_cast<aea::Attrs&>(attrs) = AttrsOf(c.h);
    attrs.maximize = c.maximize;
    return attrs;
}

Verdict Check(const ApplyFusedEmaAdamListCallSpec& c)
{
    const Described d(c);
    Verdict v;
    v.refusal = list_op::CheckApplyFusedEmaAdamList(d.args, ListAttrsOf(c), &v.dtypes, &v.options);
    return v;
}

bool Matches(const std::string& text, const std::string& pattern)
{
    return std::regex_search(text, std::regex(pattern));
}

AEA_CASE(names_are_the_aclnn_names)
{
    for (int l = 0; l < kLists; ++l) {
        EXPECT(std::string(list_op::kApplyFusedEmaAdamListNames[l]) == kListInputNames[l]);
    }
    EXPECT(std::string(list_op::kApplyFusedEmaAdamListStepName) == kScalarNames[kScalarStep]);
    EXPECT(std::string(list_op::kApplyFusedEmaAdamListGradScaleName) ==
           kScalarNames[kScalarGradScale]);
    EXPECT(std::string(list_op::kApplyFusedEmaAdamListFoundInfName) ==
           kScalarNames[kScalarFoundInf]);
    EXPECT(list_op::ApplyFusedEmaAdamListEntryName(list_op::kApplyFusedEmaAdamListMs, 5) ==
           "msRef[5]");
}

AEA_CASE(base_call_is_valid_and_says_what_to_launch)
{
    ApplyFusedEmaAdamListCallSpec c;
    const Verdict v = Check(c);
    EXPECT_MSG(v.refusal.empty(), "%s", v.refusal.c_str());
    EXPECT(v.dtypes.param == aea::DataType::kFloat32 && v.dtypes.state == aea::DataType::kFloat32 &&
           v.dtypes.grad == aea::DataType::kFloat32 && v.dtypes.hasCopy &&
           v.dtypes.copy == aea::DataType::kBFloat16);
    EXPECT(v.options.amsgrad && v.options.gradScale && v.options.foundInf);
    c.maximize = true;
    c.lists[kMaxVs].present = false;
    c.scalars[kScalarGradScale].present = false;
    const Verdict w = Check(c);
    EXPECT(w.refusal.empty() && !w.options.amsgrad && !w.options.gradScale && w.options.foundInf);
}

/** Every row of the aclnn layer's table, with its shared verdict. */
AEA_CASE(shared_bad_input_table)
{
    const std::vector<int> counts = ExpectSharedVerdicts<ApplyFusedEmaAdamListCallSpec>(
        ApplyFusedEmaAdamListBadInputs(),
        [](const ApplyFusedEmaAdamListCallSpec& c) { return Check(c).refusal; }, Matches);
    EXPECT(counts[0] > 0 && counts[1] > 0 && counts[2] > 0 && counts[3] > 0 && counts[4] > 0);
}

/**
 * The dtype contract is exactly the tiling's key table: of every (P, S, G, C) over the three
 * float dtypes (C also absent), with and without AMSGrad, the check accepts precisely the
 * combinations ApplyFusedEmaAdamListDtypeCombinations() lists, and reports them as they are.
 */
AEA_CASE(dtype_contract_is_the_key_table)
{
    const aea::DataType floats[3] = {aea::DataType::kFloat32, aea::DataType::kFloat16,
                                     aea::DataType::kBFloat16};
    const auto code = [](aea::DataType t) { return static_cast<aclDataType>(aea::CannCodeOf(t)); };
    const std::vector<list_op::ApplyFusedEmaAdamListDtypes> keys =
        list_op::ApplyFusedEmaAdamListDtypeCombinations();
    int accepted = 0;
    for (bool amsgrad : {false, true}) {
        for (aea::DataType p : floats) {
            for (aea::DataType s : floats) {
                for (aea::DataType g : floats) {
                    for (int ci = -1; ci < 3; ++ci) {
                        ApplyFusedEmaAdamListCallSpec c;
                        c.SetDtypes(code(p), code(s), code(g));
                        c.lists[kMaxVs].present = amsgrad;
                        if (ci >= 0) {
                            c.lists[kCopies].present = true;
                            c.lists[kCopies].Fill(code(floats[ci]));
                        }
                        const Verdict v = Check(c);
                        bool inTable = false;
                        for (const list_op::ApplyFusedEmaAdamListDtypes& k : keys) {
                            inTable = inTable || (k.param == p && k.state == s && k.grad == g &&
                                                  k.hasCopy == (ci >= 0) &&
                                                  (ci < 0 || k.copy == floats[ci]));
                        }
                        EXPECT_MSG(v.refusal.empty() == inTable, "P %d S %d G %d C %d: '%s'",
                                   static_cast<int>(p), static_cast<int>(s), static_cast<int>(g),
                                   ci, v.refusal.c_str());
                        if (inTable && v.refusal.empty()) {
                            ++accepted;
                            EXPECT(list_op::ApplyFusedEmaAdamListTilingKeyOf(v.dtypes) ==
                                   list_op::ApplyFusedEmaAdamListTilingKeyOf(
                                       list_op::ApplyFusedEmaAdamListDtypes{
                                           p, s, g, ci >= 0,
                                           ci >= 0 ? floats[ci] : aea::DataType::kFloat16}));
                            EXPECT(v.options.amsgrad == amsgrad);
                        }
                    }
                }
            }
        }
    }
    EXPECT_MSG(accepted == 2 * static_cast<int>(keys.size()), "%d accepted, %zu keys", accepted,
               keys.size());
}

/** An optional list is absent when null or empty; an empty required list is a call with no
 *  entries, which is valid when every list is empty. */
AEA_CASE(empty_lists)
{
    ApplyFusedEmaAdamListCallSpec c;
    c.lists[kMaxVs].shape.clear();
    c.lists[kMaxVs].dtype.clear();
    c.lists[kCopies].shape.clear();
    c.lists[kCopies].dtype.clear();
    const Verdict v = Check(c);
    EXPECT_MSG(v.refusal.empty(), "%s", v.refusal.c_str());
    EXPECT(!v.options.amsgrad && !v.dtypes.hasCopy);
    for (ApplyFusedEmaAdamListSpec& l : c.lists) {
        l.shape.clear();
        l.dtype.clear();
    }
    const Verdict none = Check(c);
    EXPECT_MSG(none.refusal.empty(), "%s", none.refusal.c_str());
    EXPECT(list_op::ApplyFusedEmaAdamListTilingKeyOf(none.dtypes) >
           0);  // some kernel key, though nothing launches
}

/** Placeholders (one zero-element tensor per entry, of the state's dtype for ss and max_vs, the
 *  parameters' for model copies) are an absent list, as CANN's stack needs it; of another dtype
 *  they are a list that holds values (and then refused by shape), so a call whose entries are all
 *  empty may still pass real empty lists. */
AEA_CASE(placeholders_are_absent_lists)
{
    ApplyFusedEmaAdamListCallSpec c;
    c.SetDtypes(ACL_BF16, ACL_FLOAT, ACL_BF16);
    const auto placeholders = [&](int list, aclDataType dtype) {
        for (std::vector<int64_t>& shape : c.lists[list].shape) shape = {0};
        c.lists[list].Fill(dtype);
        c.lists[list].present = true;
    };
    placeholders(kMaxVs, ACL_FLOAT);
    placeholders(kCopies, ACL_BF16);
    Described d(c);
    Verdict v;
    d.args.emaOptional = true;
    v.refusal = list_op::CheckApplyFusedEmaAdamList(d.args, ListAttrsOf(c), &v.dtypes, &v.options);
    EXPECT_MSG(v.refusal.empty(), "%s", v.refusal.c_str());
    EXPECT(!v.options.amsgrad && !v.dtypes.hasCopy && v.options.ema);
    EXPECT(v.dtypes.param == aea::DataType::kBFloat16 && v.dtypes.state == aea::DataType::kFloat32);
    EXPECT(list_op::ApplyFusedEmaAdamListPresent(d.args, list_op::kApplyFusedEmaAdamListSs) &&
           !list_op::ApplyFusedEmaAdamListPresent(d.args, list_op::kApplyFusedEmaAdamListMaxVs));
    placeholders(kSs, ACL_FLOAT);  // V2: no EMA
    Described noEma(c);
    noEma.args.emaOptional = true;
    v.refusal = list_op::CheckApplyFusedEmaAdamList(noEma.args, ListAttrsOf(c), &v.dtypes, &v.options);
    EXPECT_MSG(v.refusal.empty() && !v.options.ema, "%s", v.refusal.c_str());
    // V1's ss is not optional: zero-element tensors there are values, of the wrong shape
    EXPECT(Matches(Check(c).refusal, "^ssRef\\[0\\] has shape \\[0\\]"));
    // placeholders of another dtype hold values: a max_vs of the parameters' dtype is refused
    placeholders(kSs, ACL_FLOAT);
    c.lists[kSs].present = true;
    placeholders(kMaxVs, ACL_BF16);
    Described wrong(c);
    wrong.args.emaOptional = true;
    v.refusal = list_op::CheckApplyFusedEmaAdamList(wrong.args, ListAttrsOf(c), &v.dtypes, &v.options);
    EXPECT_MSG(Matches(v.refusal, "^maxVsRef\\[0\\] has dtype ACL_BF16"), "%s", v.refusal.c_str());
}

/** V2's extensions (emaOptional, lr / emaDecay tensors): an absent or empty ss means no EMA only
 *  with emaOptional; a partial one is still a length error; the scalar tensors are fp32 of one
 *  element, named in the refusals; the options say what the kernel gets. */
AEA_CASE(v2_optional_ema_and_scalar_tensors)
{
    ApplyFusedEmaAdamListCallSpec c;
    Described d(c);
    const auto check = [&](Verdict* v) {
        v->refusal = list_op::CheckApplyFusedEmaAdamList(d.args, ListAttrsOf(c), &v->dtypes, &v->options);
    };
    Verdict v;
    check(&v);
    EXPECT(v.refusal.empty() && v.options.ema && !v.options.lrTensor && !v.options.emaDecayTensor);
    const std::vector<list_op::ListEntryArg> none;
    d.args.lists[list_op::kApplyFusedEmaAdamListSs] =
        &none;  // an empty ss: V1 refuses, V2 has no EMA
    check(&v);
    EXPECT_MSG(Matches(v.refusal, "^ssRef has 0 tensors but grads has 3: every list holds one "
                                  "tensor per entry$"),
               "%s", v.refusal.c_str());
    d.args.emaOptional = true;
    check(&v);
    EXPECT_MSG(v.refusal.empty() && !v.options.ema, "%s", v.refusal.c_str());
    d.args.lists[list_op::kApplyFusedEmaAdamListSs] = nullptr;
    check(&v);
    EXPECT(v.refusal.empty() && !v.options.ema);
    const std::vector<list_op::ListEntryArg> two(
        d.entries[list_op::kApplyFusedEmaAdamListSs].begin(),
        d.entries[list_op::kApplyFusedEmaAdamListSs].begin() + 2);
    d.args.lists[list_op::kApplyFusedEmaAdamListSs] = &two;
    check(&v);
    EXPECT_MSG(Matches(v.refusal, "^ssRef has 2 tensors but grads has 3: .*\\(an absent optional "
                                  "list: none, or one zero-element placeholder per entry\\)$"),
               "%s", v.refusal.c_str());
    d.args.lists[list_op::kApplyFusedEmaAdamListSs] = &d.entries[list_op::kApplyFusedEmaAdamListSs];

    const std::vector<int64_t> one{1};
    const std::vector<int64_t> pair{2};
    const aea::TensorArg lr{list_op::kApplyFusedEmaAdamListLrName, ACL_FLOAT, one};
    const aea::TensorArg decay{list_op::kApplyFusedEmaAdamListEmaDecayName, ACL_FLOAT, one};
    d.args.lr = &lr;
    d.args.emaDecay = &decay;
    check(&v);
    EXPECT(v.refusal.empty() && v.options.ema && v.options.lrTensor && v.options.emaDecayTensor);
    const aea::TensorArg halfLr{list_op::kApplyFusedEmaAdamListLrName, ACL_FLOAT16, one};
    d.args.lr = &halfLr;
    check(&v);
    EXPECT_MSG(Matches(v.refusal, "^lrTensorOptional has dtype ACL_FLOAT16 \\(1\\), expected ACL_FLOAT"),
               "%s", v.refusal.c_str());
    const aea::TensorArg twoDecays{list_op::kApplyFusedEmaAdamListEmaDecayName, ACL_FLOAT, pair};
    d.args.lr = &lr;
    d.args.emaDecay = &twoDecays;
    check(&v);
    EXPECT_MSG(Matches(v.refusal, "^emaDecayTensorOptional has shape \\[2\\] \\(2 elements\\), expected "
                                  "exactly one element"),
               "%s", v.refusal.c_str());
}

/** Rank-0 entries and a rank-0 step (one element each) are valid descriptions. */
AEA_CASE(rank_zero_tensors)
{
    ApplyFusedEmaAdamListCallSpec c;
    c.SetEntryShape(1, {});
    c.scalars[kScalarStep].shape = {};
    c.scalars[kScalarFoundInf].shape = {1, 1};
    const Verdict v = Check(c);
    EXPECT_MSG(v.refusal.empty(), "%s", v.refusal.c_str());
}

/** The NPU path's extra condition: every tensor of every list 1-D. */
AEA_CASE(npu_needs_flat_lists)
{
    ApplyFusedEmaAdamListCallSpec c;
    const Described mixed(c);
    const aea::Refusal refusal = list_op::CheckApplyFusedEmaAdamListFlat(mixed.args);
    EXPECT_MSG(Matches(refusal, "^grads\\[0\\] has shape \\[3,4\\], expected a 1-D tensor: on the "
                                "NPU every tensor of the lists is 1-D"),
               "%s", refusal.c_str());
    for (size_t i = 0; i < kEntryShapes.size(); ++i) {
        int64_t n = 1;
        for (int64_t d : kEntryShapes[i]) n *= d;
        c.SetEntryShape(i, {n});
    }
    const Described flat(c);
    EXPECT(list_op::CheckApplyFusedEmaAdamListFlat(flat.args).empty());
    c.lists[kCopies].shape[2] = {};  // rank 0 is not 1-D either
    const Described scalarEntry(c);
    EXPECT(Matches(list_op::CheckApplyFusedEmaAdamListFlat(scalarEntry.args),
                   "^modelCopiesRef\\[2\\] has shape \\[\\], expected a 1-D tensor"));
}

}  // namespace

int main(int argc, char** argv)
{
    return RunCases(argc, argv);
}
