/**
 * @file apply_fused_ema_adam_list_npu.cpp
 * @brief NPU (PrivateUse1) kernel of ascend_ema_adam::apply_fused_ema_adam_list_ and the NPU's
 *        repeatable prepared call (FusedEmaAdamW's phase-2-only steps), built only with torch_npu.
 *
 * What CANN's side requires, and how this file meets it (docs/ACLNN.md, "The NPU path"):
 *   - aclnnApplyFusedEmaAdamListV2 (the OpDef ApplyFusedEmaAdamListV2, op_host/<op>/cann/) of our
 *     custom-op package, found through torch_npu (npu_op_api.h: only what the torch_npu wheels
 *     export; op-plugin's EXEC_NPU_CMD is not, its inline code needs unexported internals).
 *   - Every list is a real aclTensorList: the generated aclnn null-checks every DYNAMIC
 *     parameter (161001 for NULL). An absent max_vs / model_copies, and an empty ss (no EMA on
 *     this launch), are lists of zero-element placeholders, never empty lists
 * (ApplyFusedEmaAdamListPlaceholders: opbase's executor pool keeps an empty list's last instances,
 * docs/ACLNN.md "Absent lists").
 *   - At most 256 tensors per list (opbase refuses more): a call runs as launches of at most 256
 *     entries. The whole call is validated first (apply_fused_ema_adam_list_call.h), then phase 1
 *     of every launch runs at the call, and only when all succeeded are the phase 2s queued: a
 *     bad entry anywhere, or a refusal by CANN's layer, raises and changes nothing, in every
 *     TASK_QUEUE_ENABLE mode.
 *   - The device's list decoder reads every shape of a list with the rank of its first tensor
 *     (twin/ascendc/twin_list_tensor.h), so every list holds 1-D views: a contiguous tensor as
 *     view(-1); the tensors of an entry that share one non-overlapping, dense layout as 1-D views
 *     of their memory in storage order (the same strides give the same element order); any other
 *     entry is refused, naming it. Flattening hides shape mismatches, hence the whole-call check
 *     on the real shapes first, with the CPU device's messages.
 *   - Overlaps: the tiling sees shapes, not addresses, so the memory rules of the CPU aclnn layer
 *     (updated tensors address distinct elements and share memory with no other tensor of the
 *     call) are checked here, on the device addresses, before anything is queued.
 * Absent optional tensors (grad_scale, found_inf, lr_tensor, ema_decay_tensor) are NULL, which an
 * OPTIONAL input accepts. A call without elements launches nothing (the tiling would have no
 * core to launch).
 */
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apply_fused_ema_adam_list_api.h"
#include "apply_fused_ema_adam_list_call.h"
#include "apply_fused_ema_adam_list_repeated.h"
#include "npu_op_api.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using namespace ops;  // the torch ops' shared part (csrc/common/)

