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
 * of the call); the step's value; the maps' values (CheckApplyFusedEmaAdam8bitListMap: on the CPU
 * device their memory is host memory). It then tiles and registers an executor holding each
 * tensor's memory (a staging copy in the workspace for each strided view, maps included). Phase 2
 * queues the executor on the stream (RunPhase2, shared with every operator): found_inf set writes
 * nothing; else the native kernel (default) or the AscendC kernel on the twin
 * (ASCEND_EMA_ADAM_CPU_KERNEL=twin), which give the same bits.
 */
#include "aclnnop/aclnn_apply_fused_ema_adam8bit_list.h"
#include "ascend_ema_adam/cpu_device.h"

#include <algorithm>
#include <cstdlib>
#include <array>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "acl_internal.h"
#include "acl_view.h"
#include "aclnn_common.h"
#include "aclnn_list_common.h"
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

constexpr int kLists = kApplyFusedEmaAdam8bitListTensorLists;

/** The single-tensor arguments, in CANN's order (the spec's): the maps, then LaunchScalars'. */
enum TensorArgIndex : int { kQmapM, kQmapV, kStep, kGradScale, kFoundInf, kLr, kEmaDecay, kTensors };
constexpr const char* kTensorNames[kTensors] = {
    "qmapM", "qmapV", "step", "gradScaleOptional", "foundInfOptional", "lrTensorOptional",
    "emaDecayTensorOptional"};
static_assert(kTensors - kStep == LaunchScalars::kCount &&
              kEmaDecay - kStep == LaunchScalars::kEmaDecay);
constexpr int kMapSize = 256;

/** The arguments as the shared list code (aclnn_list_common.h) sees them: qmapM, qmapV and step
 *  required. */
constexpr ListOpArgs kArgs{kLists,
                           kApplyFusedEmaAdam8bitListNames,
                           kApplyFusedEmaAdam8bitListUpdated,
                           kApplyFusedEmaAdam8bitListOutputOrder,
                           kApplyFusedEmaAdam8bitListOutputs,
                           kApplyFusedEmaAdam8bitListMaxTensors,
                           ApplyFusedEmaAdam8bitListEntryName,
                           kTensors,
                           kTensorNames,
                           kStep + 1};

/** One call's arguments. */
struct Call {
    const aclTensorList* lists[kLists] = {};
    const aclTensor* tensors[kTensors] = {};
    ApplyFusedEmaAdam8bitListAttrs attrs;
};

/** The executor's slots: the lists (kAdam8bit* order), then the maps, staged like list entries. */
constexpr int MapSlot(int map)
{
    return kLists + map;
}

struct ApplyFusedEmaAdam8bitListExecutor final : ListExecutor {
    ApplyFusedEmaAdam8bitListExecutor() : ListExecutor(kOp, kArgs, MapSlot(kQmapV) + 1) {}

    ApplyFusedEmaAdam8bitListTilingResult tiling;
    Platform platform;

    std::unique_ptr<aclOpExecutor> Copy() const override
    {
        return std::make_unique<ApplyFusedEmaAdam8bitListExecutor>(*this);
    }

private:
    void Launch(const std::vector<void*>* entries) const override;
    bool SetTensorAddress(int tensor, char* first) override;
};

// ---- CheckParams, in order: every check returns ACLNN_SUCCESS (0) or the status it rejected with

/** The shared validation (op_host), on what it sees of the live handles. */
aclnnStatus CheckDescription(const Call& call, ApplyFusedEmaAdam8bitListDtypes* dtypes,
                             ApplyFusedEmaAdam8bitListOptions* options)
{
    std::vector<ListEntryArg> entries[kLists];
    ApplyFusedEmaAdam8bitListArgs args;
    for (int list = 0; list < kLists; ++list) {
        entries[list] = EntriesOf<ListEntryArg>(call.lists[list]);
        args.lists[list] = &entries[list];
    }
    const ListTensorArgs tensors(kArgs, call.tensors);
    args.qmapM = tensors.Given(kQmapM);
    args.qmapV = tensors.Given(kQmapV);
    LaunchScalars::Describe(tensors, kStep, &args);
    return RejectIf(kPhase1, CheckApplyFusedEmaAdam8bitList(args, call.attrs, call.attrs.maximize,
                                                            dtypes, options));
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
                        aclOpExecutor* const* executor, ApplyFusedEmaAdam8bitListDtypes* dtypes,
                        ApplyFusedEmaAdam8bitListOptions* options)
{
    if (aclnnStatus s =
            CheckListHandles(kPhase1, kArgs, call.lists, call.tensors, workspaceSize, executor)) {
        return s;
    }
    if (aclnnStatus s = CheckDescription(call, dtypes, options)) return s;
    // Every list entry, then the single tensors (read-only: grads, the maps, step, the scale,
    // flag, lr and decay, which may share memory).
    const CallTensors tensors = ListCallTensors(kArgs, call.lists, call.tensors);
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
        if (aclnnStatus s = RejectIf(
                kPhase1, CheckApplyFusedEmaAdam8bitListMap(values.data(), kTensorNames[map]))) {
            return s;
        }
    }
    return ACLNN_SUCCESS;
}

// ---- phase 2 -----------------------------------------------------------------------------------

