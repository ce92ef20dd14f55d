// aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize / aclnnApplyFusedEmaAdam8bitList on the CPU runtime.
//
//   native_and_twin_agree       the native kernel (default) and the AscendC kernel on the twin
//                               (ASCEND_EMA_ADAM_CPU_KERNEL=twin) write the same bytes, and the
//                               update changes every updated list (tests/python holds the bits to
//                               golden8bit.emulate_entry8)
//   strided_views_match         a transposed parameter view and a strided map, staged through the
//                               workspace, give the contiguous run's bytes; gaps are not written
//   bad_input_table             every refusal: exact status, the message, every byte unchanged,
//                               both out-arguments unwritten
//   overlapping_state_is_refused, found_inf_writes_nothing, absent_lists_and_placeholders,
//   repeatable_executor_takes_moved_inputs, empty_call: the rest of the contract (docs/ACLNN.md);
//                               executors of other operators: test_aclnn_executors
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "aclnn_test_util.h"
#include "aclnnop/aclnn_apply_fused_ema_adam8bit_list.h"

using namespace aea_test;

namespace {

constexpr const char* kPhase1Prefix = "aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize: ";
enum List8 { kGrads8, kVars8, kMs8, kVs8, kMAbs8, kVAbs8, kSs8, kCopies8, kLists8 };
enum Single8 { kQmapM8, kQmapV8, kStep8, kScale8, kFound8, kLr8, kDecay8, kSingles8 };

size_t Bytes(aclDataType dtype)
{
    return dtype == ACL_UINT8 ? 1 : ElemBytes(dtype);
}

/** A tensor over its own aclrtMalloc storage (a view: sizes, strides, offset in elements). */
struct Buffer {
    aclDataType dtype = ACL_FLOAT;
    std::vector<int64_t> sizes, strides;
    int64_t offset = 0;
    std::vector<unsigned char> host;  // the storage's bytes (what is copied in and compared)
    void* data = nullptr;
    aclTensor* handle = nullptr;  // owned by its list, or loose

    Buffer(aclDataType type, std::vector<int64_t> shape, std::vector<int64_t> viewStrides = {},
           int64_t viewOffset = 0, int64_t storageElems = -1)
        : dtype(type), sizes(std::move(shape)), strides(std::move(viewStrides)), offset(viewOffset)
    {
        if (strides.empty()) {  // row-major
            strides.assign(sizes.size(), 1);
            for (int d = static_cast<int>(sizes.size()) - 2; d >= 0; --d) {
                strides[d] = strides[d + 1] * sizes[d + 1];
            }
        }
        int64_t elems = storageElems;
        if (elems < 0) {
            elems = offset + 1;
            for (size_t d = 0; d < sizes.size(); ++d) elems += (sizes[d] - 1) * strides[d];
            if (Numel() == 0) elems = 0;
        }
        host.resize(static_cast<size_t>(elems) * Bytes(dtype));
        if (!host.empty()) aclrtMalloc(&data, host.size(), ACL_MEM_MALLOC_HUGE_FIRST);
    }
    ~Buffer()
    {
        if (data != nullptr) aclrtFree(data);
    }
    Buffer(const Buffer&) = delete;

    int64_t Numel() const
    {
        int64_t n = 1;
        for (int64_t s : sizes) n *= s;
        return n;
    }
    /** Element k (row-major view order) of a float / uint8 buffer in host. */
    size_t Offset(int64_t k) const
    {
        int64_t at = offset;
        for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
            at += (k % sizes[d]) * strides[d];
            k /= sizes[d];
        }
        return static_cast<size_t>(at) * Bytes(dtype);
    }
    void FillRandom(float lo, float hi)
    {
        for (size_t i = 0; i < host.size(); i += Bytes(dtype)) {
            if (dtype == ACL_UINT8) {
                host[i] = static_cast<unsigned char>(Rng()() & 0xFFU);
            } else {
                StoreAs(dtype, Uniform(lo, hi), &host[i]);
            }
        }
    }
    void Upload() const
    {
        if (!host.empty()) std::memcpy(data, host.data(), host.size());
    }
    std::vector<unsigned char> Download() const
    {
        std::vector<unsigned char> out(host.size());
        if (!out.empty()) std::memcpy(out.data(), data, out.size());
        return out;
    }
    aclTensor* Handle()
    {
        const int64_t storage = static_cast<int64_t>(host.size() / Bytes(dtype));
        handle = aclCreateTensor(sizes.data(), sizes.size(), dtype, strides.data(), offset,
                                 ACL_FORMAT_ND, &storage, 1, data);
        return handle;
    }
};

