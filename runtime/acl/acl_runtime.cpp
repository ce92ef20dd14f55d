/**
 * @file acl_runtime.cpp
 * @brief The CPU device behind the ACL runtime subset: process init, the current device of each
 *        thread, streams (a FIFO and a worker thread each), host "device" memory, the executor
 *        registry and the thread-local error messages.
 */
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>

#include "acl_internal.h"
#include "ascend_ema_adam/cpu_device.h"
#include "native_runtime.h"

namespace ascend_ema_adam::acl {

namespace {

constexpr int32_t kDeviceCount = 1;  // the CPU is device 0
constexpr size_t kMallocAlign = 64;  // at least the 32 bytes CANN guarantees

/** A stream: tasks run in submission order on the stream's own worker thread. */
class Stream {
public:
    explicit Stream(int32_t device) : device_(device), worker_([this] { Serve(); }) {}

    ~Stream() { Shutdown(); }

    int32_t device() const { return device_; }

    /** Queues `task`; false once the stream is shutting down (its worker would never run it). */
    bool Submit(std::function<void()> task)
    {
        {
            std::lock_guard<std::mutex> lock(mu_);
            if (stop_) {
                return false;
            }
            queue_.push_back(std::move(task));
        }
        cv_.notify_all();
        return true;
    }

    /** Waits until the queue is empty and idle; reports (and clears) failed tasks. */
    aclError Synchronize()
    {
        std::vector<std::string> failures;
        {
            std::unique_lock<std::mutex> lock(mu_);
            cv_.wait(lock, [this] { return queue_.empty() && !busy_; });
            failures.swap(failures_);
        }
        for (std::string& f : failures) {
            AddErrorMessage(std::move(f));
        }
        return failures.empty() ? ACL_SUCCESS : ACL_ERROR_RT_FAILURE;
    }

    /** Runs what is queued, then stops the worker. Idempotent. */
    void Shutdown()
    {
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        if (worker_.joinable()) {
            worker_.join();
        }
    }

private:
    void Serve()
    {
        std::unique_lock<std::mutex> lock(mu_);
        for (;;) {
            cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
            if (queue_.empty()) {
                return;  // stop requested and drained
            }
            std::function<void()> task = std::move(queue_.front());
            queue_.pop_front();
            busy_ = true;
            lock.unlock();
            std::string failure;
            try {
                task();
            } catch (const std::exception& e) {
                failure = std::string("a task on the stream failed: ") + e.what();
            } catch (...) {
                failure = "a task on the stream failed with an unknown exception";
            }
            lock.lock();
            busy_ = false;
            if (!failure.empty()) {
                failures_.push_back(std::move(failure));
            }
            cv_.notify_all();  // Synchronize waits for idleness
        }
    }

