// aclnnApplyFusedEmaAdamGetWorkspaceSize / aclnnApplyFusedEmaAdam on the CPU runtime.
//
//   bad_input_table      every rejected input: exact status, message, and all six tensors, the
//                        workspace size and the executor out-arguments untouched
//   the other cases      executor life cycle, workspace and stream checks, empty and rank-0
//                        tensors, accepted boundary values and formats, strided views against
//                        contiguous runs, queued steps in stream order, 8 threads at once
//
// Numbers are checked by comparing runs of this API with each other (bit for bit) and with the
// inputs; tests/python/aclnn/test_aclnn_ctypes.py holds the same API to the numpy golden.
#include <limits>
#include <memory>
#include <thread>

#include "../apply_fused_ema_adam_bad_inputs.h"
#include "aclnn_test_util.h"

using namespace aea_test;

namespace {

/** A row's call: tensors built from its CallSpec (fresh aclrtMalloc storage each), then broken by
 *  its AclnnBreaks. */
struct BadCall {
    OptimizerTensors ts;
    const aclTensor* args[kTensors];
    Hyper h;
    uint64_t workspaceSize = 0xABCD;                                   // sentinel
    aclOpExecutor* executor = reinterpret_cast<aclOpExecutor*>(0x1234);  // sentinel, never used
    uint64_t* workspaceSizeArg = &workspaceSize;
    aclOpExecutor** executorArg = &executor;
    std::vector<aclTensor*> aliases;
    std::vector<void*> buffers;

    explicit BadCall(const CallSpec& spec) : h(spec.h)
    {
        for (int i = 0; i < kTensors; ++i) {
            MakeTensor(&ts.t[i], spec.dtype[i], spec.shape[i], Layout::kContiguous, i);
            args[i] = ts.t[i].handle;
        }
        if (spec.dtype[kStep] == ACL_INT64 && ts.t[kStep].Numel() > 0) {
            std::memcpy(ts.t[kStep].data, &spec.stepValue, sizeof(spec.stepValue));
        }
    }

    ~BadCall()
    {
        for (aclTensor* a : aliases) aclDestroyTensor(a);
        for (void* b : buffers) aclrtFree(b);
    }

    /** Another description of memory (by default tensor i's own storage), put in slot i. */
    aclTensor* Alias(int i, aclDataType dtype, std::vector<int64_t> shape,
                     std::vector<int64_t> strides, int64_t offset = 0,
                     aclFormat format = ACL_FORMAT_ND, void* data = nullptr,
                     std::vector<int64_t> storage = {})
    {
        if (data == nullptr) data = ts.t[i].data;
        if (storage.empty()) storage = ts.t[i].storage;
        aclTensor* a = aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), offset,
                                       format, storage.data(), storage.size(), data);
        EXPECT_MSG(a != nullptr, "alias rejected: %s", RecentError().c_str());
        aliases.push_back(a);
        args[i] = a;
        return a;
    }

    /** A valid description of 8 elements without a data address. */
    void NullDataAlias(int i)
    {
        const std::vector<int64_t> strides = {4, 1}, storage = {8};
        aclTensor* a = aclCreateTensor(kShape.data(), 2, ACL_FLOAT, strides.data(), 0,
                                       ACL_FORMAT_ND, storage.data(), 1, nullptr);
        EXPECT(a != nullptr);
        aliases.push_back(a);
        args[i] = a;
    }

    /** A fresh buffer of `elems` fp32 elements. */
    void* Buffer(size_t elems)
    {
        void* p = nullptr;
        aclrtMalloc(&p, elems * 4, ACL_MEM_MALLOC_HUGE_FIRST);
        std::memset(p, 0x3C, elems * 4);
        buffers.push_back(p);
        return p;
    }

    /** What only this layer can see (every kind: -Wswitch holds the switch complete). */
    void Apply(const AclnnBreak& b)
    {
        const aclDataType dtype = ts.t[b.a < 0 ? 0 : b.a].dtype;
        switch (b.kind) {
            case AclnnBreak::kNullTensor: args[b.a] = nullptr; break;
            case AclnnBreak::kNullWorkspaceSize: workspaceSizeArg = nullptr; break;
            case AclnnBreak::kNullExecutor: executorArg = nullptr; break;
            case AclnnBreak::kNullData: NullDataAlias(b.a); break;
            case AclnnBreak::kDestroyed:
                aclDestroyTensor(Alias(b.a, dtype, ts.t[b.a].shape, ts.t[b.a].strides));
                aliases.pop_back();
                break;
            case AclnnBreak::kFormat:
                Alias(b.a, dtype, ts.t[b.a].shape, ts.t[b.a].strides, 0, b.format);
                break;
            case AclnnBreak::kBroadcast: Alias(b.a, dtype, kShape, {0, 1}); break;
            case AclnnBreak::kRowsOverlap: Alias(b.a, dtype, kShape, {2, 1}); break;
            case AclnnBreak::kSameHandle: args[b.a] = args[b.b]; break;
            case AclnnBreak::kHalfOverlap: {
                void* shared = Buffer(12);
                Alias(b.a, ACL_FLOAT, kShape, {4, 1}, 0, ACL_FORMAT_ND, shared, {12});
                Alias(b.b, ACL_FLOAT, kShape, {4, 1}, 4, ACL_FORMAT_ND, shared, {12});
                break;
            }
            case AclnnBreak::kInterleaved: {
                void* shared = Buffer(16);
                Alias(b.a, ACL_FLOAT, kShape, {8, 2}, 0, ACL_FORMAT_ND, shared, {16});
                Alias(b.b, ACL_FLOAT, kShape, {8, 2}, 1, ACL_FORMAT_ND, shared, {16});
                break;
            }
            case AclnnBreak::kStepInsideVar:
                Alias(kStep, ACL_INT64, {1}, {1}, 1, ACL_FORMAT_ND, ts.t[kVar].data, {4});
                break;
        }
    }

    aclnnStatus Invoke()
    {
        return aclnnApplyFusedEmaAdamGetWorkspaceSize(
            args[0], const_cast<aclTensor*>(args[1]), const_cast<aclTensor*>(args[2]),
            const_cast<aclTensor*>(args[3]), const_cast<aclTensor*>(args[4]), args[5], h.lr,
            h.emaDecay, h.beta1, h.beta2, h.eps, h.mode, h.biasCorrection, h.weightDecay,
            workspaceSizeArg, executorArg);
    }
};

