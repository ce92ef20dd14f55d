/**
 * @file apply_fused_ema_adam_list_kernel.cpp
 * @brief NPU (PrivateUse1) kernel of ascend_ema_adam::apply_fused_ema_adam_list_, built only
 *        where torch_npu and CANN are installed.
 *
 * What CANN's side requires, and how this file meets it (docs/ACLNN.md, "The NPU path"):
 *   - Every list reaches the generated aclnn as a real aclTensorList. That aclnn null-checks
 *     every DYNAMIC parameter (161001 for NULL), and op-plugin's EXEC_NPU_CMD turns an empty
 *     at::TensorList into NULL whenever TASK_QUEUE_ENABLE is not 2. So each list is passed as a
 *     DynamicList, whose conversion (found by argument-dependent lookup from EXEC_NPU_CMD's
 *     templates, for both of its task-queue paths) builds an empty list itself with
 *     aclCreateTensorList(nullptr, 0); EXEC_NPU_CMD destroys it after the launch. An absent
 *     max_vs / model_copies, and an empty ss (no EMA on this launch), are such empty lists.
 *   - At most 256 tensors per list (opbase refuses more): a call runs as launches of at most 256
 *     entries, after the whole call was validated (apply_fused_ema_adam_list_call.h), so a bad
 *     entry anywhere changes nothing. What the generated layer and our tiling check on a launch
 *     (nulls, OpDef dtype columns, formats, the shared validation) is implied by that whole-call
 *     validation, so no launch can be refused after an earlier one was queued.
 *   - The device's list decoder reads every shape of a list with the rank of its first tensor
 *     (twin/ascendc/twin_list_tensor.h), so every list holds 1-D views: a contiguous tensor as
 *     view(-1); the tensors of an entry that share one non-overlapping, dense layout as 1-D views
 *     of their memory in storage order (the same strides give the same element order); any other
 *     entry is refused, naming it. Flattening hides shape mismatches, hence the whole-call check
 *     on the real shapes first, with the CPU device's messages.
 *   - Overlaps: the tiling sees shapes, not addresses, so the memory rules of the CPU aclnn layer
 *     (updated tensors address distinct elements and share memory with no other tensor of the
 *     call) are checked here, on the device addresses, before anything is queued.
 * Absent optional tensors (grad_scale, found_inf, lr_tensor, ema_decay_tensor) are empty
 * optionals (op-plugin's ConvertType gives a null aclTensor*, which an OPTIONAL input accepts).
 * A call without elements launches nothing (the tiling would have no core to launch).
 * EXEC_NPU_CMD resolves aclnnApplyFusedEmaAdamListV2 (the OpDef ApplyFusedEmaAdamListV2,
 * op_host/<op>/cann/) from our custom-op package and enqueues it on the current stream.
 */
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "apply_fused_ema_adam_list.h"
#include "apply_fused_ema_adam_list_call.h"
#include "apply_fused_ema_adam_list_repeated.h"
#include "op_plugin/utils/op_api_common.h"