    const int32_t device_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> queue_;
    std::vector<std::string> failures_;
    bool busy_ = false;
    bool stop_ = false;
    std::thread worker_;  // declared last: starts once everything it uses exists
};

struct Runtime {
    std::mutex mu;
    bool initialized = false;
    uint64_t generation = 0;  // aclInit count: a thread's current device dies with its generation
    int deviceRefs[kDeviceCount] = {};
    // shared_ptr: a thread synchronising a stream keeps it alive while another destroys it.
    std::unordered_map<aclrtStream, std::shared_ptr<Stream>> streams;
    std::unordered_map<aclOpExecutor*, std::unique_ptr<aclOpExecutor>> executors;
    std::unordered_map<void*, size_t> allocations;
};

/** Never destroyed: idle stream workers may outlive static destruction at process exit. */
Runtime& State()
{
    static Runtime* runtime = new Runtime;
    return *runtime;
}

struct CurrentDevice {
    int32_t device = -1;
    uint64_t generation = 0;
};

thread_local CurrentDevice t_current;
thread_local std::vector<std::string> t_messages;
thread_local std::string t_returned;  // what the last aclGetRecentErrMsg pointed to

/** The calling thread's device in this aclInit generation, or -1. Caller holds State().mu. */
int32_t CurrentDeviceLocked(const Runtime& rt)
{
    return t_current.generation == rt.generation ? t_current.device : -1;
}

aclError Fail(aclError code, std::string message)
{
    AddErrorMessage(std::move(message));
    return code;
}

aclError NotInitialized(const char* api)
{
    return Fail(ACL_ERROR_UNINITIALIZE, std::string(api) + ": call aclInit first");
}

/** Shuts streams down outside the runtime lock (their tasks may call back into the runtime). */
void ShutdownAll(std::vector<std::shared_ptr<Stream>> streams)
{
    for (const std::shared_ptr<Stream>& s : streams) {
        s->Shutdown();
    }
}

}  // namespace

void AddErrorMessage(std::string message)
{
    t_messages.push_back(std::move(message));
}

aclOpExecutor* RegisterExecutor(std::unique_ptr<aclOpExecutor> executor)
{
    Runtime& rt = State();
    aclOpExecutor* handle = executor.get();
    std::lock_guard<std::mutex> lock(rt.mu);
    rt.executors.emplace(handle, std::move(executor));
    return handle;
}

aclnnStatus TakeExecutor(const AclnnOp& op, aclOpExecutor* executor, const void* workspace,
                         uint64_t workspaceSize, std::unique_ptr<aclOpExecutor>* taken)
{
    const char* api = op.phase2;
    Runtime& rt = State();
    std::lock_guard<std::mutex> lock(rt.mu);
    auto it = rt.executors.find(executor);
    if (it == rt.executors.end()) {
        AddErrorMessage(std::string(api) +
                        ": executor is not a live executor: it was already run (an executor is "
                        "single-use unless aclSetAclOpExecutorRepeatable made it repeatable), "
                        "destroyed, freed by aclFinalize, or never returned by phase 1");
        return ACLNN_ERR_PARAM_INVALID;
    }
    const AclnnOp& creator = it->second->op;
    if (&creator != &op) {
        AddErrorMessage(std::string(api) + ": executor was created by " + creator.phase1 +
                        ", not by " + op.phase1 + "; run it with " + creator.phase2 +
                        " (it stays valid for that)");
        return ACLNN_ERR_PARAM_INVALID;
    }
    const uint64_t required = it->second->workspaceSize;
    if (workspaceSize < required) {
        AddErrorMessage(std::string(api) + ": workspaceSize is " + std::to_string(workspaceSize) +
                        " but phase 1 asked for " + std::to_string(required) + " bytes");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (workspace == nullptr && workspaceSize > 0) {
        AddErrorMessage(std::string(api) + ": workspace is null but workspaceSize is " +
                        std::to_string(workspaceSize));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (it->second->repeatable) {
        *taken = it->second->Copy();
        return ACLNN_SUCCESS;
    }
    *taken = std::move(it->second);
    rt.executors.erase(it);
    return ACLNN_SUCCESS;
}

bool WithLiveExecutor(aclOpExecutor* executor, const std::function<void(aclOpExecutor&)>& body)
{
    Runtime& rt = State();
    std::lock_guard<std::mutex> lock(rt.mu);
    auto it = rt.executors.find(executor);
    if (it == rt.executors.end()) {
        return false;
    }
    body(*it->second);
    return true;
}

bool IsValidStream(aclrtStream stream)
{
    if (stream == nullptr) {
        return true;
    }
    Runtime& rt = State();
    std::lock_guard<std::mutex> lock(rt.mu);
    return rt.streams.count(stream) != 0;
}

aclError SubmitToStream(aclrtStream stream, std::function<void()> task)
{
    if (stream == nullptr) {
        try {
            task();
        } catch (const std::exception& e) {
            return Fail(ACL_ERROR_RT_FAILURE, std::string("the default stream's task failed: ") +
                                                  e.what());
        }
        return ACL_SUCCESS;
    }
    Runtime& rt = State();
    std::shared_ptr<Stream> target;
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        auto it = rt.streams.find(stream);
        if (it != rt.streams.end()) {
            target = it->second;
        }
    }
    if (!target || !target->Submit(std::move(task))) {
        return Fail(ACL_ERROR_INVALID_PARAM,
                    "stream is not a live stream (not from aclrtCreateStream, or destroyed)");
    }
    return ACL_SUCCESS;
}

}  // namespace ascend_ema_adam::acl

using namespace ascend_ema_adam::acl;  // the C entry points below share the helpers above

extern "C" {

aclError aeaSetCpuThreads(uint32_t threads)
{
    ascend_ema_adam::SetNativeDefaultThreads(threads);
    return ACL_SUCCESS;
}

aclError aeaSetCpuParallelFor(aeaCpuParallelFor run, void* host)
{
    ascend_ema_adam::SetNativeParallelFor(run, host);
    return ACL_SUCCESS;
}

aclError aeaGetCpuThreads(uint32_t* next, uint32_t* last)
{
    if (next == nullptr || last == nullptr) {
        return Fail(ACL_ERROR_INVALID_PARAM, "aeaGetCpuThreads: next and last must not be null");
    }
    try {
        *next = ascend_ema_adam::NativeThreads();
    } catch (const std::invalid_argument& e) {
        return Fail(ACL_ERROR_INVALID_PARAM, e.what());
    }
    *last = ascend_ema_adam::LastNativeLaunchThreads();
    return ACL_SUCCESS;
}

aclError aclInit(const char* /*configPath: nothing to configure on the CPU device*/)
{
    Runtime& rt = State();
    std::lock_guard<std::mutex> lock(rt.mu);
    if (rt.initialized) {
        return Fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit: already initialised");
    }
    rt.initialized = true;
    ++rt.generation;
    return ACL_SUCCESS;
}

aclError aclFinalize()
{
    Runtime& rt = State();
    std::vector<std::shared_ptr<Stream>> streams;
    std::unordered_map<aclOpExecutor*, std::unique_ptr<aclOpExecutor>> executors;
    std::unordered_map<void*, size_t> allocations;
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        if (!rt.initialized) {
            return Fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize: not initialised");
        }
        rt.initialized = false;
        for (auto& entry : rt.streams) {
            streams.push_back(std::move(entry.second));
        }
        rt.streams.clear();
        executors.swap(rt.executors);
        allocations.swap(rt.allocations);
        std::fill(std::begin(rt.deviceRefs), std::end(rt.deviceRefs), 0);
    }
    ShutdownAll(std::move(streams));  // queued work runs before its memory goes
    for (const auto& entry : allocations) {
        std::free(entry.first);
    }
    return ACL_SUCCESS;
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor)
{
    // CANN's status codes for this call (opbase acl_op_api.cpp): 561103 for null, 561000 for a
    // pointer that is not an executor.
    if (executor == nullptr) {
        AddErrorMessage("aclDestroyAclOpExecutor: executor is null");
        return ACLNN_ERR_INNER_NULLPTR;
    }
    Runtime& rt = State();
    std::unique_ptr<aclOpExecutor> destroyed;  // freed after the lock is released
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        auto it = rt.executors.find(executor);
        if (it == rt.executors.end()) {
            AddErrorMessage(
                "aclDestroyAclOpExecutor: executor is not a live executor: it was already run "
                "(phase 2 consumes it), destroyed, freed by aclFinalize, or never returned by "
                "phase 1");
            return ACLNN_ERR_INNER;
        }
        destroyed = std::move(it->second);
        rt.executors.erase(it);
    }
    return ACLNN_SUCCESS;
}

