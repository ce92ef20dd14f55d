/**
 * @file acl_tensor.cpp
 * @brief aclCreateTensor / aclDestroyTensor and aclCreateTensorList / aclDestroyTensorList: view
 *        descriptions checked for consistency at creation, tensors and lists kept in a registry so
 *        that a destroyed or foreign handle is an error, not a crash.
 */
#include <mutex>
#include <unordered_set>

#include "acl_internal.h"

namespace ascend_ema_adam::acl {

namespace {

struct TensorRegistry {
    std::mutex mu;
    std::unordered_set<const aclTensor*> live;
    std::unordered_set<const aclTensorList*> liveLists;
};

/** Never destroyed, like the runtime state: handles may be checked during process exit. */
TensorRegistry& Registry()
{
    static TensorRegistry* registry = new TensorRegistry;
    return *registry;
}

const char* FormatName(aclFormat format)
{
    switch (format) {
        case ACL_FORMAT_UNDEFINED: return "ACL_FORMAT_UNDEFINED";
        case ACL_FORMAT_NCHW: return "ACL_FORMAT_NCHW";
        case ACL_FORMAT_NHWC: return "ACL_FORMAT_NHWC";
        case ACL_FORMAT_ND: return "ACL_FORMAT_ND";
        case ACL_FORMAT_NC1HWC0: return "ACL_FORMAT_NC1HWC0";
        case ACL_FORMAT_FRACTAL_Z: return "ACL_FORMAT_FRACTAL_Z";
        case ACL_FORMAT_NC1HWC0_C04: return "ACL_FORMAT_NC1HWC0_C04";
        case ACL_FORMAT_HWCN: return "ACL_FORMAT_HWCN";
        case ACL_FORMAT_NDHWC: return "ACL_FORMAT_NDHWC";
        case ACL_FORMAT_FRACTAL_NZ: return "ACL_FORMAT_FRACTAL_NZ";
        case ACL_FORMAT_NCDHW: return "ACL_FORMAT_NCDHW";
        case ACL_FORMAT_NDC1HWC0: return "ACL_FORMAT_NDC1HWC0";
        case ACL_FRACTAL_Z_3D: return "ACL_FRACTAL_Z_3D";
        case ACL_FORMAT_NC: return "ACL_FORMAT_NC";
        case ACL_FORMAT_NCL: return "ACL_FORMAT_NCL";
        case ACL_FORMAT_FRACTAL_NZ_C0_16: return "ACL_FORMAT_FRACTAL_NZ_C0_16";
        case ACL_FORMAT_FRACTAL_NZ_C0_32: return "ACL_FORMAT_FRACTAL_NZ_C0_32";
        case ACL_FORMAT_FRACTAL_NZ_C0_2: return "ACL_FORMAT_FRACTAL_NZ_C0_2";
        case ACL_FORMAT_FRACTAL_NZ_C0_4: return "ACL_FORMAT_FRACTAL_NZ_C0_4";
        case ACL_FORMAT_FRACTAL_NZ_C0_8: return "ACL_FORMAT_FRACTAL_NZ_C0_8";
    }
    return "unknown aclFormat";
}

aclTensor* Reject(std::string reason)
{
    AddErrorMessage("aclCreateTensor: " + std::move(reason));
    return nullptr;
}

/** Product of dims into *out; false on a negative dim or int64 overflow. */
bool CheckedNumel(const int64_t* dims, uint64_t n, int64_t* out)
{
    int64_t numel = 1;
    for (uint64_t i = 0; i < n; ++i) {
        if (dims[i] < 0 || __builtin_mul_overflow(numel, dims[i], &numel)) {
            return false;
        }
    }
    *out = numel;
    return true;
}

}  // namespace

std::string DataTypeToString(aclDataType dtype)
{
    return DescribeDtype(static_cast<int32_t>(dtype));
}

std::string FormatToString(aclFormat format)
{
    return std::string(FormatName(format)) + " (" + std::to_string(static_cast<int>(format)) + ")";
}

bool IsLiveTensor(const aclTensor* tensor)
{
    TensorRegistry& r = Registry();
    std::lock_guard<std::mutex> lock(r.mu);
    return r.live.count(tensor) != 0;
}

size_t FirstDeadTensor(const aclTensor* const* tensors, size_t n)
{
    TensorRegistry& r = Registry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (size_t i = 0; i < n; ++i) {
        if (r.live.count(tensors[i]) == 0) {
            return i;
        }
    }
    return n;
}

bool IsLiveTensorList(const aclTensorList* list)
{
    TensorRegistry& r = Registry();
    std::lock_guard<std::mutex> lock(r.mu);
    return r.liveLists.count(list) != 0;
}

}  // namespace ascend_ema_adam::acl

using namespace ascend_ema_adam::acl;  // the C entry points below share the helpers above

