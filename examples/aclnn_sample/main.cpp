// Calls FusedEmaAdam (AeaApplyFusedEmaAdam: the package's registration, which leaves CANN's own
// ApplyFusedEmaAdam as it is) and ApplyFusedEmaAdamList through CANN's two-phase aclnn API, using
// only the public headers, and checks every result against values this program computes itself
// in double precision.
//
//   1. the operator's documented case (x = 1..8, step 10), against the documented table;
//   2. a short training loop: several optimizer steps on one set of tensors, a fresh gradient
//      and a fresh int64 step every iteration;
//   3. how bad inputs are reported (status code and aclGetRecentErrMsg);
//   4. a parameter group in one launch (ApplyFusedEmaAdamList): three parameters of different
//      shapes, the unused optional lists (AMSGrad, model copies) passed as placeholders, one
//      zero-element tensor per entry (a NULL list is refused, also shown; docs/ACLNN.md "Absent
//      lists": CANN's executor pool keeps an empty list's stale instances).
//
// The same source builds against a CANN toolkit (-DAEA_USE_CANN=ON, with this project's custom
// operator package for part 4) or ascend-ema-adam's CPU runtime (the default). Exit status: 0 if
// every check passed, 1 otherwise.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_aea_apply_fused_ema_adam.h"
#include "aclnnop/aclnn_apply_fused_ema_adam_list.h"

// CANN keeps the aclnn status codes in an internal header; its samples define what they use.
#ifndef ACLNN_SUCCESS
#define ACLNN_SUCCESS 0
#endif
#ifndef ACLNN_ERR_PARAM_NULLPTR
#define ACLNN_ERR_PARAM_NULLPTR 161001
#endif

#define CHECK_ACL(call)                                                                    \
    do {                                                                                   \
        const int status_ = (call);                                                        \
        if (status_ != 0) {                                                                \
            const char* msg_ = aclGetRecentErrMsg();                                       \
            std::printf("FAILED: %s returned %d: %s\n", #call, status_, msg_ ? msg_ : ""); \
            return false;                                                                  \
        }                                                                                  \
    } while (0)

namespace {

struct Hyper {
    double lr, emaDecay, beta1, beta2, eps;
    int64_t mode;
    bool biasCorrection;
    double weightDecay;
};

/** One ApplyFusedEmaAdam update in double precision (the reference formula). */
void ReferenceUpdate(const Hyper& h, int64_t step, double g, double& var, double& m, double& v,
                     double& s)
{
    if (h.mode == 0) {
        g += h.weightDecay * var;
    }
    m = h.beta1 * m + (1.0 - h.beta1) * g;
    v = h.beta2 * v + (1.0 - h.beta2) * g * g;
    const double c1 = h.biasCorrection ? 1.0 - std::pow(h.beta1, static_cast<double>(step)) : 1.0;
    const double c2 = h.biasCorrection ? 1.0 - std::pow(h.beta2, static_cast<double>(step)) : 1.0;
    double u = (m / c1) / (std::sqrt(v / c2) + h.eps);
    if (h.mode == 1) {
        u += h.weightDecay * var;
    }
    var -= h.lr * u;
    s = h.emaDecay * s + (1.0 - h.emaDecay) * var;
}

/** A contiguous ND tensor in device memory. */
struct DeviceTensor {
    void* data = nullptr;
    aclTensor* tensor = nullptr;
    size_t bytes = 0;
};

template <class T>
bool CreateTensor(const std::vector<T>& host, const std::vector<int64_t>& shape,
                  aclDataType dtype, DeviceTensor* out)
{
    out->bytes = host.size() * sizeof(T);
    CHECK_ACL(aclrtMalloc(&out->data, out->bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMemcpy(out->data, out->bytes, host.data(), out->bytes,
                          ACL_MEMCPY_HOST_TO_DEVICE));
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) {
        strides[i - 1] = shape[i] * strides[i];
    }
    out->tensor = aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), 0,
                                  ACL_FORMAT_ND, shape.data(), shape.size(), out->data);
    if (out->tensor == nullptr) {
        const char* msg = aclGetRecentErrMsg();
        std::printf("FAILED: aclCreateTensor: %s\n", msg ? msg : "");
        return false;
    }
    return true;
}

void DestroyTensor(DeviceTensor* t)
{
    if (t->tensor != nullptr) {
        aclDestroyTensor(t->tensor);
    }
    if (t->data != nullptr) {
        aclrtFree(t->data);
    }
    *t = DeviceTensor{};
}

