/**
 * @file cann_runtime_standin.cpp
 * @brief Stand-ins for the closed part of CANN's runtime that opbase, metadef and the generated
 *        aclnn call (tools/cann_host). Each function is defined against CANN's own declaration
 *        (the snapshot's headers are included), so a signature drift fails to compile.
 *
 *   device memory   = host memory (aligned_alloc); every live allocation is a GM region the
 *                     twin launch registers (CannHostDeviceRegions)
 *   streams/events  = in order on the caller: async copies happen at once, synchronize is a no-op
 *   SoC             = Ascend910B2 (aclrtGetSocName); rtGetSocSpec answers from CANN's platform
 *                     library (fe::PlatformInfoManager over the snapshot's Ascend910B2.ini), as
 *                     the runtime's ApiImpl::GetDeviceInfoFromPlatformInfo does
 *   dlog            warnings and errors to stderr (ASCEND_GLOBAL_LOG_LEVEL=0..3 shows more/less)
 *   adump, msprof, error_manager: no-ops (dump and profiling are off)
 * The kernel side (aclrtBinaryLoadFromData, aclrtBinaryGetFunction*, aclrtLaunchKernelWithHostArgs)
 * is twin_device.cpp.
 */
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

#include "acl/acl.h"
#include "acl/acl_rt.h"
#include "base/dlog_pub.h"
#include "base/err_msg.h"
#include "dump/adump_api.h"
#include "dump/adump_pub.h"
#include "mmpa/mmpa_api.h"
#include "runtime/rts/rts_kernel.h"
#include "runtime/stream.h"
#include "platform/platform_info.h"
#include "profiling/aprof_pub.h"
#include "runtime/rt_external_base.h"
#include "runtime/rt_external_kernel.h"
#include "securec.h"
#include "transfer_shape_according_to_format_ext.h"

#define STANDIN extern "C" __attribute__((visibility("default")))

namespace {
constexpr const char* kSoc = "Ascend910B2";

std::mutex g_memMutex;
std::map<uintptr_t, size_t>& Allocations()
{
    static std::map<uintptr_t, size_t> allocations;
    return allocations;
}

void* DeviceAlloc(size_t size)
{
    const size_t bytes = ((size == 0 ? 1 : size) + 511U) / 512U * 512U;  // the runtime's 512 B granule
    void* p = std::aligned_alloc(512, bytes);
    if (p != nullptr) {
        std::lock_guard<std::mutex> lock(g_memMutex);
        Allocations()[reinterpret_cast<uintptr_t>(p)] = bytes;
    }
    return p;
}

struct Stream {
    int32_t id;
};
struct Event {
    int32_t id;
};
int32_t g_nextStreamId = 1;
// The last error logged or reported: what aclGetRecentErrMsg returns (CANN's error manager).
thread_local std::string g_lastError;
thread_local int32_t g_device = -1;

int32_t LogThreshold()
{
    const char* env = std::getenv("ASCEND_GLOBAL_LOG_LEVEL");
    return (env != nullptr && *env != '\0') ? std::atoi(env) : DLOG_WARN;
}
}  // namespace

// ---- what twin_device.cpp asks --------------------------------------------------------------------
/** Every live device allocation, for the launch's GM regions. */
STANDIN size_t CannHostDeviceRegions(const void** bases, size_t* sizes, size_t capacity)
{
    std::lock_guard<std::mutex> lock(g_memMutex);
    size_t n = 0;
    for (const auto& [base, size] : Allocations()) {
        if (n < capacity) {
            bases[n] = reinterpret_cast<const void*>(base);
            sizes[n] = size;
        }
        ++n;
    }
    return n;
}

