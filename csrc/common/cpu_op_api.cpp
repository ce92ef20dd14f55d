/**
 * @file cpu_op_api.cpp
 * @brief The CPU op-API library and the aclnn calls every CPU kernel makes (see the header).
 */
#include "cpu_op_api.h"

#include "torch_parallel_for.h"

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace ascend_ema_adam::ops {

namespace {

/** lib/libascend_ema_adam_acl.so next to this module, opened once. */
void* CpuOpApiLibrary()
{
    static void* const handle = [] {
        Dl_info self{};
        TORCH_CHECK(dladdr(reinterpret_cast<void*>(&CpuOpApiLibrary), &self) != 0 &&
                        self.dli_fname,
                    "ascend_ema_adam: cannot locate the _C module");
        std::string path(self.dli_fname);
        path = path.substr(0, path.find_last_of('/')) + "/lib/libascend_ema_adam_acl.so";
        void* opened = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        TORCH_CHECK(opened != nullptr, "ascend_ema_adam: cannot load ", path, ": ", dlerror());
        return opened;
    }();
    return handle;
}

struct CommonApi {
    decltype(&aclCreateTensor) createTensor;
    decltype(&aclDestroyTensor) destroyTensor;
    decltype(&aclCreateTensorList) createTensorList;
    decltype(&aclDestroyTensorList) destroyTensorList;
    decltype(&aclGetRecentErrMsg) recentErrMsg;
};

const CommonApi& Common()
{
    static const CommonApi api{
        CpuOpApiFunction<decltype(&aclCreateTensor)>("aclCreateTensor"),
        CpuOpApiFunction<decltype(&aclDestroyTensor)>("aclDestroyTensor"),
        CpuOpApiFunction<decltype(&aclCreateTensorList)>("aclCreateTensorList"),
        CpuOpApiFunction<decltype(&aclDestroyTensorList)>("aclDestroyTensorList"),
        CpuOpApiFunction<decltype(&aclGetRecentErrMsg)>("aclGetRecentErrMsg")};
    return api;
}

/** aclCreateTensor of t's view (sizes, strides, storage offset) over its whole storage. */
aclTensor* CreateAclTensor(const at::Tensor& t, bool mutated)
{
    const int64_t storageElems = static_cast<int64_t>(t.storage().nbytes() / t.itemsize());
    void* data = mutated ? t.storage().mutable_data() : const_cast<void*>(t.storage().data());
    return Common().createTensor(t.sizes().data(), t.dim(), ToAclDataType(t.scalar_type()),
                                 t.strides().data(), t.storage_offset(), ACL_FORMAT_ND,
                                 &storageElems, 1, data);
}

}  // namespace

void CheckAclnnStatus(const char* api, aclnnStatus status, const std::string& where)
{
    if (status == ACLNN_SUCCESS) return;
    const char* detail = Common().recentErrMsg();
    TORCH_CHECK(false, "call ", api, " failed (aclnn status ", status,
                "), detail: ", detail != nullptr ? detail : "(no message)", where);
}

void* CpuOpApiSymbol(const char* name)
{
    void* sym = dlsym(CpuOpApiLibrary(), name);
    TORCH_CHECK(sym != nullptr, "ascend_ema_adam: ", name, " not found in the CPU ACL library");
    return sym;
}

void AclTensorDeleter::operator()(aclTensor* t) const
{
    Common().destroyTensor(t);
}

AclTensorPtr ToAclTensor(const at::Tensor& t, bool mutated)
{
    return AclTensorPtr(CreateAclTensor(t, mutated));
}

void AclTensorListDeleter::operator()(aclTensorList* list) const
{
    Common().destroyTensorList(list);
}

AclTensorListPtr ToAclTensorList(at::TensorList tensors, bool mutated)
{
    std::vector<const aclTensor*> handles(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        handles[i] = CreateAclTensor(tensors[i], mutated);
    }
    aclTensorList* list = Common().createTensorList(handles.data(), handles.size());
    if (list == nullptr) {  // out of host memory: the list did not take the tensors
        for (const aclTensor* h : handles) {
            if (h != nullptr) Common().destroyTensor(h);
        }
        TORCH_CHECK(false, "aclCreateTensorList failed: ", Common().recentErrMsg());
    }
    return AclTensorListPtr(list);
}

void CheckAllOnCpu(const char* op,
                   std::initializer_list<std::pair<const char*, const at::Tensor*>> tensors)
{
    for (const auto& [name, tensor] : tensors) {
        TORCH_CHECK(tensor->device().is_cpu(), op, ": ", name, " is on ", tensor->device(),
                    ", expected all tensors on cpu");
    }
}

void RunAclnn(const char* api, AclnnPhase2 phase2,
              const std::function<aclnnStatus(uint64_t*, aclOpExecutor**)>& phase1)
{
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    FollowTorchThreads();  // phase 1 fixes the executor's thread count
    CheckAclnnStatus(api, phase1(&workspaceSize, &executor));
    const at::Tensor workspace = at::empty({static_cast<int64_t>(workspaceSize)},
                                           at::TensorOptions().dtype(at::kByte));
    // The null stream is the CPU device's synchronous default stream: done when this returns.
    CheckAclnnStatus(api, phase2(workspaceSize > 0 ? workspace.data_ptr() : nullptr, workspaceSize,
                            executor, nullptr));
}

namespace {

/** Whether ASCEND_EMA_ADAM_THREAD_POOL asks for the CPU device's own pool ("own"); "torch" or
 *  unset: torch's threads. Throws c10::Error for anything else. */
bool OwnPoolRequested()
{
    const char* env = std::getenv("ASCEND_EMA_ADAM_THREAD_POOL");
    if (env == nullptr || *env == '\0' || std::strcmp(env, "torch") == 0) {
        return false;
    }
    TORCH_CHECK(std::strcmp(env, "own") == 0, "ASCEND_EMA_ADAM_THREAD_POOL is '", env,
                "', expected 'torch' (torch's intra-op threads, the default) or 'own' (the CPU "
                "device's own pool)");
    return true;
}

}  // namespace

const char* FollowTorchThreads()
{
    static const auto setThreads =
        CpuOpApiFunction<decltype(&aeaSetCpuThreads)>("aeaSetCpuThreads");
    static const auto setParallelFor =
        CpuOpApiFunction<decltype(&aeaSetCpuParallelFor)>("aeaSetCpuParallelFor");
    static std::atomic<int> ownPool{-1};  // what the device was last told (-1: nothing yet)
    const int own = OwnPoolRequested() ? 1 : 0;
    if (ownPool.exchange(own, std::memory_order_relaxed) != own) {
        setParallelFor(own != 0 ? nullptr : &TorchParallelFor, nullptr);
    }
    const int threads = at::get_num_threads();
    setThreads(threads > 0 ? static_cast<uint32_t>(threads) : 0U);
    return own != 0 ? "own" : "torch";
}

CpuThreadsInUse CpuThreads()
{
    static const auto getThreads =
        CpuOpApiFunction<decltype(&aeaGetCpuThreads)>("aeaGetCpuThreads");
    const char* pool = FollowTorchThreads();
    uint32_t next = 0, last = 0;
    const aclError status = getThreads(&next, &last);
    const char* detail = Common().recentErrMsg();
    TORCH_CHECK(status == ACL_SUCCESS, detail != nullptr ? detail : "aeaGetCpuThreads failed");
    return {next, last, pool};
}

std::string CpuAdam8bitPath()
{
    static const auto getPath =
        CpuOpApiFunction<decltype(&aeaGetCpuAdam8bitPath)>("aeaGetCpuAdam8bitPath");
    const char* path = nullptr;
    const aclError status = getPath(&path);
    const char* detail = Common().recentErrMsg();
    TORCH_CHECK(status == ACL_SUCCESS, detail != nullptr ? detail : "aeaGetCpuAdam8bitPath failed");
    return path;
}

}  // namespace ascend_ema_adam::ops