/** grad, var, m, v, s (float32) and step (int64 [1]) on the device. */
struct OptimizerState {
    DeviceTensor grad, var, m, v, s, step;

    bool Create(const std::vector<float>& g, const std::vector<float>& p,
                const std::vector<float>& mom1, const std::vector<float>& mom2,
                const std::vector<float>& ema, int64_t stepValue, const std::vector<int64_t>& shape)
    {
        return CreateTensor(g, shape, ACL_FLOAT, &grad) && CreateTensor(p, shape, ACL_FLOAT, &var) &&
               CreateTensor(mom1, shape, ACL_FLOAT, &m) && CreateTensor(mom2, shape, ACL_FLOAT, &v) &&
               CreateTensor(ema, shape, ACL_FLOAT, &s) &&
               CreateTensor(std::vector<int64_t>{stepValue}, {1}, ACL_INT64, &step);
    }

    void Destroy()
    {
        for (DeviceTensor* t : {&grad, &var, &m, &v, &s, &step}) {
            DestroyTensor(t);
        }
    }
};

/** Phase 1, workspace, phase 2, synchronize: one optimizer step. */
bool RunStep(OptimizerState& st, const Hyper& h, aclrtStream stream)
{
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    CHECK_ACL(aclnnAeaApplyFusedEmaAdamGetWorkspaceSize(
        st.grad.tensor, st.var.tensor, st.m.tensor, st.v.tensor, st.s.tensor, st.step.tensor,
        h.lr, h.emaDecay, h.beta1, h.beta2, h.eps, h.mode, h.biasCorrection, h.weightDecay,
        &workspaceSize, &executor));
    void* workspace = nullptr;
    if (workspaceSize > 0) {
        CHECK_ACL(aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST));
    }
    CHECK_ACL(aclnnAeaApplyFusedEmaAdam(workspace, workspaceSize, executor, stream));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    if (workspace != nullptr) {
        CHECK_ACL(aclrtFree(workspace));
    }
    return true;
}

