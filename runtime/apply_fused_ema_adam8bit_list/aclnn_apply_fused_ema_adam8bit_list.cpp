/**
 * @file aclnn_apply_fused_ema_adam8bit_list.cpp
 * @brief The two-phase aclnn API of ApplyFusedEmaAdam8bitList on the CPU device.
 *
 * The lists keep the contract of the aclnn CANN generates from the OpDef (as the list op's V2):
 * a NULL list is refused (161001), an absent optional list (ssRef: no EMA on this launch;
 * modelCopiesRef) is an empty one or one of zero-element placeholders (the NPU path's), and a
 * list of more than 256 tensors is refused (161002).
 *
 * Phase 1 (GetWorkspaceSize) checks every argument before it does anything, in a fixed order:
 * null lists, tensors and out-arguments; live lists; list sizes; null entries; live tensors; the
 * shared validation of op_host/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list_check.h
 * (lengths, dtypes, shapes, the maps' and scalar tensors' shapes, attributes); formats; memory
 * layout (updated tensors address distinct elements; no updated tensor overlaps any other tensor
 * of the call); the step's value; the maps' values (CheckAdam8bitMap: on the CPU device their
 * memory is host memory). It then tiles and registers an executor holding each tensor's memory (a
 * staging copy in the workspace for each strided view, maps included). Phase 2 queues the
 * executor on the stream (RunPhase2, shared with every operator): found_inf set writes nothing;
 * else the native kernel (default) or the AscendC kernel on the twin
 * (ASCEND_EMA_ADAM_CPU_KERNEL=twin), which give the same bits.
 */
#include "aclnnop/aclnn_apply_fused_ema_adam8bit_list.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "acl_view.h"
#include "aclnn_common.h"
#include "apply_fused_ema_adam8bit_list_buffers.h"
#include "apply_fused_ema_adam8bit_list_check.h"
#include "apply_fused_ema_adam8bit_list_native.h"
#include "apply_fused_ema_adam8bit_list_signature.h"
#include "apply_fused_ema_adam8bit_list_tiling.h"
#include "apply_fused_ema_adam8bit_list_twin_run.h"
#include "cpu_kernel.h"
#include "native_runtime.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

namespace {

using namespace acl;  // the CPU ACL runtime (runtime/acl/)

constexpr AclnnOp kOp{"ApplyFusedEmaAdam8bitList",
                      "aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize",
                      "aclnnApplyFusedEmaAdam8bitList"};
constexpr const char* kPhase1 = "aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize";

constexpr int kLists = kAdam8bitLists;
constexpr const char* const* kListNames = kAdam8bitListNames;
constexpr const bool* kUpdated = kAdam8bitUpdated;

/** The single-tensor arguments, in CANN's order (the spec's). */
enum TensorArgIndex : int { kQmapM, kQmapV, kStep, kGradScale, kFoundInf, kLr, kEmaDecay, kTensors };
constexpr const char* kTensorNames[kTensors] = {
    "qmapM", "qmapV", "step", "gradScaleOptional", "foundInfOptional", "lrTensorOptional",
    "emaDecayTensorOptional"};
constexpr int kMaps = 2;     // kQmapM, kQmapV
constexpr int kMapSize = 256;

/** One call's arguments. */
struct Call {
    const aclTensorList* lists[kLists] = {};
    const aclTensor* tensors[kTensors] = {};
    Adam8bitAttrs attrs;
};

/** A strided view staged through the workspace: entry `index` of list `arg`, or (arg kLists +
 *  kQmapM / kQmapV) a map. */
struct StagedView {
    int arg;
    size_t index;
    View view;
};

struct Adam8bitListExecutor final : aclOpExecutor {
    Adam8bitListExecutor() : aclOpExecutor(kOp) {}

    Adam8bitTilingResult tiling;
    Platform platform;
    std::vector<uint64_t> numels;
    std::vector<void*> data[kLists];  // per entry its contiguous memory (null: staged); an
                                      // absent optional list has none
    const float* maps[kMaps] = {};    // null: staged
    std::vector<StagedView> staged;
    const int64_t* step = nullptr;
    const float* gradScale = nullptr;
    const float* foundInf = nullptr;
    const float* lr = nullptr;
    const float* emaDecay = nullptr;
    CpuKernel kernel = CpuKernel::kNative;  // from the environment at phase 1
    uint32_t threads = 0;                   // the native kernel's
    size_t listSizes[kLists] = {};          // each list's length as given (0: empty)

