/**
 * @file aclnn_apply_fused_ema_adam.cpp
 * @brief The two-phase aclnn API of ApplyFusedEmaAdam on the CPU device, under CANN's name and
 *        under the package's NPU registration's, AeaApplyFusedEmaAdam (docs/ACLNN.md, "The op type").
 *
 * Phase 1 (GetWorkspaceSize) checks every argument in a fixed order (nulls and live handles, then
 * the shared validation of op_host/apply_fused_ema_adam/apply_fused_ema_adam_check.h: dtypes, shapes and step,
 * attributes; then formats, memory layout, and the step's value) before it does anything, runs
 * the host tiling and registers a single-use executor holding copies of the views. Phase 2
 * queues the executor on the stream: strided views are gathered into the workspace, the kernel
 * runs on contiguous memory, and the updated var/m/v/s are scattered back into their views.
 */
#include "aclnnop/aclnn_aea_apply_fused_ema_adam.h"
#include "aclnnop/aclnn_apply_fused_ema_adam.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "acl_view.h"
#include "aclnn_common.h"
#include "apply_fused_ema_adam_check.h"
#include "apply_fused_ema_adam_native.h"
#include "apply_fused_ema_adam_signature.h"
#include "apply_fused_ema_adam_tiling.h"
#include "apply_fused_ema_adam_twin_run.h"
#include "cpu_kernel.h"

namespace ascend_ema_adam::apply_fused_ema_adam {

namespace {

using namespace acl;  // the CPU ACL runtime (runtime/acl/)

// The operator under CANN's name (the API of CANN's built-in ApplyFusedEmaAdam, on the CPU device)
// and under this package's NPU registration, AeaApplyFusedEmaAdam (docs/ACLNN.md, "The op type"):
// one implementation; an executor runs only under the name that made it, as two CANN operators'.
constexpr AclnnOp kOp{"ApplyFusedEmaAdam", "aclnnApplyFusedEmaAdamGetWorkspaceSize",
                      "aclnnApplyFusedEmaAdam"};
constexpr AclnnOp kOpAea{"AeaApplyFusedEmaAdam", "aclnnAeaApplyFusedEmaAdamGetWorkspaceSize",
                         "aclnnAeaApplyFusedEmaAdam"};

constexpr int kTensorArgs = kApplyFusedEmaAdamTensors;
constexpr int kFloatTensors = kApplyFusedEmaAdamFloatTensors;
constexpr const char* const* kTensorNames = kApplyFusedEmaAdamTensorNames;

using Tensors = const aclTensor* const (&)[kTensorArgs];

struct ApplyFusedEmaAdamExecutor final : aclOpExecutor {
    explicit ApplyFusedEmaAdamExecutor(const AclnnOp& op) : aclOpExecutor(op) {}

    ApplyFusedEmaAdamTilingResult tiling;
    Platform platform;
    View views[kFloatTensors];
    const int64_t* step = nullptr;
    CpuKernel kernel = CpuKernel::kNative;  // from the environment at phase 1
    uint32_t threads = 0;                   // the native kernel's

