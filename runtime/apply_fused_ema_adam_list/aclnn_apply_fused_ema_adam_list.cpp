/**
 * @file aclnn_apply_fused_ema_adam_list.cpp
 * @brief The two-phase aclnn API of ApplyFusedEmaAdamList and ApplyFusedEmaAdamListV2 on the CPU
 *        device.
 *
 * V1 (aclnnApplyFusedEmaAdamList) is V2 (aclnnApplyFusedEmaAdamListV2) with a full ssRef and
 * without the lr/emaDecay tensors: one implementation. Every list keeps the contract of the aclnn
 * that CANN generates from the OpDef and of opbase's executor: a NULL list is refused (161001, a
 * DYNAMIC parameter is null-checked), an absent list (maxVsRef, modelCopiesRef, V2's ssRef: no
 * EMA) is an empty one or one of zero-element placeholders (what CANN's stack needs:
 * docs/ACLNN.md, "Absent lists"), and a list of more than kApplyFusedEmaAdamListMaxTensors (256)
 * tensors is refused (161002). The instances of a repeatable executor are numbered as opbase
 * numbers them. V2's lrTensorOptional / emaDecayTensorOptional, one-element fp32 tensors read when
 * the launch runs, replace the attributes.
 *
 * Phase 1 (GetWorkspaceSize) checks every argument before it does anything, in a fixed order:
 * null lists, scalars and out-arguments; live lists; list sizes; null entries; live tensors; then
 * the shared validation of op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_check.h
 * (lengths, dtypes, shapes, scalar tensors, attributes); then formats, memory layout (updated
 * tensors address distinct elements; no updated tensor overlaps any other tensor of the call, one
 * sorted sweep over all of them) and the step's value. It then runs the list tiling and registers a
 * single-use executor holding each entry's memory (and a staging copy in the workspace for each
 * strided view). Phase 2 queues the executor on the stream (RunPhase2, shared with every operator).
 *
 * Host work grows with the number of tensors, so it is kept per tensor to a few loads and
 * compares: names are built only for a refusal, one registry look-up per list, no allocation
 * per contiguous tensor.
 */
#include "aclnnop/aclnn_apply_fused_ema_adam_list.h"
#include "aclnnop/aclnn_apply_fused_ema_adam_list_v2.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "acl_view.h"
#include "aclnn_common.h"
#include "aclnn_list_common.h"
#include "apply_fused_ema_adam_list_buffers.h"
#include "apply_fused_ema_adam_list_check.h"
#include "apply_fused_ema_adam_list_native.h"
#include "apply_fused_ema_adam_list_opdef.h"
#include "apply_fused_ema_adam_list_signature.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "apply_fused_ema_adam_list_twin_run.h"
#include "cpu_kernel.h"
#include "native_runtime.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

namespace {

using namespace acl;  // the CPU ACL runtime (runtime/acl/)

constexpr AclnnOp kOpV1{"ApplyFusedEmaAdamList", "aclnnApplyFusedEmaAdamListGetWorkspaceSize",
                        "aclnnApplyFusedEmaAdamList"};
constexpr AclnnOp kOpV2{"ApplyFusedEmaAdamListV2", "aclnnApplyFusedEmaAdamListV2GetWorkspaceSize",
                        "aclnnApplyFusedEmaAdamListV2"};

constexpr int kLists = kApplyFusedEmaAdamListTensorLists;

/** The one-element tensor arguments, in signature order (LaunchScalars'). */
enum ScalarArg : int { kStep, kGradScale, kFoundInf, kLr, kEmaDecay, kScalars };
constexpr const char* kScalarNames[kScalars] = {
    kApplyFusedEmaAdamListStepName, kApplyFusedEmaAdamListGradScaleName,
    kApplyFusedEmaAdamListFoundInfName, kApplyFusedEmaAdamListLrName,
    kApplyFusedEmaAdamListEmaDecayName};
static_assert(kScalars == LaunchScalars::kCount && kEmaDecay == LaunchScalars::kEmaDecay);

/** The arguments as the shared list code (aclnn_list_common.h) sees them: the step required. */
constexpr ListOpArgs kArgs{kLists,
                           kApplyFusedEmaAdamListNames,
                           kApplyFusedEmaAdamListUpdated,
                           kApplyFusedEmaAdamListOutputOrder,
                           kApplyFusedEmaAdamListOutputs,
                           kApplyFusedEmaAdamListMaxTensors,
                           ApplyFusedEmaAdamListEntryName,
                           kScalars,
                           kScalarNames,
                           kStep + 1};

/** One call's arguments. */
struct Call {
    const AclnnOp* op = &kOpV1;  // V2: ssRef may be empty, lr/emaDecay tensors
    const aclTensorList* lists[kLists] = {};
    const aclTensor* scalars[kScalars] = {};
    ApplyFusedEmaAdamListAttrs attrs;