namespace ascend_ema_adam::ops {

namespace {

constexpr const char* kOpName = "apply_fused_ema_adam_list_";

/**
 * A DYNAMIC list argument of EXEC_NPU_CMD: converted to an aclTensorList even when empty (op-
 * plugin's own conversion of an empty at::TensorList is NULL on its V1 task-queue path). The
 * overloads below are found by argument-dependent lookup from op-plugin's templates (ConvertType,
 * CopyTypeV2/ConvertTypeV2, the executor-cache key, the log) and are preferred there, as non-
 * templates, to op-plugin's catch-all templates.
 */
struct DynamicList {
    at::TensorList tensors;
};
/** What EXEC_NPU_CMD's V2 path (TASK_QUEUE_ENABLE=2) copies for the task queue. */
struct DynamicListCopy {
    std::vector<TensorStructPtr> tensors;
};

aclTensorList* EmptyAclTensorList()
{
    static const auto create = GET_OP_API_FUNC(aclCreateTensorList);
    TORCH_CHECK(create != nullptr, kOpName, ": aclCreateTensorList not found in ",
                GetOpApiLibName());
    return create(nullptr, 0);  // destroyed by EXEC_NPU_CMD's ReleaseConvertTypes
}

aclTensorList* ConvertType(const DynamicList& list)
{
    return list.tensors.empty() ? EmptyAclTensorList() : ::ConvertType(list.tensors);
}
void add_param_to_buf(const DynamicList& list)
{
    ::add_param_to_buf(list.tensors);  // the tensors, then the count (0 for an empty list)
}
DynamicListCopy CopyTypeV2(const DynamicList& list)
{
    return {::CopyTypeV2(list.tensors)};
}
aclTensorList* ConvertTypeV2(const DynamicListCopy& list)
{
    return list.tensors.empty() ? EmptyAclTensorList() : ::ConvertTypeV2(list.tensors);
}
void add_param_to_buf_v2(const DynamicListCopy& list)
{
    ::add_param_to_buf_v2(list.tensors);
}
std::string convert_info(const DynamicList& list)
{
    return op_plugin::logging::convert_info(list.tensors);
}
std::string convert_debug_info(const DynamicList& list)
{
    return op_plugin::logging::convert_debug_info(list.tensors);
}

// EXEC_NPU_CMD must see these conversions, not its catch-all templates (which would pass the
// struct itself to the aclnn function): on both task-queue paths a DynamicList becomes an
// aclTensorList*.
static_assert(std::is_same_v<decltype(::ConvertTypes(std::declval<DynamicList&>())),
                             std::tuple<aclTensorList*>>,
              "EXEC_NPU_CMD's V1 path must convert a DynamicList with ConvertType(DynamicList)");
static_assert(std::is_same_v<decltype(::ConvertTypesV2(::CopyTypesV2(std::declval<DynamicList&>()),
                                                       nullptr, nullptr)),
                             std::tuple<aclTensorList*, uint64_t*, aclOpExecutor**>>,
              "EXEC_NPU_CMD's V2 path must copy and convert a DynamicList with ours");

/** Entry i of every given list as 1-D views; raises, naming the entry, if it cannot be. */
void FlattenEntry(const ListCall& call, size_t i,
                  std::vector<at::Tensor> (&flat)[kApplyFusedEmaAdamLists])
{
    bool contiguous = true;
    bool oneDenseLayout = true;
    const at::Tensor& first = call.lists[kListGrads][i];
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        if (call.lists[l].empty()) continue;
        const at::Tensor& t = call.lists[l][i];
        contiguous = contiguous && t.is_contiguous();
        oneDenseLayout = oneDenseLayout && t.is_non_overlapping_and_dense() &&
                         t.strides() == first.strides();
    }
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        if (call.lists[l].empty()) continue;
        const at::Tensor& t = call.lists[l][i];
        if (contiguous) {
            flat[l].push_back(t.view(-1));
        } else {
            TORCH_CHECK(oneDenseLayout, kOpName, ": entry ", i, " cannot reach the NPU kernel as "
                        "1-D views: its tensors are not all contiguous and do not share one dense "
                        "layout (", kListTorchNames[l], "[", i, "] has strides ", t.strides(),
                        ", grads[", i, "] ", first.strides(),
                        "); make the entry's tensors contiguous");
            flat[l].push_back(t.as_strided({t.numel()}, {1}, t.storage_offset()));
        }
    }
}

/** The whole call checked (device, the shared validation on the real shapes, the memory rules on
 *  the device addresses), then every entry as 1-D views into `flat`; returns the elements. */
int64_t CheckedFlatCall(const ListCall& call, std::vector<at::Tensor> (&flat)[kApplyFusedEmaAdamLists])
{
    CheckListCallDevice(kOpName, call, call.step->device());
    CheckListCallDescription(kOpName, call);
    CheckListCallMemory(kOpName, call);
    int64_t elements = 0;
    for (size_t i = 0; i < call.Entries(); ++i) {
        FlattenEntry(call, i, flat);
        elements += call.lists[kListGrads][i].numel();
    }
    return elements;
}