/** Every row: exact status and message; tensors, workspace size and executor untouched. */
AEA_CASE(bad_input_table)
{
    const std::vector<BadInput> rows = BadInputs();
    for (const BadInput& row : rows) {
        CallSpec spec;
        row.describe(spec);
        BadCall call(spec);
        const auto before = call.ts.Snapshot();
        for (const AclnnBreak& b : row.aclnnOnly) call.Apply(b);
        RecentError();  // only the call's own message below
        const aclnnStatus status = call.Invoke();
        const std::string message = RecentError();
        EXPECT_MSG(status == row.status, "[%s] status %d, expected %d (%s)", row.name.c_str(),
                   status, row.status, message.c_str());
        EXPECT_MSG(Contains(message, "aclnnApplyFusedEmaAdamGetWorkspaceSize: ") &&
                       Contains(message, row.message),
                   "[%s] message '%s' lacks '%s'", row.name.c_str(), message.c_str(),
                   row.message.c_str());
        EXPECT_MSG(call.ts.Snapshot() == before, "[%s] a tensor changed", row.name.c_str());
        EXPECT_MSG(call.workspaceSize == 0xABCD &&
                       call.executor == reinterpret_cast<aclOpExecutor*>(0x1234),
                   "[%s] an out-argument was written", row.name.c_str());
    }
    std::printf("  %zu bad inputs\n", rows.size());
}

/** The table's base call is valid: every rejection above is due to the row's change. */
AEA_CASE(bad_input_table_base_call_is_valid)
{
    BadCall call{CallSpec()};
    call.executor = nullptr;
    EXPECT(call.Invoke() == ACLNN_SUCCESS);
    EXPECT(call.workspaceSize == 0 && call.executor != nullptr);
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, call.executor, nullptr) == ACLNN_SUCCESS);
}

/** Without bias correction step is not used (c1 = c2 = 1): steps below 1 are accepted and give
 *  the bits of step 1. */