    void Execute(char* workspace) const override;
    std::unique_ptr<aclOpExecutor> Copy() const override
    {
        return std::make_unique<Adam8bitListExecutor>(*this);
    }
    /** inputInstances and outputInstances from the lists' lengths. */
    void CountInstances();
    bool SetAddress(bool input, size_t irIndex, size_t relativeIndex,
                    const aclTensor* tensor) override;
};

// ---- CheckParams, in order: every check returns ACLNN_SUCCESS (0) or the status it rejected with

aclnnStatus CheckListEntries(const Call& call, int list)
{
    const std::vector<const aclTensor*>& tensors = call.lists[list]->tensors;
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (tensors[i] == nullptr) {
            return Reject(kPhase1, ACLNN_ERR_PARAM_NULLPTR, Adam8bitEntryName(list, i) + " is null");
        }
    }
    const size_t dead = FirstDeadTensor(tensors.data(), tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        const aclTensor* t = tensors[i];
        if (i == dead || (t->data == nullptr && Numel(t->viewDims) > 0)) {
            return CheckLiveTensor(kPhase1, Adam8bitEntryName(list, i).c_str(), t);
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus CheckHandles(const Call& call, const uint64_t* workspaceSize,
                         aclOpExecutor* const* executor)
{
    // Every list is a DYNAMIC parameter: never null (an absent optional list is an empty list).
    for (int list = 0; list < kLists; ++list) {
        if (aclnnStatus s = CheckNotNull(kPhase1, kListNames[list], call.lists[list])) return s;
    }
    for (int t : {kQmapM, kQmapV, kStep}) {
        if (aclnnStatus s = CheckNotNull(kPhase1, kTensorNames[t], call.tensors[t])) return s;
    }
    if (aclnnStatus s = CheckNotNull(kPhase1, "workspaceSize", workspaceSize)) return s;
    if (aclnnStatus s = CheckNotNull(kPhase1, "executor", executor)) return s;
    for (int list = 0; list < kLists; ++list) {
        if (!IsLiveTensorList(call.lists[list])) {
            return Reject(kPhase1, ACLNN_ERR_PARAM_INVALID,
                          std::string(kListNames[list]) +
                              " is not a live aclTensorList (already destroyed, or not from "
                              "aclCreateTensorList)");
        }
    }
    for (int list = 0; list < kLists; ++list) {
        const size_t size = call.lists[list]->tensors.size();
        if (size > kAdam8bitMaxTensors) {
            return Reject(kPhase1, ACLNN_ERR_PARAM_INVALID,
                          std::string(kListNames[list]) + " holds " + std::to_string(size) +
                              " tensors, more than the " + std::to_string(kAdam8bitMaxTensors) +
                              " a dynamic list of a CANN operator may hold (opbase's limit): "
                              "launch in slices of at most " +
                              std::to_string(kAdam8bitMaxTensors) + " entries");
        }
    }
    for (int list = 0; list < kLists; ++list) {
        if (aclnnStatus s = CheckListEntries(call, list)) return s;
    }
    for (int i = 0; i < kTensors; ++i) {
        if (call.tensors[i] != nullptr) {
            if (aclnnStatus s = CheckLiveTensor(kPhase1, kTensorNames[i], call.tensors[i])) {
                return s;
            }
        }
    }
    return ACLNN_SUCCESS;
}

/** The shared validation (op_host), on what it sees of the live handles. */
aclnnStatus CheckDescription(const Call& call, Adam8bitDtypes* dtypes, Adam8bitOptions* options)
{
    std::vector<Adam8bitEntryArg> entries[kLists];
    Adam8bitListArgs args;
    for (int list = 0; list < kLists; ++list) {
        entries[list].reserve(call.lists[list]->tensors.size());
        for (const aclTensor* t : call.lists[list]->tensors) {
            entries[list].push_back({static_cast<int32_t>(t->dataType), &t->viewDims});
        }
        args.lists[list] = &entries[list];
    }
    std::optional<TensorArg> tensors[kTensors];
    for (int i = 0; i < kTensors; ++i) {
        if (call.tensors[i] != nullptr) tensors[i].emplace(ArgOf(kTensorNames[i], call.tensors[i]));
    }
    const auto given = [&](int i) { return tensors[i] ? &*tensors[i] : nullptr; };
    args.qmapM = given(kQmapM);
    args.qmapV = given(kQmapV);
    args.step = given(kStep);
    args.gradScale = given(kGradScale);
    args.foundInf = given(kFoundInf);
    args.lr = given(kLr);
    args.emaDecay = given(kEmaDecay);
    return RejectIf(kPhase1, CheckApplyFusedEmaAdam8bitList(args, call.attrs, call.attrs.maximize,
                                                            dtypes, options));
}

/** Every list entry, then the single tensors, for the shared format and memory checks
 *  (read-only: grads, the maps, step, the scale, flag, lr and decay, which may share memory). */
CallTensors CallTensorsOf(const Call& call)
{
    CallTensors out;
    std::array<size_t, kLists> sizes{};  // the lists' lengths: argument k's name is found from them
    for (int list = 0; list < kLists; ++list) {
        sizes[list] = call.lists[list]->tensors.size();
        for (const aclTensor* t : call.lists[list]->tensors) {
            out.Add(t, kUpdated[list]);
        }
    }
    std::array<int, kTensors> given{};  // the single tensors given, in order
    int count = 0;
    for (int i = 0; i < kTensors; ++i) {
        if (call.tensors[i] != nullptr) {
            out.Add(call.tensors[i], false);
            given[count++] = i;
        }
    }
    out.nameOf = [sizes, given](size_t k) {
        for (int list = 0; list < kLists; ++list) {
            if (k < sizes[list]) return Adam8bitEntryName(list, k);
            k -= sizes[list];
        }
        return std::string(kTensorNames[given[k]]);
    };
    return out;
}

/** A map's 256 values, read through its view's stride (host memory on the CPU device). */
std::array<float, kMapSize> MapValues(const aclTensor* t)
{
    std::array<float, kMapSize> values{};
    const char* first = FirstElement(t);
    const int64_t stride = t->strides.empty() ? 1 : t->strides[0];
    for (int k = 0; k < kMapSize; ++k) {
        values[k] = *reinterpret_cast<const float*>(first + k * stride * 4);
    }
    return values;
}

aclnnStatus CheckParams(const Call& call, const uint64_t* workspaceSize,
                        aclOpExecutor* const* executor, Adam8bitDtypes* dtypes,
                        Adam8bitOptions* options)
{
    if (aclnnStatus s = CheckHandles(call, workspaceSize, executor)) return s;
    if (aclnnStatus s = CheckDescription(call, dtypes, options)) return s;
    const CallTensors tensors = CallTensorsOf(call);
    if (aclnnStatus s = CheckFormats(kPhase1, tensors)) return s;
    if (aclnnStatus s = CheckMemory(kPhase1, tensors)) return s;
    // The step's and the maps' values: on the CPU device their memory is host memory, read here,
    // once all else is known to be valid.
    const int64_t step = *reinterpret_cast<const int64_t*>(FirstElement(call.tensors[kStep]));
    if (aclnnStatus s = RejectIf(kPhase1, CheckStepValue(step, call.attrs.biasCorrection))) {
        return s;
    }
    for (int map : {kQmapM, kQmapV}) {
        const std::array<float, kMapSize> values = MapValues(call.tensors[map]);
        if (aclnnStatus s = RejectIf(kPhase1, CheckAdam8bitMap(values.data(), kTensorNames[map]))) {
            return s;
        }
    }
    return ACLNN_SUCCESS;
}

// ---- phase 2 -----------------------------------------------------------------------------------

/** The CPU device's kernel on contiguous memory: the native kernel by default; the AscendC
 *  kernel, unchanged, through the twin with ASCEND_EMA_ADAM_CPU_KERNEL=twin. Same bits. */
void RunKernel(const Adam8bitListExecutor& e, const ApplyFusedEmaAdam8bitListBuffers& buffers)
{
    if (e.kernel == CpuKernel::kTwin) {
        RunAdam8bitListOnTwin(e.tiling, e.platform, buffers);
        return;
    }
    NativeOptions options;
    options.threads = e.threads;
    NoteNativeLaunchThreads(RunNative8bitList(e.tiling.data, e.tiling.dtypes, buffers, options));
}

/** Phase 2's work, in stream order: with found_inf set, nothing at all (not even a staging copy
 *  written back); else stage strided views in, run the kernel, scatter the updated ones back. */
void Adam8bitListExecutor::Execute(char* workspace) const
{
    if (foundInf != nullptr && !(*foundInf == 0.0F)) {  // NaN counts as set
        return;
    }
    std::vector<void*> pointers[kLists];
    for (int list = 0; list < kLists; ++list) pointers[list] = data[list];
    const float* mapPointers[kMaps] = {maps[0], maps[1]};
    for (const StagedView& s : staged) {
        char* contiguous = StageIn(s.view, workspace);
        if (s.arg < kLists) {
            pointers[s.arg][s.index] = contiguous;
        } else {
            mapPointers[s.arg - kLists] = reinterpret_cast<const float*>(contiguous);
        }
    }
    const auto listOrNull = [&](int list) {
        return pointers[list].empty() ? nullptr : pointers[list].data();
    };
    ApplyFusedEmaAdam8bitListBuffers b;
    b.tensorNum = static_cast<uint32_t>(numels.size());
    b.numels = numels.data();
    b.grads = listOrNull(kAdam8bitGrads);
    b.vars = listOrNull(kAdam8bitVars);
    b.ms = listOrNull(kAdam8bitMs);
    b.vs = listOrNull(kAdam8bitVs);
    b.mAbsmaxes = listOrNull(kAdam8bitMAbsmaxes);
    b.vAbsmaxes = listOrNull(kAdam8bitVAbsmaxes);
    b.ss = listOrNull(kAdam8bitSs);
    b.copies = listOrNull(kAdam8bitCopies);
    b.qmapM = mapPointers[0];
    b.qmapV = mapPointers[1];
    b.step = step;
    b.gradScale = gradScale;
    b.foundInf = foundInf;
    b.lr = lr;
    b.emaDecay = emaDecay;
    RunKernel(*this, b);
    for (const StagedView& s : staged) {
        if (s.arg < kLists && kUpdated[s.arg]) {
            StageOut(s.view, workspace);
        }
    }
}

// ---- address updates of a repeatable executor (acl_executor_reuse.cpp) -------------------------

// Instances as opbase numbers them: inputs, the eight lists (kAdam8bit* order) with their lengths
// as given (an empty list takes none), then one per single-tensor input of the OpDef, given or
// NULL (qmapM ... emaDecayTensorOptional). Outputs: the in-place lists in the OpDef's order
// (kAdam8bitOutputOrder).
void Adam8bitListExecutor::CountInstances()
{
    outputInstances.clear();
    for (int list : kAdam8bitOutputOrder) outputInstances.push_back(listSizes[list]);
    inputInstances.assign(listSizes, listSizes + kLists);
    inputInstances.insert(inputInstances.end(), static_cast<size_t>(kTensors), 1);
}

bool Adam8bitListExecutor::SetAddress(bool input, size_t irIndex, size_t relativeIndex,
                                      const aclTensor* tensor)
{
    char* first = FirstElement(tensor);
    if (first == nullptr && Numel(tensor->viewDims) > 0) return false;
    const auto moveStaged = [&](int arg, size_t index) {
        for (StagedView& s : staged) {
            if (s.arg == arg && s.index == index) {
                s.view.first = first;
                return true;
            }
        }
        return false;
    };
    if (!input || irIndex < static_cast<size_t>(kLists)) {
        const int list = input ? static_cast<int>(irIndex) : kAdam8bitOutputOrder[irIndex];
        if (relativeIndex >= numels.size()) return false;
        // no memory is ever read: an empty entry, or an absent list
        if (numels[relativeIndex] == 0 || data[list].empty()) return true;
        if (!moveStaged(list, relativeIndex)) data[list][relativeIndex] = first;
        return true;
    }
    const size_t t = irIndex - kLists;
    if (t >= static_cast<size_t>(kTensors)) return false;
    const int arg = static_cast<int>(t);
    switch (arg) {
        case kQmapM:
        case kQmapV:
            if (!moveStaged(kLists + arg, 0)) maps[arg] = reinterpret_cast<const float*>(first);
            return true;
        case kStep:
            step = reinterpret_cast<const int64_t*>(first);
            return true;
        default: {
            const float** slots[] = {&gradScale, &foundInf, &lr, &emaDecay};
            const float** slot = slots[arg - kGradScale];
            // one not given at phase 1 keeps its slot, and nothing reads it
            if (*slot != nullptr) *slot = reinterpret_cast<const float*>(first);
            return true;
        }
    }
}

aclnnStatus GetWorkspaceSize(const Call& call, uint64_t* workspaceSize, aclOpExecutor** executor)
{
    Adam8bitDtypes dtypes{DataType::kFloat32, DataType::kFloat32};
    Adam8bitOptions options;
    if (aclnnStatus s = CheckParams(call, workspaceSize, executor, &dtypes, &options)) return s;
    auto e = std::make_unique<Adam8bitListExecutor>();
    if (aclnnStatus s = SelectCpuKernel(kPhase1, &e->kernel, &e->threads)) return s;
    const std::vector<const aclTensor*>& grads = call.lists[kAdam8bitGrads]->tensors;
    e->numels.resize(grads.size());
    uint64_t elements = 0;
    for (size_t i = 0; i < grads.size(); ++i) {
        e->numels[i] = static_cast<uint64_t>(Numel(grads[i]->viewDims));
        elements += e->numels[i];
    }
    e->platform = CpuPlatform();
    try {
        e->tiling = ComputeAdam8bitListTiling(e->numels, dtypes, call.attrs, options, e->platform);
    } catch (const std::invalid_argument& ex) {
        return Reject(kPhase1, ACLNN_ERR_INNER_TILING_ERROR,
                      std::string("tiling failed: ") + ex.what());
    }
    uint64_t staging = 0;
    // An absent optional list (empty, or placeholders) is none the kernel sees.
    const bool present[kLists] = {true, true, true, true, true, true, options.ema, dtypes.hasCopy};
    for (int list = 0; list < kLists; ++list) {
        const std::vector<const aclTensor*>& tensors = call.lists[list]->tensors;
        e->listSizes[list] = tensors.size();
        if (!present[list]) continue;
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
    for (int map : {kQmapM, kQmapV}) {
        const aclTensor* t = call.tensors[map];
        if (IsContiguous(t->viewDims, t->strides)) {
            e->maps[map] = reinterpret_cast<const float*>(FirstElement(t));
        } else {
            e->staged.push_back({kLists + map, 0, MakeView(t, &staging)});
        }
    }
    const auto first = [&](int i) {
        return call.tensors[i] != nullptr ? FirstElement(call.tensors[i]) : nullptr;
    };
    e->step = reinterpret_cast<const int64_t*>(first(kStep));
    e->gradScale = reinterpret_cast<const float*>(first(kGradScale));
    e->foundInf = reinterpret_cast<const float*>(first(kFoundInf));
    e->lr = reinterpret_cast<const float*>(first(kLr));
    e->emaDecay = reinterpret_cast<const float*>(first(kEmaDecay));
    e->CountInstances();
    e->workspaceSize = staging;
    e->empty = elements == 0;
    *workspaceSize = staging;
    *executor = RegisterExecutor(std::move(e));
    return ACLNN_SUCCESS;
}

}  // namespace
}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

// The parameters are the spec's (apply_fused_ema_adam8bit_list_signature.h); include/aclnnop/
// declares the same functions, which the compiler holds these definitions to.
extern "C" {

aclnnStatus aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize(
    ACLNN_APPLY_FUSED_EMA_ADAM8BIT_LIST_PARAMS, uint64_t* workspaceSize, aclOpExecutor** executor)
{
    namespace op8 = ascend_ema_adam::apply_fused_ema_adam8bit_list;
    return ascend_ema_adam::acl::Guarded(op8::kPhase1, [&] {
        op8::Call call;
        const aclTensorList* lists[] = {ACLNN_APPLY_FUSED_EMA_ADAM8BIT_LIST_LISTS};
        const aclTensor* tensors[] = {ACLNN_APPLY_FUSED_EMA_ADAM8BIT_LIST_TENSORS};
        static_assert(std::size(lists) == op8::kLists && std::size(tensors) == op8::kTensors);
        std::copy(std::begin(lists), std::end(lists), call.lists);
        std::copy(std::begin(tensors), std::end(tensors), call.tensors);
        APPLY_FUSED_EMA_ADAM8BIT_LIST_SET_ATTRS(call.attrs);
        return op8::GetWorkspaceSize(call, workspaceSize, executor);
    });
}

aclnnStatus aclnnApplyFusedEmaAdam8bitList(void* workspace, uint64_t workspaceSize,
                                           aclOpExecutor* executor, aclrtStream stream)
{
    namespace op8 = ascend_ema_adam::apply_fused_ema_adam8bit_list;
    return ascend_ema_adam::acl::Guarded(op8::kOp.phase2, [&] {
        return ascend_ema_adam::acl::RunPhase2(op8::kOp, workspace, workspaceSize, executor,
                                               stream);
    });
}

}  // extern "C"