const char* aclGetRecentErrMsg()
{
    if (t_messages.empty()) {
        return nullptr;
    }
    t_returned.clear();
    for (auto it = t_messages.rbegin(); it != t_messages.rend(); ++it) {
        if (!t_returned.empty()) {
            t_returned += '\n';
        }
        t_returned += *it;
    }
    t_messages.clear();
    return t_returned.c_str();
}

aclError aclrtSetDevice(int32_t deviceId)
{
    Runtime& rt = State();
    std::lock_guard<std::mutex> lock(rt.mu);
    if (!rt.initialized) {
        return NotInitialized("aclrtSetDevice");
    }
    if (deviceId < 0 || deviceId >= kDeviceCount) {
        return Fail(ACL_ERROR_RT_INVALID_DEVICEID,
                    "aclrtSetDevice: deviceId is " + std::to_string(deviceId) +
                        ", but the CPU runtime has one device, 0");
    }
    ++rt.deviceRefs[deviceId];
    t_current = {deviceId, rt.generation};
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId)
{
    Runtime& rt = State();
    std::vector<std::shared_ptr<Stream>> released;
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        if (!rt.initialized) {
            return NotInitialized("aclrtResetDevice");
        }
        if (deviceId < 0 || deviceId >= kDeviceCount || rt.deviceRefs[deviceId] == 0) {
            return Fail(ACL_ERROR_RT_INVALID_DEVICEID,
                        "aclrtResetDevice: device " + std::to_string(deviceId) +
                            " was not set by aclrtSetDevice");
        }
        if (CurrentDeviceLocked(rt) == deviceId) {
            t_current = {};
        }
        if (--rt.deviceRefs[deviceId] == 0) {  // the last user: the device's streams go
            for (auto it = rt.streams.begin(); it != rt.streams.end();) {
                if (it->second->device() == deviceId) {
                    released.push_back(std::move(it->second));
                    it = rt.streams.erase(it);
                } else {
                    ++it;
                }
            }
        }
    }
    ShutdownAll(std::move(released));
    return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream* stream)
{
    Runtime& rt = State();
    std::lock_guard<std::mutex> lock(rt.mu);
    if (!rt.initialized) {
        return NotInitialized("aclrtCreateStream");
    }
    if (stream == nullptr) {
        return Fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is null");
    }
    const int32_t device = CurrentDeviceLocked(rt);
    if (device < 0) {
        return Fail(ACL_ERROR_RT_CONTEXT_NULL,
                    "aclrtCreateStream: the calling thread has no device; call aclrtSetDevice");
    }
    auto created = std::make_shared<Stream>(device);
    *stream = created.get();
    rt.streams.emplace(*stream, std::move(created));
    return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
    Runtime& rt = State();
    std::shared_ptr<Stream> target;
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        if (!rt.initialized) {
            return NotInitialized("aclrtDestroyStream");
        }
        auto it = rt.streams.find(stream);
        if (it == rt.streams.end()) {
            return Fail(ACL_ERROR_INVALID_PARAM,
                        "aclrtDestroyStream: stream is not a live stream (not from "
                        "aclrtCreateStream, or already destroyed)");
        }
        target = std::move(it->second);
        rt.streams.erase(it);
    }
    target->Shutdown();
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
    Runtime& rt = State();
    std::shared_ptr<Stream> target;
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        if (!rt.initialized) {
            return NotInitialized("aclrtSynchronizeStream");
        }
        if (stream == nullptr) {
            return ACL_SUCCESS;  // the default stream runs its work synchronously
        }
        auto it = rt.streams.find(stream);
        if (it == rt.streams.end()) {
            return Fail(ACL_ERROR_INVALID_PARAM,
                        "aclrtSynchronizeStream: stream is not a live stream (not from "
                        "aclrtCreateStream, or destroyed)");
        }
        target = it->second;
    }
    return target->Synchronize();
}

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy /*every policy: host*/)
{
    Runtime& rt = State();
    std::lock_guard<std::mutex> lock(rt.mu);
    if (!rt.initialized) {
        return NotInitialized("aclrtMalloc");
    }
    if (devPtr == nullptr) {
        return Fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: devPtr is null");
    }
    if (size == 0) {
        return Fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: size is 0");
    }
    if (CurrentDeviceLocked(rt) < 0) {
        return Fail(ACL_ERROR_RT_CONTEXT_NULL,
                    "aclrtMalloc: the calling thread has no device; call aclrtSetDevice");
    }
    if (size > SIZE_MAX / 2) {
        return Fail(ACL_ERROR_BAD_ALLOC, "aclrtMalloc: size " + std::to_string(size) +
                                             " is too large");
    }
    // CANN rounds up to 32 bytes and adds 32 bytes of padding; aligned_alloc needs a multiple
    // of the alignment.
    const size_t padded = (size + 31) / 32 * 32 + 32;
    const size_t bytes = (padded + kMallocAlign - 1) / kMallocAlign * kMallocAlign;
    void* p = std::aligned_alloc(kMallocAlign, bytes);
    if (p == nullptr) {
        return Fail(ACL_ERROR_BAD_ALLOC,
                    "aclrtMalloc: out of host memory for " + std::to_string(size) + " bytes");
    }
    rt.allocations.emplace(p, size);
    *devPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtFree(void* devPtr)
{
    Runtime& rt = State();
    std::lock_guard<std::mutex> lock(rt.mu);
    if (!rt.initialized) {
        return NotInitialized("aclrtFree");
    }
    auto it = rt.allocations.find(devPtr);
    if (it == rt.allocations.end()) {
        return Fail(ACL_ERROR_INVALID_PARAM,
                    "aclrtFree: devPtr was not returned by aclrtMalloc, or is already freed");
    }
    rt.allocations.erase(it);
    std::free(devPtr);
    return ACL_SUCCESS;
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                     aclrtMemcpyKind kind)
{
    {
        Runtime& rt = State();
        std::lock_guard<std::mutex> lock(rt.mu);
        if (!rt.initialized) {
            return NotInitialized("aclrtMemcpy");
        }
    }
    if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE) {
        return Fail(ACL_ERROR_INVALID_PARAM,
                    "aclrtMemcpy: kind " + std::to_string(static_cast<int>(kind)) +
                        " is not an aclrtMemcpyKind");
    }
    if (count > destMax) {
        return Fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: count " + std::to_string(count) +
                                                 " exceeds destMax " + std::to_string(destMax));
    }
    if (count > 0 && (dst == nullptr || src == nullptr)) {
        return Fail(ACL_ERROR_INVALID_PARAM,
                    std::string("aclrtMemcpy: ") + (dst == nullptr ? "dst" : "src") + " is null");
    }
    if (count > 0) {
        std::memmove(dst, src, count);  // every kind: host memory on both sides
    }
    return ACL_SUCCESS;
}

}  // extern "C"
