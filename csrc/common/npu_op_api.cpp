/**
 * @file npu_op_api.cpp
 * @brief CANN's op-API functions through torch_npu and the aclnn phases on the NPU (see the
 *        header). Built only with torch_npu; every torch_npu / op-plugin function called here is
 *        one the wheels export (tools/npu_abi_check/abi_check.py).
 */
#include "npu_op_api.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <dlfcn.h>

#include <utility>

#include "acl_dtype.h"
#include "op_plugin/include/npu_cpp_extension.h"
#include "torch_npu/csrc/framework/OpCommand.h"

namespace ascend_ema_adam::ops {

namespace {

struct CommonApi {
    decltype(&aclCreateTensor) createTensor;
    decltype(&aclDestroyTensor) destroyTensor;
    decltype(&aclCreateTensorList) createTensorList;
    decltype(&aclDestroyTensorList) destroyTensorList;
};

const CommonApi& Common()
{
    static const CommonApi api{
        NpuOpApiFunction<decltype(&aclCreateTensor)>("aclCreateTensor"),
        NpuOpApiFunction<decltype(&aclDestroyTensor)>("aclDestroyTensor"),
        NpuOpApiFunction<decltype(&aclCreateTensorList)>("aclCreateTensorList"),
        NpuOpApiFunction<decltype(&aclDestroyTensorList)>("aclDestroyTensorList")};
    return api;
}

/** aclGetRecentErrMsg of CANN's ACL library (libascendcl.so, which libtorch_npu.so needs, so it
 *  is loaded: looked up by name, no link-time dependency). */
const char* RecentErrMsg()
{
    using Fn = const char* (*)();
    static const auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "aclGetRecentErrMsg"));
    const char* message = fn != nullptr ? fn() : nullptr;
    return message != nullptr && *message != '\0' ? message : "(no message)";
}

aclTensor* CreateAclTensor(const at::Tensor& t)
{
    const int64_t storageElems = static_cast<int64_t>(t.storage().nbytes() / t.itemsize());
    return Common().createTensor(t.sizes().data(), t.dim(), ToAclDataType(t.scalar_type()),
                                 t.strides().data(), t.storage_offset(), ACL_FORMAT_ND,
                                 &storageElems, 1, const_cast<void*>(t.storage().data()));
}

}  // namespace

void* NpuOpApiSymbol(const char* name)
{
    void* sym = GetOpApiFuncAddr(name);
    TORCH_CHECK(sym != nullptr, "ascend_ema_adam: ", name, " not found in CANN's op-API "
                "libraries (is the ascend-ema-adam operator package installed, and "
                "ASCEND_CUSTOM_OPP_PATH set before torch_npu was imported?)");
    return sym;
}

void CheckAllOnOneNpu(const char* op,
                      std::initializer_list<std::pair<const char*, const at::Tensor*>> tensors)
{
    const at::Device device = tensors.begin()->second->device();
    for (const auto& [name, tensor] : tensors) {
        TORCH_CHECK(tensor->device() == device, op, ": ", name, " is on ", tensor->device(),
                    ", expected all tensors on ", device);
    }
}

void CheckNpuAclnnStatus(const char* api, aclnnStatus status, const std::string& where)
{
    TORCH_CHECK(status == 0, "call ", api, " failed (aclnn status ", status,
                "), detail: ", RecentErrMsg(), where);
}

void NpuAclTensorDeleter::operator()(aclTensor* t) const
{
    Common().destroyTensor(t);
}

void NpuAclTensorListDeleter::operator()(aclTensorList* list) const
{
    Common().destroyTensorList(list);
}

NpuAclTensorPtr ToNpuAclTensor(const at::Tensor& t)
{
    aclTensor* handle = CreateAclTensor(t);
    TORCH_CHECK(handle != nullptr, "aclCreateTensor failed: ", RecentErrMsg());
    return NpuAclTensorPtr(handle);
}

NpuAclTensorPtr ToNpuAclTensor(const std::optional<at::Tensor>& t)
{
    return t.has_value() ? ToNpuAclTensor(*t) : NpuAclTensorPtr();
}

NpuAclTensorListPtr ToNpuAclTensorList(at::TensorList tensors)
{
    std::vector<const aclTensor*> handles;
    handles.reserve(tensors.size());
    for (const at::Tensor& t : tensors) {
        handles.push_back(CreateAclTensor(t));
        if (handles.back() == nullptr) break;
    }
    aclTensorList* list = nullptr;
    if (handles.size() == tensors.size() &&
        (tensors.empty() || handles.back() != nullptr)) {
        list = Common().createTensorList(handles.data(), handles.size());
    }
    if (list == nullptr) {  // the list did not take the tensors
        for (const aclTensor* h : handles) {
            if (h != nullptr) Common().destroyTensor(h);
        }
        TORCH_CHECK(false, "aclCreateTensor / aclCreateTensorList failed: ", RecentErrMsg());
    }
    return NpuAclTensorListPtr(list);
}

aclrtStream CurrentNpuAclStream()
{
    return GetAclStream();
}

void EnqueueNpuPhase2(const char* api, NpuAclnnPhase2 phase2, aclOpExecutor* executor,
                      uint64_t workspaceSize, const at::TensorOptions& device, aclrtStream stream,
                      std::shared_ptr<const void> args, std::function<aclnnStatus()> beforeLaunch)
{
    // The workspace from the caching allocator on the current stream, held by the launch.
    at::Tensor workspace;
    if (workspaceSize > 0) {
        workspace = at::empty({static_cast<int64_t>(workspaceSize)}, device.dtype(at::kByte));
    }
    auto launch = [phase2, executor, workspaceSize, stream, workspace = std::move(workspace),
                   args = std::move(args), beforeLaunch = std::move(beforeLaunch)]() -> int {
        InitExecSubTheadCtx(stream);  // the stream's resources on the thread running launches
        if (beforeLaunch) {
            const aclnnStatus status = beforeLaunch();
            if (status != 0) return status;
        }
        void* address = workspaceSize > 0 ? const_cast<void*>(workspace.storage().data()) : nullptr;
        return phase2(address, workspaceSize, executor, stream);
    };
    at_npu::native::OpCommand::RunOpApiV2(api, launch);
}

void RunNpuAclnn(const char* api, NpuAclnnPhase2 phase2,
                 const std::function<aclnnStatus(uint64_t*, aclOpExecutor**)>& phase1,
                 std::shared_ptr<NpuLaunchArgs> args, const at::TensorOptions& device)
{
    const aclrtStream stream = CurrentNpuAclStream();
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    CheckNpuAclnnStatus(api, phase1(&workspaceSize, &executor));
    EnqueueNpuPhase2(api, phase2, executor, workspaceSize, device, stream, std::move(args));
}

}  // namespace ascend_ema_adam::ops
