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
 * docs/ACLNN.md, "Absent lists"), and a list of more than kListMaxTensors (256) tensors is refused
 * (161002). The instances of a repeatable executor are numbered as opbase numbers them.
 * V2's lrTensorOptional / emaDecayTensorOptional, one-element fp32 tensors read when the launch
 * runs, replace the attributes.
 *
 * Phase 1 (GetWorkspaceSize) checks every argument before it does anything, in a fixed order:
 * null lists, scalars and out-arguments; live lists; list sizes; null entries; live tensors; then
 * the shared validation of op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_check.h (lengths, dtypes, shapes,
 * scalar tensors, attributes); then formats, memory layout (updated tensors address distinct
 * elements; no updated tensor overlaps any other tensor of the call, one sorted sweep over all of
 * them) and the step's value. It then runs the list tiling and registers a single-use executor
 * holding each entry's memory (and a staging copy in the workspace for each strided view). Phase 2
 * queues the executor on the stream (RunPhase2, shared with every operator).
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
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "acl_view.h"
#include "aclnn_common.h"
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

constexpr int kLists = kApplyFusedEmaAdamLists;
constexpr const char* const* kListNames = kApplyFusedEmaAdamListNames;
constexpr const bool* kUpdated = kApplyFusedEmaAdamListUpdated;

/** The one-element tensor arguments, in signature order. */
enum ScalarArg : int { kStep, kGradScale, kFoundInf, kLr, kEmaDecay, kScalars };
constexpr const char* kScalarNames[kScalars] = {kListStepName, kListGradScaleName,
                                                kListFoundInfName, kListLrName, kListEmaDecayName};

/** One call's arguments. */
struct Call {
    const AclnnOp* op = &kOpV1;  // V2: ssRef may be empty, lr/emaDecay tensors
    const aclTensorList* lists[kLists] = {};
    const aclTensor* scalars[kScalars] = {};
    ListAttrs attrs;

    bool V2() const { return op == &kOpV2; }
    const char* Phase1() const { return op->phase1; }
};

size_t SizeOf(const aclTensorList* list)
{
    return list->tensors.size();
}

/** A strided view of entry `index` of list `list`, staged through the workspace. */
struct StagedView {
    int list;
    size_t index;
    View view;
};

struct ApplyFusedEmaAdamListExecutor final : aclOpExecutor {
    explicit ApplyFusedEmaAdamListExecutor(const AclnnOp& op) : aclOpExecutor(op) {}

    ListTilingResult tiling;
    Platform platform;
    std::vector<uint64_t> numels;
    std::vector<void*> data[kLists];  // per entry its contiguous memory (null: staged); an
                                      // absent optional list has none
    std::vector<StagedView> staged;
    const int64_t* step = nullptr;
    const float* gradScale = nullptr;
    const float* foundInf = nullptr;
    const float* lr = nullptr;
    const float* emaDecay = nullptr;
    CpuKernel kernel = CpuKernel::kNative;  // from the environment at phase 1
    uint32_t threads = 0;                   // the native kernel's
    size_t listSizes[kLists] = {};          // each list's length as given (0: empty)
    int scalarInputs = 0;                   // the operator's one-element inputs (V1 3, V2 5)

    void Execute(char* workspace) const override;
    std::unique_ptr<aclOpExecutor> Copy() const override
    {
        return std::make_unique<ApplyFusedEmaAdamListExecutor>(*this);
    }
    /** inputInstances and outputInstances from the lists' lengths and the scalars given. */
    void CountInstances();
    bool SetAddress(bool input, size_t irIndex, size_t relativeIndex,
                    const aclTensor* tensor) override;

private:
    const float** ScalarSlot(int scalar);
};

// ---- CheckParams, in order: every check returns ACLNN_SUCCESS (0) or the status it rejected with