/** The tensors of one call: per list its buffers, the single tensors, the attributes. */
struct Call8 {
    std::vector<std::unique_ptr<Buffer>> lists[kLists8];
    std::unique_ptr<Buffer> singles[kSingles8];
    aclTensorList* handles[kLists8] = {};
    std::vector<aclTensor*> loose;  // single-tensor handles
    Hyper h;
    bool maximize = false;
    uint64_t workspaceSize = 0xABCD;
    aclOpExecutor* executor = reinterpret_cast<aclOpExecutor*>(0x1234);

    /** Entries of `sizes` elements (1-D): fp32 parameters, gradients and EMA, random codes and
     *  scales, sorted maps (a signed and an unsigned linear one), step 3. */
    explicit Call8(const std::vector<int64_t>& sizes, aclDataType param = ACL_FLOAT,
                   aclDataType grad = ACL_FLOAT)
    {
        for (int64_t n : sizes) {
            const int64_t blocks = (n + 255) / 256;
            Add(kGrads8, grad, {n}).FillRandom(-1e-2F, 1e-2F);
            Add(kVars8, param, {n}).FillRandom(-0.1F, 0.1F);
            Add(kMs8, ACL_UINT8, {n}).FillRandom(0, 0);
            Add(kVs8, ACL_UINT8, {n}).FillRandom(0, 0);
            Add(kMAbs8, ACL_FLOAT, {blocks}).FillRandom(1e-3F, 1e-2F);
            Add(kVAbs8, ACL_FLOAT, {blocks}).FillRandom(1e-6F, 1e-4F);
            Add(kSs8, ACL_FLOAT, {n}).FillRandom(-0.1F, 0.1F);
        }
        for (int map = kQmapM8; map <= kQmapV8; ++map) {
            singles[map] = std::make_unique<Buffer>(ACL_FLOAT, std::vector<int64_t>{256});
            for (int k = 0; k < 256; ++k) {
                const float x = map == kQmapM8 ? -1.0F + 2.0F * k / 255.0F : k / 255.0F;
                std::memcpy(&singles[map]->host[4 * k], &x, 4);
            }
        }
        singles[kStep8] = std::make_unique<Buffer>(ACL_INT64, std::vector<int64_t>{1});
        const int64_t step = 3;
        std::memcpy(singles[kStep8]->host.data(), &step, 8);
        h.weightDecay = 0.01;
    }

    Buffer& Add(int list, aclDataType dtype, std::vector<int64_t> shape)
    {
        lists[list].push_back(std::make_unique<Buffer>(dtype, std::move(shape)));
        return *lists[list].back();
    }
    void SetScalar(int which, float value)
    {
        singles[which] = std::make_unique<Buffer>(ACL_FLOAT, std::vector<int64_t>{1});
        std::memcpy(singles[which]->host.data(), &value, 4);
    }
    /** Uploads every buffer and creates the handles (lists own their tensors). */
    void Build()
    {
        for (int l = 0; l < kLists8; ++l) {
            std::vector<aclTensor*> hs;
            for (auto& b : lists[l]) {
                b->Upload();
                hs.push_back(b->Handle());
            }
            handles[l] = aclCreateTensorList(hs.data(), hs.size());
        }
        for (auto& s : singles) {
            if (s) {
                s->Upload();
                loose.push_back(s->Handle());
            }
        }
    }
    ~Call8()
    {
        for (aclTensorList* l : handles) {
            if (l != nullptr) aclDestroyTensorList(l);
        }
        for (aclTensor* t : loose) aclDestroyTensor(t);
    }
    aclTensor* Single(int which) const { return singles[which] ? singles[which]->handle : nullptr; }
    aclnnStatus Phase1()
    {
        return aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize(
            handles[kGrads8], handles[kVars8], handles[kMs8], handles[kVs8], handles[kMAbs8],
            handles[kVAbs8], handles[kSs8], handles[kCopies8], Single(kQmapM8), Single(kQmapV8),
            Single(kStep8), Single(kScale8), Single(kFound8), Single(kLr8), Single(kDecay8), h.lr,
            h.emaDecay, h.beta1, h.beta2, h.eps, h.mode, h.biasCorrection, h.weightDecay,
            maximize, &workspaceSize, &executor);
    }
    /** Both phases on the default stream; the status of the first that fails. */
    aclnnStatus Run()
    {
        const aclnnStatus s = Phase1();
        if (s != ACLNN_SUCCESS) return s;
        std::vector<unsigned char> workspace(workspaceSize + 64);
        return aclnnApplyFusedEmaAdam8bitList(workspaceSize > 0 ? workspace.data() : nullptr,
                                              workspaceSize, executor, nullptr);
    }
    /** Every byte of every buffer, as the device holds it now. */
    std::vector<std::vector<unsigned char>> Snapshot() const
    {
        std::vector<std::vector<unsigned char>> out;
        for (const auto& l : lists) {
            for (const auto& b : l) out.push_back(b->Download());
        }
        for (const auto& s : singles) {
            if (s) out.push_back(s->Download());
        }
        return out;
    }
};