bool ReadBack(const DeviceTensor& t, std::vector<float>* host)
{
    host->resize(t.bytes / sizeof(float));
    CHECK_ACL(aclrtMemcpy(host->data(), t.bytes, t.data, t.bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    return true;
}

/** fp32 results against the double reference: a few fp32 roundings per update. */
bool Close(double actual, double expected)
{
    return std::fabs(actual - expected) <= 1e-5 * std::fabs(expected) + 1e-7;
}

int g_failures = 0;

void Expect(bool ok, const char* what)
{
    std::printf("  [%s] %s\n", ok ? " ok " : "FAIL", what);
    if (!ok) {
        ++g_failures;
    }
}

/** Part 1: the documented case, every input = x = 1..8, shape (2,2,2), step 10. */
bool DocumentedCase(aclrtStream stream)
{
    std::printf("1. Documented case: grad = var = m = v = s = 1..8, step 10, AdamW, weight decay 0.5\n");
    const Hyper h{0.001, 0.5, 0.9, 0.999, 1e-8, 1, true, 0.5};
    const double documentedVar[8] = {0.9993468, 1.9987835, 2.9982349, 3.9976941,
                                     4.9971581, 5.9966257, 6.9960959, 7.9955682};
    const double documentedS[8] = {0.9996734, 1.9993917, 2.9991175, 3.9988470,
                                   4.9985791, 5.9983128, 6.9980480, 7.9977841};
    std::vector<float> x(8);
    for (int i = 0; i < 8; ++i) {
        x[i] = static_cast<float>(i + 1);
    }
    OptimizerState st;
    const bool ok = st.Create(x, x, x, x, x, 10, {2, 2, 2}) && RunStep(st, h, stream);
    std::vector<float> var, m, v, s;
    const bool read = ok && ReadBack(st.var, &var) && ReadBack(st.m, &m) && ReadBack(st.v, &v) &&
                      ReadBack(st.s, &s);
    st.Destroy();
    if (!read) {
        return false;
    }
    std::printf("   x   var_out      expected     s_out        expected\n");
    bool allClose = true;
    bool matchesDoc = true;
    for (int i = 0; i < 8; ++i) {
        double ev = x[i], em = x[i], evv = x[i], es = x[i];
        ReferenceUpdate(h, 10, x[i], ev, em, evv, es);
        std::printf("   %d   %.7f    %.7f    %.7f    %.7f\n", i + 1, var[i], ev, s[i], es);
        allClose = allClose && Close(var[i], ev) && Close(m[i], em) && Close(v[i], evv) &&
                   Close(s[i], es);
        // The documented table has 8 significant digits.
        matchesDoc = matchesDoc && std::fabs(ev - documentedVar[i]) < 1e-7 &&
                     std::fabs(es - documentedS[i]) < 1e-7;
    }
    Expect(allClose, "var, m, v, s match the double-precision reference");
    Expect(matchesDoc, "the reference reproduces the documented table");
    return true;
}

/** Part 2: several steps on one set of tensors, as an optimizer loop runs them. */
bool TrainingLoop(aclrtStream stream)
{
    constexpr int kSteps = 5;
    const std::vector<int64_t> shape = {16, 64};
    const size_t n = 16 * 64;
    std::printf("\n2. Training loop: %d steps on a [16,64] fp32 parameter (Adam with L2 decay)\n",
                kSteps);
    const Hyper h{0.01, 0.9, 0.9, 0.999, 1e-8, 0, true, 0.1};
    uint32_t seed = 12345;
    auto uniform = [&seed] {  // deterministic, in [-1, 1)
        seed = seed * 1664525U + 1013904223U;
        return static_cast<float>(seed >> 8) / 8388608.0F - 1.0F;
    };
    std::vector<float> var(n), zeros(n, 0.0F), grad(n);
    for (float& p : var) {
        p = uniform();
    }
    std::vector<double> rVar(var.begin(), var.end()), rM(n, 0.0), rV(n, 0.0), rS(rVar);

    OptimizerState st;
    if (!st.Create(zeros, var, zeros, zeros, var, 1, shape)) {
        st.Destroy();
        return false;
    }
    for (int64_t step = 1; step <= kSteps; ++step) {
        for (size_t i = 0; i < n; ++i) {
            grad[i] = 0.1F * uniform();
            ReferenceUpdate(h, step, grad[i], rVar[i], rM[i], rV[i], rS[i]);
        }
        // A fresh gradient and the 1-based step number of this update, both in device memory.
        if (aclrtMemcpy(st.grad.data, st.grad.bytes, grad.data(), st.grad.bytes,
                        ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS ||
            aclrtMemcpy(st.step.data, sizeof(int64_t), &step, sizeof(int64_t),
                        ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS ||
            !RunStep(st, h, stream)) {
            st.Destroy();
            return false;
        }
    }
    std::vector<float> outVar, outM, outV, outS;
    const bool read = ReadBack(st.var, &outVar) && ReadBack(st.m, &outM) &&
                      ReadBack(st.v, &outV) && ReadBack(st.s, &outS);
    st.Destroy();
    if (!read) {
        return false;
    }
    size_t bad = 0;
    double maxMoved = 0.0;
    for (size_t i = 0; i < n; ++i) {
        bad += !(Close(outVar[i], rVar[i]) && Close(outM[i], rM[i]) && Close(outV[i], rV[i]) &&
                 Close(outS[i], rS[i]));
        maxMoved = std::fmax(maxMoved, std::fabs(outVar[i] - var[i]));
    }
    std::printf("   element 0: var %.7f -> %.7f (expected %.7f), ema %.7f (expected %.7f)\n",
                var[0], outVar[0], rVar[0], outS[0], rS[0]);
    std::printf("   largest parameter change: %.6f; elements off the reference: %zu of %zu\n",
                maxMoved, bad, n);
    Expect(bad == 0, "all four tensors follow the double-precision trajectory");
    Expect(maxMoved > 1e-3, "the parameters moved");
    return true;
}

/** Part 3: bad inputs are rejected in phase 1, with a status code and a message. */
bool BadInputs()
{
    std::printf("\n3. Bad inputs\n");
    const Hyper h{0.001, 0.9999, 0.9, 0.999, 1e-8, 1, true, 0.0};
    std::vector<float> x = {1.0F, 2.0F, 3.0F, 4.0F};
    OptimizerState st;
    // The reference example's mistake: a float step. Here it is an ACL_FLOAT tensor, so the
    // operator can see it; it must be ACL_INT64.
    DeviceTensor floatStep;
    const bool ok = st.Create(x, x, x, x, x, 1, {4}) &&
                    CreateTensor(std::vector<float>{10.0F}, {1}, ACL_FLOAT, &floatStep);
    if (ok) {
        uint64_t workspaceSize = 0;
        aclOpExecutor* executor = nullptr;
        int status = aclnnAeaApplyFusedEmaAdamGetWorkspaceSize(
            nullptr, st.var.tensor, st.m.tensor, st.v.tensor, st.s.tensor, st.step.tensor, h.lr,
            h.emaDecay, h.beta1, h.beta2, h.eps, h.mode, h.biasCorrection, h.weightDecay,
            &workspaceSize, &executor);
        const char* msg = aclGetRecentErrMsg();
        std::printf("   grad = nullptr   -> status %d: %s\n", status, msg ? msg : "(no message)");
        Expect(status == ACLNN_ERR_PARAM_NULLPTR, "a null tensor is ACLNN_ERR_PARAM_NULLPTR");

        status = aclnnAeaApplyFusedEmaAdamGetWorkspaceSize(
            st.grad.tensor, st.var.tensor, st.m.tensor, st.v.tensor, st.s.tensor,
            floatStep.tensor, h.lr, h.emaDecay, h.beta1, h.beta2, h.eps, h.mode,
            h.biasCorrection, h.weightDecay, &workspaceSize, &executor);
        msg = aclGetRecentErrMsg();
        std::printf("   step is ACL_FLOAT -> status %d: %s\n", status, msg ? msg : "(no message)");
        Expect(status != ACLNN_SUCCESS, "a float step is rejected");
    }
    DestroyTensor(&floatStep);
    st.Destroy();
    return ok;
}

/** Part 4: a parameter group (weight, bias, one more) updated by one ApplyFusedEmaAdamList
 *  launch; maxVsRef and modelCopiesRef are empty lists (no AMSGrad, no model copies). */
bool ParameterGroup(aclrtStream stream)
{
    std::printf("\n4. A parameter group in one launch: [32,16], [16] and [3,5] fp32 parameters, "
                "2 steps (AdamW)\n");
    const Hyper h{0.005, 0.95, 0.9, 0.999, 1e-8, 1, true, 0.05};
    const std::vector<std::vector<int64_t>> shapes = {{32, 16}, {16}, {3, 5}};
    uint32_t seed = 777;
    auto uniform = [&seed] {
        seed = seed * 1664525U + 1013904223U;
        return static_cast<float>(seed >> 8) / 8388608.0F - 1.0F;
    };
    struct Entry {
        size_t n;
        std::vector<float> var, grad;
        std::vector<double> rVar, rM, rV, rS;
        OptimizerState st;
    };
    std::vector<Entry> entries(shapes.size());
    bool ok = true;
    for (size_t e = 0; e < shapes.size() && ok; ++e) {
        Entry& x = entries[e];
        x.n = 1;
        for (int64_t d : shapes[e]) x.n *= static_cast<size_t>(d);
        x.var.resize(x.n);
        x.grad.resize(x.n);
        for (float& p : x.var) p = uniform();
        const std::vector<float> zeros(x.n, 0.0F);
        x.rVar.assign(x.var.begin(), x.var.end());
        x.rM.assign(x.n, 0.0);
        x.rV.assign(x.n, 0.0);
        x.rS = x.rVar;
        ok = x.st.Create(zeros, x.var, zeros, zeros, x.var, 1, shapes[e]);
    }
    // One step tensor for the group; the entries' own step tensors are not used.
    DeviceTensor step;
    ok = ok && CreateTensor(std::vector<int64_t>{1}, {1}, ACL_INT64, &step);
    for (int64_t t = 1; ok && t <= 2; ++t) {
        std::vector<const aclTensor*> handles[5];
        for (Entry& x : entries) {
            for (size_t i = 0; i < x.n; ++i) {
                x.grad[i] = 0.1F * uniform();
                ReferenceUpdate(h, t, x.grad[i], x.rVar[i], x.rM[i], x.rV[i], x.rS[i]);
            }
            ok = ok && aclrtMemcpy(x.st.grad.data, x.st.grad.bytes, x.grad.data(),
                                   x.st.grad.bytes, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS;
            // A list owns its tensors (aclDestroyTensorList destroys them): describe the memory
            // again for this launch's lists.
            const DeviceTensor* parts[5] = {&x.st.grad, &x.st.var, &x.st.m, &x.st.v, &x.st.s};
            for (int l = 0; l < 5; ++l) {
                const int64_t n = static_cast<int64_t>(x.n);
                const int64_t one = 1;
                handles[l].push_back(aclCreateTensor(&n, 1, ACL_FLOAT, &one, 0, ACL_FORMAT_ND,
                                                     &n, 1, parts[l]->data));
            }
        }
        ok = ok && aclrtMemcpy(step.data, sizeof(int64_t), &t, sizeof(int64_t),
                               ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS;
        aclTensorList* lists[7];
        for (int l = 0; l < 5; ++l) {
            lists[l] = aclCreateTensorList(handles[l].data(), handles[l].size());
        }
        // maxVsRef (no AMSGrad) and modelCopiesRef (no model copies): placeholders, one
        // zero-element tensor per entry, of the state's and the parameters' dtype (fp32 here)
        std::vector<const aclTensor*> placeholders[2];
        for (std::vector<const aclTensor*>& list : placeholders) {
            for (Entry& x : entries) {
                const int64_t zero = 0;
                const int64_t one = 1;
                list.push_back(aclCreateTensor(&zero, 1, ACL_FLOAT, &one, 0, ACL_FORMAT_ND, &zero,
                                               1, x.st.var.data));
            }
        }
        lists[5] = aclCreateTensorList(placeholders[0].data(), placeholders[0].size());
        lists[6] = aclCreateTensorList(placeholders[1].data(), placeholders[1].size());
        uint64_t workspaceSize = 0;
        aclOpExecutor* executor = nullptr;
        if (ok && t == 1) {  // a NULL list is refused: an unused list is given as placeholders
            const int status = aclnnApplyFusedEmaAdamListGetWorkspaceSize(
                lists[0], lists[1], lists[2], lists[3], lists[4], nullptr, lists[6],
                step.tensor, nullptr, nullptr, h.lr, h.emaDecay, h.beta1, h.beta2, h.eps, h.mode,
                h.biasCorrection, h.weightDecay, false, &workspaceSize, &executor);
            const char* msg = aclGetRecentErrMsg();
            std::printf("   maxVsRef = nullptr -> status %d: %s\n", status, msg ? msg : "");
            Expect(status == ACLNN_ERR_PARAM_NULLPTR, "a NULL list is ACLNN_ERR_PARAM_NULLPTR");
        }
        int status = ok ? aclnnApplyFusedEmaAdamListGetWorkspaceSize(
                              lists[0], lists[1], lists[2], lists[3], lists[4], lists[5],
                              lists[6], step.tensor, nullptr, nullptr, h.lr, h.emaDecay, h.beta1,
                              h.beta2, h.eps, h.mode, h.biasCorrection, h.weightDecay, false,
                              &workspaceSize, &executor)
                        : -1;
        void* workspace = nullptr;
        if (status == ACLNN_SUCCESS && workspaceSize > 0) {
            status = aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        }
        if (status == ACLNN_SUCCESS) {
            status = aclnnApplyFusedEmaAdamList(workspace, workspaceSize, executor, stream);
        }
        if (status == ACLNN_SUCCESS) {
            status = aclrtSynchronizeStream(stream);
        }
        if (status != ACLNN_SUCCESS) {
            const char* msg = aclGetRecentErrMsg();
            std::printf("FAILED: the list launch of step %lld: status %d: %s\n",
                        static_cast<long long>(t), status, msg ? msg : "");
            ok = false;
        }
        if (workspace != nullptr) aclrtFree(workspace);
        for (aclTensorList* list : lists) aclDestroyTensorList(list);
    }
    size_t bad = 0;
    size_t total = 0;
    for (Entry& x : entries) {
        std::vector<float> var, m, v, s;
        if (ok && ReadBack(x.st.var, &var) && ReadBack(x.st.m, &m) && ReadBack(x.st.v, &v) &&
            ReadBack(x.st.s, &s)) {
            for (size_t i = 0; i < x.n; ++i) {
                bad += !(Close(var[i], x.rVar[i]) && Close(m[i], x.rM[i]) &&
                         Close(v[i], x.rV[i]) && Close(s[i], x.rS[i]));
            }
            total += x.n;
        }
        x.st.Destroy();
    }
    DestroyTensor(&step);
    if (!ok) {
        return false;
    }
    std::printf("   elements off the reference: %zu of %zu\n", bad, total);
    Expect(bad == 0, "every parameter of the group follows the double-precision trajectory");
    return true;
}

}  // namespace

int main()
{
    std::printf("aclnnAeaApplyFusedEmaAdam / aclnnApplyFusedEmaAdamList sample\n\n");
    aclrtStream stream = nullptr;
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS ||
        aclrtCreateStream(&stream) != ACL_SUCCESS) {
        const char* msg = aclGetRecentErrMsg();
        std::printf("FAILED to set up device 0: %s\n", msg ? msg : "");
        return 1;
    }
    const bool ran =
        DocumentedCase(stream) && TrainingLoop(stream) && BadInputs() && ParameterGroup(stream);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    if (!ran || g_failures > 0) {
        std::printf("\nRESULT: FAILED (%d check(s) failed%s)\n", g_failures,
                    ran ? "" : ", and a call failed");
        return 1;
    }
    std::printf("\nRESULT: all checks passed\n");
    return 0;
}