namespace {

constexpr const char* kOpName = "apply_fused_ema_adam_list_";

const ApplyFusedEmaAdamListOpApi& V2() { return LoadApplyFusedEmaAdamListOpApi<NpuOpApiSymbol>(); }

/** Entry i of every given list as 1-D views; raises, naming the entry, if it cannot be. */
void FlattenEntry(const ListCall& call, size_t i,
                  std::vector<at::Tensor> (&flat)[kApplyFusedEmaAdamListTensorLists])
{
    bool contiguous = true;
    bool oneDenseLayout = true;
    const at::Tensor& first = call.lists[kApplyFusedEmaAdamListGrads][i];
    for (int l = 0; l < kApplyFusedEmaAdamListTensorLists; ++l) {
        if (call.lists[l].empty()) continue;
        const at::Tensor& t = call.lists[l][i];
        contiguous = contiguous && t.is_contiguous();
        oneDenseLayout = oneDenseLayout && t.is_non_overlapping_and_dense() &&
                         t.strides() == first.strides();
    }
    for (int l = 0; l < kApplyFusedEmaAdamListTensorLists; ++l) {
        if (call.lists[l].empty()) continue;
        const at::Tensor& t = call.lists[l][i];
        if (contiguous) {
            flat[l].push_back(t.view(-1));
        } else {
            TORCH_CHECK(oneDenseLayout, kOpName, ": entry ", i,
                        " cannot reach the NPU kernel as "
                        "1-D views: its tensors are not all contiguous and do not share one dense "
                        "layout (",
                        kApplyFusedEmaAdamListTorchNames[l], "[", i, "] has strides ", t.strides(),
                        ", grads[", i, "] ", first.strides(),
                        "); make the entry's tensors contiguous");
            flat[l].push_back(t.as_strided({t.numel()}, {1}, t.storage_offset()));
        }
    }
}

/** The whole call checked (device, the shared validation on the real shapes, the memory rules on
 *  the device addresses), then every entry as 1-D views into `flat`; returns the elements. */
int64_t CheckedFlatCall(const ListCall& call,
                        std::vector<at::Tensor> (&flat)[kApplyFusedEmaAdamListTensorLists])
{
    CheckApplyFusedEmaAdamListCallDevice(kOpName, call, call.step->device());
    CheckApplyFusedEmaAdamListCallDescription(kOpName, call);
    CheckApplyFusedEmaAdamListCallMemory(kOpName, call);
    int64_t elements = 0;
    for (size_t i = 0; i < call.Entries(); ++i) {
        FlattenEntry(call, i, flat);
        elements += call.lists[kApplyFusedEmaAdamListGrads][i].numel();
    }
    return elements;
}

struct ExecutorDeleter {
    void operator()(aclOpExecutor* executor) const { V2().destroy(executor); }
};

/** What the queued launches of one prepared call read; the last of them (or the prepared call)
 *  frees it, so no launch runs with a destroyed executor or list. */
struct NpuLaunches {
    struct Launch {
        std::array<NpuAclTensorListPtr, kApplyFusedEmaAdamListTensorLists> lists;
        // after the lists: destroyed first. Null once a single-use phase 2 was queued with it.
        std::unique_ptr<aclOpExecutor, ExecutorDeleter> executor;
        uint64_t workspaceSize = 0;
        size_t firstScalar = 0;  // the flat input index of its step (aclSetInputTensorAddr)
    };
    std::array<NpuAclTensorPtr, 1 + kCallScalars>
        scalars;  // step, then ApplyFusedEmaAdamListCallScalar
    std::vector<Launch> launches;
    // A queued address update failed: the launches no longer hold what RunAgain recorded, so the
    // call may not launch again (the caller prepares a new one).
    std::atomic<bool> broken{false};
};

/** One or more launches of a list call on the NPU: the whole call validated and flattened, phase 1
 *  of every launch at construction; Run queues the phase 2s once; a repeatable one relaunches
 *  (RunAgain) with its address updates queued with each phase 2. */
class NpuPreparedApplyFusedEmaAdamListCall final : public RepeatedApplyFusedEmaAdamListCall {
public:
    NpuPreparedApplyFusedEmaAdamListCall(const ListCall& given, bool repeatable)
        : repeatable_(repeatable), state_(std::make_shared<NpuLaunches>())
    {
        ListCall call = given;
        device_ = given.step->options();
        if (repeatable) OwnValues(&call, device_);  // device tensors, written by fills on the stream
        std::vector<at::Tensor> flat[kApplyFusedEmaAdamListTensorLists];
        const int64_t elements = CheckedFlatCall(call, flat);
        stream_ = CurrentNpuAclStream();
        if (repeatable) Remember(call);
        if (elements == 0) return;  // nothing to update: no launch (the tiling has no core)
        NpuLaunches& state = *state_;
        state.scalars[0] = ToNpuAclTensor(*call.step);
        for (int s = 0; s < kCallScalars; ++s) state.scalars[1 + s] = ToNpuAclTensor(*call.scalars[s]);
        const ApplyFusedEmaAdamListOpApi& api = V2();
        const std::vector<std::pair<size_t, size_t>> slices =
            ApplyFusedEmaAdamListLaunches(call.Entries());
        for (const std::pair<size_t, size_t>& slice : slices) {
            NpuLaunches::Launch& launch = state.launches.emplace_back();
            launch.firstScalar = ListCall::FirstScalarInput(slice.second - slice.first);
            for (int l = 0; l < kApplyFusedEmaAdamListTensorLists; ++l) {
                const std::vector<at::Tensor> placeholders =
                    ApplyFusedEmaAdamListPlaceholders(call, l, slice);
                launch.lists[l] = ToNpuAclTensorList(placeholders.empty()
                                                         ? LaunchSlice(flat[l], slice)
                                                         : at::TensorList(placeholders));
            }
            const auto& sc = state.scalars;
            const auto list = [&](int l) { return launch.lists[l].get(); };
            aclOpExecutor* executor = nullptr;
            const aclnnStatus status = api.phase1(
                list(kApplyFusedEmaAdamListGrads), list(kApplyFusedEmaAdamListVars),
                list(kApplyFusedEmaAdamListMs), list(kApplyFusedEmaAdamListVs),
                list(kApplyFusedEmaAdamListSs), list(kApplyFusedEmaAdamListMaxVs),
                list(kApplyFusedEmaAdamListCopies), sc[0].get(), sc[1 + kCallGradScale].get(),
                sc[1 + kCallFoundInf].get(), sc[1 + kCallLr].get(), sc[1 + kCallEmaDecay].get(),
                APPLY_FUSED_EMA_ADAM_LIST_ATTR_VALUES(call.attrs), &launch.workspaceSize,
                &executor);
            launch.executor.reset(executor);
            // raises; the launches prepared so far are destroyed with the state
            CheckNpuAclnnStatus(kApplyFusedEmaAdamListPhase1, status,
                                LaunchOfCall(slice, slices.size()));
            if (repeatable) {
                CheckNpuAclnnStatus("aclSetAclOpExecutorRepeatable",
                                    api.repeatable(launch.executor.get()));
            }
        }
    }

