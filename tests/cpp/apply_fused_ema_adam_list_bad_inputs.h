/**
 * @file apply_fused_ema_adam_list_bad_inputs.h
 * @brief The bad-input table of ApplyFusedEmaAdamList, shared by the two layers that validate a
 *        call, as apply_fused_ema_adam_bad_inputs.h is for the single op:
 *
 *   tests/cpp/aclnn/test_aclnn_apply_fused_ema_adam_list.cpp    the CPU aclnn layer, every row
 *   tests/cpp/op_host/test_apply_fused_ema_adam_list_check.cpp  the shared validation the CANN
 *                                                               adapter and the NPU torch kernel
 * run
 *
 * A row describes its call as data (ApplyFusedEmaAdamListCallSpec: per list its entries' dtypes and
 * shapes, the scalar tensors, the step value, attributes) plus, as ApplyFusedEmaAdamListBreaks,
 * what only the aclnn layer can see (nulls, destroyed handles, null data, formats, memory layout).
 * Its verdicts are explicit: the aclnn layer's status and a regular expression its message must
 * match (ECMAScript, searched after "aclnnApplyFusedEmaAdamListGetWorkspaceSize: "), and the shared
 * validation's (Shared, from ema_adam_bad_inputs.h).
 */
#ifndef ASCEND_EMA_ADAM_TEST_APPLY_FUSED_EMA_ADAM_LIST_BAD_INPUTS_H
#define ASCEND_EMA_ADAM_TEST_APPLY_FUSED_EMA_ADAM_LIST_BAD_INPUTS_H

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "acl/acl_base.h"
#include "aclnn/acl_meta.h"
#include "aclnn/opdev/op_errno.h"
#include "ema_adam_bad_inputs.h"  // Hyper, Shared

namespace aea_test {

// The lists and the scalar tensors, in signature order (owner ids of the table's breaks).
constexpr int kGrads = 0, kVars = 1, kMs = 2, kVs = 3, kSs = 4, kMaxVs = 5, kCopies = 6, kLists = 7;
constexpr int kScalarStep = 0, kScalarGradScale = 1, kScalarFoundInf = 2, kScalarCount = 3;
inline const char* const kListInputNames[kLists] = {"grads", "varsRef",  "msRef",         "vsRef",
                                                    "ssRef", "maxVsRef", "modelCopiesRef"};
inline const char* const kScalarNames[kScalarCount] = {"step", "gradScaleOptional",
                                                       "foundInfOptional"};

/** The base call's entry shapes: mixed ranks and sizes (the CPU device takes any shapes). */
inline const std::vector<std::vector<int64_t>> kEntryShapes = {{3, 4}, {5}, {2, 1, 3}};

/** A list as data: absent (optional lists only), or its entries' dtypes and shapes. */
struct ApplyFusedEmaAdamListSpec {
    bool present = true;
    std::vector<aclDataType> dtype;
    std::vector<std::vector<int64_t>> shape;

    void Fill(aclDataType d)
    {
        dtype.assign(shape.size(), d);
    }
};

/** A one-element tensor as data. */
struct ScalarSpec {
    bool present = true;
    aclDataType dtype = ACL_FLOAT;
    std::vector<int64_t> shape = {1};
};

/**
 * One call as data. The default is valid and uses everything: 3 fp32 entries of mixed shapes,
 * AMSGrad state, bf16 model copies of the fp32 masters, a grad scale and a found-inf flag, step 7.
 */
struct ApplyFusedEmaAdamListCallSpec {
    ApplyFusedEmaAdamListSpec lists[kLists];
    ScalarSpec scalars[kScalarCount];
    int64_t stepValue = 7;
    Hyper h;
    bool maximize = false;

    ApplyFusedEmaAdamListCallSpec()
    {
        for (ApplyFusedEmaAdamListSpec& l : lists) {
            l.shape = kEntryShapes;
            l.Fill(ACL_FLOAT);
        }
        lists[kCopies].Fill(ACL_BF16);
        scalars[kScalarStep].dtype = ACL_INT64;
    }