/** The same call twice over (the same random values in both). */
void CopyValues(const Call8& from, Call8* to)
{
    for (int l = 0; l < kLists8; ++l) {
        for (size_t i = 0; i < from.lists[l].size(); ++i) to->lists[l][i]->host = from.lists[l][i]->host;
    }
}

std::string Phase1Message(const std::string& message)
{
    return message.rfind(kPhase1Prefix, 0) == 0 ? message.substr(std::strlen(kPhase1Prefix))
                                                : "<no prefix>" + message;
}

const std::vector<int64_t> kSizes = {1, 300, 256, 1000};

AEA_CASE(native_and_twin_agree)
{
    Call8 native(kSizes);
    Call8 twin(kSizes);
    // a gradient of 1 in each block of the 1000-element entry: the block's new scales are that
    // element's, ten times and more its old ones, so its other codes must move (with small
    // gradients alone a block's codes may all stay, and the check below would fail by chance)
    for (int64_t at = 0; at < 1000; at += 256) {
        const float one = 1.0F;
        std::memcpy(&native.lists[kGrads8][3]->host[4 * at], &one, sizeof one);
    }
    CopyValues(native, &twin);
    native.Build();
    twin.Build();
    const auto before = native.Snapshot();
    unsetenv("ASCEND_EMA_ADAM_CPU_KERNEL");
    EXPECT_MSG(native.Run() == ACLNN_SUCCESS, "native: %s", RecentError().c_str());
    setenv("ASCEND_EMA_ADAM_CPU_KERNEL", "twin", 1);
    EXPECT_MSG(twin.Run() == ACLNN_SUCCESS, "twin: %s", RecentError().c_str());
    unsetenv("ASCEND_EMA_ADAM_CPU_KERNEL");
    const auto a = native.Snapshot();
    EXPECT(a == twin.Snapshot());
    // every updated list of the 1000-element entry changed (index 3 of each list)
    size_t k = 0;
    for (int l = 0; l < kLists8; ++l) {
        for (size_t i = 0; i < native.lists[l].size(); ++i, ++k) {
            if (i == 3) {
                EXPECT_MSG((a[k] != before[k]) == (l != kGrads8), "list %d entry 3", l);
            }
        }
    }
}