    /** Queues every launch's phase 2 once, in order (a single-use call). */
    void Run()
    {
        for (NpuLaunches::Launch& launch : state_->launches) {
            TORCH_CHECK(launch.executor != nullptr, kOpName,
                        ": this prepared call already ran (it is not repeatable)");
            EnqueueNpuPhase2(kApplyFusedEmaAdamListPhase2, V2().phase2, launch.executor.release(),
                             launch.workspaceSize, device_, stream_, state_);
        }
    }

    size_t Launches() const override { return state_->launches.size(); }

private:
    bool MayLaunch(const at::Tensor& /*step: device memory, not read (as the tiling)*/) const
        override
    {
        // The owned lr / decay tensors are written on the stream the launches read them on.
        return !state_->broken.load() && CurrentNpuAclStream() == stream_;
    }

    void Relaunch(const Moves& moves, const BorrowedTensors& grads, const ScalarArg& lr,
                  const ScalarArg& emaDecay) override
    {
        TORCH_CHECK(repeatable_, kOpName, ": RunAgain needs a repeatable prepared call");
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
            int slot;  // 0 the step, then 1 + ApplyFusedEmaAdamListCallScalar: which aclTensor
            size_t position;  // its input index relative to a launch's first one-element input
            void* address;
        };
        struct Updates {
            std::shared_ptr<NpuLaunches> state;
            std::vector<std::vector<GradMove>> grads;  // per launch
            std::vector<ScalarMove> scalars;
            std::vector<at::Tensor> keep;  // the moved tensors, alive until the launches ran
        };
        auto updates = std::make_shared<Updates>();
        updates->state = state_;
        updates->grads.resize(state_->launches.size());
        for (size_t i : moves.grads) {
            updates->grads[i / kApplyFusedEmaAdamListMaxTensors].push_back(
                {i % kApplyFusedEmaAdamListMaxTensors, SeenGradAddress(i, *grads[i])});
            updates->keep.push_back(*grads[i]);
        }
        for (int s = 0; s < 1 + kCallScalars; ++s) {
            const at::Tensor* t = moves.scalars[s];
            if (t == nullptr) continue;
            updates->scalars.push_back(
                {s, ApplyFusedEmaAdamListScalarPosition(s - 1), SeenScalarAddress(s, *t)});
            updates->keep.push_back(*t);
        }
        for (size_t k = 0; k < state_->launches.size(); ++k) {
            const auto update = [updates, k]() -> aclnnStatus {
                NpuLaunches& state = *updates->state;
                NpuLaunches::Launch& launch = state.launches[k];
                const ApplyFusedEmaAdamListOpApi& api = V2();
                aclnnStatus status = 0;
                for (const GradMove& m : updates->grads[k]) {
                    if (status == 0) {
                        status = api.setDynamicInput(
                            launch.executor.get(), kApplyFusedEmaAdamListGrads, m.index,
                            launch.lists[kApplyFusedEmaAdamListGrads].get(), m.address);
                    }
                }
                for (const ScalarMove& m : updates->scalars) {
                    if (status == 0) {
                        status = api.setInput(launch.executor.get(),
                                              launch.firstScalar + m.position,
                                              state.scalars[m.slot].get(), m.address);
                    }
                }
                if (status != 0) state.broken.store(true);
                return status;
            };
            const NpuLaunches::Launch& queued = state_->launches[k];
            EnqueueNpuPhase2(kApplyFusedEmaAdamListPhase2, V2().phase2, queued.executor.get(),
                             queued.workspaceSize, device_, stream_, updates, update);
        }
    }

    bool repeatable_;
    std::shared_ptr<NpuLaunches> state_;
    at::TensorOptions device_;
    aclrtStream stream_ = nullptr;
};

/** The NPU kernel's work: a single-use prepared call. */
void RunNpu(const ListCall& call)
{
    NpuPreparedApplyFusedEmaAdamListCall(call, /*repeatable=*/false).Run();
}

}  // namespace

std::unique_ptr<RepeatedApplyFusedEmaAdamListCall> PrepareNpuApplyFusedEmaAdamListCall(
    const ListCall& call)
{
    return std::make_unique<NpuPreparedApplyFusedEmaAdamListCall>(call, /*repeatable=*/true);
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

TORCH_LIBRARY_IMPL(ascend_ema_adam, PrivateUse1, m)
{
    namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;
    m.impl("apply_fused_ema_adam_list_", &list_op::ApplyFusedEmaAdamListKernel<list_op::RunNpu>);
}