AEA_CASE(any_step_without_bias_correction)
{
    Hyper h;
    h.biasCorrection = false;
    OptimizerTensors base;
    base.Make(ACL_FLOAT, {40}, Layout::kContiguous);
    OptimizerTensors one;
    one.CopyOf(base, Layout::kContiguous);
    one.SetStep(1);
    EXPECT(RunOnce(one, h, nullptr) == ACLNN_SUCCESS);
    for (int64_t step : {int64_t{0}, int64_t{-7}, std::numeric_limits<int64_t>::min()}) {
        OptimizerTensors ts;
        ts.CopyOf(base, Layout::kContiguous);
        ts.SetStep(step);
        EXPECT_MSG(RunOnce(ts, h, nullptr) == ACLNN_SUCCESS, "step %lld: %s",
                   static_cast<long long>(step), RecentError().c_str());
        for (int i = kVar; i <= kS; ++i) EXPECT(ts.t[i].Packed() == one.t[i].Packed());
    }
}

bool MostDiffer(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, size_t elemBytes)
{
    size_t same = 0;
    for (size_t i = 0; i < a.size(); i += elemBytes) {
        same += std::memcmp(&a[i], &b[i], elemBytes) == 0;
    }
    return a.size() == b.size() && same * 2 < a.size() / elemBytes;  // most elements changed
}

AEA_CASE(executor_is_single_use)
{
    OptimizerTensors ts;
    ts.Make(ACL_FLOAT, {3, 7}, Layout::kContiguous);
    const auto varBefore = ts.t[kVar].Packed();
    uint64_t ws = 1;
    aclOpExecutor* executor = nullptr;
    EXPECT(Phase1(ts, Hyper{}, &ws, &executor) == ACLNN_SUCCESS);
    EXPECT(ws == 0 && executor != nullptr);
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, executor, nullptr) == ACLNN_SUCCESS);
    EXPECT(MostDiffer(varBefore, ts.t[kVar].Packed(), 4));
    const auto after = ts.Snapshot();
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, executor, nullptr) == ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "aclnnApplyFusedEmaAdam: executor is not a live executor"));
    EXPECT(ts.Snapshot() == after);
}

AEA_CASE(executor_null_or_foreign)
{
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, nullptr, nullptr) == ACLNN_ERR_PARAM_NULLPTR);
    EXPECT(Contains(RecentError(), "aclnnApplyFusedEmaAdam: executor is null"));
    uint64_t notAnExecutor[8] = {};
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, reinterpret_cast<aclOpExecutor*>(notAnExecutor),
                                  nullptr) == ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "not a live executor"));
}

/** A rejected workspace leaves the executor usable; the right one then runs it. */
AEA_CASE(workspace_too_small_or_null)
{
    OptimizerTensors ts;
    ts.Make(ACL_FLOAT16, {5, 6}, Layout::kStrided);
    const auto before = ts.Snapshot();
    uint64_t ws = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT(Phase1(ts, Hyper{}, &ws, &executor) == ACLNN_SUCCESS);
    EXPECT(ws >= 5 * 30 * 2);  // five staged fp16 copies
    Workspace workspace(ws);
    EXPECT(aclnnApplyFusedEmaAdam(workspace.data, ws - 1, executor, nullptr) ==
           ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "workspaceSize is " + std::to_string(ws - 1) +
                                       " but phase 1 asked for " + std::to_string(ws)));
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, ws, executor, nullptr) == ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "workspace is null but workspaceSize is"));
    EXPECT(ts.Snapshot() == before);
    EXPECT(aclnnApplyFusedEmaAdam(workspace.data, ws, executor, nullptr) == ACLNN_SUCCESS);
    EXPECT(ts.Snapshot() != before);
}

/** Without staging no workspace is needed, but a non-zero size needs an address. */
AEA_CASE(workspace_null_with_size_on_contiguous)
{
    OptimizerTensors ts;
    ts.Make(ACL_FLOAT, {9}, Layout::kContiguous);
    uint64_t ws = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT(Phase1(ts, Hyper{}, &ws, &executor) == ACLNN_SUCCESS && ws == 0);
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 64, executor, nullptr) == ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "workspace is null but workspaceSize is 64"));
    Workspace larger(64);
    EXPECT(aclnnApplyFusedEmaAdam(larger.data, 64, executor, nullptr) == ACLNN_SUCCESS);
}