/** The CPU device's kernel on contiguous memory (ListExecutor::RunCpuKernel: native or twin). */
void ApplyFusedEmaAdam8bitListExecutor::Launch(const std::vector<void*>* entries) const
{
    const auto listOrNull = [&](int list) { return EntriesOrNull(entries[list]); };
    const auto map = [&](int m) { return static_cast<const float*>(entries[MapSlot(m)][0]); };
    ApplyFusedEmaAdam8bitListBuffers b;
    b.tensorNum = static_cast<uint32_t>(numels.size());
    b.numels = numels.data();
    b.grads = listOrNull(kApplyFusedEmaAdam8bitListGrads);
    b.vars = listOrNull(kApplyFusedEmaAdam8bitListVars);
    b.ms = listOrNull(kApplyFusedEmaAdam8bitListMs);
    b.vs = listOrNull(kApplyFusedEmaAdam8bitListVs);
    b.mAbsmaxes = listOrNull(kApplyFusedEmaAdam8bitListMAbsmaxes);
    b.vAbsmaxes = listOrNull(kApplyFusedEmaAdam8bitListVAbsmaxes);
    b.ss = listOrNull(kApplyFusedEmaAdam8bitListSs);
    b.copies = listOrNull(kApplyFusedEmaAdam8bitListCopies);
    b.qmapM = map(kQmapM);
    b.qmapV = map(kQmapV);
    scalars.Into(&b);
    RunCpuKernel([&] { RunApplyFusedEmaAdam8bitListOnTwin(tiling, platform, b); },
                 [&](const NativeOptions& options) {
                     return RunApplyFusedEmaAdam8bitListNative(tiling.data, tiling.dtypes, b,
                                                               options);
                 });
}

// ---- address updates of a repeatable executor (acl_executor_reuse.cpp) -------------------------

// Instances as opbase numbers them (ListExecutor): the eight lists (kAdam8bit* order), then one
// per single-tensor input of the OpDef, given or NULL (qmapM ... emaDecayTensorOptional).
bool ApplyFusedEmaAdam8bitListExecutor::SetTensorAddress(int tensor, char* first)
{
    if (tensor == kQmapM || tensor == kQmapV) {
        MoveEntry(MapSlot(tensor), 0, first);
    } else {
        scalars.Move(tensor - kStep, first);
    }
    return true;
}

aclnnStatus GetWorkspaceSize(const Call& call, uint64_t* workspaceSize, aclOpExecutor** executor)
{
    ApplyFusedEmaAdam8bitListDtypes dtypes{DataType::kFloat32, DataType::kFloat32};
    ApplyFusedEmaAdam8bitListOptions options;
    if (aclnnStatus s = CheckParams(call, workspaceSize, executor, &dtypes, &options)) return s;
    auto e = std::make_unique<ApplyFusedEmaAdam8bitListExecutor>();
    if (aclnnStatus s = e->Begin(kPhase1, call.lists[kApplyFusedEmaAdam8bitListGrads])) return s;
    e->platform = CpuPlatform();
    if (aclnnStatus s = TileOrReject(kPhase1, [&] {
            e->tiling = ComputeApplyFusedEmaAdam8bitListTiling(e->numels, dtypes, call.attrs,
                                                               options, e->platform);
        })) {
        return s;
    }
    // An absent optional list (empty, or placeholders) is none the kernel sees.
    const bool present[kLists] = {true, true, true, true, true, true, options.ema, dtypes.hasCopy};
    for (int list = 0; list < kLists; ++list) {
        e->HoldList(list, call.lists[list], present[list]);
    }
    for (int map : {kQmapM, kQmapV}) {
        e->HoldTensor(MapSlot(map), call.tensors[map]);
    }
    e->scalars.Set(call.tensors + kStep);
    e->singleInputs = kTensors;
    return ListExecutor::Register(std::move(e), workspaceSize, executor);
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
    return ascend_ema_adam::acl::GuardedPhase2(op8::kOp, workspace, workspaceSize, executor,
                                               stream);
}

aclError aeaGetCpuAdam8bitPath(const char** path)
{
    namespace aea = ascend_ema_adam;
    namespace op8 = aea::apply_fused_ema_adam8bit_list;
    if (path == nullptr) {
        aea::acl::AddErrorMessage("aeaGetCpuAdam8bitPath: path must not be null");
        return ACL_ERROR_INVALID_PARAM;
    }
    thread_local std::string text;
    try {
        const aea::NativeOptions options;  // a launch's own
        const aea::Isa isa = aea::ResolveIsa(options.isa);
        const bool planes = op8::ApplyFusedEmaAdam8bitListBytePlaneDecode(isa, options);
        const aea::Adam8bitEncode encode = op8::ApplyFusedEmaAdam8bitListEncodeOf(isa, options);
        const char* env = std::getenv("ASCEND_EMA_ADAM_8BIT_ENCODE");
        const char* why = env != nullptr && *env != '\0' ? " (ASCEND_EMA_ADAM_8BIT_ENCODE)"
                          : isa != aea::Isa::kAvx512     ? ""
                          : op8::ApplyFusedEmaAdam8bitListMeasuredEncode(isa, planes) !=
                                  aea::Adam8bitEncode::kAuto
                              ? " (measured)"
                              : " (not measured yet)";
        text = std::string(aea::IsaName(isa)) + ", decode by " +
               (planes ? "byte planes" : "gathers") + ", encode by " +
               aea::Adam8bitEncodeName(encode) + why;
    } catch (const std::invalid_argument& e) {
        aea::acl::AddErrorMessage(std::string("aeaGetCpuAdam8bitPath: ") + e.what());
        return ACL_ERROR_INVALID_PARAM;
    }
    *path = text.c_str();
    return ACL_SUCCESS;
}

}  // extern "C"
