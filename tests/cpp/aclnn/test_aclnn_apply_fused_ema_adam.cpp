// aclnnApplyFusedEmaAdamGetWorkspaceSize / aclnnApplyFusedEmaAdam on the CPU runtime.
//
//   bad_input_table      every rejected input: exact status, message, and all six tensors, the
//                        workspace size and the executor out-arguments untouched
//   the other cases      executor life cycle, workspace and stream checks, empty and rank-0
//                        tensors, accepted boundary values and formats, strided views against
//                        contiguous runs, queued steps in stream order, 8 threads at once
//
// Numbers are checked by comparing runs of this API with each other (bit for bit) and with the
// inputs; tests/python/test_aclnn_ctypes.py holds the same API to the numpy golden.
#include <memory>
#include <thread>

#include "aclnn_test_util.h"

using namespace aea_test;

namespace {

constexpr int kGrad = 0, kVar = 1, kM = 2, kV = 3, kS = 4, kStep = 5;
const char* const kNames[6] = {"grad", "varRef", "mRef", "vRef", "sRef", "step"};
const std::vector<int64_t> kShape = {2, 4};

/** A valid fp32 [2,4] call that a table row breaks in one way. */
struct BadCall {
    OptimizerTensors ts;
    const aclTensor* args[6];
    Hyper h;
    uint64_t workspaceSize = 0xABCD;                                   // sentinel
    aclOpExecutor* executor = reinterpret_cast<aclOpExecutor*>(0x1234);  // sentinel, never used
    uint64_t* workspaceSizeArg = &workspaceSize;
    aclOpExecutor** executorArg = &executor;
    std::vector<aclTensor*> aliases;
    std::vector<void*> buffers;