/** The NPU kernel's work: the whole call validated, then one EXEC_NPU_CMD per launch of at most
 *  256 entries. (Not "call": EXEC_NPU_CMD calls op-plugin's call().) */
void RunNpu(const ListCall& launchArgs)
{
    std::vector<at::Tensor> flat[kApplyFusedEmaAdamLists];
    if (CheckedFlatCall(launchArgs, flat) == 0) {
        return;  // nothing to update: the tiling would have no core to launch
    }
    // EXEC_NPU_CMD converts its arguments by type: the call's tensors and attributes as the
    // schema gave them
    const at::Tensor& step = *launchArgs.step;
    const std::optional<at::Tensor>& gradScale = *launchArgs.scalars[kCallGradScale];
    const std::optional<at::Tensor>& foundInf = *launchArgs.scalars[kCallFoundInf];
    const std::optional<at::Tensor>& lrTensor = *launchArgs.scalars[kCallLr];
    const std::optional<at::Tensor>& emaDecayTensor = *launchArgs.scalars[kCallEmaDecay];
    const Attrs& a = launchArgs.attrs;
    const bool maximize = launchArgs.maximize;
    for (const std::pair<size_t, size_t>& launch : ListLaunches(launchArgs.Entries())) {
        const auto list = [&](int l) { return DynamicList{LaunchSlice(flat[l], launch)}; };
        const DynamicList flatGrads = list(kListGrads);
        const DynamicList flatVars = list(kListVars);
        const DynamicList flatMs = list(kListMs);
        const DynamicList flatVs = list(kListVs);
        const DynamicList flatSs = list(kListSs);
        const DynamicList flatMaxVs = list(kListMaxVs);
        const DynamicList flatCopies = list(kListCopies);
        EXEC_NPU_CMD(aclnnApplyFusedEmaAdamListV2, flatGrads, flatVars, flatMs, flatVs, flatSs,
                     flatMaxVs, flatCopies, step, gradScale, foundInf, lrTensor, emaDecayTensor,
                     a.lr, a.emaDecay, a.beta1, a.beta2, a.eps, a.mode, a.biasCorrection,
                     a.weightDecay, maximize);
    }
}

// ---- the repeatable prepared call (FusedEmaAdamW's phase-2-only steps) --------------------------

constexpr const char* kPhase2 = "aclnnApplyFusedEmaAdamListV2";

// CANN's opbase entry points (nnopbase acl_meta.h), resolved like EXEC_NPU_CMD's (op-plugin
// declares no typedefs for them).
using Phase1Fn = int (*)(const aclTensorList*, aclTensorList*, aclTensorList*, aclTensorList*,
                         aclTensorList*, aclTensorList*, aclTensorList*, const aclTensor*,
                         const aclTensor*, const aclTensor*, const aclTensor*, const aclTensor*,
                         double, double, double, double, double, int64_t, bool, double, bool,
                         uint64_t*, aclOpExecutor**);
using Phase2Fn = int (*)(void*, uint64_t, aclOpExecutor*, aclrtStream);
using ExecutorFn = int (*)(aclOpExecutor*);
using SetDynamicAddrFn = int (*)(aclOpExecutor*, size_t, size_t, aclTensorList*, void*);
using SetAddrFn = int (*)(aclOpExecutor*, size_t, aclTensor*, void*);

template <class F>
F OpApi(const char* name)
{
    void* address = GetOpApiFuncAddr(name);
    TORCH_CHECK(address != nullptr, kOpName, ": ", name, " not found in ", GetOpApiLibName());
    return reinterpret_cast<F>(address);
}

/** What the queued launches use; the last of them (or the prepared call) frees it, so no launch
 *  runs with a destroyed executor. */
struct NpuLaunches {
    struct Launch {
        std::array<aclTensorList*, kApplyFusedEmaAdamLists> lists = {};
        aclOpExecutor* executor = nullptr;
        uint64_t workspaceSize = 0;
        size_t firstScalar = 0;  // the flat input index of its step (aclSetInputTensorAddr)
    };
    std::vector<Launch> launches;
    std::array<aclTensor*, 1 + kCallScalars> scalars = {};  // step, then ListCallScalar
    at::Tensor workspace;

