/**
 * @file shared_verdicts.h
 * @brief What the tests of an operator's shared validation (the NPU path's) do alike: the
 *        attributes of a table row, and the row-by-row verdicts against the aclnn layer's table.
 */
#ifndef ASCEND_EMA_ADAM_TEST_SHARED_VERDICTS_H
#define ASCEND_EMA_ADAM_TEST_SHARED_VERDICTS_H

#include <cstdio>
#include <string>
#include <vector>

#include "../ema_adam_bad_inputs.h"  // Hyper, Shared
#include "../test_harness.h"
#include "ema_adam_attrs.h"
#include "validation.h"

namespace aea_test {

inline ascend_ema_adam::Attrs AttrsOf(const Hyper& h)
{
    return ascend_ema_adam::AttrsInCannOrder(h.lr, h.emaDecay, h.beta1, h.beta2, h.eps, h.mode,
                                             h.biasCorrection, h.weightDecay);
}

/**
 * Every row of a bad-input table against the shared validation, with its verdict:
 *
 *   Shared::kAlike          refused with the aclnn layer's message
 *   Shared::kAclnnOnly      accepted: the row's defect needs the tensors (null, liveness, format,
 *                           memory layout), which only the aclnn layer has
 *   Shared::kStepValueOnly  accepted by the check, refused by CheckStepValue: on the NPU path
 *                           step's value is device memory the tiling cannot read
 *   Shared::kOther          refused with the row's own shared message (ordering rows)
 *   Shared::kOpbaseOnly     accepted: on the NPU, CANN's opbase refuses such a launch before the
 *                           tiling (more than 256 tensors in a list); no break of the tensors
 *
 * `check(spec)` is the validation the adapter runs on a row's description; `matches(text,
 * expected)` compares a message with a row's (a substring, or a regular expression). Returns the
 * rows per verdict.
 */
template <class Spec, class Row, class Check, class Matches>
std::vector<int> ExpectSharedVerdicts(const std::vector<Row>& rows, const Check& check,
                                      const Matches& matches)
{
    std::vector<int> counts(5, 0);
    for (const Row& row : rows) {
        Spec c;
        row.describe(c);
        const ascend_ema_adam::Refusal refusal = check(c);
        const ascend_ema_adam::Refusal stepRefusal =
            ascend_ema_adam::CheckStepValue(c.stepValue, c.h.biasCorrection);
        ++counts[static_cast<int>(row.shared)];
        switch (row.shared) {
            case Shared::kAlike:
                EXPECT_MSG(row.status == ACLNN_ERR_PARAM_INVALID, "[%s] a shared refusal is 161002",
                           row.name.c_str());
                EXPECT_MSG(matches(refusal, row.message), "[%s] '%s' does not match '%s'",
                           row.name.c_str(), refusal.c_str(), row.message.c_str());
                break;
            case Shared::kAclnnOnly:
                EXPECT_MSG(refusal.empty() && stepRefusal.empty() && !row.aclnnOnly.empty(),
                           "[%s] the description alone should be valid, got '%s%s'",
                           row.name.c_str(), refusal.c_str(), stepRefusal.c_str());
                break;
            case Shared::kStepValueOnly: {
                const std::string expected = "step is " + std::to_string(c.stepValue) +
                                             ", expected step >= 1 when biasCorrection is true";
                EXPECT_MSG(refusal.empty(), "[%s] '%s'", row.name.c_str(), refusal.c_str());
                EXPECT_MSG(matches(stepRefusal, expected), "[%s] '%s' does not match '%s'",
                           row.name.c_str(), stepRefusal.c_str(), expected.c_str());
                break;
            }
            case Shared::kOpbaseOnly:
                EXPECT_MSG(refusal.empty() && stepRefusal.empty() && row.aclnnOnly.empty(),
                           "[%s] the description alone should be valid (opbase refuses it before "
                           "the tiling), got '%s%s'",
                           row.name.c_str(), refusal.c_str(), stepRefusal.c_str());
                break;
            case Shared::kOther:
                EXPECT_MSG(matches(refusal, row.sharedMessage), "[%s] '%s' does not match '%s'",
                           row.name.c_str(), refusal.c_str(), row.sharedMessage.c_str());
                break;
        }
    }
    std::printf("  %d refused alike, %d aclnn-only, %d step-value-only, %d other, %d opbase-only\n",
                counts[0], counts[1], counts[2], counts[3], counts[4]);
    return counts;
}

}  // namespace aea_test

#endif  // ASCEND_EMA_ADAM_TEST_SHARED_VERDICTS_H