    void Execute(char* workspace) const override;
    std::unique_ptr<aclOpExecutor> Copy() const override
    {
        return std::make_unique<ApplyFusedEmaAdamExecutor>(*this);
    }
    bool SetAddress(bool input, size_t irIndex, size_t /*relativeIndex: 0*/,
                    const aclTensor* tensor) override
    {
        const size_t arg = input ? irIndex : kVar + irIndex;
        char* first = FirstElement(tensor);
        if (first == nullptr && Numel(tensor->viewDims) > 0) return false;
        if (arg == kStep) {
            step = reinterpret_cast<const int64_t*>(first);
        } else {
            views[arg].first = first;
        }
        return true;
    }
};

// ---- CheckParams, in order: every check returns ACLNN_SUCCESS (0) or the status it rejected with

aclnnStatus CheckHandles(const char* phase1, Tensors tensors, const uint64_t* workspaceSize,
                         aclOpExecutor* const* executor)
{
    for (int i = 0; i < kTensorArgs; ++i) {
        if (aclnnStatus s = CheckNotNull(phase1, kTensorNames[i], tensors[i])) return s;
    }
    if (aclnnStatus s = CheckNotNull(phase1, "workspaceSize", workspaceSize)) return s;
    if (aclnnStatus s = CheckNotNull(phase1, "executor", executor)) return s;
    for (int i = 0; i < kTensorArgs; ++i) {
        if (aclnnStatus s = CheckLiveTensor(phase1, kTensorNames[i], tensors[i])) return s;
    }
    return ACLNN_SUCCESS;
}

/** The tensors for the shared format and memory checks: var, m, v and s are written in place. */
CallTensors CallTensorsOf(Tensors tensors)
{
    CallTensors call;
    for (int i = 0; i < kTensorArgs; ++i) {
        call.Add(tensors[i], i >= kVar && i < kFloatTensors);
    }
    call.nameOf = [](size_t i) { return std::string(kTensorNames[i]); };
    return call;
}

aclnnStatus CheckParams(const char* phase1, Tensors tensors, const Attrs& attrs,
                        const uint64_t* workspaceSize, aclOpExecutor* const* executor)
{
    if (aclnnStatus s = CheckHandles(phase1, tensors, workspaceSize, executor)) return s;
    const ApplyFusedEmaAdamTensorArgs args = {
        ArgOf(kTensorNames[kGrad], tensors[kGrad]), ArgOf(kTensorNames[kVar], tensors[kVar]),
        ArgOf(kTensorNames[kM], tensors[kM]),       ArgOf(kTensorNames[kV], tensors[kV]),
        ArgOf(kTensorNames[kS], tensors[kS]),       ArgOf(kTensorNames[kStep], tensors[kStep])};
    if (aclnnStatus s = RejectIf(phase1, CheckApplyFusedEmaAdam(args, attrs))) return s;
    const CallTensors call = CallTensorsOf(tensors);
    if (aclnnStatus s = CheckFormats(phase1, call)) return s;
    if (aclnnStatus s = CheckMemory(phase1, call)) return s;
    // The step's value: on the CPU device its memory is host memory, read here, once all else is
    // known to be valid (an int64 of one element, not overlapping any updated tensor).
    const int64_t step = *reinterpret_cast<const int64_t*>(FirstElement(tensors[kStep]));
    return RejectIf(phase1, CheckStepValue(step, attrs.biasCorrection));
}

// ---- phase 2 -----------------------------------------------------------------------------------

/**
 * Phase 2's work, in stream order: stage strided views in, run the CPU device's kernel, scatter
 * the results. The one place a CPU kernel is chosen: the native kernel by default; the AscendC
 * kernel, unchanged, through the twin with ASCEND_EMA_ADAM_CPU_KERNEL=twin. Both give the same
 * bits.
 */
void ApplyFusedEmaAdamExecutor::Execute(char* workspace) const
{
    void* data[kFloatTensors];
    for (int i = 0; i < kFloatTensors; ++i) {
        data[i] = StageIn(views[i], workspace);
    }
    ApplyFusedEmaAdamBuffers b{};
    b.grad = data[kGrad];
    b.var = b.varOut = data[kVar];
    b.m = b.mOut = data[kM];
    b.v = b.vOut = data[kV];
    b.s = b.sOut = data[kS];
    b.step = step;
    if (kernel == CpuKernel::kTwin) {
        RunApplyFusedEmaAdamOnTwin(tiling, platform, b);
    } else {
        NativeOptions options;
        options.threads = threads;
        NoteNativeLaunchThreads(RunApplyFusedEmaAdamNative(tiling, b, options));
    }
    for (int i = kVar; i < kFloatTensors; ++i) {
        StageOut(views[i], workspace);
    }
}

aclnnStatus GetWorkspaceSize(const AclnnOp& op, Tensors tensors, const Attrs& attrs,
                             uint64_t* workspaceSize, aclOpExecutor** executor)
{
    if (aclnnStatus s = CheckParams(op.phase1, tensors, attrs, workspaceSize, executor)) return s;
    auto e = std::make_unique<ApplyFusedEmaAdamExecutor>(op);
    if (aclnnStatus s = SelectCpuKernel(op.phase1, &e->kernel, &e->threads)) return s;
    const DataType dtype =
        FindDataTypeByCode(static_cast<int32_t>(tensors[kGrad]->dataType))->type;  // checked
    const uint64_t numel = static_cast<uint64_t>(Numel(tensors[kGrad]->viewDims));
    e->platform = CpuPlatform();
    try {
        e->tiling = ComputeApplyFusedEmaAdamTiling(numel, dtype, attrs, e->platform);
    } catch (const std::invalid_argument& ex) {
        return Reject(op.phase1, ACLNN_ERR_INNER_TILING_ERROR,
                      std::string("tiling failed: ") + ex.what());
    }
    e->step = reinterpret_cast<const int64_t*>(FirstElement(tensors[kStep]));
    uint64_t staging = 0;
    for (int i = 0; i < kFloatTensors; ++i) {
        e->views[i] = MakeView(tensors[i], &staging);
    }
    // inputs grad, var, m, v, s, step (one tensor each); outputs var, m, v, s (the OpDef's)
    e->inputInstances.assign(kTensorArgs, 1);
    e->outputInstances.assign(kFloatTensors - kVar, 1);
    e->workspaceSize = staging;
    e->empty = numel == 0;
    *workspaceSize = staging;
    *executor = RegisterExecutor(std::move(e));
    return ACLNN_SUCCESS;
}

}  // namespace

}  // namespace ascend_ema_adam::apply_fused_ema_adam

