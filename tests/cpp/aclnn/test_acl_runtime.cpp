// The CPU ACL runtime subset: init/finalize, devices, streams, memory, tensors and error
// messages. Every failing call must return its CANN code and leave a message, never crash.
#include <algorithm>
#include <thread>

#include "aclnn_test_util.h"

using namespace aea_test;

namespace {

/** Status and a message containing `text`; the message is consumed. */
void ExpectError(int status, int expected, const std::string& text, int line)
{
    const std::string message = RecentError();
    if (status != expected || !Contains(message, text)) {
        Fail(__FILE__, line, "status %d (expected %d), message '%s' (expected '%s')", status,
             expected, message.c_str(), text.c_str());
    }
}

#define EXPECT_ERROR(call, code, text) ExpectError((call), (code), (text), __LINE__)

/** Runs the runtime in a known state: initialised with device 0 set on the calling thread. */
struct Session {
    Session()
    {
        EXPECT(aclInit(nullptr) == ACL_SUCCESS);
        EXPECT(aclrtSetDevice(0) == ACL_SUCCESS);
    }
    ~Session()
    {
        EXPECT(aclrtResetDevice(0) == ACL_SUCCESS);
        EXPECT(aclFinalize() == ACL_SUCCESS);
    }
};

AEA_CASE(calls_before_init_are_rejected)
{
    void* p = nullptr;
    aclrtStream stream = nullptr;
    char byte = 0;
    EXPECT_ERROR(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE, "aclrtSetDevice: call aclInit first");
    EXPECT_ERROR(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE, "aclrtMalloc");
    EXPECT_ERROR(aclrtCreateStream(&stream), ACL_ERROR_UNINITIALIZE, "aclrtCreateStream");
    EXPECT_ERROR(aclrtMemcpy(&byte, 1, &byte, 1, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_UNINITIALIZE,
                 "aclrtMemcpy");
    EXPECT_ERROR(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "aclFinalize: not initialised");
    EXPECT(p == nullptr && stream == nullptr);
}

AEA_CASE(init_twice_and_reinit)
{
    EXPECT(aclInit(nullptr) == ACL_SUCCESS);
    EXPECT_ERROR(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE, "already initialised");
    EXPECT(aclFinalize() == ACL_SUCCESS);
    EXPECT(aclInit("unused.json") == ACL_SUCCESS);
    EXPECT(aclFinalize() == ACL_SUCCESS);
}

AEA_CASE(devices)
{
    EXPECT(aclInit(nullptr) == ACL_SUCCESS);
    EXPECT_ERROR(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId is 1, but the CPU runtime has one device, 0");
    EXPECT_ERROR(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId is -1");
    EXPECT_ERROR(aclrtResetDevice(0), ACL_ERROR_RT_INVALID_DEVICEID, "device 0 was not set");
    aclrtStream stream = nullptr;
    void* p = nullptr;
    EXPECT_ERROR(aclrtCreateStream(&stream), ACL_ERROR_RT_CONTEXT_NULL, "call aclrtSetDevice");
    EXPECT_ERROR(aclrtMalloc(&p, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL,
                 "call aclrtSetDevice");
    EXPECT(aclrtSetDevice(0) == ACL_SUCCESS);
    // The current device belongs to the thread that set it.
    int otherThread = 0;
    std::thread([&] { otherThread = aclrtCreateStream(&stream); }).join();
    EXPECT(otherThread == ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT(aclrtCreateStream(&stream) == ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(stream) == ACL_SUCCESS);
    EXPECT(aclrtResetDevice(0) == ACL_SUCCESS);
    EXPECT_ERROR(aclrtCreateStream(&stream), ACL_ERROR_RT_CONTEXT_NULL, "no device");
    // A device set before aclFinalize is gone after the next aclInit.
    EXPECT(aclrtSetDevice(0) == ACL_SUCCESS);
    EXPECT(aclFinalize() == ACL_SUCCESS);
    EXPECT(aclInit(nullptr) == ACL_SUCCESS);
    EXPECT_ERROR(aclrtCreateStream(&stream), ACL_ERROR_RT_CONTEXT_NULL, "no device");
    EXPECT(aclFinalize() == ACL_SUCCESS);
}

AEA_CASE(malloc_free)
{
    Session session;
    void* p = nullptr;
    EXPECT_ERROR(aclrtMalloc(nullptr, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "devPtr is null");
    EXPECT_ERROR(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "size is 0");
    EXPECT_ERROR(aclrtMalloc(&p, SIZE_MAX, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_BAD_ALLOC, "too large");
    EXPECT(p == nullptr);
    for (size_t size : {size_t{1}, size_t{31}, size_t{4096}, size_t{100003}}) {
        for (aclrtMemMallocPolicy policy : {ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_NORMAL_ONLY}) {
            EXPECT(aclrtMalloc(&p, size, policy) == ACL_SUCCESS);
            EXPECT(reinterpret_cast<uintptr_t>(p) % 32 == 0);
            std::memset(p, 0x5A, size + 32);  // CANN pads every allocation with 32 bytes
            EXPECT(aclrtFree(p) == ACL_SUCCESS);
            EXPECT_ERROR(aclrtFree(p), ACL_ERROR_INVALID_PARAM, "already freed");
        }
    }
    int local = 0;
    EXPECT_ERROR(aclrtFree(&local), ACL_ERROR_INVALID_PARAM, "not returned by aclrtMalloc");
    EXPECT_ERROR(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM, "not returned by aclrtMalloc");
}

/** aclFinalize releases memory that was never freed; it is unknown afterwards. */
AEA_CASE(finalize_releases_memory)
{
    void* p = nullptr;
    {
        Session session;
        EXPECT(aclrtMalloc(&p, 1000, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    }
    Session again;
    EXPECT_ERROR(aclrtFree(p), ACL_ERROR_INVALID_PARAM, "not returned by aclrtMalloc");
}

AEA_CASE(memcpy_kinds_and_errors)
{
    Session session;
    std::vector<uint8_t> src(100), dst(100, 0);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(Rng()());
    for (int kind = ACL_MEMCPY_HOST_TO_HOST; kind <= ACL_MEMCPY_INTER_DEVICE_TO_DEVICE; ++kind) {
        std::fill(dst.begin(), dst.end(), 0);
        EXPECT(aclrtMemcpy(dst.data(), 100, src.data(), 60, static_cast<aclrtMemcpyKind>(kind)) ==
               ACL_SUCCESS);
        EXPECT(std::equal(src.begin(), src.begin() + 60, dst.begin()));
        EXPECT(std::all_of(dst.begin() + 60, dst.end(), [](uint8_t b) { return b == 0; }));
    }
    const std::vector<uint8_t> before = dst;
    EXPECT_ERROR(aclrtMemcpy(dst.data(), 50, src.data(), 51, ACL_MEMCPY_HOST_TO_DEVICE),
                 ACL_ERROR_INVALID_PARAM, "count 51 exceeds destMax 50");
    EXPECT_ERROR(aclrtMemcpy(dst.data(), 100, src.data(), 10, static_cast<aclrtMemcpyKind>(8)),
                 ACL_ERROR_INVALID_PARAM, "kind 8 is not an aclrtMemcpyKind");
    EXPECT_ERROR(aclrtMemcpy(nullptr, 100, src.data(), 10, ACL_MEMCPY_DEVICE_TO_HOST),
                 ACL_ERROR_INVALID_PARAM, "dst is null");
    EXPECT_ERROR(aclrtMemcpy(dst.data(), 100, nullptr, 10, ACL_MEMCPY_DEVICE_TO_HOST),
                 ACL_ERROR_INVALID_PARAM, "src is null");
    EXPECT(dst == before);
    EXPECT(aclrtMemcpy(nullptr, 0, nullptr, 0, ACL_MEMCPY_DEFAULT) == ACL_SUCCESS);
}

AEA_CASE(streams)
{
    Session session;
    aclrtStream stream = nullptr;
    EXPECT_ERROR(aclrtCreateStream(nullptr), ACL_ERROR_INVALID_PARAM, "stream is null");
    EXPECT(aclrtCreateStream(&stream) == ACL_SUCCESS && stream != nullptr);
    EXPECT(aclrtSynchronizeStream(stream) == ACL_SUCCESS);  // nothing queued
    EXPECT(aclrtSynchronizeStream(nullptr) == ACL_SUCCESS);  // the default stream
    EXPECT(aclrtDestroyStream(stream) == ACL_SUCCESS);
    EXPECT_ERROR(aclrtDestroyStream(stream), ACL_ERROR_INVALID_PARAM, "not a live stream");
    EXPECT_ERROR(aclrtSynchronizeStream(stream), ACL_ERROR_INVALID_PARAM, "not a live stream");
    int local = 0;
    EXPECT_ERROR(aclrtDestroyStream(&local), ACL_ERROR_INVALID_PARAM, "not a live stream");
}

/** The last aclrtResetDevice of a device drains and destroys the streams left on it. */
AEA_CASE(last_reset_destroys_streams)
{
    EXPECT(aclInit(nullptr) == ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0) == ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0) == ACL_SUCCESS);
    aclrtStream stream = nullptr;
    EXPECT(aclrtCreateStream(&stream) == ACL_SUCCESS);
    OptimizerTensors ts;
    ts.Make(ACL_FLOAT, {2000}, Layout::kStrided);
    const auto before = ts.t[1].Packed();
    uint64_t ws = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT(Phase1(ts, Hyper{}, &ws, &executor) == ACLNN_SUCCESS);
    Workspace workspace(ws);
    EXPECT(aclnnApplyFusedEmaAdam(workspace.data, ws, executor, stream) == ACLNN_SUCCESS);
    EXPECT(aclrtResetDevice(0) == ACL_SUCCESS);  // one user left: the stream stays
    EXPECT(aclrtSynchronizeStream(stream) == ACL_SUCCESS);
    EXPECT(ts.t[1].Packed() != before);
    EXPECT(aclrtSetDevice(0) == ACL_SUCCESS);  // the thread's device again (refs: 2)
    EXPECT(aclrtResetDevice(0) == ACL_SUCCESS);
    EXPECT(aclrtResetDevice(0) == ACL_SUCCESS);  // the last one
    EXPECT_ERROR(aclrtSynchronizeStream(stream), ACL_ERROR_INVALID_PARAM, "not a live stream");
    EXPECT(aclFinalize() == ACL_SUCCESS);
    for (TestTensor& t : ts.t) {  // freed by aclFinalize
        aclDestroyTensor(t.handle);
        t.handle = nullptr;
        t.data = nullptr;
    }
}

AEA_CASE(recent_error_message)
{
    RecentError();
    EXPECT(aclGetRecentErrMsg() == nullptr);  // reading cleared the messages
    aclrtSetDevice(0);                        // not initialised
    aclFinalize();                            // not initialised
    const char* both = aclGetRecentErrMsg();
    EXPECT(both != nullptr);
    const std::string text = both ? both : "";
    // The newest first, one per line; then cleared.
    EXPECT_MSG(text.rfind("aclFinalize: not initialised", 0) == 0 &&
                   Contains(text, "\naclrtSetDevice: call aclInit first"),
               "'%s'", text.c_str());
    EXPECT(aclGetRecentErrMsg() == nullptr);
    // Messages belong to the thread whose call failed.
    std::string otherThread;
    std::thread([&] {
        aclFinalize();
        otherThread = RecentError();
    }).join();
    EXPECT(Contains(otherThread, "aclFinalize"));
    EXPECT(aclGetRecentErrMsg() == nullptr);
}

AEA_CASE(create_tensor_checks_the_description)
{
    Session session;
    float storage[64] = {};
    const int64_t shape[2] = {4, 8}, contiguous[2] = {8, 1}, storageDims[1] = {64};
    const struct {
        const char* what;
        std::vector<int64_t> shape, strides, storage;
        int64_t offset;
        const char* message;
    } bad[] = {
        {"negative size", {4, -1}, {8, 1}, {64}, 0, "viewDims [4,-1] has a negative size"},
        {"negative stride", {4, 8}, {-8, 1}, {64}, 0, "has a negative stride"},
        {"negative offset", {4, 8}, {8, 1}, {64}, -1, "offset is -1"},
        {"negative storage", {4, 8}, {8, 1}, {-64}, 0, "storageDims [-64] has a negative size"},
        {"past the storage", {4, 8}, {8, 1}, {64}, 33, "reaches element 64, but storageDims [64] hold 64"},
        {"strides past the storage", {4, 8}, {16, 3}, {64}, 0, "reaches element 69"},
        {"overflow", {1LL << 40, 1LL << 40}, {1, 1}, {64}, 0, "more than 2^63 elements"},
    };
    for (const auto& b : bad) {
        aclTensor* t = aclCreateTensor(b.shape.data(), b.shape.size(), ACL_FLOAT, b.strides.data(),
                                       b.offset, ACL_FORMAT_ND, b.storage.data(), b.storage.size(),
                                       storage);
        const std::string message = RecentError();
        EXPECT_MSG(t == nullptr && Contains(message, "aclCreateTensor: ") && Contains(message, b.message),
                   "[%s] '%s'", b.what, message.c_str());
    }
    EXPECT(aclCreateTensor(nullptr, 2, ACL_FLOAT, contiguous, 0, ACL_FORMAT_ND, storageDims, 1, storage) == nullptr);
    EXPECT(Contains(RecentError(), "viewDims is null but viewDimsNum is 2"));
    EXPECT(aclCreateTensor(shape, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, storageDims, 1, storage) == nullptr);
    EXPECT(Contains(RecentError(), "stride is null"));
    EXPECT(aclCreateTensor(shape, 2, ACL_FLOAT, contiguous, 0, ACL_FORMAT_ND, nullptr, 1, storage) == nullptr);
    EXPECT(Contains(RecentError(), "storageDims is null"));
    // Valid: the last element exactly at the end, and a rank-0 tensor.
    aclTensor* t = aclCreateTensor(shape, 2, ACL_FLOAT, contiguous, 32, ACL_FORMAT_ND, storageDims, 1, storage);
    EXPECT(t != nullptr);
    aclTensor* scalar = aclCreateTensor(nullptr, 0, ACL_INT64, nullptr, 0, ACL_FORMAT_ND, storageDims, 1, storage);
    EXPECT(scalar != nullptr);
    EXPECT(aclDestroyTensor(t) == ACLNN_SUCCESS);
    EXPECT(aclDestroyTensor(scalar) == ACLNN_SUCCESS);
    EXPECT_ERROR(aclDestroyTensor(t), ACLNN_ERR_PARAM_INVALID, "not a live aclTensor");
    EXPECT_ERROR(aclDestroyTensor(nullptr), ACLNN_ERR_PARAM_NULLPTR, "tensor is null");
}

aclTensor* SmallTensor(float* storage)
{
    const int64_t shape[1] = {4}, strides[1] = {1}, storageDims[1] = {4};
    return aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, storageDims, 1, storage);
}

/** A list owns its tensors: destroying it destroys them; null entries and empty lists are
 *  valid lists; a dead list or a dead entry is an error, never a crash or a double free. */
AEA_CASE(tensor_lists_own_their_tensors)
{
    float storage[8] = {};
    aclTensor* a = SmallTensor(storage);
    aclTensor* b = SmallTensor(storage + 4);
    const aclTensor* entries[3] = {a, nullptr, b};
    aclTensorList* list = aclCreateTensorList(entries, 3);
    EXPECT(list != nullptr);
    EXPECT(aclDestroyTensorList(list) == ACLNN_SUCCESS);
    EXPECT_ERROR(aclDestroyTensor(a), ACLNN_ERR_PARAM_INVALID, "not a live aclTensor");
    EXPECT_ERROR(aclDestroyTensor(b), ACLNN_ERR_PARAM_INVALID, "not a live aclTensor");
    EXPECT_ERROR(aclDestroyTensorList(list), ACLNN_ERR_PARAM_INVALID,
                 "aclDestroyTensorList: array is not a live aclTensorList");
    EXPECT_ERROR(aclDestroyTensorList(nullptr), ACLNN_ERR_PARAM_NULLPTR,
                 "aclDestroyTensorList: array is null");

    aclTensorList* empty = aclCreateTensorList(nullptr, 0);
    EXPECT(empty != nullptr);
    EXPECT(aclDestroyTensorList(empty) == ACLNN_SUCCESS);
    EXPECT(aclCreateTensorList(nullptr, 2) == nullptr);
    EXPECT(Contains(RecentError(), "aclCreateTensorList: value is null but size is 2"));

    // The same tensor twice, and a tensor destroyed on its own: the list and its live tensors are
    // freed (the sanitizer build checks for leaks and double frees), the call reports the entry.
    aclTensor* c = SmallTensor(storage);
    aclTensor* d = SmallTensor(storage + 4);
    const aclTensor* twice[2] = {c, c};
    EXPECT_ERROR(aclDestroyTensorList(aclCreateTensorList(twice, 2)), ACLNN_ERR_PARAM_INVALID,
                 "entry 1 was not a live aclTensor (destroyed on its own, or held twice)");
    const aclTensor* dead[2] = {d, SmallTensor(storage)};
    EXPECT(aclDestroyTensor(d) == ACLNN_SUCCESS);
    EXPECT_ERROR(aclDestroyTensorList(aclCreateTensorList(dead, 2)), ACLNN_ERR_PARAM_INVALID,
                 "entry 0 was not a live aclTensor");
    EXPECT_ERROR(aclDestroyTensor(dead[1]), ACLNN_ERR_PARAM_INVALID, "not a live aclTensor");
}

}  // namespace

int main(int argc, char** argv)
{
    return RunCases(argc, argv);
}