    ~NpuLaunches()
    {
        static const auto destroyExecutor = OpApi<ExecutorFn>("aclDestroyAclOpExecutor");
        static const auto destroyList = GET_OP_API_FUNC(aclDestroyTensorList);
        static const auto destroyTensor = GET_OP_API_FUNC(aclDestroyTensor);
        for (const Launch& launch : launches) {
            if (launch.executor != nullptr) destroyExecutor(launch.executor);
            for (aclTensorList* list : launch.lists) {
                if (list != nullptr) destroyList(list);
            }
        }
        for (aclTensor* t : scalars) {
            if (t != nullptr) destroyTensor(t);
        }
    }
};

/** The repeatable prepared call on the NPU (apply_fused_ema_adam_list_prepared.h): validated and
 *  flattened as the op is, phase 1 per launch now, and each phase 2 (with the address updates it
 *  needs) queued by op-plugin's task queue, in order, on the stream current at preparation. */
class NpuPreparedListCall final : public RepeatedListCall {
public:
    explicit NpuPreparedListCall(const ListCall& given) : state_(std::make_shared<NpuLaunches>())
    {
        ListCall call = given;
        OwnValues(&call, given.step->options());  // device tensors, written by fills on the stream
        std::vector<at::Tensor> flat[kApplyFusedEmaAdamLists];
        const int64_t elements = CheckedFlatCall(call, flat);
        stream_ = c10_npu::getCurrentNPUStream().stream(false);
        Remember(call);
        if (elements == 0) return;  // nothing to update: no launch (the tiling has no core)
        NpuLaunches& state = *state_;
        state.scalars[0] = ::ConvertType(*call.step);
        for (int s = 0; s < kCallScalars; ++s) {
            state.scalars[1 + s] = call.scalars[s]->has_value() ? ::ConvertType(**call.scalars[s])
                                                                 : nullptr;
        }
        static const auto phase1 = OpApi<Phase1Fn>("aclnnApplyFusedEmaAdamListV2GetWorkspaceSize");
        static const auto repeatable = OpApi<ExecutorFn>("aclSetAclOpExecutorRepeatable");
        uint64_t maxWorkspace = 0;
        for (const std::pair<size_t, size_t>& slice : ListLaunches(call.Entries())) {
            NpuLaunches::Launch& launch = state.launches.emplace_back();
            launch.firstScalar = call.FirstScalarInput(slice.second - slice.first);
            for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
                launch.lists[l] = ConvertType(DynamicList{LaunchSlice(flat[l], slice)});
            }
            const Attrs& a = call.attrs;
            const std::array<aclTensor*, 1 + kCallScalars>& sc = state.scalars;
            const int status = phase1(launch.lists[kListGrads], launch.lists[kListVars],
                                      launch.lists[kListMs], launch.lists[kListVs],
                                      launch.lists[kListSs], launch.lists[kListMaxVs],
                                      launch.lists[kListCopies], sc[0], sc[1 + kCallGradScale],
                                      sc[1 + kCallFoundInf], sc[1 + kCallLr],
                                      sc[1 + kCallEmaDecay], a.lr, a.emaDecay, a.beta1, a.beta2,
                                      a.eps, a.mode, a.biasCorrection, a.weightDecay,
                                      call.maximize, &launch.workspaceSize, &launch.executor);
            NPU_CHECK_ERROR(status, "call aclnnApplyFusedEmaAdamListV2GetWorkspaceSize failed");
            NPU_CHECK_ERROR(repeatable(launch.executor), "call aclSetAclOpExecutorRepeatable failed");
            maxWorkspace = std::max(maxWorkspace, launch.workspaceSize);
        }
        if (maxWorkspace > 0) {
            state.workspace =
                at_npu::native::OpPreparation::unsafe_empty_workspace(maxWorkspace, stream_);
        }
    }

    size_t Launches() const override { return state_->launches.size(); }