AEA_CASE(stream_not_live)
{
    OptimizerTensors ts;
    ts.Make(ACL_FLOAT, {4}, Layout::kContiguous);
    const auto before = ts.Snapshot();
    aclrtStream stream = nullptr;
    EXPECT(aclrtCreateStream(&stream) == ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(stream) == ACL_SUCCESS);
    uint64_t ws = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT(Phase1(ts, Hyper{}, &ws, &executor) == ACLNN_SUCCESS);
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, executor, stream) == ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "aclnnApplyFusedEmaAdam: stream is not a live stream"));
    EXPECT(ts.Snapshot() == before);
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, executor, nullptr) == ACLNN_SUCCESS);  // still live
}

/** Empty tensors: success, workspace 0, a single-use executor whose run changes nothing. */
AEA_CASE(empty_tensors)
{
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{0}, std::vector<int64_t>{3, 0, 2}}) {
        OptimizerTensors ts;
        ts.Make(ACL_BF16, shape, Layout::kContiguous);
        const auto before = ts.Snapshot();
        uint64_t ws = 7;
        aclOpExecutor* executor = nullptr;
        EXPECT(Phase1(ts, Hyper{}, &ws, &executor) == ACLNN_SUCCESS);
        EXPECT(ws == 0 && executor != nullptr);
        aclrtStream stream = nullptr;
        EXPECT(aclrtCreateStream(&stream) == ACL_SUCCESS);
        EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, executor, stream) == ACLNN_SUCCESS);
        EXPECT(aclrtSynchronizeStream(stream) == ACL_SUCCESS);
        EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, executor, stream) == ACLNN_ERR_PARAM_INVALID);
        RecentError();
        EXPECT(aclrtDestroyStream(stream) == ACL_SUCCESS);
        EXPECT(ts.Snapshot() == before);
    }
}

/** Rank-0 tensors hold one element each. */
AEA_CASE(rank_zero_tensors)
{
    OptimizerTensors ts;
    ts.Make(ACL_FLOAT, {}, Layout::kContiguous);
    const auto var = ts.t[kVar].Packed();
    EXPECT(RunOnce(ts, Hyper{}, nullptr) == ACLNN_SUCCESS);
    EXPECT(ts.t[kVar].Packed() != var);
}

/** Boundary values are accepted and act exactly: lr 0 keeps var, emaDecay 1 keeps s. */
AEA_CASE(boundary_attributes_accepted)
{
    OptimizerTensors ts;
    ts.Make(ACL_FLOAT, {64}, Layout::kContiguous);
    Hyper h;
    h.lr = 0.0;
    h.emaDecay = 1.0;
    h.beta1 = 0.0;
    h.beta2 = 0.0;
    h.eps = 0.0;
    h.weightDecay = -0.5;  // only finiteness is required
    const auto before = ts.Snapshot();
    EXPECT(RunOnce(ts, h, nullptr) == ACLNN_SUCCESS);
    const auto after = ts.Snapshot();
    EXPECT(after[kVar] == before[kVar]);
    EXPECT(after[kS] == before[kS]);
    // beta1 = 0: m' = g exactly; beta2 = 0: v' = g*g.
    EXPECT(after[kM] == before[kGrad]);
    const float* g = reinterpret_cast<const float*>(before[kGrad].data());
    const float* v = reinterpret_cast<const float*>(after[kV].data());
    bool exact = true;
    for (int i = 0; i < 64; ++i) exact = exact && v[i] == g[i] * g[i];
    EXPECT(exact);
    h.emaDecay = 0.0;  // s' = var' = var (lr 0)
    EXPECT(RunOnce(ts, h, nullptr) == ACLNN_SUCCESS);
    EXPECT(ts.t[kS].Storage() == before[kVar]);
}

/** NCL, NCHW and NCDHW (torch_npu's tags for 3/4/5-D tensors) run as ND, bit for bit. */
AEA_CASE(nd_equivalent_formats_accepted)
{
    const struct {
        aclFormat format;
        std::vector<int64_t> shape;
    } cases[] = {{ACL_FORMAT_NCL, {2, 3, 4}}, {ACL_FORMAT_NCHW, {2, 3, 4, 5}}, {ACL_FORMAT_NCDHW, {1, 2, 3, 4, 5}}};
    for (const auto& c : cases) {
        OptimizerTensors nd;
        nd.Make(ACL_FLOAT, c.shape, Layout::kContiguous);
        OptimizerTensors tagged;
        tagged.CopyOf(nd, Layout::kContiguous);
        for (int i = 0; i < 5; ++i) {
            TestTensor& t = tagged.t[i];
            aclDestroyTensor(t.handle);
            t.handle = aclCreateTensor(t.shape.data(), t.shape.size(), t.dtype, t.strides.data(), 0,
                                       c.format, t.storage.data(), t.storage.size(), t.data);
        }
        EXPECT(RunOnce(nd, Hyper{}, nullptr) == ACLNN_SUCCESS);
        EXPECT(RunOnce(tagged, Hyper{}, nullptr) == ACLNN_SUCCESS);
        for (int i = 0; i < 5; ++i) EXPECT(tagged.t[i].Packed() == nd.t[i].Packed());
    }
}