AEA_CASE(strided_views_match)
{
    Call8 contiguous({600});
    Call8 strided({600});
    CopyValues(contiguous, &strided);
    // vars[0] as a [20, 30] view over a transposed [30, 20] storage; grads as [20, 30] too
    auto& v = strided.lists[kVars8][0];
    auto& g = strided.lists[kGrads8][0];
    auto transposed = std::make_unique<Buffer>(ACL_FLOAT, std::vector<int64_t>{20, 30},
                                               std::vector<int64_t>{1, 20});
    for (int64_t k = 0; k < 600; ++k) {
        std::memcpy(&transposed->host[transposed->Offset(k)], &v->host[4 * k], 4);
    }
    v = std::move(transposed);
    g->sizes = {20, 30};
    g->strides = {30, 1};
    for (int l : {kMs8, kVs8, kSs8}) {
        strided.lists[l][0]->sizes = {20, 30};
        strided.lists[l][0]->strides = {30, 1};
    }
    // qmap_m every other element of 512, after an offset of 3
    auto map = std::make_unique<Buffer>(ACL_FLOAT, std::vector<int64_t>{256},
                                        std::vector<int64_t>{2}, 3);
    map->FillRandom(5.0F, 6.0F);  // the gaps: never read
    for (int64_t k = 0; k < 256; ++k) {
        std::memcpy(&map->host[map->Offset(k)], &contiguous.singles[kQmapM8]->host[4 * k], 4);
    }
    const std::vector<unsigned char> mapBefore = map->host;
    strided.singles[kQmapM8] = std::move(map);
    contiguous.Build();
    strided.Build();
    EXPECT_MSG(contiguous.Run() == ACLNN_SUCCESS, "%s", RecentError().c_str());
    EXPECT_MSG(strided.Phase1() == ACLNN_SUCCESS && strided.workspaceSize > 0, "%s",
               RecentError().c_str());
    std::vector<unsigned char> workspace(strided.workspaceSize);
    EXPECT(aclnnApplyFusedEmaAdam8bitList(workspace.data(), strided.workspaceSize,
                                          strided.executor, nullptr) == ACLNN_SUCCESS);
    const Buffer& sv = *strided.lists[kVars8][0];
    const std::vector<unsigned char> got = sv.Download();
    const std::vector<unsigned char> want = contiguous.lists[kVars8][0]->Download();
    bool same = true;
    for (int64_t k = 0; k < 600; ++k) {
        same = same && std::memcmp(&got[sv.Offset(k)], &want[4 * k], 4) == 0;
    }
    EXPECT(same);
    for (int l : {kMs8, kVs8, kMAbs8, kVAbs8, kSs8}) {
        EXPECT_MSG(strided.lists[l][0]->Download() == contiguous.lists[l][0]->Download(), "list %d",
                   l);
    }
    EXPECT(strided.singles[kQmapM8]->Download() == mapBefore);
}

struct BadRow {
    const char* name;
    aclnnStatus status;
    const char* message;  // a substring of the message after the phase-1 prefix
    std::function<void(Call8&)> before;  // on the buffers, before Build
    std::function<void(Call8&)> after;   // on the handles, after Build
};

std::vector<BadRow> BadRows()
{
    const auto none = [](Call8&) {};
    return {
        {"null list", ACLNN_ERR_PARAM_NULLPTR, "msRef is null", none,
         [](Call8& c) {
             aclDestroyTensorList(c.handles[kMs8]);
             c.handles[kMs8] = nullptr;
         }},
        {"null map", ACLNN_ERR_PARAM_NULLPTR, "qmapV is null", none,
         [](Call8& c) { c.singles[kQmapV8]->handle = nullptr; }},
        {"float codes", ACLNN_ERR_PARAM_INVALID, "msRef[0] has dtype ACL_FLOAT",
         [](Call8& c) {
             for (auto& b : c.lists[kMs8]) b = std::make_unique<Buffer>(ACL_FLOAT, b->sizes);
         },
         none},
        {"short scales", ACLNN_ERR_PARAM_INVALID, "vAbsmaxesRef[1] has shape [1], expected [2]",
         [](Call8& c) { c.lists[kVAbs8][1] = std::make_unique<Buffer>(ACL_FLOAT, std::vector<int64_t>{1}); },
         none},
        {"short list", ACLNN_ERR_PARAM_INVALID, "ssRef has 3 tensors but grads has 4",
         [](Call8& c) { c.lists[kSs8].pop_back(); }, none},
        {"map of 255", ACLNN_ERR_PARAM_INVALID, "qmapM has shape [255], expected [256]",
         [](Call8& c) { c.singles[kQmapM8] = std::make_unique<Buffer>(ACL_FLOAT, std::vector<int64_t>{255}); },
         none},
        {"unsorted map", ACLNN_ERR_PARAM_INVALID, "qmapV[8] is 0.03137255, below qmapV[7]",
         [](Call8& c) {
             const float x = 0.5F;
             std::memcpy(&c.singles[kQmapV8]->host[4 * 7], &x, 4);
         },
         none},
        {"NaN in a map", ACLNN_ERR_PARAM_INVALID, "qmapM[200] is nan",
         [](Call8& c) {
             const float x = std::nanf("");
             std::memcpy(&c.singles[kQmapM8]->host[4 * 200], &x, 4);
         },
         none},
        {"copies of fp16 params", ACLNN_ERR_PARAM_INVALID, "modelCopiesRef needs fp32 varsRef",
         [](Call8& c) {
             for (auto& b : c.lists[kVars8]) b = std::make_unique<Buffer>(ACL_FLOAT16, b->sizes);
             for (auto& b : c.lists[kGrads8]) c.Add(kCopies8, ACL_FLOAT16, b->sizes);
         },
         none},
        {"step 0", ACLNN_ERR_PARAM_INVALID, "step",
         [](Call8& c) { std::memset(c.singles[kStep8]->host.data(), 0, 8); }, none},
        {"found_inf of two", ACLNN_ERR_PARAM_INVALID, "foundInfOptional",
         [](Call8& c) { c.singles[kFound8] = std::make_unique<Buffer>(ACL_FLOAT, std::vector<int64_t>{2}); },
         none},
        {"bad beta1", ACLNN_ERR_PARAM_INVALID, "beta1", [](Call8& c) { c.h.beta1 = 1.5; }, none},
        {"257 entries", ACLNN_ERR_PARAM_INVALID, "grads holds 257 tensors",
         [](Call8& c) {
             for (int i = 0; i < 257 - 4; ++i) c.Add(kGrads8, ACL_FLOAT, {1});
         },
         none},
    };
}