    /** Every float tensor of entry-dtype role: params P, state S, grads G; no copies. */
    void SetDtypes(aclDataType p, aclDataType s, aclDataType g)
    {
        lists[kVars].Fill(p);
        for (int l : {kMs, kVs, kSs, kMaxVs}) lists[l].Fill(s);
        lists[kGrads].Fill(g);
        lists[kCopies].present = false;
    }

    /** Entry i of every list gets `shape`. */
    void SetEntryShape(size_t i, const std::vector<int64_t>& shape)
    {
        for (ApplyFusedEmaAdamListSpec& l : lists) l.shape[i] = shape;
    }
};

/** What only the aclnn layer sees: applied by the aclnn test (a switch over all kinds). */
struct ApplyFusedEmaAdamListBreak {
    enum Kind {
        kNullList,           // list `a` is a null pointer
        kNullScalar,         // scalar `a` is a null pointer
        kNullWorkspaceSize,  // the workspaceSize out-argument is null
        kNullExecutor,       // the executor out-argument is null
        kDestroyedList,      // list `a` is an already destroyed list
        kNullEntry,          // entry `i` of list `a` is null
        kDestroyedEntry,     // entry `i` of list `a` is an already destroyed tensor
        kNullData,           // entry `i` of list `a` has elements but a null data address
        kDestroyedScalar,    // scalar `a` is an already destroyed tensor
        kEntryFormat,        // entry `i` of list `a` carries `format`
        kScalarFormat,       // scalar `a` carries `format`
        kBroadcast,          // entry `i` of list `a` has stride 0 in its first dim
        kRowsOverlap,        // entry `i` of list `a` ([3,4]) has strides [2,1]
        kSameMemory,         // entry `i` of list `a` describes entry `j` of list `b`'s memory
        kHalfOverlap,        // entries (a, i) and (b, j) share one buffer, half of them apart
        kInterleaved,        // entries (a, i) and (b, j) are the even and odd elements of a buffer
        kScalarInside,       // scalar `a` lies inside entry `j` of list `b` (its second element)
    };
    Kind kind;
    int a = -1;
    size_t i = 0;
    int b = -1;
    size_t j = 0;
    aclFormat format = ACL_FORMAT_ND;
};

struct ApplyFusedEmaAdamListBadInput {
    std::string name;
    std::function<void(ApplyFusedEmaAdamListCallSpec&)>
        describe;  // the call's description (may change nothing)
    std::vector<ApplyFusedEmaAdamListBreak> aclnnOnly;
    aclnnStatus status;         // the aclnn layer's verdict: status ...
    std::string message;        // ... and a regular expression its message matches
    Shared shared;
    std::string sharedMessage;  // for Shared::kOther: a regular expression
};

inline ApplyFusedEmaAdamListBadInput ApplyFusedEmaAdamListAlike(
    std::string name, std::function<void(ApplyFusedEmaAdamListCallSpec&)> describe,
    std::string message)
{
    return {std::move(name), std::move(describe), {}, ACLNN_ERR_PARAM_INVALID,
            std::move(message), Shared::kAlike, ""};
}

inline ApplyFusedEmaAdamListBadInput ApplyFusedEmaAdamListAclnnOnly(
    std::string name, std::vector<ApplyFusedEmaAdamListBreak> breaks, aclnnStatus status,
    std::string message)
{
    return {std::move(name),
            [](ApplyFusedEmaAdamListCallSpec&) {},
            std::move(breaks),
            status,
            std::move(message),
            Shared::kAclnnOnly,
            ""};
}

/** "msRef\[5\]": an entry name as a regular expression. */
inline std::string EntryRe(int list, size_t i)
{
    return std::string(kListInputNames[list]) + "\\[" + std::to_string(i) + "\\]";
}

inline std::vector<ApplyFusedEmaAdamListBadInput> ApplyFusedEmaAdamListBadInputs()
{
    using B = ApplyFusedEmaAdamListBreak;
    const std::string entryMismatch = ": every list holds one tensor per entry";
    std::vector<ApplyFusedEmaAdamListBadInput> rows;
    // ---- null and dead handles (161001 for nulls, 161002 for dead handles): every list is a
    // DYNAMIC parameter, never null (an unused optional list is an empty one)
    for (int l = kGrads; l < kLists; ++l) {
        rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
            std::string("null ") + kListInputNames[l], {{B::kNullList, l}}, ACLNN_ERR_PARAM_NULLPTR,
            std::string("^") + kListInputNames[l] + " is null$"));
    }
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly("null step", {{B::kNullScalar, kScalarStep}},
                                                  ACLNN_ERR_PARAM_NULLPTR, "^step is null$"));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly("null workspaceSize", {{B::kNullWorkspaceSize}},
                                                  ACLNN_ERR_PARAM_NULLPTR,
                                                  "^workspaceSize is null$"));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly("null executor", {{B::kNullExecutor}},
                                                  ACLNN_ERR_PARAM_NULLPTR, "^executor is null$"));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "destroyed msRef list", {{B::kDestroyedList, kMs}}, ACLNN_ERR_PARAM_INVALID,
        "^msRef is not a live aclTensorList \\(already destroyed"));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "destroyed maxVsRef list", {{B::kDestroyedList, kMaxVs}}, ACLNN_ERR_PARAM_INVALID,
        "^maxVsRef is not a live aclTensorList"));
    for (const auto& [l, i] : {std::pair{kGrads, 1}, {kVars, 0}, {kSs, 2}, {kMaxVs, 1},
                               {kCopies, 0}}) {
        rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
            "null " + std::string(kListInputNames[l]) + "[" + std::to_string(i) + "]",
            {{B::kNullEntry, l, static_cast<size_t>(i)}}, ACLNN_ERR_PARAM_NULLPTR,
            "^" + EntryRe(l, i) + " is null$"));
    }
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "destroyed vsRef[2]", {{B::kDestroyedEntry, kVs, 2}}, ACLNN_ERR_PARAM_INVALID,
        "^vsRef\\[2\\] is not a live aclTensor \\(already destroyed"));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "null data in ssRef[1]", {{B::kNullData, kSs, 1}}, ACLNN_ERR_PARAM_NULLPTR,
        "^ssRef\\[1\\] has 5 elements but a null data address$"));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "destroyed gradScaleOptional", {{B::kDestroyedScalar, kScalarGradScale}},
        ACLNN_ERR_PARAM_INVALID, "^gradScaleOptional is not a live aclTensor"));
    // ---- at most 256 tensors per list (CANN's opbase refuses more; the shared validation, the
    // tiling adapter's, never sees such a list on the NPU)
    const auto entries = [](ApplyFusedEmaAdamListCallSpec& c, int list, size_t n) {
        ApplyFusedEmaAdamListSpec& l = c.lists[list];
        while (l.shape.size() < n) {
            l.shape.push_back({2});
            l.dtype.push_back(l.dtype[0]);
        }
    };
    rows.push_back({"257 entries in every list",
                    [entries](ApplyFusedEmaAdamListCallSpec& c) {
                        for (int l = kGrads; l < kLists; ++l) entries(c, l, 257);
                    },
                    {},
                    ACLNN_ERR_PARAM_INVALID,
                    "^grads holds 257 tensors, more than the 256 a dynamic list of a CANN operator "
                    "may hold \\(opbase's limit\\): launch in slices of at most 256 entries$",
                    Shared::kOpbaseOnly,
                    ""});
    rows.push_back({"maxVsRef of 257 tensors",
                    [entries](ApplyFusedEmaAdamListCallSpec& c) { entries(c, kMaxVs, 257); },
                    {},
                    ACLNN_ERR_PARAM_INVALID,
                    "^maxVsRef holds 257 tensors, more than the 256",
                    Shared::kOther,
                    "^maxVsRef has 257 tensors but grads has 3"});
    // ---- list lengths
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "varsRef one entry short",
        [](ApplyFusedEmaAdamListCallSpec& c) {
            c.lists[kVars].shape.pop_back();
            c.lists[kVars].dtype.pop_back();
        },
        "^varsRef has 2 tensors but grads has 3" + entryMismatch + "$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "maxVsRef one entry long",
        [](ApplyFusedEmaAdamListCallSpec& c) {
            c.lists[kMaxVs].shape.push_back({7});
            c.lists[kMaxVs].dtype.push_back(ACL_FLOAT);
        },
        "^maxVsRef has 4 tensors but grads has 3" + entryMismatch +
            " \\(an absent optional list: none, or one zero-element placeholder per entry\\)$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "empty grads",
        [](ApplyFusedEmaAdamListCallSpec& c) {
            c.lists[kGrads].shape.clear();
            c.lists[kGrads].dtype.clear();
        },
        "^varsRef has 3 tensors but grads has 0"));
    // ---- dtypes: one per list, then the contract on entries 0
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "msRef[2] fp16 among fp32",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.lists[kMs].dtype[2] = ACL_FLOAT16; },
        "^msRef\\[2\\] has dtype ACL_FLOAT16 \\(1\\) but msRef\\[0\\] has ACL_FLOAT "
        "\\(0\\): the tensors of msRef must share one dtype$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "grads[1] bf16 among fp32",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.lists[kGrads].dtype[1] = ACL_BF16; },
        "^grads\\[1\\] has dtype ACL_BF16 \\(27\\) but grads\\[0\\] has ACL_FLOAT"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "modelCopiesRef[2] fp16 among bf16",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.lists[kCopies].dtype[2] = ACL_FLOAT16; },
        "^modelCopiesRef\\[2\\] has dtype ACL_FLOAT16 \\(1\\) but "
        "modelCopiesRef\\[0\\] has ACL_BF16 \\(27\\)"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "varsRef fp64", [](ApplyFusedEmaAdamListCallSpec& c) { c.lists[kVars].Fill(ACL_DOUBLE); },
        "^varsRef\\[0\\] has dtype ACL_DOUBLE \\(11\\), expected ACL_FLOAT, "
        "ACL_FLOAT16 or ACL_BF16$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "fp32 params, fp16 state",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.SetDtypes(ACL_FLOAT, ACL_FLOAT16, ACL_FLOAT); },
        "^msRef\\[0\\] has dtype ACL_FLOAT16 \\(1\\), expected varsRef's dtype "
        "ACL_FLOAT \\(0\\): the state is stored in the parameters' dtype or in "
        "fp32$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "fp16 params, bf16 state",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.SetDtypes(ACL_FLOAT16, ACL_BF16, ACL_FLOAT16); },
        "^msRef\\[0\\] has dtype ACL_BF16 \\(27\\), expected varsRef's dtype "
        "ACL_FLOAT16 \\(1\\) or ACL_FLOAT \\(0\\)"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "vsRef fp16, msRef fp32",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.lists[kVs].Fill(ACL_FLOAT16); },
        "^vsRef\\[0\\] has dtype ACL_FLOAT16 \\(1\\) but msRef\\[0\\] has ACL_FLOAT "
        "\\(0\\): msRef, vsRef, ssRef and maxVsRef must share one dtype$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "maxVsRef bf16, msRef fp32",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.lists[kMaxVs].Fill(ACL_BF16); },
        "^maxVsRef\\[0\\] has dtype ACL_BF16 \\(27\\) but msRef\\[0\\]"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "model copies fp32",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.lists[kCopies].Fill(ACL_FLOAT); },
        "^modelCopiesRef\\[0\\] has dtype ACL_FLOAT \\(0\\), expected "
        "ACL_FLOAT16 or ACL_BF16: a model copy holds 16-bit weights$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "model copies of fp16 params",
        [](ApplyFusedEmaAdamListCallSpec& c) {
            c.SetDtypes(ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16);
            c.lists[kCopies].present = true;
            c.lists[kCopies].Fill(ACL_FLOAT16);
        },
        "^varsRef\\[0\\] has dtype ACL_FLOAT16 \\(1\\), expected ACL_FLOAT "
        "\\(0\\) with modelCopiesRef: varsRef holds the fp32 master "
        "weights of the model copies$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "fp16 grads of fp32 params",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.SetDtypes(ACL_FLOAT, ACL_FLOAT, ACL_FLOAT16); },
        "^grads\\[0\\] has dtype ACL_FLOAT16 \\(1\\), expected varsRef's dtype "
        "ACL_FLOAT \\(0\\): the gradients have the parameters' dtype or fp32$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "bf16 grads of fp16 params",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.SetDtypes(ACL_FLOAT16, ACL_FLOAT, ACL_BF16); },
        "^grads\\[0\\] has dtype ACL_BF16 \\(27\\), expected varsRef's dtype "
        "ACL_FLOAT16 \\(1\\) or ACL_FLOAT \\(0\\)"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "fp16 grads of bf16 model copies",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.lists[kGrads].Fill(ACL_FLOAT16); },
        "^grads\\[0\\] has dtype ACL_FLOAT16 \\(1\\), expected "
        "modelCopiesRef's dtype ACL_BF16 \\(27\\) or ACL_FLOAT \\(0\\): "
        "the gradients of the model copies or fp32$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "step fp32",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.scalars[kScalarStep].dtype = ACL_FLOAT; },
        "^step has dtype ACL_FLOAT \\(0\\), expected ACL_INT64$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "gradScaleOptional fp16",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.scalars[kScalarGradScale].dtype = ACL_FLOAT16; },
        "^gradScaleOptional has dtype ACL_FLOAT16 \\(1\\), expected ACL_FLOAT$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "foundInfOptional int64",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.scalars[kScalarFoundInf].dtype = ACL_INT64; },
        "^foundInfOptional has dtype ACL_INT64 \\(9\\), expected ACL_FLOAT$"));
    // ---- shapes
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "msRef[1] [6], grads[1] [5]",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.lists[kMs].shape[1] = {6}; },
        "^msRef\\[1\\] has shape \\[6\\] but grads\\[1\\] has shape \\[5\\]: "
        "the tensors of entry 1 must have one shape$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "varsRef[0] [4,3], grads[0] [3,4] (same element count)",
        [](ApplyFusedEmaAdamListCallSpec& c) {
            c.lists[kVars].shape[0] = {4, 3};
        },
        "^varsRef\\[0\\] has shape \\[4,3\\] but grads\\[0\\] has shape \\[3,4\\]"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "maxVsRef[2] [6], grads[2] [2,1,3]",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.lists[kMaxVs].shape[2] = {6}; },
        "^maxVsRef\\[2\\] has shape \\[6\\] but grads\\[2\\] has shape "
        "\\[2,1,3\\]"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "modelCopiesRef[0] [3,5]",
        [](ApplyFusedEmaAdamListCallSpec& c) {
            c.lists[kCopies].shape[0] = {3, 5};
        },
        "^modelCopiesRef\\[0\\] has shape \\[3,5\\] but grads\\[0\\]"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "rank 9 entry",
        [](ApplyFusedEmaAdamListCallSpec& c) {
            c.SetEntryShape(1, {1, 1, 1, 1, 1, 1, 1, 1, 5});
        },
        "^grads\\[1\\] has shape \\[1,1,1,1,1,1,1,1,5\\] \\(rank 9\\), expected "
        "at most 8 dimensions$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "step [2]", [](ApplyFusedEmaAdamListCallSpec& c) { c.scalars[kScalarStep].shape = {2}; },
        "^step has shape \\[2\\] \\(2 elements\\), expected exactly one element$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "gradScaleOptional [1,2]",
        [](ApplyFusedEmaAdamListCallSpec& c) {
            c.scalars[kScalarGradScale].shape = {1, 2};
        },
        "^gradScaleOptional has shape \\[1,2\\] \\(2 elements\\)"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "foundInfOptional [0]",
        [](ApplyFusedEmaAdamListCallSpec& c) { c.scalars[kScalarFoundInf].shape = {0}; },
        "^foundInfOptional has shape \\[0\\] \\(0 elements\\)"));
    // ---- attributes (the shared CheckAttrs; the single op's table covers every one in depth)
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "mode 2", [](ApplyFusedEmaAdamListCallSpec& c) { c.h.mode = 2; },
        "^mode is 2, expected 0 \\(Adam, L2 weight decay\\) or 1"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "lr nan", [](ApplyFusedEmaAdamListCallSpec& c) { c.h.lr = NAN; },
        "^lr is nan, expected a finite value$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "weightDecay -inf", [](ApplyFusedEmaAdamListCallSpec& c) { c.h.weightDecay = -INFINITY; },
        "^weightDecay is -inf, expected a finite value$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "beta2 1", [](ApplyFusedEmaAdamListCallSpec& c) { c.h.beta2 = 1.0; },
        "^beta2 is 1 \\(1 in fp32\\), expected 0 <= beta2 < 1$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "emaDecay 1.01", [](ApplyFusedEmaAdamListCallSpec& c) { c.h.emaDecay = 1.01; },
        "^emaDecay is 1.01 \\(1.01 in fp32\\), expected 0 <= emaDecay <= 1$"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "eps -1e-8", [](ApplyFusedEmaAdamListCallSpec& c) { c.h.eps = -1e-8; }, "^eps is -1e-08"));
    // ---- formats
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "grads[2] NC1HWC0", {{B::kEntryFormat, kGrads, 2, -1, 0, ACL_FORMAT_NC1HWC0}},
        ACLNN_ERR_PARAM_INVALID,
        "^grads\\[2\\] has format ACL_FORMAT_NC1HWC0 \\(3\\), expected "
        "ACL_FORMAT_ND"));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "modelCopiesRef[1] FRACTAL_NZ",
        {{B::kEntryFormat, kCopies, 1, -1, 0, ACL_FORMAT_FRACTAL_NZ}}, ACLNN_ERR_PARAM_INVALID,
        "^modelCopiesRef\\[1\\] has format ACL_FORMAT_FRACTAL_NZ"));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "foundInfOptional NHWC", {{B::kScalarFormat, kScalarFoundInf, 0, -1, 0, ACL_FORMAT_NHWC}},
        ACLNN_ERR_PARAM_INVALID, "^foundInfOptional has format ACL_FORMAT_NHWC \\(1\\)"));
    // ---- memory layout
    const std::string overlap = " overlap in memory; an updated tensor must not overlap any other "
                                "tensor of the call$";
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "varsRef[1] broadcast (stride 0)", {{B::kBroadcast, kVars, 1}}, ACLNN_ERR_PARAM_INVALID,
        "^varsRef\\[1\\] \\(shape \\[5\\], stride \\[0\\]\\) addresses some "
        "elements more than once; an updated tensor must not$"));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "msRef[0] rows overlap (stride 2 < 4)", {{B::kRowsOverlap, kMs, 0}},
        ACLNN_ERR_PARAM_INVALID,
        "^msRef\\[0\\] \\(shape \\[3,4\\], stride \\[2,1\\]\\) addresses"));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "vsRef[2] is msRef[2]'s memory", {{B::kSameMemory, kVs, 2, kMs, 2}},
        ACLNN_ERR_PARAM_INVALID, "^msRef\\[2\\] and vsRef\\[2\\]" + overlap));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "ssRef[0] half over varsRef[0]", {{B::kHalfOverlap, kVars, 0, kSs, 0}},
        ACLNN_ERR_PARAM_INVALID, "^varsRef\\[0\\] and ssRef\\[0\\]" + overlap));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "modelCopiesRef[1] is maxVsRef[1]'s memory "
        "(a bf16 view of fp32 memory)",
        {{B::kSameMemory, kCopies, 1, kMaxVs, 1}}, ACLNN_ERR_PARAM_INVALID,
        "^maxVsRef\\[1\\] and modelCopiesRef\\[1\\]" + overlap));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "grads[1] is msRef[1]'s memory (read-only with updated)",
        {{B::kSameMemory, kGrads, 1, kMs, 1}}, ACLNN_ERR_PARAM_INVALID,
        "^msRef\\[1\\] and grads\\[1\\]" + overlap));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "grads[0] half over varsRef[0]", {{B::kHalfOverlap, kGrads, 0, kVars, 0}},
        ACLNN_ERR_PARAM_INVALID, "^varsRef\\[0\\] and grads\\[0\\]" + overlap));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "varsRef[0] and msRef[0] interleaved (conservatively refused)",
        {{B::kInterleaved, kVars, 0, kMs, 0}}, ACLNN_ERR_PARAM_INVALID,
        "^varsRef\\[0\\] and msRef\\[0\\]" + overlap));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "step inside varsRef[2]", {{B::kScalarInside, kScalarStep, 0, kVars, 2}},
        ACLNN_ERR_PARAM_INVALID, "^varsRef\\[2\\] and step" + overlap));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "gradScaleOptional inside ssRef[1]", {{B::kScalarInside, kScalarGradScale, 0, kSs, 1}},
        ACLNN_ERR_PARAM_INVALID, "^ssRef\\[1\\] and gradScaleOptional" + overlap));
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "foundInfOptional inside maxVsRef[0]", {{B::kScalarInside, kScalarFoundInf, 0, kMaxVs, 0}},
        ACLNN_ERR_PARAM_INVALID, "^maxVsRef\\[0\\] and foundInfOptional" + overlap));
    // ---- the step's value, with bias correction
    for (int64_t step : {int64_t{0}, int64_t{-3}}) {
        rows.push_back({"step " + std::to_string(step),
                        [step](ApplyFusedEmaAdamListCallSpec& c) { c.stepValue = step; },
                        {},
                        ACLNN_ERR_PARAM_INVALID,
                        "^step is " + std::to_string(step) +
                            ", expected step >= 1 when biasCorrection is true",
                        Shared::kStepValueOnly,
                        ""});
    }
    // ---- the fixed order: nulls, live, list sizes, entries, description, formats, memory, step
    // value
    rows.push_back({"order: list size before null entry",
                    [entries](ApplyFusedEmaAdamListCallSpec& c) { entries(c, kVs, 300); },
                    {{B::kNullEntry, kGrads, 0}},
                    ACLNN_ERR_PARAM_INVALID,
                    "^vsRef holds 300 tensors",
                    Shared::kOther,
                    "^vsRef has 300 tensors but grads has 3"});
    rows.push_back({"order: null entry before dtype",
                    [](ApplyFusedEmaAdamListCallSpec& c) { c.lists[kMs].dtype[1] = ACL_FLOAT16; },
                    {{B::kNullEntry, kSs, 2}},
                    ACLNN_ERR_PARAM_NULLPTR,
                    "^ssRef\\[2\\] is null$",
                    Shared::kOther,
                    "^msRef\\[1\\] has dtype ACL_FLOAT16"});
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "order: length before dtype",
        [](ApplyFusedEmaAdamListCallSpec& c) {
            c.lists[kVars].Fill(ACL_DOUBLE);
            c.lists[kSs].shape.pop_back();
            c.lists[kSs].dtype.pop_back();
        },
        "^ssRef has 2 tensors but grads has 3"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "order: dtype before shape",
        [](ApplyFusedEmaAdamListCallSpec& c) {
            c.lists[kMs].shape[0] = {12};
            c.scalars[kScalarGradScale].dtype = ACL_INT64;
        },
        "^gradScaleOptional has dtype ACL_INT64"));
    rows.push_back(ApplyFusedEmaAdamListAlike(
        "order: shape before attribute",
        [](ApplyFusedEmaAdamListCallSpec& c) {
            c.lists[kVs].shape[2] = {6};
            c.h.beta1 = 2.0;
        },
        "^vsRef\\[2\\] has shape \\[6\\]"));
    rows.push_back({"order: attribute before format",
                    [](ApplyFusedEmaAdamListCallSpec& c) { c.h.mode = 5; },
                    {{B::kEntryFormat, kVars, 0, -1, 0, ACL_FORMAT_NC1HWC0}},
                    ACLNN_ERR_PARAM_INVALID,
                    "^mode is 5",
                    Shared::kAlike,
                    ""});
    rows.push_back(ApplyFusedEmaAdamListAclnnOnly(
        "order: format before memory",
        {{B::kEntryFormat, kGrads, 0, -1, 0, ACL_FORMAT_NC1HWC0}, {B::kSameMemory, kVs, 2, kMs, 2}},
        ACLNN_ERR_PARAM_INVALID, "^grads\\[0\\] has format"));
    rows.push_back({"order: memory before step value",
                    [](ApplyFusedEmaAdamListCallSpec& c) { c.stepValue = 0; },
                    {{B::kSameMemory, kVs, 2, kMs, 2}},
                    ACLNN_ERR_PARAM_INVALID,
                    "^msRef\\[2\\] and vsRef\\[2\\] overlap",
                    Shared::kStepValueOnly,
                    ""});
    return rows;
}

}  // namespace aea_test

#endif  // ASCEND_EMA_ADAM_TEST_APPLY_FUSED_EMA_ADAM_LIST_BAD_INPUTS_H
