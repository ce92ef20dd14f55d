/**
 * @file apply_fused_ema_adam8bit_list_call.cpp
 * @brief The whole-call checks and the launch split shared by the 8-bit list op's kernels (see the
 *        header).
 */
#include "apply_fused_ema_adam8bit_list_call.h"

#include <c10/util/Exception.h>

#include "list_call_checks.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

using namespace ops;  // the torch ops' shared part (csrc/common/)

namespace {

/** The names the shared validation's messages use for the single tensors (aclnn's). */
constexpr const char* kCheckTensorNames[kCallTensors] = {
    "qmapM", "qmapV", "step", "gradScaleOptional", "foundInfOptional", "lrTensorOptional",
    "emaDecayTensorOptional"};

/** The call as the shared whole-call checks (list_call_checks.h) see it. */
ListCallTensors WholeCallOf(const ApplyFusedEmaAdam8bitListCall& call)
{
    ListCallTensors tensors;
    tensors.lists = call.lists.data();
    tensors.listCount = kApplyFusedEmaAdam8bitListTensorLists;
    tensors.torchListNames = kApplyFusedEmaAdam8bitListTorchListNames;
    tensors.updated = kApplyFusedEmaAdam8bitListUpdated;
    tensors.entryName = ApplyFusedEmaAdam8bitListEntryName;
    tensors.tensors = call.tensors.data();
    tensors.tensorCount = kCallTensors;
    tensors.torchTensorNames = kApplyFusedEmaAdam8bitListTorchTensorNames;
    tensors.checkTensorNames = kCheckTensorNames;
    return tensors;
}

}  // namespace

void CheckApplyFusedEmaAdam8bitListCallDevice(const ApplyFusedEmaAdam8bitListCall& call,
                                              const at::Device& device)
{
    CheckWholeCallDevice(kApplyFusedEmaAdam8bitListOpName, WholeCallOf(call), device);
}

void CheckApplyFusedEmaAdam8bitListCallDescription(const ApplyFusedEmaAdam8bitListCall& call,
                                                   ApplyFusedEmaAdam8bitListOptions* options)
{
    const ListCallTensors tensors = WholeCallOf(call);
    const ListEntryArgs<ListEntryArg> entries(tensors);
    const CallTensorArgs given(tensors);
    ApplyFusedEmaAdam8bitListArgs args;
    for (int l = 0; l < kApplyFusedEmaAdam8bitListTensorLists; ++l) args.lists[l] = entries.list(l);
    args.qmapM = given.Given(kCallQmapM);
    args.qmapV = given.Given(kCallQmapV);
    args.step = given.Given(kCallStep);
    args.gradScale = given.Given(kCallGradScale);
    args.foundInf = given.Given(kCallFoundInf);
    args.lr = given.Given(kCallLr);
    args.emaDecay = given.Given(kCallEmaDecay);
    args.wholeCall =
        true;  // launched in slices of at most 256 entries (ApplyFusedEmaAdam8bitListLaunches)
    ApplyFusedEmaAdam8bitListDtypes dtypes{DataType::kFloat32, DataType::kFloat32};
    ApplyFusedEmaAdam8bitListOptions found;
    const Refusal refusal =
        CheckApplyFusedEmaAdam8bitList(args, call.attrs, call.attrs.maximize, &dtypes, &found);
    TORCH_CHECK(refusal.empty(), kApplyFusedEmaAdam8bitListOpName, ": ", refusal);
    if (options != nullptr) *options = found;
}

void CheckApplyFusedEmaAdam8bitListCallMemory(const ApplyFusedEmaAdam8bitListCall& call)
{
    CheckWholeCallMemory(kApplyFusedEmaAdam8bitListOpName, WholeCallOf(call));
}

std::vector<std::pair<size_t, size_t>> ApplyFusedEmaAdam8bitListLaunches(size_t entries)
{
    return SplitLaunches(entries, kApplyFusedEmaAdam8bitListMaxTensors);
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list