AEA_CASE(bad_input_table)
{
    for (const BadRow& row : BadRows()) {
        Call8 call(std::vector<int64_t>{3, 300, 5, 2});
        row.before(call);
        call.Build();
        const auto before = call.Snapshot();
        row.after(call);
        RecentError();
        const aclnnStatus status = call.Phase1();
        const std::string message = RecentError();
        EXPECT_MSG(status == row.status, "[%s] status %d, expected %d (%s)", row.name, status,
                   row.status, message.c_str());
        EXPECT_MSG(Contains(Phase1Message(message), row.message), "[%s] message '%s' lacks '%s'",
                   row.name, message.c_str(), row.message);
        EXPECT_MSG(call.Snapshot() == before, "[%s] a tensor changed", row.name);
        EXPECT_MSG(call.workspaceSize == 0xABCD &&
                       call.executor == reinterpret_cast<aclOpExecutor*>(0x1234),
                   "[%s] an out-argument was written", row.name);
    }
}

AEA_CASE(overlapping_state_is_refused)
{
    Call8 call({300, 5});
    call.Build();
    // vsRef[1] over msRef[1]'s memory
    Buffer& m1 = *call.lists[kMs8][1];
    const int64_t storage = 5;
    aclTensor* alias = aclCreateTensor(m1.sizes.data(), 1, ACL_UINT8, m1.strides.data(), 0,
                                       ACL_FORMAT_ND, &storage, 1, m1.data);
    std::vector<aclTensor*> vs = {call.lists[kVs8][0]->Handle(), alias};
    aclDestroyTensorList(call.handles[kVs8]);
    call.handles[kVs8] = aclCreateTensorList(vs.data(), vs.size());
    const auto before = call.Snapshot();
    EXPECT(call.Phase1() == ACLNN_ERR_PARAM_INVALID);
    const std::string message = RecentError();
    EXPECT_MSG(Contains(message, "msRef[1]") && Contains(message, "vsRef[1]") &&
                   Contains(message, "overlap"),
               "%s", message.c_str());
    EXPECT(call.Snapshot() == before);
}

AEA_CASE(found_inf_writes_nothing)
{
    Call8 call(kSizes);
    call.SetScalar(kFound8, 1.0F);
    call.Build();
    const auto before = call.Snapshot();
    EXPECT_MSG(call.Run() == ACLNN_SUCCESS, "%s", RecentError().c_str());
    EXPECT(call.Snapshot() == before);
}

/** Empty ssRef and modelCopiesRef are absent; zero-element fp32 ss placeholders (the NPU path's)
 *  are too: both leave the EMA untouched and give the same update. */