    bool V2() const { return op == &kOpV2; }
    const char* Phase1() const { return op->phase1; }
};

struct ApplyFusedEmaAdamListExecutor final : ListExecutor {
    explicit ApplyFusedEmaAdamListExecutor(const AclnnOp& op) : ListExecutor(op, kArgs, kLists) {}

    ApplyFusedEmaAdamListTilingResult tiling;
    Platform platform;

    std::unique_ptr<aclOpExecutor> Copy() const override
    {
        return std::make_unique<ApplyFusedEmaAdamListExecutor>(*this);
    }

private:
    void Launch(const std::vector<void*>* entries) const override;
    bool SetTensorAddress(int scalar, char* first) override;
};

// ---- CheckParams, in order: every check returns ACLNN_SUCCESS (0) or the status it rejected with

/** The shared validation (op_host), on what it sees of the live handles. */
aclnnStatus CheckDescription(const Call& call, ApplyFusedEmaAdamListDtypes* dtypes,
                             ApplyFusedEmaAdamListOptions* options)
{
    std::vector<ListEntryArg> entries[kLists];
    ApplyFusedEmaAdamListArgs args;
    for (int list = 0; list < kLists; ++list) {
        entries[list] = EntriesOf<ListEntryArg>(call.lists[list]);
        args.lists[list] = &entries[list];
    }
    const ListTensorArgs scalars(kArgs, call.scalars);  // the arguments point into it
    LaunchScalars::Describe(scalars, kStep, &args);
    args.emaOptional = call.V2();
    return RejectIf(call.Phase1(),
                    CheckApplyFusedEmaAdamList(args, call.attrs, dtypes, options));
}

aclnnStatus CheckParams(const Call& call, const uint64_t* workspaceSize,
                        aclOpExecutor* const* executor, ApplyFusedEmaAdamListDtypes* dtypes,
                        ApplyFusedEmaAdamListOptions* options)
{
    if (aclnnStatus s = CheckListHandles(call.Phase1(), kArgs, call.lists, call.scalars,
                                         workspaceSize, executor)) {
        return s;
    }
    if (aclnnStatus s = CheckDescription(call, dtypes, options)) return s;
    // Every list entry, then the one-element tensors (read-only: grads, step, the scale, flag, lr
    // and decay, which may share memory).
    const CallTensors tensors = ListCallTensors(kArgs, call.lists, call.scalars);
    if (aclnnStatus s = CheckFormats(call.Phase1(), tensors)) return s;
    if (aclnnStatus s = CheckMemory(call.Phase1(), tensors)) return s;
    // The step's value: on the CPU device its memory is host memory, read here, once all else is
    // known to be valid (an int64 of one element, not overlapping any updated tensor).
    const int64_t step = *reinterpret_cast<const int64_t*>(FirstElement(call.scalars[kStep]));
    return RejectIf(call.Phase1(), CheckStepValue(step, call.attrs.biasCorrection));
}

// ---- phase 2 -----------------------------------------------------------------------------------

/** The CPU device's list kernel on contiguous memory (ListExecutor::RunCpuKernel: native or
 *  twin). */
void ApplyFusedEmaAdamListExecutor::Launch(const std::vector<void*>* entries) const
{
    const auto listOrNull = [&](int list) { return EntriesOrNull(entries[list]); };
    ApplyFusedEmaAdamListBuffers b;
    b.tensorNum = static_cast<uint32_t>(numels.size());
    b.numels = numels.data();
    b.grads = listOrNull(kApplyFusedEmaAdamListGrads);
    b.vars = listOrNull(kApplyFusedEmaAdamListVars);
    b.ms = listOrNull(kApplyFusedEmaAdamListMs);
    b.vs = listOrNull(kApplyFusedEmaAdamListVs);
    b.ss = listOrNull(kApplyFusedEmaAdamListSs);
    b.maxVs = listOrNull(kApplyFusedEmaAdamListMaxVs);
    b.copies = listOrNull(kApplyFusedEmaAdamListCopies);
    scalars.Into(&b);
    RunCpuKernel([&] { RunApplyFusedEmaAdamListOnTwin(tiling, platform, b); },
                 [&](const NativeOptions& options) {
                     return RunApplyFusedEmaAdamListNative(tiling, b, options);
                 });
}

// ---- address updates of a repeatable executor (acl_executor_reuse.cpp) -------------------------

// Instances as opbase numbers them (NnopbaseAddInput / NnopbaseExecutorUpdateTensorsIndex;
// ListExecutor): the seven lists (kList* order) with their lengths as given (a placeholder list
// its length), then one per one-element input of the operator, given or NULL (step, grad scale,
// found-inf; V2: lr, EMA decay).
bool ApplyFusedEmaAdamListExecutor::SetTensorAddress(int scalar, char* first)
{
    scalars.Move(scalar, first);
    return true;
}

aclnnStatus GetWorkspaceSize(const Call& call, uint64_t* workspaceSize, aclOpExecutor** executor)
{
    ApplyFusedEmaAdamListDtypes dtypes{};
    ApplyFusedEmaAdamListOptions options;
    if (aclnnStatus s = CheckParams(call, workspaceSize, executor, &dtypes, &options)) return s;
    const char* phase1 = call.Phase1();
    auto e = std::make_unique<ApplyFusedEmaAdamListExecutor>(*call.op);
    if (aclnnStatus s = e->Begin(phase1, call.lists[kApplyFusedEmaAdamListGrads])) return s;
    e->platform = CpuPlatform();
    if (aclnnStatus s = TileOrReject(phase1, [&] {
            e->tiling = ComputeApplyFusedEmaAdamListTiling(e->numels, dtypes, call.attrs, options,
                                                           e->platform);
        })) {
        return s;
    }
    const bool present[kLists] = {true, true, true, true, options.ema, options.amsgrad,
                                  dtypes.hasCopy};
    for (int list = 0; list < kLists; ++list) {
        e->HoldList(list, call.lists[list], present[list]);
    }
    e->scalars.Set(call.scalars);
    e->singleInputs = call.V2() ? kScalars : kLr;  // the operator's one-element inputs
    return ListExecutor::Register(std::move(e), workspaceSize, executor);
}

}  // namespace

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