    BadCall()
    {
        ts.Make(ACL_FLOAT, kShape, Layout::kContiguous);
        for (int i = 0; i < 6; ++i) args[i] = ts.t[i].handle;
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

    aclnnStatus Invoke()
    {
        return aclnnApplyFusedEmaAdamGetWorkspaceSize(
            args[0], const_cast<aclTensor*>(args[1]), const_cast<aclTensor*>(args[2]),
            const_cast<aclTensor*>(args[3]), const_cast<aclTensor*>(args[4]), args[5], h.lr,
            h.emaDecay, h.beta1, h.beta2, h.eps, h.mode, h.biasCorrection, h.weightDecay,
            workspaceSizeArg, executorArg);
    }
};

struct BadInput {
    std::string name;
    std::function<void(BadCall&)> breakIt;
    aclnnStatus status;
    std::string message;  // a substring of aclGetRecentErrMsg()
};

std::vector<BadInput> BadInputs()
{
    const double inf = INFINITY;
    const double nan = NAN;
    std::vector<BadInput> rows;
    for (int i = 0; i < 6; ++i) {
        rows.push_back({std::string("null ") + kNames[i], [i](BadCall& c) { c.args[i] = nullptr; },
                        ACLNN_ERR_PARAM_NULLPTR, std::string(kNames[i]) + " is null"});
    }
    rows.push_back({"null workspaceSize", [](BadCall& c) { c.workspaceSizeArg = nullptr; },
                    ACLNN_ERR_PARAM_NULLPTR, "workspaceSize is null"});
    rows.push_back({"null executor", [](BadCall& c) { c.executorArg = nullptr; },
                    ACLNN_ERR_PARAM_NULLPTR, "executor is null"});
    rows.push_back({"null data address", [](BadCall& c) { c.NullDataAlias(kM); },
                    ACLNN_ERR_PARAM_NULLPTR, "mRef has 8 elements but a null data address"});
    rows.push_back({"destroyed tensor",
                    [](BadCall& c) {
                        aclTensor* a = c.Alias(kV, ACL_FLOAT, kShape, {4, 1});
                        aclDestroyTensor(a);
                        c.aliases.pop_back();
                    },
                    ACLNN_ERR_PARAM_INVALID, "vRef is not a live aclTensor"});
    // dtypes
    rows.push_back({"grad fp64", [](BadCall& c) { c.Alias(kGrad, ACL_DOUBLE, kShape, {4, 1}); },
                    ACLNN_ERR_PARAM_INVALID,
                    "grad has dtype ACL_DOUBLE (11), expected ACL_FLOAT, ACL_FLOAT16 or ACL_BF16"});
    rows.push_back({"grad int32", [](BadCall& c) { c.Alias(kGrad, ACL_INT32, kShape, {4, 1}); },
                    ACLNN_ERR_PARAM_INVALID, "grad has dtype ACL_INT32 (3)"});
    for (int i = kVar; i <= kS; ++i) {
        rows.push_back({std::string(kNames[i]) + " fp16, grad fp32",
                        [i](BadCall& c) { c.Alias(i, ACL_FLOAT16, kShape, {4, 1}); },
                        ACLNN_ERR_PARAM_INVALID,
                        std::string(kNames[i]) +
                            " has dtype ACL_FLOAT16 (1) but grad has ACL_FLOAT (0)"});
    }
    rows.push_back({"varRef bf16, all others fp16",
                    [](BadCall& c) {
                        for (int i : {kGrad, kM, kV, kS}) c.Alias(i, ACL_FLOAT16, kShape, {4, 1});
                        c.Alias(kVar, ACL_BF16, kShape, {4, 1});
                    },
                    ACLNN_ERR_PARAM_INVALID, "varRef has dtype ACL_BF16 (27) but grad has ACL_FLOAT16 (1)"});
    rows.push_back({"step fp32", [](BadCall& c) { c.Alias(kStep, ACL_FLOAT, {1}, {1}); },
                    ACLNN_ERR_PARAM_INVALID, "step has dtype ACL_FLOAT (0), expected ACL_INT64"});
    rows.push_back({"step int32", [](BadCall& c) { c.Alias(kStep, ACL_INT32, {1}, {1}); },
                    ACLNN_ERR_PARAM_INVALID, "step has dtype ACL_INT32 (3), expected ACL_INT64"});
    // shapes and step
    for (int i = kVar; i <= kS; ++i) {
        rows.push_back({std::string(kNames[i]) + " [4,2], grad [2,4]",
                        [i](BadCall& c) { c.Alias(i, ACL_FLOAT, {4, 2}, {2, 1}); },
                        ACLNN_ERR_PARAM_INVALID,
                        std::string(kNames[i]) + " has shape [4,2] but grad has shape [2,4]"});
    }
    rows.push_back({"varRef [8], grad [2,4]", [](BadCall& c) { c.Alias(kVar, ACL_FLOAT, {8}, {1}); },
                    ACLNN_ERR_PARAM_INVALID, "varRef has shape [8] but grad has shape [2,4]"});
    rows.push_back({"step [2,2] (the reference sample's step)",
                    [](BadCall& c) {
                        c.Alias(kStep, ACL_INT64, {2, 2}, {2, 1}, 0, ACL_FORMAT_ND, c.Buffer(8), {4});
                    },
                    ACLNN_ERR_PARAM_INVALID,
                    "step has shape [2,2] (4 elements), expected exactly one element"});
    rows.push_back({"step [0]", [](BadCall& c) { c.Alias(kStep, ACL_INT64, {0}, {1}); },
                    ACLNN_ERR_PARAM_INVALID, "step has shape [0] (0 elements)"});
    // attributes
    rows.push_back({"mode 2", [](BadCall& c) { c.h.mode = 2; }, ACLNN_ERR_PARAM_INVALID,
                    "mode is 2, expected 0 (Adam, L2 weight decay) or 1 (AdamW"});
    rows.push_back({"mode -1", [](BadCall& c) { c.h.mode = -1; }, ACLNN_ERR_PARAM_INVALID,
                    "mode is -1"});
    const struct {
        const char* name;
        double Hyper::*field;
    } floats[] = {{"lr", &Hyper::lr},       {"emaDecay", &Hyper::emaDecay},
                  {"beta1", &Hyper::beta1}, {"beta2", &Hyper::beta2},
                  {"eps", &Hyper::eps},     {"weightDecay", &Hyper::weightDecay}};
    for (const auto& f : floats) {
        for (double bad : {inf, -inf, nan}) {
            const std::string shown = std::isnan(bad) ? "nan" : bad > 0 ? "inf" : "-inf";
            rows.push_back({std::string(f.name) + " " + shown,
                            [f, bad](BadCall& c) { c.h.*(f.field) = bad; }, ACLNN_ERR_PARAM_INVALID,
                            std::string(f.name) + " is " + shown + ", expected a finite value"});
        }
    }
    rows.push_back({"lr 1e300 (overflows fp32)", [](BadCall& c) { c.h.lr = 1e300; },
                    ACLNN_ERR_PARAM_INVALID,
                    "lr is 1e+300, expected a finite value (it overflows fp32"});
    rows.push_back({"weightDecay -1e39 (overflows fp32)", [](BadCall& c) { c.h.weightDecay = -1e39; },
                    ACLNN_ERR_PARAM_INVALID, "weightDecay is -1e+39, expected a finite value"});
    rows.push_back({"beta1 1", [](BadCall& c) { c.h.beta1 = 1.0; }, ACLNN_ERR_PARAM_INVALID,
                    "beta1 is 1 (1 in fp32), expected 0 <= beta1 < 1"});
    rows.push_back({"beta1 -0.1", [](BadCall& c) { c.h.beta1 = -0.1; }, ACLNN_ERR_PARAM_INVALID,
                    "beta1 is -0.1"});
    rows.push_back({"beta1 0.9999999999 (1 in fp32)", [](BadCall& c) { c.h.beta1 = 0.9999999999; },
                    ACLNN_ERR_PARAM_INVALID, "beta1 is 0.9999999999 (1 in fp32), expected 0 <= beta1 < 1"});
    rows.push_back({"beta2 1.5", [](BadCall& c) { c.h.beta2 = 1.5; }, ACLNN_ERR_PARAM_INVALID,
                    "beta2 is 1.5 (1.5 in fp32), expected 0 <= beta2 < 1"});
    rows.push_back({"beta2 -1e-3", [](BadCall& c) { c.h.beta2 = -1e-3; }, ACLNN_ERR_PARAM_INVALID,
                    "expected 0 <= beta2 < 1"});
    rows.push_back({"emaDecay 1.01", [](BadCall& c) { c.h.emaDecay = 1.01; }, ACLNN_ERR_PARAM_INVALID,
                    "emaDecay is 1.01 (1.01 in fp32), expected 0 <= emaDecay <= 1"});
    rows.push_back({"emaDecay -0.5", [](BadCall& c) { c.h.emaDecay = -0.5; }, ACLNN_ERR_PARAM_INVALID,
                    "expected 0 <= emaDecay <= 1"});
    rows.push_back({"eps -1e-8", [](BadCall& c) { c.h.eps = -1e-8; }, ACLNN_ERR_PARAM_INVALID,
                    "eps is -1e-08 (-1e-08 in fp32), expected eps >= 0"});
    // formats
    for (int i = 0; i < 6; ++i) {
        rows.push_back({std::string(kNames[i]) + " NC1HWC0",
                        [i](BadCall& c) {
                            if (i == kStep) {
                                c.Alias(i, ACL_INT64, {1}, {1}, 0, ACL_FORMAT_NC1HWC0);
                            } else {
                                c.Alias(i, ACL_FLOAT, kShape, {4, 1}, 0, ACL_FORMAT_NC1HWC0);
                            }
                        },
                        ACLNN_ERR_PARAM_INVALID,
                        std::string(kNames[i]) + " has format ACL_FORMAT_NC1HWC0 (3), expected ACL_FORMAT_ND"});
    }
    rows.push_back({"grad FRACTAL_NZ",
                    [](BadCall& c) { c.Alias(kGrad, ACL_FLOAT, kShape, {4, 1}, 0, ACL_FORMAT_FRACTAL_NZ); },
                    ACLNN_ERR_PARAM_INVALID, "grad has format ACL_FORMAT_FRACTAL_NZ (29)"});
    rows.push_back({"sRef NHWC",
                    [](BadCall& c) { c.Alias(kS, ACL_FLOAT, kShape, {4, 1}, 0, ACL_FORMAT_NHWC); },
                    ACLNN_ERR_PARAM_INVALID, "sRef has format ACL_FORMAT_NHWC (1)"});
    // memory layout of the updated tensors
    rows.push_back({"varRef broadcast (stride 0)",
                    [](BadCall& c) { c.Alias(kVar, ACL_FLOAT, kShape, {0, 1}); },
                    ACLNN_ERR_PARAM_INVALID,
                    "varRef (shape [2,4], stride [0,1]) addresses some elements more than once"});
    rows.push_back({"sRef rows overlap (stride 2 < 4)",
                    [](BadCall& c) { c.Alias(kS, ACL_FLOAT, kShape, {2, 1}); },
                    ACLNN_ERR_PARAM_INVALID, "sRef (shape [2,4], stride [2,1]) addresses some elements"});
    rows.push_back({"vRef is mRef", [](BadCall& c) { c.args[kV] = c.args[kM]; },
                    ACLNN_ERR_PARAM_INVALID, "mRef and vRef overlap in memory"});
    rows.push_back({"mRef and vRef half overlap",
                    [](BadCall& c) {
                        void* shared = c.Buffer(12);
                        c.Alias(kM, ACL_FLOAT, kShape, {4, 1}, 0, ACL_FORMAT_ND, shared, {12});
                        c.Alias(kV, ACL_FLOAT, kShape, {4, 1}, 4, ACL_FORMAT_ND, shared, {12});
                    },
                    ACLNN_ERR_PARAM_INVALID, "mRef and vRef overlap in memory"});
    rows.push_back({"varRef and mRef interleaved (conservatively refused)",
                    [](BadCall& c) {
                        void* shared = c.Buffer(16);
                        c.Alias(kVar, ACL_FLOAT, kShape, {8, 2}, 0, ACL_FORMAT_ND, shared, {16});
                        c.Alias(kM, ACL_FLOAT, kShape, {8, 2}, 1, ACL_FORMAT_ND, shared, {16});
                    },
                    ACLNN_ERR_PARAM_INVALID, "varRef and mRef overlap in memory"});
    rows.push_back({"grad is sRef", [](BadCall& c) { c.args[kGrad] = c.args[kS]; },
                    ACLNN_ERR_PARAM_INVALID, "sRef and grad overlap in memory"});
    rows.push_back({"step inside varRef",
                    [](BadCall& c) {
                        c.Alias(kStep, ACL_INT64, {1}, {1}, 1, ACL_FORMAT_ND, c.ts.t[kVar].data, {4});
                    },
                    ACLNN_ERR_PARAM_INVALID, "varRef and step overlap in memory"});
    // the fixed order: nulls, dtypes, shapes/step, attributes, formats, memory
    rows.push_back({"order: null before dtype",
                    [](BadCall& c) {
                        c.Alias(kM, ACL_FLOAT16, kShape, {4, 1});
                        c.args[kS] = nullptr;
                    },
                    ACLNN_ERR_PARAM_NULLPTR, "sRef is null"});
    rows.push_back({"order: dtype before shape",
                    [](BadCall& c) {
                        c.Alias(kV, ACL_FLOAT, {8}, {1});
                        c.Alias(kStep, ACL_FLOAT, {1}, {1});
                    },
                    ACLNN_ERR_PARAM_INVALID, "step has dtype ACL_FLOAT (0)"});
    rows.push_back({"order: shape before attribute",
                    [](BadCall& c) {
                        c.Alias(kV, ACL_FLOAT, {8}, {1});
                        c.h.mode = 3;
                    },
                    ACLNN_ERR_PARAM_INVALID, "vRef has shape [8]"});
    rows.push_back({"order: attribute before format",
                    [](BadCall& c) {
                        c.Alias(kGrad, ACL_FLOAT, kShape, {4, 1}, 0, ACL_FORMAT_NC1HWC0);
                        c.h.eps = -1.0;
                    },
                    ACLNN_ERR_PARAM_INVALID, "eps is -1"});
    rows.push_back({"order: format before memory",
                    [](BadCall& c) {
                        c.Alias(kGrad, ACL_FLOAT, kShape, {4, 1}, 0, ACL_FORMAT_NC1HWC0);
                        c.args[kV] = c.args[kM];
                    },
                    ACLNN_ERR_PARAM_INVALID, "grad has format"});
    return rows;
}

/** Every row: exact status and message; tensors, workspace size and executor untouched. */
AEA_CASE(bad_input_table)
{
    const std::vector<BadInput> rows = BadInputs();
    for (const BadInput& row : rows) {
        BadCall call;
        const auto before = call.ts.Snapshot();
        row.breakIt(call);
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
    BadCall call;
    call.executor = nullptr;
    EXPECT(call.Invoke() == ACLNN_SUCCESS);
    EXPECT(call.workspaceSize == 0 && call.executor != nullptr);
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, call.executor, nullptr) == ACLNN_SUCCESS);
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
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        std::fprintf(stderr, "setup failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    const int rc = RunCases(argc, argv);
    aclrtResetDevice(0);
    aclFinalize();
    return rc;
}
