/**
 * @file acl_tensor.cpp
 * @brief aclCreateTensor / aclDestroyTensor and aclCreateTensorList / aclDestroyTensorList: view
 *        descriptions checked for consistency at creation, kept so that a destroyed or foreign
 *        handle is an error, not a crash.
 *
 * aclTensor objects come from a pool: slabs that are never freed, whose slots aclDestroyTensor
 * returns for reuse (their dims vectors keep their capacity). Whether a pointer is a live handle
 * is then a look-up among a few slab ranges plus the slot's flag, and a parameter group's
 * thousands of handles, created and destroyed at every optimizer step, cost no heap allocation
 * once the pool has grown to them.
 */
#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "acl_internal.h"

namespace ascend_ema_adam::acl {

namespace {

class TensorPool {
public:
    /** A free slot (not live yet); grows the pool by a slab when none is left. Caller holds mu. */
    aclTensor* Take()
    {
        if (free_.empty()) {
            Grow();
        }
        aclTensor* t = free_.back();
        free_.pop_back();
        return t;
    }

    /** Returns a live slot to the pool. Caller holds mu. */
    void Give(aclTensor* t)
    {
        t->live = false;
        free_.push_back(t);
    }

    /** `p` is a handle the pool handed out and nobody destroyed. Caller holds mu. */
    aclTensor* Live(const aclTensor* p) const
    {
        const auto address = reinterpret_cast<uintptr_t>(p);
        auto it = std::upper_bound(slabs_.begin(), slabs_.end(), address,
                                   [](uintptr_t a, const Slab& s) { return a < s.begin; });
        if (it == slabs_.begin()) {
            return nullptr;
        }
        --it;
        if (address >= it->end || (address - it->begin) % sizeof(aclTensor) != 0) {
            return nullptr;
        }
        aclTensor* t = it->slots.get() + (address - it->begin) / sizeof(aclTensor);
        return t->live ? t : nullptr;
    }

    std::mutex mu;
    std::unordered_set<const aclTensorList*> liveLists;  // few: a set is cheap enough

private:
    struct Slab {
        uintptr_t begin;
        uintptr_t end;
        std::unique_ptr<aclTensor[]> slots;
    };

    void Grow()
    {
        const size_t count = std::min<size_t>(kFirstSlab << slabs_.size(), kLargestSlab);
        Slab slab{0, 0, std::make_unique<aclTensor[]>(count)};
        slab.begin = reinterpret_cast<uintptr_t>(slab.slots.get());
        slab.end = slab.begin + count * sizeof(aclTensor);
        free_.reserve(free_.size() + count);
        for (size_t i = count; i-- > 0;) {
            free_.push_back(slab.slots.get() + i);
        }
        const auto at = std::upper_bound(slabs_.begin(), slabs_.end(), slab.begin,
                                         [](uintptr_t a, const Slab& s) { return a < s.begin; });
        slabs_.insert(at, std::move(slab));
    }

    static constexpr size_t kFirstSlab = 256;
    static constexpr size_t kLargestSlab = 16384;
    std::vector<Slab> slabs_;  // sorted by address
    std::vector<aclTensor*> free_;
};

/** Never destroyed, like the runtime state: handles may be checked during process exit. */
TensorPool& Pool()
{
    static TensorPool* pool = new TensorPool;
    return *pool;
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
    TensorPool& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    return pool.Live(tensor) != nullptr;
}

size_t FirstDeadTensor(const aclTensor* const* tensors, size_t n)
{
    TensorPool& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    for (size_t i = 0; i < n; ++i) {
        if (pool.Live(tensors[i]) == nullptr) {
            return i;
        }
    }
    return n;
}

bool IsLiveTensorList(const aclTensorList* list)
{
    TensorPool& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    return pool.liveLists.count(list) != 0;
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
        // Texts for the refusals only: a valid description is checked on the caller's arrays.
        const auto text = [](const int64_t* dims, uint64_t n) {
            return ShapeToString(std::vector<int64_t>(dims, dims + n));
        };
        const auto view = [&] {
            return "the view " + text(viewDims, viewDimsNum) + " with stride " +
                   text(stride, viewDimsNum);
        };
        int64_t viewNumel = 0;
        int64_t storageNumel = 0;
        if (!CheckedNumel(viewDims, viewDimsNum, &viewNumel)) {
            return Reject("viewDims " + text(viewDims, viewDimsNum) +
                          " has a negative size or more than 2^63 elements");
        }
        if (!CheckedNumel(storageDims, storageDimsNum, &storageNumel)) {
            return Reject("storageDims " + text(storageDims, storageDimsNum) +
                          " has a negative size or more than 2^63 elements");
        }
        if (offset < 0) {
            return Reject("offset is " + std::to_string(offset) + ", expected >= 0");
        }
        for (uint64_t i = 0; i < viewDimsNum; ++i) {
            if (stride[i] < 0) {
                return Reject("stride " + text(stride, viewDimsNum) +
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
                    return Reject(view() + " overflows int64");
                }
            }
            if (last >= storageNumel) {
                return Reject(view() + " and offset " + std::to_string(offset) +
                              " reaches element " + std::to_string(last) + ", but storageDims " +
                              text(storageDims, storageDimsNum) + " hold " +
                              std::to_string(storageNumel) + " elements");
            }
        }
        TensorPool& pool = Pool();
        std::lock_guard<std::mutex> lock(pool.mu);
        aclTensor* t = pool.Take();
        t->viewDims.assign(viewDims, viewDims + viewDimsNum);
        t->strides.assign(stride, stride + viewDimsNum);
        t->storageDims.assign(storageDims, storageDims + storageDimsNum);
        t->offset = offset;
        t->dataType = dataType;
        t->format = format;
        t->data = tensorData;
        t->live = true;
        return t;
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
    TensorPool& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    aclTensor* t = pool.Live(tensor);
    if (t == nullptr) {
        AddErrorMessage(
            "aclDestroyTensor: tensor is not a live aclTensor (already destroyed, or not from "
            "aclCreateTensor)");
        return ACLNN_ERR_PARAM_INVALID;
    }
    pool.Give(t);
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
        TensorPool& pool = Pool();
        std::lock_guard<std::mutex> lock(pool.mu);
        pool.liveLists.insert(list.get());
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
    size_t size = 0;
    size_t firstDead = 0;
    {
        TensorPool& pool = Pool();
        std::lock_guard<std::mutex> lock(pool.mu);
        if (pool.liveLists.erase(array) == 0) {  // not live: its memory may not be read
            AddErrorMessage(
                "aclDestroyTensorList: array is not a live aclTensorList (already destroyed, or "
                "not from aclCreateTensorList)");
            return ACLNN_ERR_PARAM_INVALID;
        }
        size = firstDead = array->tensors.size();
        for (size_t i = 0; i < size; ++i) {
            const aclTensor* entry = array->tensors[i];
            if (aclTensor* t = pool.Live(entry)) {
                pool.Give(t);
            } else if (entry != nullptr && firstDead == size) {
                firstDead = i;
            }
        }
    }
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
