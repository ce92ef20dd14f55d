// The validation the CANN tiling adapter runs on the NPU path (op_host/apply_fused_ema_adam/apply_fused_ema_adam_check.h,
// with CheckStepValue), held to the CPU aclnn layer's bad-input table row by row (the verdicts:
// shared_verdicts.h).
#include <cstdint>
#include <limits>
#include <string>

#include "../apply_fused_ema_adam_bad_inputs.h"
#include "../test_harness.h"
#include "apply_fused_ema_adam_check.h"
#include "shared_verdicts.h"
#include "data_type.h"

using namespace aea_test;
namespace aea = ascend_ema_adam;
namespace fused_op = ascend_ema_adam::apply_fused_ema_adam;

namespace {

/** What the adapter checks of a call: CheckApplyFusedEmaAdam on its dtypes, shapes and attributes. */
aea::Refusal CheckAsTheAdapterDoes(const CallSpec& c)
{
    const char* const* names = fused_op::kApplyFusedEmaAdamTensorNames;
    const fused_op::ApplyFusedEmaAdamTensorArgs args = {
        {names[kGrad], c.dtype[kGrad], c.shape[kGrad]}, {names[kVar], c.dtype[kVar], c.shape[kVar]},
        {names[kM], c.dtype[kM], c.shape[kM]},          {names[kV], c.dtype[kV], c.shape[kV]},
        {names[kS], c.dtype[kS], c.shape[kS]},          {names[kStep], c.dtype[kStep], c.shape[kStep]}};
    return fused_op::CheckApplyFusedEmaAdam(args, AttrsOf(c.h));
}

AEA_CASE(tensor_names_are_the_aclnn_names)
{
    for (int i = 0; i < kTensors; ++i) {
        EXPECT(std::string(fused_op::kApplyFusedEmaAdamTensorNames[i]) == kNames[i]);
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
    const std::vector<int> counts = ExpectSharedVerdicts<CallSpec>(
        BadInputs(), CheckAsTheAdapterDoes,
        [](const std::string& text, const std::string& part) { return Contains(text, part); });
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