// ---- acl: init, devices, memory, streams, events ---------------------------------------------------
STANDIN aclError aclInit(const char*) { return ACL_SUCCESS; }
STANDIN aclError aclFinalize() { return ACL_SUCCESS; }
STANDIN aclError aclrtSetDevice(int32_t deviceId)
{
    if (deviceId != 0) {
        return ACL_ERROR_RT_INVALID_DEVICEID;
    }
    g_device = deviceId;
    return fe::PlatformInfoManager::GeInstance().InitRuntimePlatformInfos(kSoc) == 0U ? ACL_SUCCESS
                                                                                     : ACL_ERROR_RT_INTERNAL_ERROR;
}
STANDIN aclError aclrtResetDevice(int32_t) { return ACL_SUCCESS; }
STANDIN aclError aclrtGetDevice(int32_t* deviceId)
{
    if (g_device < 0) {
        return ACL_ERROR_RT_CONTEXT_NULL;
    }
    *deviceId = g_device;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtGetDeviceCount(uint32_t* count)
{
    *count = 1;
    return ACL_SUCCESS;
}
STANDIN const char* aclrtGetSocName() { return kSoc; }
STANDIN aclError aclrtGetRunMode(aclrtRunMode* mode)
{
    *mode = ACL_HOST;
    return ACL_SUCCESS;
}
// One context per device (the device's primary one), current once the device is set.
STANDIN aclError aclrtGetCurrentContext(aclrtContext* context)
{
    static int primary;
    if (g_device < 0) {
        return ACL_ERROR_RT_CONTEXT_NULL;
    }
    *context = &primary;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtSetCurrentContext(aclrtContext context)
{
    if (context == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    g_device = 0;
    return ACL_SUCCESS;
}
// CANN's attributes: this toolkit keeps IEEE inf/NaN in float conversions on 910B (inf-nan mode),
// which torch_npu asks before it sets the device's mode (IsSupportInfNan, npu_sys_ctrl.cpp).
STANDIN aclError aclGetCannAttribute(aclCannAttr attr, int32_t* value)
{
    if (value == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    *value = attr == ACL_CANN_ATTR_INF_NAN ? 1 : 0;
    return ACL_SUCCESS;
}
// The runtime's sticky error of this thread: none (a stand-in failure returns its code at once).
STANDIN aclError aclrtPeekAtLastError(aclrtLastErrLevel) { return ACL_SUCCESS; }
STANDIN aclError aclrtGetLastError(aclrtLastErrLevel) { return ACL_SUCCESS; }
STANDIN aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t* actualTimeout)
{
    *actualTimeout = timeout;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtSetStreamFailureMode(aclrtStream, uint64_t) { return ACL_SUCCESS; }

STANDIN aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy)
{
    if (devPtr == nullptr || size == 0) {
        return ACL_ERROR_INVALID_PARAM;
    }
    *devPtr = DeviceAlloc(size);
    return *devPtr != nullptr ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC;
}
STANDIN aclError aclrtMallocWithCfg(void** devPtr, size_t size, aclrtMemMallocPolicy policy, aclrtMallocConfig*)
{
    return aclrtMalloc(devPtr, size, policy);
}
STANDIN aclError aclrtMallocAlign32(void** devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    return aclrtMalloc(devPtr, size, policy);
}
STANDIN aclError aclrtFree(void* devPtr)
{
    {
        std::lock_guard<std::mutex> lock(g_memMutex);
        Allocations().erase(reinterpret_cast<uintptr_t>(devPtr));
    }
    std::free(devPtr);
    return ACL_SUCCESS;
}
STANDIN aclError aclrtMallocHost(void** hostPtr, size_t size)
{
    *hostPtr = std::malloc(size == 0 ? 1 : size);
    return *hostPtr != nullptr ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC;
}
STANDIN aclError aclrtFreeHost(void* hostPtr)
{
    std::free(hostPtr);
    return ACL_SUCCESS;
}
STANDIN aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind)
{
    if (count > destMax || (count != 0 && (dst == nullptr || src == nullptr))) {
        return ACL_ERROR_INVALID_PARAM;
    }
    std::memmove(dst, src, count);
    return ACL_SUCCESS;
}
STANDIN aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                                  aclrtStream)
{
    return aclrtMemcpy(dst, destMax, src, count, kind);
}
STANDIN aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count)
{
    if (count > maxCount) {
        return ACL_ERROR_INVALID_PARAM;
    }
    std::memset(devPtr, value, count);
    return ACL_SUCCESS;
}
STANDIN aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream)
{
    return aclrtMemset(devPtr, maxCount, value, count);
}

