/**
 * @file apply_fused_ema_adam_list_call.cpp
 * @brief The whole-call checks and the launch split shared by the list op's kernels (see the
 *        header).
 */
#include "apply_fused_ema_adam_list_call.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <array>

#include "list_call_checks.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using namespace ops;  // the torch ops' shared part (csrc/common/)

namespace {

/** The names the shared validation's messages use for the step and the
 *  ApplyFusedEmaAdamListCallScalar tensors. */
constexpr const char* kCheckTensorNames[1 + kCallScalars] = {
    kApplyFusedEmaAdamListStepName, kApplyFusedEmaAdamListGradScaleName,
    kApplyFusedEmaAdamListFoundInfName, kApplyFusedEmaAdamListLrName,
    kApplyFusedEmaAdamListEmaDecayName};

/** The call as the shared whole-call checks (list_call_checks.h) see it: the step, then the
 *  optional one-element tensors given (null: absent), in `tensors`. */
ListCallTensors WholeCallOf(const ListCall& call,
                          std::array<const at::Tensor*, 1 + kCallScalars>* tensors)
{
    (*tensors)[0] = call.step;
    for (int s = 0; s < kCallScalars; ++s) {
        (*tensors)[1 + s] = call.scalars[s]->has_value() ? &**call.scalars[s] : nullptr;
    }
    ListCallTensors view;
    view.lists = call.lists.data();
    view.listCount = kApplyFusedEmaAdamListTensorLists;
    view.torchListNames = kApplyFusedEmaAdamListTorchNames;
    view.updated = kApplyFusedEmaAdamListUpdated;
    view.entryName = ApplyFusedEmaAdamListEntryName;
    view.tensors = tensors->data();
    view.tensorCount = 1 + kCallScalars;
    view.torchTensorNames = kApplyFusedEmaAdamListTorchTensorNames;
    view.checkTensorNames = kCheckTensorNames;
    return view;
}

}  // namespace

std::vector<at::Tensor> ApplyFusedEmaAdamListPlaceholders(const ListCall& call, int list,
                                                          std::pair<size_t, size_t> launch)
{
    const size_t entries = launch.second - launch.first;
    if (!kApplyFusedEmaAdamListOptional[list] || !call.lists[list].empty() || entries == 0)
        return {};
    const at::TensorList like = call.lists[list == kApplyFusedEmaAdamListCopies
                                               ? kApplyFusedEmaAdamListVars
                                               : kApplyFusedEmaAdamListMs];
    // An empty vars / ms beside entries of grads: phase 1 refuses the lists' lengths.
    if (like.empty()) return {};
    return std::vector<at::Tensor>(entries, at::empty({0}, like[0].options()));
}

void CheckApplyFusedEmaAdamListCallDevice(const char* op, const ListCall& call,
                                          const at::Device& device)
{
    std::array<const at::Tensor*, 1 + kCallScalars> tensors;
    CheckWholeCallDevice(op, WholeCallOf(call, &tensors), device);
}

void CheckApplyFusedEmaAdamListCallDescription(const char* op, const ListCall& call)
{
    std::array<const at::Tensor*, 1 + kCallScalars> given;
    const ListCallTensors tensors = WholeCallOf(call, &given);
    const ListEntryArgs<ListEntryArg> entries(tensors);
    const CallTensorArgs scalars(tensors);
    ApplyFusedEmaAdamListArgs args;
    for (int l = 0; l < kApplyFusedEmaAdamListTensorLists; ++l) args.lists[l] = entries.list(l);
    args.step = scalars.Given(0);
    args.gradScale = scalars.Given(1 + kCallGradScale);
    args.foundInf = scalars.Given(1 + kCallFoundInf);
    args.lr = scalars.Given(1 + kCallLr);
    args.emaDecay = scalars.Given(1 + kCallEmaDecay);
    args.emaOptional = true;  // an empty ss: no EMA on this launch
    ApplyFusedEmaAdamListDtypes dtypes;
    ApplyFusedEmaAdamListOptions options;
    const Refusal refusal =
        CheckApplyFusedEmaAdamList(args, call.attrs, &dtypes, &options);
    TORCH_CHECK(refusal.empty(), op, ": ", refusal);
}

void CheckApplyFusedEmaAdamListCallMemory(const char* op, const ListCall& call)
{
    std::array<const at::Tensor*, 1 + kCallScalars> tensors;
    CheckWholeCallMemory(op, WholeCallOf(call, &tensors));
}

std::vector<std::pair<size_t, size_t>> ApplyFusedEmaAdamListLaunches(size_t entries)
{
    return SplitLaunches(entries, kApplyFusedEmaAdamListMaxTensors);
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