AEA_CASE(absent_lists_and_placeholders)
{
    Call8 empty(kSizes);
    Call8 placeholders(kSizes);
    CopyValues(empty, &placeholders);
    empty.lists[kSs8].clear();
    for (auto& b : placeholders.lists[kSs8]) b = std::make_unique<Buffer>(ACL_FLOAT, std::vector<int64_t>{0});
    for (size_t i = 0; i < kSizes.size(); ++i) {  // fp32: the parameters' dtype
        placeholders.Add(kCopies8, ACL_FLOAT, {0});
    }
    empty.Build();
    placeholders.Build();
    EXPECT_MSG(empty.Run() == ACLNN_SUCCESS, "%s", RecentError().c_str());
    EXPECT_MSG(placeholders.Run() == ACLNN_SUCCESS, "%s", RecentError().c_str());
    for (int l : {kVars8, kMs8, kVs8, kMAbs8, kVAbs8}) {
        for (size_t i = 0; i < kSizes.size(); ++i) {
            EXPECT_MSG(empty.lists[l][i]->Download() == placeholders.lists[l][i]->Download(),
                       "list %d entry %zu", l, i);
        }
    }
}

/** A repeatable executor runs again with a moved gradient (aclSetDynamicInputTensorAddr) and a
 *  moved map (aclSetInputTensorAddr: flat index 14, after the seven given lists' two entries):
 *  the bytes of a fresh call on the moved inputs and the first launch's state. */
AEA_CASE(repeatable_executor_takes_moved_inputs)
{
    Call8 a({300, 40});
    a.Build();
    EXPECT_MSG(a.Phase1() == ACLNN_SUCCESS, "%s", RecentError().c_str());
    EXPECT(aclSetAclOpExecutorRepeatable(a.executor) == ACLNN_SUCCESS);
    EXPECT(aclnnApplyFusedEmaAdam8bitList(nullptr, 0, a.executor, nullptr) == ACLNN_SUCCESS);
    Buffer grad(ACL_FLOAT, {40});
    grad.FillRandom(-1e-2F, 1e-2F);
    grad.Upload();
    Buffer map(ACL_FLOAT, {256});
    for (int k = 0; k < 256; ++k) {
        const float x = 0.5F * (-1.0F + 2.0F * k / 255.0F);
        std::memcpy(&map.host[4 * k], &x, 4);
    }
    map.Upload();
    Call8 fresh({300, 40});  // the first launch's state, the moved gradient and map
    size_t k = 0;
    const auto state = a.Snapshot();
    for (int l = 0; l < kLists8; ++l) {
        for (auto& b : fresh.lists[l]) b->host = state[k++];
    }
    fresh.lists[kGrads8][1]->host = grad.host;
    fresh.singles[kQmapM8]->host = map.host;
    fresh.Build();
    EXPECT(aclSetDynamicInputTensorAddr(a.executor, 0, 1, a.handles[kGrads8], grad.data) ==
           ACLNN_SUCCESS);
    EXPECT(aclSetInputTensorAddr(a.executor, 14, a.Single(kQmapM8), map.data) == ACLNN_SUCCESS);
    EXPECT(aclnnApplyFusedEmaAdam8bitList(nullptr, 0, a.executor, nullptr) == ACLNN_SUCCESS);
    EXPECT_MSG(fresh.Run() == ACLNN_SUCCESS, "%s", RecentError().c_str());
    const auto got = a.Snapshot();
    const auto want = fresh.Snapshot();
    k = 0;
    for (int l = 0; l < kLists8; ++l) {
        for (size_t i = 0; i < a.lists[l].size(); ++i, ++k) {
            EXPECT_MSG(l == kGrads8 || got[k] == want[k], "list %d entry %zu", l, i);
        }
    }
    EXPECT(aclDestroyAclOpExecutor(a.executor) == ACLNN_SUCCESS);
}

AEA_CASE(empty_call)
{
    Call8 call(std::vector<int64_t>{});
    call.Build();
    EXPECT_MSG(call.Phase1() == ACLNN_SUCCESS && call.workspaceSize == 0, "%s",
               RecentError().c_str());
    EXPECT(aclnnApplyFusedEmaAdam8bitList(nullptr, 0, call.executor, nullptr) == ACLNN_SUCCESS);
}

}  // namespace

int main(int argc, char** argv)
{
    return RunCasesOnDevice(argc, argv);
}