STANDIN aclError aclrtCreateStream(aclrtStream* stream)
{
    *stream = new Stream{g_nextStreamId++};
    return ACL_SUCCESS;
}
STANDIN aclError aclrtCreateStreamWithConfig(aclrtStream* stream, uint32_t, uint32_t)
{
    return aclrtCreateStream(stream);
}
STANDIN aclError aclrtDestroyStream(aclrtStream stream)
{
    delete static_cast<Stream*>(stream);
    return ACL_SUCCESS;
}
STANDIN aclError aclrtDestroyStreamForce(aclrtStream stream) { return aclrtDestroyStream(stream); }
STANDIN aclError aclrtSynchronizeStream(aclrtStream) { return ACL_SUCCESS; }
STANDIN aclError aclrtSynchronizeStreamWithTimeout(aclrtStream, int32_t) { return ACL_SUCCESS; }
STANDIN aclError aclrtSynchronizeDevice() { return ACL_SUCCESS; }
STANDIN aclError aclrtStreamGetId(aclrtStream stream, int32_t* streamId)
{
    *streamId = stream != nullptr ? static_cast<Stream*>(stream)->id : 0;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtGetStreamAttribute(aclrtStream, aclrtStreamAttr, aclrtStreamAttrValue* value)
{
    std::memset(value, 0, sizeof(*value));
    return ACL_SUCCESS;
}
STANDIN aclError aclrtCreateEvent(aclrtEvent* event)
{
    *event = new Event{0};
    return ACL_SUCCESS;
}
STANDIN aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t) { return aclrtCreateEvent(event); }
STANDIN aclError aclrtCreateEventExWithFlag(aclrtEvent* event, uint32_t) { return aclrtCreateEvent(event); }
STANDIN aclError aclrtDestroyEvent(aclrtEvent event)
{
    delete static_cast<Event*>(event);
    return ACL_SUCCESS;
}
STANDIN aclError aclrtRecordEvent(aclrtEvent, aclrtStream) { return ACL_SUCCESS; }
STANDIN aclError aclrtStreamWaitEvent(aclrtStream, aclrtEvent) { return ACL_SUCCESS; }
STANDIN aclError aclrtSynchronizeEvent(aclrtEvent) { return ACL_SUCCESS; }
STANDIN aclError aclrtResetEvent(aclrtEvent, aclrtStream) { return ACL_SUCCESS; }

// Model capture (aclmdlRI*): never capturing.
STANDIN aclError aclmdlRICaptureGetInfo(aclrtStream, aclmdlRICaptureStatus* status, aclmdlRI* modelRI)
{
    *status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    if (modelRI != nullptr) {
        *modelRI = nullptr;
    }
    return ACL_SUCCESS;
}

// System parameters: what was set, 0 (with success) for what was not. torch_npu's
// ApplyDeterministicSnapshotLocked (OpParamMaker.cpp) fails a launch unless the get succeeds
// on a fresh device; opbase (GetDeterministicLevelFromRt) takes either.
namespace {
std::mutex g_paramMutex;
std::map<int, int64_t> g_sysParams;
}  // namespace
STANDIN aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    std::lock_guard<std::mutex> lock(g_paramMutex);
    g_sysParams[static_cast<int>(opt)] = value;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value) { return aclrtSetSysParamOpt(opt, value); }
STANDIN aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t* value)
{
    std::lock_guard<std::mutex> lock(g_paramMutex);
    const auto it = g_sysParams.find(static_cast<int>(opt));
    *value = it == g_sysParams.end() ? 0 : it->second;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t* value) { return aclrtGetSysParamOpt(opt, value); }