aclnnStatus CheckListEntries(const Call& call, int list)
{
    const char* phase1 = call.Phase1();
    const std::vector<const aclTensor*>& tensors = call.lists[list]->tensors;
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (tensors[i] == nullptr) {
            return Reject(phase1, ACLNN_ERR_PARAM_NULLPTR,
                          ListEntryName(list, i) + " is null");
        }
    }
    const size_t dead = FirstDeadTensor(tensors.data(), tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        const aclTensor* t = tensors[i];
        if (i == dead || (t->data == nullptr && Numel(t->viewDims) > 0)) {
            return CheckLiveTensor(phase1, ListEntryName(list, i).c_str(), t);
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus CheckHandles(const Call& call, const uint64_t* workspaceSize,
                         aclOpExecutor* const* executor)
{
    const char* phase1 = call.Phase1();
    // Every list is a DYNAMIC parameter: never null (an absent optional list is an empty list).
    for (int list = 0; list < kLists; ++list) {
        if (aclnnStatus s = CheckNotNull(phase1, kListNames[list], call.lists[list])) return s;
    }
    if (aclnnStatus s = CheckNotNull(phase1, kScalarNames[kStep], call.scalars[kStep])) return s;
    if (aclnnStatus s = CheckNotNull(phase1, "workspaceSize", workspaceSize)) return s;
    if (aclnnStatus s = CheckNotNull(phase1, "executor", executor)) return s;
    for (int list = 0; list < kLists; ++list) {
        if (!IsLiveTensorList(call.lists[list])) {
            return Reject(phase1, ACLNN_ERR_PARAM_INVALID,
                          std::string(kListNames[list]) +
                              " is not a live aclTensorList (already destroyed, or not from "
                              "aclCreateTensorList)");
        }
    }
    for (int list = 0; list < kLists; ++list) {
        const size_t size = SizeOf(call.lists[list]);
        if (size > kListMaxTensors) {
            return Reject(phase1, ACLNN_ERR_PARAM_INVALID,
                          std::string(kListNames[list]) + " holds " + std::to_string(size) +
                              " tensors, more than the " + std::to_string(kListMaxTensors) +
                              " a dynamic list of a CANN operator may hold (opbase's limit): "
                              "launch in slices of at most " +
                              std::to_string(kListMaxTensors) + " entries");
        }
    }
    for (int list = 0; list < kLists; ++list) {
        if (aclnnStatus s = CheckListEntries(call, list)) return s;
    }
    for (int i = 0; i < kScalars; ++i) {
        if (call.scalars[i] != nullptr) {
            if (aclnnStatus s = CheckLiveTensor(phase1, kScalarNames[i], call.scalars[i])) {
                return s;
            }
        }
    }
    return ACLNN_SUCCESS;
}

/** The shared validation (op_host), on what it sees of the live handles. */
aclnnStatus CheckDescription(const Call& call, ListDtypes* dtypes, ListOptions* options)
{
    std::vector<ListEntryArg> entries[kLists];
    ApplyFusedEmaAdamListArgs args;
    for (int list = 0; list < kLists; ++list) {
        entries[list].reserve(call.lists[list]->tensors.size());
        for (const aclTensor* t : call.lists[list]->tensors) {
            entries[list].push_back({static_cast<int32_t>(t->dataType), &t->viewDims});
        }
        args.lists[list] = &entries[list];
    }
    std::optional<TensorArg> scalars[kScalars];
    for (int i = 0; i < kScalars; ++i) {
        if (call.scalars[i] != nullptr) scalars[i].emplace(ArgOf(kScalarNames[i], call.scalars[i]));
    }
    args.step = &*scalars[kStep];
    args.gradScale = scalars[kGradScale] ? &*scalars[kGradScale] : nullptr;
    args.foundInf = scalars[kFoundInf] ? &*scalars[kFoundInf] : nullptr;
    args.lr = scalars[kLr] ? &*scalars[kLr] : nullptr;
    args.emaDecay = scalars[kEmaDecay] ? &*scalars[kEmaDecay] : nullptr;
    args.emaOptional = call.V2();
    return RejectIf(call.Phase1(),
                    CheckApplyFusedEmaAdamList(args, call.attrs, dtypes, options));
}

/** Every list entry, then the one-element tensors, for the shared format and memory checks
 *  (read-only: grads, step, the scale, flag, lr and decay, which may share memory). */
CallTensors CallTensorsOf(const Call& call)
{
    CallTensors out;
    std::array<size_t, kLists> sizes{};  // the lists' lengths: argument k's name is found from them
    for (int list = 0; list < kLists; ++list) {
        sizes[list] = SizeOf(call.lists[list]);
        for (const aclTensor* t : call.lists[list]->tensors) {
            out.Add(t, kUpdated[list]);
        }
    }
    std::array<int, kScalars> scalars{};  // the one-element tensors given, in order
    int given = 0;
    for (int i = 0; i < kScalars; ++i) {
        if (call.scalars[i] != nullptr) {
            out.Add(call.scalars[i], false);
            scalars[given++] = i;
        }
    }
    out.nameOf = [sizes, scalars](size_t k) {
        for (int list = 0; list < kLists; ++list) {
            if (k < sizes[list]) return ListEntryName(list, k);
            k -= sizes[list];
        }
        return std::string(kScalarNames[scalars[k]]);
    };
    return out;
}

aclnnStatus CheckParams(const Call& call, const uint64_t* workspaceSize,
                        aclOpExecutor* const* executor, ListDtypes* dtypes, ListOptions* options)
{
    if (aclnnStatus s = CheckHandles(call, workspaceSize, executor)) return s;
    if (aclnnStatus s = CheckDescription(call, dtypes, options)) return s;
    const CallTensors tensors = CallTensorsOf(call);
    if (aclnnStatus s = CheckFormats(call.Phase1(), tensors)) return s;
    if (aclnnStatus s = CheckMemory(call.Phase1(), tensors)) return s;
    // The step's value: on the CPU device its memory is host memory, read here, once all else is
    // known to be valid (an int64 of one element, not overlapping any updated tensor).
    const int64_t step = *reinterpret_cast<const int64_t*>(FirstElement(call.scalars[kStep]));
    return RejectIf(call.Phase1(), CheckStepValue(step, call.attrs.biasCorrection));
}

// ---- phase 2 -----------------------------------------------------------------------------------

/**
 * The CPU device's list kernel on contiguous memory, the one place it is chosen: the native
 * kernel by default; the AscendC list kernel, unchanged, through the twin with
 * ASCEND_EMA_ADAM_CPU_KERNEL=twin. Both give the same bits.
 */
void RunListKernel(const ApplyFusedEmaAdamListExecutor& e,
                   const ApplyFusedEmaAdamListBuffers& buffers)
{
    if (e.kernel == CpuKernel::kTwin) {
        RunListOnTwin(e.tiling, e.platform, buffers);
        return;
    }
    NativeOptions options;
    options.threads = e.threads;
    NoteNativeLaunchThreads(RunNativeList(e.tiling, buffers, options));
}

/**
 * Phase 2's work, in stream order: with found_inf set, nothing at all (not even a staging copy
 * written back); else stage strided views in, run the kernel, scatter the updated ones back.
 */
void ApplyFusedEmaAdamListExecutor::Execute(char* workspace) const
{
    if (foundInf != nullptr && !(*foundInf == 0.0F)) {  // NaN counts as set
        return;
    }
    std::vector<void*> staging[kLists];
    const std::vector<void*>* pointers = data;
    if (!staged.empty()) {
        for (int list = 0; list < kLists; ++list) staging[list] = data[list];
        for (const StagedView& s : staged) {
            staging[s.list][s.index] = StageIn(s.view, workspace);
        }
        pointers = staging;
    }
    const auto listOrNull = [&](int list) {
        return pointers[list].empty() ? nullptr : pointers[list].data();
    };
    ApplyFusedEmaAdamListBuffers b;
    b.tensorNum = static_cast<uint32_t>(numels.size());
    b.numels = numels.data();
    b.grads = listOrNull(kListGrads);
    b.vars = listOrNull(kListVars);
    b.ms = listOrNull(kListMs);
    b.vs = listOrNull(kListVs);
    b.ss = listOrNull(kListSs);
    b.maxVs = listOrNull(kListMaxVs);
    b.copies = listOrNull(kListCopies);
    b.step = step;
    b.gradScale = gradScale;
    b.foundInf = foundInf;
    b.lr = lr;
    b.emaDecay = emaDecay;
    RunListKernel(*this, b);
    for (const StagedView& s : staged) {
        if (kUpdated[s.list]) {
            StageOut(s.view, workspace);
        }
    }
}

// ---- address updates of a repeatable executor (acl_executor_reuse.cpp) -------------------------

// Instances as opbase numbers them (NnopbaseAddInput / NnopbaseExecutorUpdateTensorsIndex):
// inputs, the seven lists (kList* order) with their lengths as given (an empty list takes none; a
// placeholder list its length), then one per one-element input of the operator, given or NULL
// (step, grad scale, found-inf; V2: lr, EMA decay). Outputs: the in-place lists in the OpDef's
// order (kApplyFusedEmaAdamListOutputOrder).
void ApplyFusedEmaAdamListExecutor::CountInstances()
{
    outputInstances.clear();
    for (int list : kApplyFusedEmaAdamListOutputOrder) outputInstances.push_back(listSizes[list]);
    inputInstances.assign(listSizes, listSizes + kLists);
    inputInstances.insert(inputInstances.end(), static_cast<size_t>(scalarInputs), 1);
}

const float** ApplyFusedEmaAdamListExecutor::ScalarSlot(int scalar)
{
    const float** slots[kScalars] = {nullptr, &gradScale, &foundInf, &lr, &emaDecay};
    return slots[scalar];
}

bool ApplyFusedEmaAdamListExecutor::SetAddress(bool input, size_t irIndex, size_t relativeIndex,
                                               const aclTensor* tensor)
{
    char* first = FirstElement(tensor);
    if (first == nullptr && Numel(tensor->viewDims) > 0) return false;
    if (!input || irIndex < static_cast<size_t>(kLists)) {
        const int list = input ? static_cast<int>(irIndex)
                               : kApplyFusedEmaAdamListOutputOrder[irIndex];
        // no memory is ever read: an empty entry, or a list absent (empty, or placeholders)
        if (numels[relativeIndex] == 0 || data[list].empty()) return true;
        for (StagedView& s : staged) {
            if (s.list == list && s.index == relativeIndex) {
                s.view.first = first;
                return true;
            }
        }
        data[list][relativeIndex] = first;
        return true;
    }
    // one-element input k, at its slot whether or not it was given: only a given one has an
    // address to move
    const size_t scalar = irIndex - kLists;
    if (scalar >= static_cast<size_t>(scalarInputs)) return false;
    if (scalar == kStep) {
        step = reinterpret_cast<const int64_t*>(first);
        return true;
    }
    const float** slot = ScalarSlot(static_cast<int>(scalar));
    if (*slot != nullptr) {  // one not given at phase 1 keeps its slot, and nothing reads it
        *slot = reinterpret_cast<const float*>(first);
    }
    return true;
}

aclnnStatus GetWorkspaceSize(const Call& call, uint64_t* workspaceSize, aclOpExecutor** executor)
{
    ListDtypes dtypes{};
    ListOptions options;
    if (aclnnStatus s = CheckParams(call, workspaceSize, executor, &dtypes, &options)) return s;
    const char* phase1 = call.Phase1();
    auto e = std::make_unique<ApplyFusedEmaAdamListExecutor>(*call.op);
    if (aclnnStatus s = SelectCpuKernel(phase1, &e->kernel, &e->threads)) return s;
    const std::vector<const aclTensor*>& grads = call.lists[kListGrads]->tensors;
    e->numels.resize(grads.size());
    uint64_t elements = 0;
    for (size_t i = 0; i < grads.size(); ++i) {
        e->numels[i] = static_cast<uint64_t>(Numel(grads[i]->viewDims));
        elements += e->numels[i];
    }
    e->platform = CpuPlatform();
    try {
        e->tiling = ComputeListTiling(e->numels, dtypes, call.attrs, options, e->platform);
    } catch (const std::invalid_argument& ex) {
        return Reject(phase1, ACLNN_ERR_INNER_TILING_ERROR,
                      std::string("tiling failed: ") + ex.what());
    }
    uint64_t staging = 0;
    const bool present[kLists] = {true, true, true, true, options.ema, options.amsgrad,
                                  dtypes.hasCopy};
    for (int list = 0; list < kLists; ++list) {
        e->listSizes[list] = SizeOf(call.lists[list]);
        if (!present[list]) continue;  // empty, or placeholders: the kernel never sees it
        const std::vector<const aclTensor*>& tensors = call.lists[list]->tensors;
        e->data[list].resize(tensors.size());
        for (size_t i = 0; i < tensors.size(); ++i) {
            const aclTensor* t = tensors[i];
            if (e->numels[i] == 0 || IsContiguous(t->viewDims, t->strides)) {
                e->data[list][i] = FirstElement(t);
            } else {
                e->staged.push_back({list, i, MakeView(t, &staging)});
            }
        }
    }
    const auto first = [&](int i) {
        return call.scalars[i] != nullptr ? FirstElement(call.scalars[i]) : nullptr;
    };
    e->step = reinterpret_cast<const int64_t*>(first(kStep));
    e->gradScale = reinterpret_cast<const float*>(first(kGradScale));
    e->foundInf = reinterpret_cast<const float*>(first(kFoundInf));
    e->lr = reinterpret_cast<const float*>(first(kLr));
    e->emaDecay = reinterpret_cast<const float*>(first(kEmaDecay));
    e->scalarInputs = call.V2() ? kScalars : kLr;
    e->CountInstances();
    e->workspaceSize = staging;
    e->empty = elements == 0;
    *workspaceSize = staging;
    *executor = RegisterExecutor(std::move(e));
    return ACLNN_SUCCESS;
}

}  // namespace

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

namespace ascend_ema_adam::apply_fused_ema_adam_list {
namespace {

using namespace acl;  // the CPU ACL runtime (runtime/acl/)

/** Both versions' phase 1: the lists and the tensors (kStep ... kEmaDecay) in CANN's order; V1
 *  passes a full ssRef and no lr/emaDecay tensors (null). */
aclnnStatus ListPhase1(const AclnnOp& op, const std::array<const aclTensorList*, kLists>& lists,
                       const std::array<const aclTensor*, kScalars>& scalars,
                       const ListAttrs& attrs, uint64_t* workspaceSize, aclOpExecutor** executor)
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

aclnnStatus ListPhase2(const AclnnOp& op, void* workspace, uint64_t workspaceSize,
                       aclOpExecutor* executor, aclrtStream stream)
{
    return Guarded(op.phase2,
                   [&] { return RunPhase2(op, workspace, workspaceSize, executor, stream); });
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
    list_op::ListAttrs attrs;
    APPLY_FUSED_EMA_ADAM_LIST_SET_ATTRS(attrs);
    return list_op::ListPhase1(list_op::kOpV1, {ACLNN_APPLY_FUSED_EMA_ADAM_LIST_LISTS},
                               {ACLNN_APPLY_FUSED_EMA_ADAM_LIST_TENSORS}, attrs, workspaceSize,
                               executor);
}

aclnnStatus aclnnApplyFusedEmaAdamList(void* workspace, uint64_t workspaceSize,
                                       aclOpExecutor* executor, aclrtStream stream)
{
    namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;
    return list_op::ListPhase2(list_op::kOpV1, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnApplyFusedEmaAdamListV2GetWorkspaceSize(ACLNN_APPLY_FUSED_EMA_ADAM_LIST_V2_PARAMS,
                                                         uint64_t* workspaceSize,
                                                         aclOpExecutor** executor)
{
    namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;
    list_op::ListAttrs attrs;
    APPLY_FUSED_EMA_ADAM_LIST_SET_ATTRS(attrs);
    return list_op::ListPhase1(list_op::kOpV2, {ACLNN_APPLY_FUSED_EMA_ADAM_LIST_V2_LISTS},
                               {ACLNN_APPLY_FUSED_EMA_ADAM_LIST_V2_TENSORS}, attrs, workspaceSize,
                               executor);
}

aclnnStatus aclnnApplyFusedEmaAdamListV2(void* workspace, uint64_t workspaceSize,
                                         aclOpExecutor* executor, aclrtStream stream)
{
    namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;
    return list_op::ListPhase2(list_op::kOpV2, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