private:
    bool MayLaunch(const at::Tensor& /*step: device memory, not read (as the tiling)*/) const
        override
    {
        return c10_npu::getCurrentNPUStream().stream(false) == stream_;  // the workspace's stream
    }

    void Relaunch(const Moves& moves, const BorrowedTensors& grads, const ScalarArg& lr,
                  const ScalarArg& emaDecay) override
    {
        if (lrValue_) lrValue_->fill_(lr.value);  // queued before the launches
        if (emaDecayValue_) emaDecayValue_->fill_(emaDecay.value);
        if (state_->launches.empty()) return;
        // The addresses now; set in the queue, just before each phase 2, so a launch still queued
        // runs with the addresses it was queued with. The moved tensors live until then.
        struct GradMove {
            size_t index;  // in its launch
            void* address;
        };
        struct ScalarMove {
            int slot;         // 0 the step, then 1 + ListCallScalar: which aclTensor
            size_t position;  // its input index relative to a launch's first one-element input
            void* address;
        };
        const size_t launches = state_->launches.size();
        auto gradMoves = std::make_shared<std::vector<std::vector<GradMove>>>(launches);
        auto scalarMoves = std::make_shared<std::vector<ScalarMove>>();
        auto keep = std::make_shared<std::vector<at::Tensor>>();
        for (size_t i : moves.grads) {
            (*gradMoves)[i / kListMaxTensors].push_back(
                {i % kListMaxTensors, SeenAddress(kListGrads, i, *grads[i])});
            keep->push_back(*grads[i]);
        }
        for (int s = 0; s < 1 + kCallScalars; ++s) {
            const at::Tensor* t = moves.scalars[s];
            if (t == nullptr) continue;
            scalarMoves->push_back({s, ScalarPosition(s - 1), SeenScalarAddress(s, *t)});
            keep->push_back(*t);
        }
        const aclrtStream stream = stream_;
        if (c10_npu::check_enqueue_need_use(stream)) {
            c10_npu::UseStreamResInCurrentThread(stream);
        }
        for (size_t k = 0; k < launches; ++k) {
            auto launchCall = [state = state_, k, gradMoves, scalarMoves, keep, stream]() -> int {
                static const auto phase2 = OpApi<Phase2Fn>(kPhase2);
                static const auto setDynamic = OpApi<SetDynamicAddrFn>("aclSetDynamicInputTensorAddr");
                static const auto setInput = OpApi<SetAddrFn>("aclSetInputTensorAddr");
                if (c10_npu::check_dequeue_need_use(stream)) {
                    c10_npu::UseStreamResInCurrentThread(stream);
                }
                NpuLaunches::Launch& launch = state->launches[k];
                for (const GradMove& m : (*gradMoves)[k]) {
                    NPU_CHECK_ERROR(setDynamic(launch.executor, kListGrads, m.index,
                                               launch.lists[kListGrads], m.address),
                                    "call aclSetDynamicInputTensorAddr failed");
                }
                for (const ScalarMove& m : *scalarMoves) {
                    NPU_CHECK_ERROR(setInput(launch.executor, launch.firstScalar + m.position,
                                             state->scalars[m.slot], m.address),
                                    "call aclSetInputTensorAddr failed");
                }
                void* workspace = launch.workspaceSize > 0
                                      ? const_cast<void*>(state->workspace.storage().data())
                                      : nullptr;
                const int status = phase2(workspace, launch.workspaceSize, launch.executor, stream);
                NPU_CHECK_ERROR(status, "call aclnnApplyFusedEmaAdamListV2 failed");
                return status;
            };
            at_npu::native::OpCommand::RunOpApiV2(kPhase2, launchCall);
        }
    }

    std::shared_ptr<NpuLaunches> state_;
    aclrtStream stream_ = nullptr;
};

}  // namespace

std::unique_ptr<RepeatedListCall> PrepareNpuListCall(const ListCall& call)
{
    return std::make_unique<NpuPreparedListCall>(call);
}

}  // namespace ascend_ema_adam::ops

TORCH_LIBRARY_IMPL(ascend_ema_adam, PrivateUse1, m)
{
    m.impl("apply_fused_ema_adam_list_",
           &ascend_ema_adam::ops::ListKernel<ascend_ema_adam::ops::RunNpu>::Run);
}