/**
 * Strided views (transposed, and every other element with padded rows and an offset) are
 * updated in place exactly as contiguous copies of the same values, and the gaps between their
 * elements are not touched; several steps, every dtype and mode.
 */
AEA_CASE(strided_views_match_contiguous)
{
    for (aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        for (Layout layout : {Layout::kTransposed, Layout::kStrided}) {
            for (int64_t mode : {0, 1}) {
                OptimizerTensors strided;
                strided.Make(dtype, {6, 37}, layout);
                OptimizerTensors contiguous;
                contiguous.CopyOf(strided, Layout::kContiguous);
                Hyper h;
                h.mode = mode;
                h.lr = 0.1;  // large enough to move 16-bit values (bf16 ulp 2^-7 at 1)
                h.weightDecay = 0.1;
                const auto storageBefore = strided.Snapshot();
                const auto packedBefore = strided.t[kVar].Packed();
                for (int64_t step = 1; step <= 3; ++step) {
                    strided.SetStep(step);
                    contiguous.SetStep(step);
                    EXPECT(RunOnce(strided, h, nullptr) == ACLNN_SUCCESS);
                    EXPECT(RunOnce(contiguous, h, nullptr) == ACLNN_SUCCESS);
                }
                for (int i = 0; i < 5; ++i) {
                    EXPECT_MSG(strided.t[i].Packed() == contiguous.t[i].Packed(),
                               "dtype %d layout %d mode %d: tensor %d differs", dtype,
                               static_cast<int>(layout), static_cast<int>(mode), i);
                }
                EXPECT(MostDiffer(packedBefore, strided.t[kVar].Packed(), ElemBytes(dtype)));
                // Bytes outside the views are untouched.
                for (int i = 0; i < 5; ++i) {
                    std::vector<uint8_t> now = strided.t[i].Storage();
                    std::vector<uint8_t> was = storageBefore[i];
                    for (size_t off : strided.t[i].ElementOffsets()) {
                        std::memset(&now[off], 0, ElemBytes(dtype));
                        std::memset(&was[off], 0, ElemBytes(dtype));
                    }
                    EXPECT_MSG(now == was, "tensor %d: a gap byte changed", i);
                }
            }
        }
    }
}

/** A broadcast gradient (stride 0, only read) is accepted and read as its expanded copy. */
AEA_CASE(broadcast_grad_accepted)
{
    OptimizerTensors ts;
    ts.Make(ACL_FLOAT, {4, 16}, Layout::kContiguous);
    TestTensor row;
    MakeTensor(&row, ACL_FLOAT, {16}, Layout::kContiguous, 0);
    const std::vector<int64_t> shape = {4, 16}, strides = {0, 1}, storage = {16};
    aclTensor* broadcast = aclCreateTensor(shape.data(), 2, ACL_FLOAT, strides.data(), 0,
                                           ACL_FORMAT_ND, storage.data(), 1, row.data);
    std::vector<uint8_t> expanded;
    const std::vector<uint8_t> one = row.Packed();
    for (int r = 0; r < 4; ++r) expanded.insert(expanded.end(), one.begin(), one.end());
    OptimizerTensors reference;
    reference.CopyOf(ts, Layout::kContiguous);
    MakeTensor(&reference.t[kGrad], ACL_FLOAT, shape, Layout::kContiguous, 0, &expanded);

    uint64_t ws = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT(aclnnApplyFusedEmaAdamGetWorkspaceSize(
               broadcast, ts.t[kVar].handle, ts.t[kM].handle, ts.t[kV].handle, ts.t[kS].handle,
               ts.t[kStep].handle, 1e-3, 0.99, 0.9, 0.999, 1e-8, 1, true, 0.01, &ws,
               &executor) == ACLNN_SUCCESS);
    Workspace workspace(ws);
    EXPECT(aclnnApplyFusedEmaAdam(workspace.data, ws, executor, nullptr) == ACLNN_SUCCESS);
    Hyper h;
    h.emaDecay = 0.99;
    EXPECT(RunOnce(reference, h, nullptr) == ACLNN_SUCCESS);
    for (int i = kVar; i <= kS; ++i) EXPECT(ts.t[i].Packed() == reference.t[i].Packed());
    EXPECT(row.Packed() == one);
    aclDestroyTensor(broadcast);
}

