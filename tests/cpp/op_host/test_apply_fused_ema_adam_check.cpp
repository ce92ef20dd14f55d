// The validation the CANN tiling adapter runs on the NPU path (op_host/apply_fused_ema_adam_check.h,
// with CheckStepValue), held to the CPU aclnn layer's bad-input table row by row:
//
//   Shared::kAlike          refused with the aclnn layer's message
//   Shared::kAclnnOnly      accepted: the row's defect needs the tensors (null, liveness, format,
//                           memory layout), which only the aclnn layer has
//   Shared::kStepValueOnly  accepted by CheckApplyFusedEmaAdam, refused by CheckStepValue: on the
//                           NPU path step's value is device memory the tiling cannot read
//   Shared::kOther          refused with the row's own shared message (ordering rows)
#include <cstdint>
#include <limits>
#include <string>

#include "../apply_fused_ema_adam_bad_inputs.h"
#include "../test_harness.h"
#include "apply_fused_ema_adam_check.h"
#include "data_type.h"

using namespace aea_test;
namespace aea = ascend_ema_adam;

namespace {

aea::Attrs AttrsOf(const Hyper& h)
{
    return aea::Attrs()
        .SetLr(h.lr)
        .SetEmaDecay(h.emaDecay)
        .SetBeta1(h.beta1)
        .SetBeta2(h.beta2)
        .SetEps(h.eps)
        .SetMode(h.mode)
        .SetBiasCorrection(h.biasCorrection)
        .SetWeightDecay(h.weightDecay);
}

/** What the adapter checks of a call: CheckApplyFusedEmaAdam on its dtypes, shapes and attributes. */
aea::Refusal CheckAsTheAdapterDoes(const CallSpec& c)
{
    const char* const* names = aea::kApplyFusedEmaAdamTensorNames;
    const aea::ApplyFusedEmaAdamTensorArgs args = {
        {names[kGrad], c.dtype[kGrad], c.shape[kGrad]}, {names[kVar], c.dtype[kVar], c.shape[kVar]},
        {names[kM], c.dtype[kM], c.shape[kM]},          {names[kV], c.dtype[kV], c.shape[kV]},
        {names[kS], c.dtype[kS], c.shape[kS]},          {names[kStep], c.dtype[kStep], c.shape[kStep]}};
    return aea::CheckApplyFusedEmaAdam(args, AttrsOf(c.h));
}

AEA_CASE(tensor_names_are_the_aclnn_names)
{
    for (int i = 0; i < kTensors; ++i) {
        EXPECT(std::string(aea::kApplyFusedEmaAdamTensorNames[i]) == kNames[i]);
    }
}

AEA_CASE(base_call_is_valid)
{
    const CallSpec c;
    EXPECT(CheckAsTheAdapterDoes(c).empty());
    EXPECT(aea::CheckStepValue(c.stepValue, c.h.biasCorrection).empty());
}

/** Every row of the aclnn layer's table, with its shared verdict. */
AEA_CASE(shared_bad_input_table)
{
    int counts[4] = {};
    for (const BadInput& row : BadInputs()) {
        CallSpec c;
        row.describe(c);
        const aea::Refusal refusal = CheckAsTheAdapterDoes(c);
        const aea::Refusal stepRefusal = aea::CheckStepValue(c.stepValue, c.h.biasCorrection);
        ++counts[static_cast<int>(row.shared)];
        switch (row.shared) {
            case Shared::kAlike:
                EXPECT_MSG(row.status == ACLNN_ERR_PARAM_INVALID, "[%s] a shared refusal is 161002",
                           row.name.c_str());
                EXPECT_MSG(Contains(refusal, row.message), "[%s] '%s' lacks '%s'", row.name.c_str(),
                           refusal.c_str(), row.message.c_str());
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
                EXPECT_MSG(Contains(stepRefusal, expected), "[%s] '%s' lacks '%s'",
                           row.name.c_str(), stepRefusal.c_str(), expected.c_str());
                break;
            }
            case Shared::kOther:
                EXPECT_MSG(Contains(refusal, row.sharedMessage), "[%s] '%s' lacks '%s'",
                           row.name.c_str(), refusal.c_str(), row.sharedMessage.c_str());
                break;
        }
    }
    std::printf("  %d refused alike, %d aclnn-only, %d step-value-only, %d other\n", counts[0],
                counts[1], counts[2], counts[3]);
    EXPECT(counts[0] > 0 && counts[1] > 0 && counts[2] > 0);
}

/** Without bias correction step is not used: any value is valid. */
AEA_CASE(any_step_without_bias_correction)
{
    for (int64_t step : {int64_t{1}, int64_t{0}, int64_t{-7}, std::numeric_limits<int64_t>::min()}) {
        EXPECT(aea::CheckStepValue(step, false).empty());
    }
    EXPECT(aea::CheckStepValue(1, true).empty());
    EXPECT(aea::CheckStepValue(std::numeric_limits<int64_t>::max(), true).empty());
}

/** Every float dtype of the table is accepted, with an int64 step. */
AEA_CASE(float_dtypes_accepted)
{
    for (const aea::DataTypeInfo& info : aea::kDataTypes) {
        CallSpec c;
        for (int i = 0; i < kStep; ++i) c.dtype[i] = static_cast<aclDataType>(info.cannCode);
        EXPECT_MSG(CheckAsTheAdapterDoes(c).empty() == info.isFloat, "%s", info.name);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    return RunCases(argc, argv);
}
