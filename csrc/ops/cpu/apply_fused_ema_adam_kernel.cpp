/**
 * @file apply_fused_ema_adam_kernel.cpp
 * @brief CPU kernel of ascend_ema_adam::apply_fused_ema_adam_: the tensors go through our aclnn
 *        two phases (the same host layer NPU users reach), with their real sizes, strides and
 *        storage offsets, and a workspace from the torch allocator. All validation is aclnn's;
 *        this file only maps its status and message to a Python exception.
 *
 * Our CPU ACL library exports CANN's symbol names (aclCreateTensor, ...). On an Ascend machine
 * CANN's libraries are loaded too, so the functions are looked up in our library's own handle
 * (dlopen + dlsym, as torch_npu's EXEC_NPU_CMD does for libopapi) instead of by global name.
 */
#include <ATen/ops/empty.h>
#include <dlfcn.h>
#include <torch/library.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_apply_fused_ema_adam.h"

namespace {

/** The CPU op-API functions, from lib/libascend_ema_adam_acl.so next to this module. */
struct CpuOpApi {
    decltype(&aclCreateTensor) createTensor;
    decltype(&aclDestroyTensor) destroyTensor;
    decltype(&aclnnApplyFusedEmaAdamGetWorkspaceSize) getWorkspaceSize;
    decltype(&aclnnApplyFusedEmaAdam) run;
    decltype(&aclGetRecentErrMsg) recentErrMsg;

    static const CpuOpApi& Get()
    {
        static const CpuOpApi api = Load();
        return api;
    }

private:
    template <class F>
    static F Symbol(void* handle, const char* name)
    {
        void* sym = dlsym(handle, name);
        TORCH_CHECK(sym != nullptr, "ascend_ema_adam: ", name, " not found in the CPU ACL library");
        return reinterpret_cast<F>(sym);
    }

    static CpuOpApi Load()
    {
        Dl_info self{};
        TORCH_CHECK(dladdr(reinterpret_cast<void*>(&CpuOpApi::Get), &self) != 0 && self.dli_fname,
                    "ascend_ema_adam: cannot locate the _C module");
        std::string path(self.dli_fname);
        path = path.substr(0, path.find_last_of('/')) + "/lib/libascend_ema_adam_acl.so";
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        TORCH_CHECK(handle != nullptr, "ascend_ema_adam: cannot load ", path, ": ", dlerror());
        CpuOpApi api{};
        api.createTensor = Symbol<decltype(api.createTensor)>(handle, "aclCreateTensor");
        api.destroyTensor = Symbol<decltype(api.destroyTensor)>(handle, "aclDestroyTensor");
        api.getWorkspaceSize = Symbol<decltype(api.getWorkspaceSize)>(
            handle, "aclnnApplyFusedEmaAdamGetWorkspaceSize");
        api.run = Symbol<decltype(api.run)>(handle, "aclnnApplyFusedEmaAdam");
        api.recentErrMsg = Symbol<decltype(api.recentErrMsg)>(handle, "aclGetRecentErrMsg");
        return api;
    }
};

aclDataType ToAclDataType(at::ScalarType type)
{
    switch (type) {
        case at::kFloat: return ACL_FLOAT;
        case at::kHalf: return ACL_FLOAT16;
        case at::kBFloat16: return ACL_BF16;
        case at::kLong: return ACL_INT64;
        case at::kDouble: return ACL_DOUBLE;
        case at::kInt: return ACL_INT32;
        default: return ACL_DT_UNDEFINED;  // rejected by phase 1 with the argument's name
    }
}

struct AclTensorDeleter {
    void operator()(aclTensor* t) const { CpuOpApi::Get().destroyTensor(t); }
};
using AclTensorPtr = std::unique_ptr<aclTensor, AclTensorDeleter>;

/** A view of the tensor's storage: sizes, strides, storage offset, whole-storage dims. */
AclTensorPtr ToAclTensor(const at::Tensor& t, bool mutated)
{
    const std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
    const std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
    const int64_t storageElems = static_cast<int64_t>(t.storage().nbytes() / t.itemsize());
    void* data = mutated ? t.storage().mutable_data() : const_cast<void*>(t.storage().data());
    return AclTensorPtr(CpuOpApi::Get().createTensor(sizes.data(), sizes.size(), ToAclDataType(t.scalar_type()),
                                        strides.data(), t.storage_offset(), ACL_FORMAT_ND,
                                        &storageElems, 1, data));
}

void ApplyFusedEmaAdamCpu(const at::Tensor& grad, const at::Tensor& var, const at::Tensor& m,
                          const at::Tensor& v, const at::Tensor& s, const at::Tensor& step,
                          double lr, double emaDecay, double beta1, double beta2, double eps,
                          int64_t mode, bool biasCorrection, double weightDecay)
{
    const std::array<std::pair<const char*, const at::Tensor*>, 6> all = {{
        {"grad", &grad}, {"var", &var}, {"m", &m}, {"v", &v}, {"s", &s}, {"step", &step}}};
    for (const auto& [name, tensor] : all) {
        TORCH_CHECK(tensor->device().is_cpu(), "apply_fused_ema_adam_: ", name,
                    " is on ", tensor->device(), ", expected all tensors on cpu");
    }
    AclTensorPtr aclGrad = ToAclTensor(grad, false);
    AclTensorPtr aclVar = ToAclTensor(var, true);
    AclTensorPtr aclM = ToAclTensor(m, true);
    AclTensorPtr aclV = ToAclTensor(v, true);
    AclTensorPtr aclS = ToAclTensor(s, true);
    AclTensorPtr aclStep = ToAclTensor(step, false);

    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    const CpuOpApi& api = CpuOpApi::Get();
    aclnnStatus status = api.getWorkspaceSize(
        aclGrad.get(), aclVar.get(), aclM.get(), aclV.get(), aclS.get(), aclStep.get(), lr,
        emaDecay, beta1, beta2, eps, mode, biasCorrection, weightDecay, &workspaceSize, &executor);
    TORCH_CHECK(status == ACLNN_SUCCESS, "call aclnnApplyFusedEmaAdam failed (aclnn status ",
                status, "), detail: ", api.recentErrMsg());
    const at::Tensor workspace = at::empty({static_cast<int64_t>(workspaceSize)},
                                           at::TensorOptions().dtype(at::kByte));
    // The null stream is the CPU device's synchronous default stream: done when this returns.
    status = api.run(workspaceSize > 0 ? workspace.data_ptr() : nullptr,
                                    workspaceSize, executor, nullptr);
    TORCH_CHECK(status == ACLNN_SUCCESS, "call aclnnApplyFusedEmaAdam failed (aclnn status ",
                status, "), detail: ", api.recentErrMsg());
}

}  // namespace

TORCH_LIBRARY_IMPL(ascend_ema_adam, CPU, m)
{
    m.impl("apply_fused_ema_adam_", &ApplyFusedEmaAdamCpu);
}