// The device's float-overflow mode: what aclrtSetDeviceSatMode set, INF_NAN before that (CANN's runtime
// sets INF_NAN at Runtime::Init on chips with RT_FEATURE_OVERFLOW_MODE, 910B and 910_93). Each launch on
// the twin runs in it (twin_device.cpp: CTRL[48]).
namespace {
std::atomic<int> g_satMode{ACL_RT_OVERFLOW_MODE_INFNAN};
}  // namespace
STANDIN aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode)
{
    g_satMode = mode;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode* mode)
{
    *mode = static_cast<aclrtFloatOverflowMode>(g_satMode.load());
    return ACL_SUCCESS;
}
// A stream's overflow-detection switch (torch_npu turns it on for every stream in saturation mode);
// kept and read back, nothing here detects overflows.
namespace {
std::mutex g_overflowSwitchMutex;
std::map<aclrtStream, uint32_t> g_overflowSwitch;
}  // namespace
STANDIN aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag)
{
    std::lock_guard<std::mutex> lock(g_overflowSwitchMutex);
    g_overflowSwitch[stream] = flag;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t* flag)
{
    std::lock_guard<std::mutex> lock(g_overflowSwitchMutex);
    const auto it = g_overflowSwitch.find(stream);
    *flag = it == g_overflowSwitch.end() ? 0 : it->second;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtCtxGetFloatOverflowAddr(void** overflowAddr)
{
    static void* addr = DeviceAlloc(512);
    *overflowAddr = addr;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtGetHardwareSyncAddr(void** addr)
{
    static void* sync = DeviceAlloc(512);
    *addr = sync;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtNpuGetFloatOverFlowStatus(void* outputAddr, uint64_t outputSize, uint32_t, aclrtStream)
{
    std::memset(outputAddr, 0, outputSize);
    return ACL_SUCCESS;
}
STANDIN aclError aclrtNpuClearFloatOverFlowStatus(uint32_t, aclrtStream) { return ACL_SUCCESS; }
STANDIN aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t* value)
{
    *value = type == ACL_RT_DEV_RES_VECTOR_CORE ? 48U : 24U;  // Ascend910B2: 24 AIC, 48 AIV
    return ACL_SUCCESS;
}
STANDIN aclError aclrtGetThreadLastTaskId(uint32_t* taskId)
{
    *taskId = 0;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtCacheLastTaskOpInfo(const void* const, const size_t) { return ACL_SUCCESS; }
STANDIN aclError aclrtRandomNumAsync(const aclrtRandomNumTaskInfo*, const aclrtStream, void*)
{
    return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
}
STANDIN aclError aclrtBinaryUnLoad(aclrtBinHandle) { return ACL_SUCCESS; }
STANDIN aclError aclrtBinarySetExceptionCallback(aclrtBinHandle, aclrtOpExceptionCallback, void*)
{
    return ACL_SUCCESS;
}
STANDIN aclError aclsysGetVersionNum(char*, int32_t*) { return ACL_ERROR_RT_FEATURE_NOT_SUPPORT; }

// ---- rt: SoC spec from CANN's platform library ----------------------------------------------------
STANDIN rtError_t rtGetSocSpec(const char* label, const char* key, char* val, const uint32_t maxLen)
{
    if (fe::PlatformInfoManager::GeInstance().InitRuntimePlatformInfos(kSoc) != 0U) {
        return ACL_ERROR_RT_INTERNAL_ERROR;
    }
    fe::PlatFormInfos infos;
    if (fe::PlatformInfoManager::GeInstance().GetRuntimePlatformInfosByDevice(0, infos) != 0U) {
        return ACL_ERROR_RT_INTERNAL_ERROR;
    }
    std::string value;
    if (!infos.GetPlatformResWithLock(label, key, value) || value.size() + 1 > maxLen) {
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    std::memcpy(val, value.c_str(), value.size() + 1);
    return RT_ERROR_NONE;
}
STANDIN rtError_t rtSetExceptionExtInfo(const rtArgsSizeInfo_t* const) { return RT_ERROR_NONE; }

STANDIN aclError aclrtCtxGetCurrentDefaultStream(aclrtStream* stream)
{
    static Stream defaultStream{0};
    *stream = &defaultStream;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtGetDeviceInfo(uint32_t, aclrtDevAttr attr, int64_t* value)
{
    switch (attr) {
        case ACL_DEV_ATTR_AICORE_CORE_NUM: *value = 24; return ACL_SUCCESS;
        case ACL_DEV_ATTR_VECTOR_CORE_NUM: *value = 48; return ACL_SUCCESS;
        default: *value = 0; return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    }
}
STANDIN aclError aclrtGetOpExecuteTimeout(uint32_t* const timeoutMs)
{
    *timeoutMs = 0;
    return ACL_SUCCESS;
}
STANDIN aclError aclrtRecordNotify(aclrtNotify, aclrtStream) { return ACL_SUCCESS; }
STANDIN aclError aclrtWaitAndResetNotify(aclrtNotify, aclrtStream, uint32_t) { return ACL_SUCCESS; }

// What no single-AI-Core-kernel launch reaches (AI CPU, fused MC2, model capture, debug overflow):
// refused, so that a path that did reach them would show.
STANDIN rtError_t rtAicpuKernelLaunchExWithArgs(const uint32_t, const char_t* const, const uint32_t,
                                                const rtAicpuArgsEx_t*, rtSmDesc_t* const, const rtStream_t,
                                                const uint32_t)
{
    return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
}
STANDIN rtError_t rtFusionLaunch(void* const, rtStream_t const, rtFusionArgsEx_t*)
{
    return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
}
STANDIN rtError_t rtRegisterAllKernel(const rtDevBinary_t*, void**) { return ACL_ERROR_RT_FEATURE_NOT_SUPPORT; }
STANDIN rtError_t rtStreamAddToModel(rtStream_t, rtModel_t) { return ACL_ERROR_RT_FEATURE_NOT_SUPPORT; }
STANDIN rtError_t rtRegStreamStateCallback(const char_t*, const rtStreamStateCallback) { return RT_ERROR_NONE; }
STANDIN rtError_t rtsNpuGetFloatOverFlowDebugStatus(void* outputAddrPtr, uint64_t outputSize, uint32_t, rtStream_t)
{
    std::memset(outputAddrPtr, 0, outputSize);
    return RT_ERROR_NONE;
}
STANDIN rtError_t rtsNpuClearFloatOverFlowDebugStatus(uint32_t, rtStream_t) { return RT_ERROR_NONE; }
namespace op::internal {
void aclnnAicpuFinalize() {}  // opbase's AI CPU task handlers are not built (no AI CPU op here)
}  // namespace op::internal
namespace transformer {
bool ShapeTransferAccordingToFormatExt::TransferShape(ge::Format, ge::Format, ge::DataType, gert::Shape&,
                                                      const ExtAxisOpValue&, const fe::PlatFormInfos*)
{
    std::fprintf(stderr, "cann_host: transformer::TransferShape (graph repository) is not available\n");
    std::abort();
}
}  // namespace transformer

// ---- dlog -----------------------------------------------------------------------------------------
int32_t CheckLogLevel(int32_t, int32_t logLevel) { return (logLevel >= LogThreshold() || logLevel == DLOG_ERROR) ? 1 : 0; }
// Some CANN headers declare it with C linkage: the same function under that name too.
extern "C" int32_t CheckLogLevelC(int32_t moduleId, int32_t logLevel) __asm__("CheckLogLevel");
extern "C" int32_t CheckLogLevelC(int32_t moduleId, int32_t logLevel) { return CheckLogLevel(moduleId, logLevel); }
void DlogVaList(int32_t, int32_t level, const char* fmt, va_list list)
{
    static const char* const kNames[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    char buf[2048];
    std::vsnprintf(buf, sizeof(buf), fmt, list);
    if (level == DLOG_ERROR) {
        g_lastError = buf;
    }
    if (level >= LogThreshold()) {
        std::fprintf(stderr, "[%s] %s%s", (level >= 0 && level <= DLOG_ERROR) ? kNames[level] : "LOG", buf,
                     std::strchr(buf, '\n') == nullptr ? "\n" : "");
    }
}
// An application's log line (torch_npu's error path writes one): to the dlog threshold as dlog.
STANDIN void aclAppLog(aclLogLevel logLevel, const char* func, const char* file, uint32_t line,
                       const char* fmt, ...)
{
    char text[1024];
    va_list list;
    va_start(list, fmt);
    std::vsnprintf(text, sizeof(text), fmt, list);
    va_end(list);
    const int32_t level = static_cast<int32_t>(logLevel);  // ACL_DEBUG .. ACL_ERROR: dlog's levels
    if (level >= LogThreshold() || level == DLOG_ERROR) {
        std::fprintf(stderr, "[app] %s (%s, %s:%u)\n", text, func, file, line);
    }
}
STANDIN const char* aclGetRecentErrMsg()
{
    static thread_local std::string reported;
    if (g_lastError.empty()) {
        return nullptr;
    }
    reported.swap(g_lastError);
    g_lastError.clear();
    return reported.c_str();
}
void DlogRecord(int32_t moduleId, int32_t level, const char* fmt, ...)
{
    va_list list;
    va_start(list, fmt);
    DlogVaList(moduleId, level, fmt, list);
    va_end(list);
}
extern "C" void DlogRecordC(int32_t moduleId, int32_t level, const char* fmt, ...) __asm__("DlogRecord");
extern "C" void DlogRecordC(int32_t moduleId, int32_t level, const char* fmt, ...)
{
    va_list list;
    va_start(list, fmt);
    DlogVaList(moduleId, level, fmt, list);
    va_end(list);
}

// ---- error_manager: messages go to the last-error slot aclGetRecentErrMsg reads ------------------
namespace error_message {
int32_t RegisterFormatErrorMessage(const char*, size_t) { return 0; }
int32_t ReportInnerErrMsg(const char*, const char*, uint32_t, const char* error_code, const char* format, ...)
{
    char buf[1024];
    va_list list;
    va_start(list, format);
    std::vsnprintf(buf, sizeof(buf), format, list);
    va_end(list);
    g_lastError = std::string(error_code) + ": " + buf;
    return 0;
}
int32_t ReportUserDefinedErrMsg(const char* error_code, const char* format, ...)
{
    char buf[1024];
    va_list list;
    va_start(list, format);
    std::vsnprintf(buf, sizeof(buf), format, list);
    va_end(list);
    g_lastError = std::string(error_code) + ": " + buf;
    return 0;
}
int32_t ReportPredefinedErrMsg(const char* error_code, const std::vector<const char*>& key,
                               const std::vector<const char*>& value)
{
    std::string msg = error_code;
    for (size_t i = 0; i < key.size() && i < value.size(); ++i) {
        msg += std::string(i == 0 ? ": " : ", ") + key[i] + "=" + value[i];
    }
    g_lastError = msg;
    return 0;
}
int32_t ReportPredefinedErrMsg(const char* error_code)
{
    g_lastError = error_code;
    return 0;
}
}  // namespace error_message

// ---- adump (dump off), msprof (profiling off) ----------------------------------------------------
STANDIN void* AdumpGetSizeInfoAddr(uint32_t, uint32_t& atomicIndex)
{
    atomicIndex = 0;
    return nullptr;
}
STANDIN void* AdumpGetDFXInfoAddrForDynamic(uint32_t, uint64_t& atomicIndex)
{
    atomicIndex = 0;
    return nullptr;
}
STANDIN int32_t AdumpAddExceptionOperatorInfoV2(const Adx::OperatorInfoV2&) { return 0; }
namespace Adx {
uint64_t AdumpGetDumpSwitch(const DumpType) { return 0; }
int32_t AdumpDumpTensorV2(const std::string&, const std::string&, const std::vector<TensorInfoV2>&, aclrtStream)
{
    return 0;
}
void AdumpPrintWorkSpace(const void*, const size_t, aclrtStream, const char*) {}
void AdumpPrintWorkSpace(const void*, const size_t, aclrtStream, const char*, bool) {}
int32_t AdumpRegisterCallback(uint32_t, AdumpCallback, AdumpCallback) { return 0; }
int32_t AdumpSaveToFile(const char*, size_t, const char*, SaveType) { return 0; }
}  // namespace Adx
namespace Adx {
void AdumpPrintAndGetTimeStampInfo(const void*, const size_t, aclrtStream, const char*,
                                   std::vector<MsprofAicTimeStampInfo>&)
{
}
void AdumpPrintSetConfig(const AdumpPrintConfig&) {}
}  // namespace Adx
STANDIN int32_t MsprofRegisterCallback(uint32_t, ProfCommandHandle) { return 0; }
STANDIN int32_t MsprofReportApi(uint32_t, const struct MsprofApi*) { return 0; }
STANDIN int32_t MsprofReportCompactInfo(uint32_t, const VOID_PTR, uint32_t) { return 0; }
STANDIN int32_t MsprofReportAdditionalInfo(uint32_t, const VOID_PTR, uint32_t) { return 0; }
STANDIN int32_t MsprofRegTypeInfo(uint16_t, uint32_t, const char*) { return 0; }
STANDIN uint64_t MsprofGetHashId(const char* hashInfo, size_t length)
{
    return std::hash<std::string>()(std::string(hashInfo, length));
}
STANDIN uint64_t MsprofSysCycleTime(void) { return 0; }

// ---- securec (libboundscheck): the functions used, with its return conventions ---------------------
STANDIN errno_t memcpy_s(void* dest, size_t destMax, const void* src, size_t count)
{
    if (dest == nullptr || src == nullptr || count > destMax) {
        return EINVAL;
    }
    std::memmove(dest, src, count);
    return EOK;
}
STANDIN errno_t memmove_s(void* dest, size_t destMax, const void* src, size_t count)
{
    return memcpy_s(dest, destMax, src, count);
}
STANDIN errno_t memset_s(void* dest, size_t destMax, int c, size_t count)
{
    if (dest == nullptr || count > destMax) {
        return EINVAL;
    }
    std::memset(dest, c, count);
    return EOK;
}
STANDIN errno_t strcpy_s(char* dest, size_t destMax, const char* src)
{
    if (dest == nullptr || src == nullptr || std::strlen(src) + 1 > destMax) {
        return EINVAL;
    }
    std::strcpy(dest, src);
    return EOK;
}
STANDIN errno_t strncpy_s(char* dest, size_t destMax, const char* src, size_t count)
{
    const size_t n = src == nullptr ? 0 : strnlen(src, count);
    if (dest == nullptr || src == nullptr || n + 1 > destMax) {
        return EINVAL;
    }
    std::memcpy(dest, src, n);
    dest[n] = '\0';
    return EOK;
}
STANDIN errno_t strcat_s(char* dest, size_t destMax, const char* src)
{
    const size_t d = dest == nullptr ? 0 : strnlen(dest, destMax);
    return dest == nullptr ? EINVAL : strcpy_s(dest + d, destMax - d, src);
}
STANDIN errno_t strncat_s(char* dest, size_t destMax, const char* src, size_t count)
{
    const size_t d = dest == nullptr ? 0 : strnlen(dest, destMax);
    return dest == nullptr ? EINVAL : strncpy_s(dest + d, destMax - d, src, count);
}
STANDIN int vsnprintf_s(char* dest, size_t destMax, size_t count, const char* format, va_list argList)
{
    if (dest == nullptr || destMax == 0) {
        return -1;
    }
    const size_t limit = count + 1 < destMax ? count + 1 : destMax;
    const int n = std::vsnprintf(dest, limit, format, argList);
    return (n < 0 || static_cast<size_t>(n) >= limit) ? -1 : n;
}
STANDIN int snprintf_s(char* dest, size_t destMax, size_t count, const char* format, ...)
{
    va_list list;
    va_start(list, format);
    const int n = vsnprintf_s(dest, destMax, count, format, list);
    va_end(list);
    return n;
}
STANDIN int sprintf_s(char* dest, size_t destMax, const char* format, ...)
{
    va_list list;
    va_start(list, format);
    const int n = vsnprintf_s(dest, destMax, destMax - 1, format, list);
    va_end(list);
    return n;
}
STANDIN int sscanf_s(const char* buffer, const char* format, ...)
{
    va_list list;
    va_start(list, format);
    const int n = std::vsscanf(buffer, format, list);  // numeric conversions only (as opbase uses it)
    va_end(list);
    return n;
}