/** The default stream (NULL) runs phase 2 before it returns. */
AEA_CASE(default_stream_is_synchronous)
{
    OptimizerTensors ts;
    ts.Make(ACL_FLOAT16, {1000}, Layout::kContiguous);
    const auto before = ts.t[kVar].Packed();
    Hyper h;
    h.lr = 0.05;  // moves every fp16 value
    uint64_t ws = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT(Phase1(ts, h, &ws, &executor) == ACLNN_SUCCESS);
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, executor, nullptr) == ACLNN_SUCCESS);
    EXPECT(MostDiffer(before, ts.t[kVar].Packed(), 2));
}

/**
 * Phase 2 only queues: several steps queued back to back (each with its own step tensor, all
 * phase 1 calls made up front) run in order. Equal, bit for bit, to the same steps run one at a
 * time on the default stream; a reordering or an overlap of two steps would differ.
 */
void QueuedStepsMatchSequential(aclDataType dtype, const std::vector<int64_t>& shape, int steps,
                                int64_t mode)
{
    OptimizerTensors queued;
    queued.Make(dtype, shape, Layout::kStrided);
    OptimizerTensors sequential;
    sequential.CopyOf(queued, Layout::kStrided);
    Hyper h;
    h.mode = mode;
    h.weightDecay = 0.05;

    aclrtStream stream = nullptr;
    EXPECT(aclrtCreateStream(&stream) == ACL_SUCCESS);
    std::vector<std::unique_ptr<TestTensor>> stepTensors;
    std::vector<std::unique_ptr<Workspace>> workspaces;
    std::vector<aclOpExecutor*> executors;
    std::vector<uint64_t> sizes;
    for (int k = 0; k < steps; ++k) {
        const int64_t step = k + 1;
        const std::vector<uint8_t> bytes(reinterpret_cast<const uint8_t*>(&step),
                                         reinterpret_cast<const uint8_t*>(&step) + 8);
        stepTensors.push_back(std::make_unique<TestTensor>());
        MakeTensor(stepTensors.back().get(), ACL_INT64, {1}, Layout::kContiguous, 5, &bytes);
        uint64_t ws = 0;
        aclOpExecutor* executor = nullptr;
        EXPECT(aclnnApplyFusedEmaAdamGetWorkspaceSize(
                   queued.t[0].handle, queued.t[1].handle, queued.t[2].handle, queued.t[3].handle,
                   queued.t[4].handle, stepTensors.back()->handle, h.lr, h.emaDecay, h.beta1,
                   h.beta2, h.eps, h.mode, h.biasCorrection, h.weightDecay, &ws,
                   &executor) == ACLNN_SUCCESS);
        workspaces.push_back(std::make_unique<Workspace>(ws));
        executors.push_back(executor);
        sizes.push_back(ws);
    }
    for (int k = 0; k < steps; ++k) {
        EXPECT(aclnnApplyFusedEmaAdam(workspaces[k]->data, sizes[k], executors[k], stream) ==
               ACLNN_SUCCESS);
    }
    EXPECT(aclrtSynchronizeStream(stream) == ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(stream) == ACL_SUCCESS);

    for (int k = 0; k < steps; ++k) {
        sequential.SetStep(k + 1);
        EXPECT(RunOnce(sequential, h, nullptr) == ACLNN_SUCCESS);
    }
    for (int i = 0; i < 5; ++i) EXPECT(queued.t[i].Packed() == sequential.t[i].Packed());
}

AEA_CASE(queued_steps_run_in_stream_order)
{
    QueuedStepsMatchSequential(ACL_FLOAT, {33, 65}, 6, 0);
    QueuedStepsMatchSequential(ACL_BF16, {7, 300}, 4, 1);
}