extern "C" {

aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t* stride, int64_t offset, aclFormat format,
                           const int64_t* storageDims, uint64_t storageDimsNum, void* tensorData)
{
    try {
        if (viewDimsNum > 0 && (viewDims == nullptr || stride == nullptr)) {
            return Reject(std::string(viewDims == nullptr ? "viewDims" : "stride") +
                          " is null but viewDimsNum is " + std::to_string(viewDimsNum));
        }
        if (storageDimsNum > 0 && storageDims == nullptr) {
            return Reject("storageDims is null but storageDimsNum is " +
                          std::to_string(storageDimsNum));
        }
        auto t = std::make_unique<aclTensor>();
        t->viewDims.assign(viewDims, viewDims + viewDimsNum);
        t->strides.assign(stride, stride + viewDimsNum);
        t->storageDims.assign(storageDims, storageDims + storageDimsNum);
        t->offset = offset;
        t->dataType = dataType;
        t->format = format;
        t->data = tensorData;

        int64_t viewNumel = 0;
        int64_t storageNumel = 0;
        if (!CheckedNumel(viewDims, viewDimsNum, &viewNumel)) {
            return Reject("viewDims " + ShapeToString(t->viewDims) +
                          " has a negative size or more than 2^63 elements");
        }
        if (!CheckedNumel(storageDims, storageDimsNum, &storageNumel)) {
            return Reject("storageDims " + ShapeToString(t->storageDims) +
                          " has a negative size or more than 2^63 elements");
        }
        if (offset < 0) {
            return Reject("offset is " + std::to_string(offset) + ", expected >= 0");
        }
        for (int64_t s : t->strides) {
            if (s < 0) {
                return Reject("stride " + ShapeToString(t->strides) +
                              " has a negative stride (not supported)");
            }
        }
        if (viewNumel > 0) {
            // The view's last element: offset + sum((size - 1) * stride) must lie in the storage.
            int64_t last = offset;
            for (uint64_t i = 0; i < viewDimsNum; ++i) {
                int64_t reach = 0;
                if (__builtin_mul_overflow(viewDims[i] - 1, stride[i], &reach) ||
                    __builtin_add_overflow(last, reach, &last)) {
                    return Reject("the view " + ShapeToString(t->viewDims) + " with stride " +
                                  ShapeToString(t->strides) + " overflows int64");
                }
            }
            if (last >= storageNumel) {
                return Reject("the view " + ShapeToString(t->viewDims) + " with stride " +
                              ShapeToString(t->strides) + " and offset " +
                              std::to_string(offset) + " reaches element " + std::to_string(last) +
                              ", but storageDims " + ShapeToString(t->storageDims) + " hold " +
                              std::to_string(storageNumel) + " elements");
            }
        }
        TensorRegistry& r = Registry();
        std::lock_guard<std::mutex> lock(r.mu);
        r.live.insert(t.get());
        return t.release();
    } catch (const std::exception& e) {
        return Reject(std::string("internal error: ") + e.what());
    }
}

aclnnStatus aclDestroyTensor(const aclTensor* tensor)
{
    if (tensor == nullptr) {
        AddErrorMessage("aclDestroyTensor: tensor is null");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    {
        TensorRegistry& r = Registry();
        std::lock_guard<std::mutex> lock(r.mu);
        if (r.live.erase(tensor) == 0) {
            AddErrorMessage(
                "aclDestroyTensor: tensor is not a live aclTensor (already destroyed, or not from "
                "aclCreateTensor)");
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    delete tensor;
    return ACLNN_SUCCESS;
}

aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size)
{
    try {
        if (value == nullptr && size > 0) {
            AddErrorMessage("aclCreateTensorList: value is null but size is " +
                            std::to_string(size));
            return nullptr;
        }
        auto list = std::make_unique<aclTensorList>();
        list->tensors.assign(value, value + size);
        TensorRegistry& r = Registry();
        std::lock_guard<std::mutex> lock(r.mu);
        r.liveLists.insert(list.get());
        return list.release();
    } catch (const std::exception& e) {
        AddErrorMessage(std::string("aclCreateTensorList: internal error: ") + e.what());
        return nullptr;
    }
}

aclnnStatus aclDestroyTensorList(const aclTensorList* array)
{
    if (array == nullptr) {
        AddErrorMessage("aclDestroyTensorList: array is null");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    size_t firstDead = array->tensors.size();
    std::vector<const aclTensor*> owned;  // the live entries, each once
    {
        TensorRegistry& r = Registry();
        std::lock_guard<std::mutex> lock(r.mu);
        if (r.liveLists.erase(array) == 0) {
            AddErrorMessage(
                "aclDestroyTensorList: array is not a live aclTensorList (already destroyed, or "
                "not from aclCreateTensorList)");
            return ACLNN_ERR_PARAM_INVALID;
        }
        owned.reserve(array->tensors.size());
        for (size_t i = 0; i < array->tensors.size(); ++i) {
            const aclTensor* t = array->tensors[i];
            if (r.live.erase(t) != 0) {
                owned.push_back(t);
            } else if (t != nullptr && firstDead == array->tensors.size()) {
                firstDead = i;
            }
        }
    }
    for (const aclTensor* t : owned) {
        delete t;
    }
    const size_t size = array->tensors.size();
    delete array;
    if (firstDead != size) {
        AddErrorMessage("aclDestroyTensorList: entry " + std::to_string(firstDead) +
                        " was not a live aclTensor (destroyed on its own, or held twice); the "
                        "list and its live tensors are destroyed");
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

}  // extern "C"