namespace ascend_ema_adam::apply_fused_ema_adam {
namespace {

using namespace acl;  // the CPU ACL runtime (runtime/acl/)

/** Both names' phase 1: the tensors (grad ... step) in CANN's order, the attributes. */
aclnnStatus Phase1(const AclnnOp& op, Tensors tensors, const Attrs& attrs,
                   uint64_t* workspaceSize, aclOpExecutor** executor)
{
    return Guarded(op.phase1,
                   [&] { return GetWorkspaceSize(op, tensors, attrs, workspaceSize, executor); });
}

aclnnStatus Phase2(const AclnnOp& op, void* workspace, uint64_t workspaceSize,
                   aclOpExecutor* executor, aclrtStream stream)
{
    return Guarded(op.phase2,
                   [&] { return RunPhase2(op, workspace, workspaceSize, executor, stream); });
}

}  // namespace
}  // namespace ascend_ema_adam::apply_fused_ema_adam

// The parameters are the spec's (apply_fused_ema_adam_signature.h); include/aclnnop/ declares the
// same functions, which the compiler holds these definitions to.
extern "C" {

aclnnStatus aclnnApplyFusedEmaAdamGetWorkspaceSize(ACLNN_APPLY_FUSED_EMA_ADAM_PARAMS,
                                                   uint64_t* workspaceSize,
                                                   aclOpExecutor** executor)
{
    namespace fused_op = ascend_ema_adam::apply_fused_ema_adam;
    ascend_ema_adam::Attrs attrs;
    APPLY_FUSED_EMA_ADAM_SET_ATTRS(attrs);
    return fused_op::Phase1(fused_op::kOp, {ACLNN_APPLY_FUSED_EMA_ADAM_TENSORS}, attrs,
                            workspaceSize, executor);
}

aclnnStatus aclnnApplyFusedEmaAdam(void* workspace, uint64_t workspaceSize,
                                   aclOpExecutor* executor, aclrtStream stream)
{
    namespace fused_op = ascend_ema_adam::apply_fused_ema_adam;
    return fused_op::Phase2(fused_op::kOp, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAeaApplyFusedEmaAdamGetWorkspaceSize(ACLNN_AEA_APPLY_FUSED_EMA_ADAM_PARAMS,
                                                      uint64_t* workspaceSize,
                                                      aclOpExecutor** executor)
{
    namespace fused_op = ascend_ema_adam::apply_fused_ema_adam;
    ascend_ema_adam::Attrs attrs;
    APPLY_FUSED_EMA_ADAM_SET_ATTRS(attrs);
    return fused_op::Phase1(fused_op::kOpAea, {ACLNN_AEA_APPLY_FUSED_EMA_ADAM_TENSORS}, attrs,
                            workspaceSize, executor);
}

aclnnStatus aclnnAeaApplyFusedEmaAdam(void* workspace, uint64_t workspaceSize,
                                      aclOpExecutor* executor, aclrtStream stream)
{
    namespace fused_op = ascend_ema_adam::apply_fused_ema_adam;
    return fused_op::Phase2(fused_op::kOpAea, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