namespace ascend_ema_adam::apply_fused_ema_adam_list {
namespace {

using namespace acl;  // the CPU ACL runtime (runtime/acl/)

/** Both versions' phase 1: the lists and the tensors (kStep ... kEmaDecay) in CANN's order; V1
 *  passes a full ssRef and no lr/emaDecay tensors (null). */
aclnnStatus ApplyFusedEmaAdamListPhase1(const AclnnOp& op,
                                        const std::array<const aclTensorList*, kLists>& lists,
                                        const std::array<const aclTensor*, kScalars>& scalars,
                                        const ApplyFusedEmaAdamListAttrs& attrs,
                                        uint64_t* workspaceSize, aclOpExecutor** executor)
{
    return Guarded(op.phase1, [&] {
        Call call;
        call.op = &op;
        std::copy(lists.begin(), lists.end(), call.lists);
        std::copy(scalars.begin(), scalars.end(), call.scalars);
        call.attrs = attrs;
        return GetWorkspaceSize(call, workspaceSize, executor);
    });
}

}  // namespace
}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

// The parameters are the spec's (apply_fused_ema_adam_list_signature.h); include/aclnnop/ declares
// the same functions, which the compiler holds these definitions to.
extern "C" {

aclnnStatus aclnnApplyFusedEmaAdamListGetWorkspaceSize(ACLNN_APPLY_FUSED_EMA_ADAM_LIST_PARAMS,
                                                       uint64_t* workspaceSize,
                                                       aclOpExecutor** executor)
{
    namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;
    list_op::ApplyFusedEmaAdamListAttrs attrs;
    APPLY_FUSED_EMA_ADAM_LIST_SET_ATTRS(attrs);
    return list_op::ApplyFusedEmaAdamListPhase1(
        list_op::kOpV1, {ACLNN_APPLY_FUSED_EMA_ADAM_LIST_LISTS},
        {ACLNN_APPLY_FUSED_EMA_ADAM_LIST_TENSORS}, attrs, workspaceSize, executor);
}

aclnnStatus aclnnApplyFusedEmaAdamList(void* workspace, uint64_t workspaceSize,
                                       aclOpExecutor* executor, aclrtStream stream)
{
    namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;
    return ascend_ema_adam::acl::GuardedPhase2(list_op::kOpV1, workspace, workspaceSize, executor,
                                               stream);
}

aclnnStatus aclnnApplyFusedEmaAdamListV2GetWorkspaceSize(ACLNN_APPLY_FUSED_EMA_ADAM_LIST_V2_PARAMS,
                                                         uint64_t* workspaceSize,
                                                         aclOpExecutor** executor)
{
    namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;
    list_op::ApplyFusedEmaAdamListAttrs attrs;
    APPLY_FUSED_EMA_ADAM_LIST_SET_ATTRS(attrs);
    return list_op::ApplyFusedEmaAdamListPhase1(
        list_op::kOpV2, {ACLNN_APPLY_FUSED_EMA_ADAM_LIST_V2_LISTS},
        {ACLNN_APPLY_FUSED_EMA_ADAM_LIST_V2_TENSORS}, attrs, workspaceSize, executor);
}

aclnnStatus aclnnApplyFusedEmaAdamListV2(void* workspace, uint64_t workspaceSize,
                                         aclOpExecutor* executor, aclrtStream stream)
{
    namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;
    return ascend_ema_adam::acl::GuardedPhase2(list_op::kOpV2, workspace, workspaceSize, executor,
                                               stream);
}

}  // extern "C"
