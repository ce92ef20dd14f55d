/**
 * @file apply_fused_ema_adam8bit_list_call.cpp
 * @brief The whole-call checks and the launch split shared by the 8-bit list op's kernels (see the
 *        header).
 */
#include "apply_fused_ema_adam8bit_list_call.h"

#include <c10/util/Exception.h>

#include "list_call_checks.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

using namespace ops;  // the torch ops' shared part (csrc/ops/common/)

namespace {

/** The names the shared validation's messages use for the single tensors (aclnn's). */
constexpr const char* kCheckTensorNames[kCallTensors] = {
    "qmapM", "qmapV", "step", "gradScaleOptional", "foundInfOptional", "lrTensorOptional",
    "emaDecayTensorOptional"};

/** The call as the shared whole-call checks (list_call_checks.h) see it. */
ListCallTensors WholeCallOf(const Adam8bitCall& call)
{
    ListCallTensors tensors;
    tensors.lists = call.lists.data();
    tensors.listCount = kAdam8bitLists;
    tensors.torchListNames = kAdam8bitTorchListNames;
    tensors.updated = kAdam8bitUpdated;
    tensors.entryName = Adam8bitEntryName;
    tensors.tensors = call.tensors.data();
    tensors.tensorCount = kCallTensors;
    tensors.torchTensorNames = kAdam8bitTorchTensorNames;
    tensors.checkTensorNames = kCheckTensorNames;
    return tensors;
}

}  // namespace

void CheckAdam8bitCallDevice(const Adam8bitCall& call, const at::Device& device)
{
    CheckWholeCallDevice(kAdam8bitOpName, WholeCallOf(call), device);
}

void CheckAdam8bitCallDescription(const Adam8bitCall& call, Adam8bitOptions* options)
{
    const ListCallTensors tensors = WholeCallOf(call);
    const ListEntryArgs<ListEntryArg> entries(tensors);
    const CallTensorArgs given(tensors);
    Adam8bitListArgs args;
    for (int l = 0; l < kAdam8bitLists; ++l) args.lists[l] = entries.list(l);
    args.qmapM = given.Given(kCallQmapM);
    args.qmapV = given.Given(kCallQmapV);
    args.step = given.Given(kCallStep);
    args.gradScale = given.Given(kCallGradScale);
    args.foundInf = given.Given(kCallFoundInf);
    args.lr = given.Given(kCallLr);
    args.emaDecay = given.Given(kCallEmaDecay);
    args.wholeCall = true;  // launched in slices of at most 256 entries (Adam8bitLaunches)
    Adam8bitDtypes dtypes{DataType::kFloat32, DataType::kFloat32};
    Adam8bitOptions found;
    const Refusal refusal =
        CheckApplyFusedEmaAdam8bitList(args, call.attrs, call.attrs.maximize, &dtypes, &found);
    TORCH_CHECK(refusal.empty(), kAdam8bitOpName, ": ", refusal);
    if (options != nullptr) *options = found;
}

void CheckAdam8bitCallMemory(const Adam8bitCall& call)
{
    CheckWholeCallMemory(kAdam8bitOpName, WholeCallOf(call));
}

std::vector<std::pair<size_t, size_t>> Adam8bitLaunches(size_t entries)
{
    return SplitLaunches(entries, kAdam8bitMaxTensors);
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list