/**
 * 8 threads, each with its own device context, stream, tensors (dtype, mode and size differ per
 * thread) and executors, run several steps at once; every result equals the same work done
 * alone afterwards.
 */
AEA_CASE(eight_threads_concurrently)
{
    constexpr int kThreads = 8;
    constexpr int kSteps = 3;
    const aclDataType dtypes[3] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    OptimizerTensors work[kThreads];
    OptimizerTensors alone[kThreads];
    Hyper hyper[kThreads];
    for (int t = 0; t < kThreads; ++t) {
        work[t].Make(dtypes[t % 3], {3 + t, 517 + 131 * t}, t % 2 ? Layout::kStrided : Layout::kContiguous);
        alone[t].CopyOf(work[t], Layout::kContiguous);
        hyper[t].mode = t % 2;
        hyper[t].lr = 1e-3 * (t + 1);
        hyper[t].weightDecay = 0.01 * t;
    }
    int failures[kThreads] = {};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            if (aclrtSetDevice(0) != ACL_SUCCESS) {
                ++failures[t];
                return;
            }
            aclrtStream stream = nullptr;
            failures[t] += aclrtCreateStream(&stream) != ACL_SUCCESS;
            for (int64_t step = 1; step <= kSteps; ++step) {
                work[t].SetStep(step);  // RunOnce synchronises, so the step can change now
                failures[t] += RunOnce(work[t], hyper[t], stream) != ACLNN_SUCCESS;
            }
            failures[t] += aclrtDestroyStream(stream) != ACL_SUCCESS;
            failures[t] += aclrtResetDevice(0) != ACL_SUCCESS;
        });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_MSG(failures[t] == 0, "thread %d: %d failed calls", t, failures[t]);
        for (int64_t step = 1; step <= kSteps; ++step) {
            alone[t].SetStep(step);
            EXPECT(RunOnce(alone[t], hyper[t], nullptr) == ACLNN_SUCCESS);
        }
        for (int i = 0; i < 5; ++i) {
            EXPECT_MSG(work[t].t[i].Packed() == alone[t].t[i].Packed(), "thread %d tensor %d", t, i);
        }
    }
}

/** The views are copied in phase 1: the aclTensors may be destroyed before phase 2. */
AEA_CASE(tensors_destroyed_between_phases)
{
    OptimizerTensors ts;
    ts.Make(ACL_FLOAT, {5, 9}, Layout::kTransposed);
    OptimizerTensors reference;
    reference.CopyOf(ts, Layout::kContiguous);
    uint64_t ws = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT(Phase1(ts, Hyper{}, &ws, &executor) == ACLNN_SUCCESS);
    for (TestTensor& t : ts.t) {
        aclDestroyTensor(t.handle);
        t.handle = nullptr;
    }
    Workspace workspace(ws);
    EXPECT(aclnnApplyFusedEmaAdam(workspace.data, ws, executor, nullptr) == ACLNN_SUCCESS);
    EXPECT(RunOnce(reference, Hyper{}, nullptr) == ACLNN_SUCCESS);
    for (int i = 0; i < 5; ++i) EXPECT(ts.t[i].Packed() == reference.t[i].Packed());
}

/**
 * Last case: an executor phase 2 never ran is freed by aclFinalize (the sanitizer build checks
 * for leaks) and is not live afterwards; the runtime can be initialised again.
 */
AEA_CASE(finalize_frees_pending_executors)
{
    OptimizerTensors ts;
    ts.Make(ACL_FLOAT, {8}, Layout::kContiguous);
    uint64_t ws = 0;
    aclOpExecutor* pending = nullptr;
    EXPECT(Phase1(ts, Hyper{}, &ws, &pending) == ACLNN_SUCCESS);
    for (TestTensor& t : ts.t) {
        aclDestroyTensor(t.handle);
        t.handle = nullptr;
        t.data = nullptr;  // aclFinalize frees all aclrtMalloc memory
    }
    EXPECT(aclrtResetDevice(0) == ACL_SUCCESS);
    EXPECT(aclFinalize() == ACL_SUCCESS);
    EXPECT(aclInit(nullptr) == ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0) == ACL_SUCCESS);
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, pending, nullptr) == ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "not a live executor"));
}

}  // namespace

int main(int argc, char** argv)
{
    return RunCasesOnDevice(argc, argv);
}
