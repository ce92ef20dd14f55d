/**
 * @file tensor_identity.h
 * @brief A tensor as a launch saw it, and the per-step comparisons that decide whether it is still
 *        that tensor: SeenTensor (address, dtype, device, sizes, strides, storage offset), the
 *        cache prefetches of loops that compare thousands of them, and the overlap test of a span
 *        against sorted, disjoint ones. Used by every prepared launch that is repeated (an
 *        operator's repeatable calls) and by FusedEmaAdamW's per-step checks of a cached group
 *        (optimizer_checks.cpp).
 */
#ifndef ASCEND_EMA_ADAM_OPS_TENSOR_IDENTITY_H
#define ASCEND_EMA_ADAM_OPS_TENSOR_IDENTITY_H

#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "memory_layout.h"

namespace ascend_ema_adam::ops {

/** How many tensors ahead the per-step comparison loops fetch what they will read: they visit
 *  thousands of scattered objects, none of them in the caches after a training step's forward
 *  and backward (each tensor's TensorImpl kPrefetchAhead ahead, its StorageImpl half as far). */
constexpr size_t kPrefetchAhead = 8;

/** Fetches the lines of t's TensorImpl (its storage, sizes, strides, dtype) into the caches. */
inline void PrefetchTensorImpl(const at::Tensor& t)
{
    const char* impl = reinterpret_cast<const char*>(t.unsafeGetTensorImpl());
    for (size_t line = 0; line < sizeof(c10::TensorImpl); line += 64) {
        __builtin_prefetch(impl + line);
    }
}

/** Fetches t's StorageImpl (data_ptr() reads it); its TensorImpl should be in the caches. */
inline void PrefetchStorageImpl(const at::Tensor& t)
{
    __builtin_prefetch(t.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl());
}

/** The prefetches of comparison loop position i of n: the TensorImpl of entry i + kPrefetchAhead
 *  and the StorageImpl of entry i + kPrefetchAhead / 2 (`at(j)`: entry j's tensor). */
template <class At>
inline void PrefetchAhead(size_t i, size_t n, const At& at)
{
    if (i + kPrefetchAhead < n) PrefetchTensorImpl(at(i + kPrefetchAhead));
    if (i + kPrefetchAhead / 2 < n) PrefetchStorageImpl(at(i + kPrefetchAhead / 2));
}

/** a == b, inline (IntArrayRef::equals calls memcmp: a tenth of a 2048-tensor run() then). */
inline bool SameInts(c10::IntArrayRef a, const c10::SmallVector<int64_t, 4>& b)
{
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < b.size(); ++i) {
        if (a[i] != b[i]) return false;
    }
    return true;
}

/** Whether `span` shares a byte with one of `disjoint` (sorted by start, pairwise disjoint, so
 *  sorted by end too: the first one ending after `span` starts is the only candidate that may
 *  begin before it ends). One binary search. */
inline bool TouchesSortedSpans(const std::vector<MemorySpan>& disjoint, const MemorySpan& span)
{
    const auto it = std::partition_point(disjoint.begin(), disjoint.end(),
                                         [&](const MemorySpan& u) { return u.end <= span.begin; });
    return it != disjoint.end() && SpansOverlap(*it, span);
}

/** A tensor as a launch saw it (sizes and strides inline: a step compares thousands of them,
 *  with caches a training step has emptied). */
struct SeenTensor {
    const void* data = nullptr;
    at::ScalarType dtype = at::ScalarType::Undefined;
    at::Device device = at::kCPU;
    c10::SmallVector<int64_t, 4> sizes;
    c10::SmallVector<int64_t, 4> strides;
    int64_t storageOffset = 0;

    explicit SeenTensor(const at::Tensor& t)
        : data(t.data_ptr()),
          dtype(t.scalar_type()),
          device(t.device()),
          sizes(t.sizes().begin(), t.sizes().end()),
          strides(t.strides().begin(), t.strides().end()),
          storageOffset(t.storage_offset())
    {
    }
    /** Same dtype, device, sizes and strides (the address aside). */
    bool SameDescription(const at::Tensor& t) const
    {
        return t.layout() == at::kStrided && t.scalar_type() == dtype && t.device() == device &&
               SameInts(t.sizes(), sizes) && SameInts(t.strides(), strides);
    }
    /** Same address (data_ptr(): a copy-on-write storage is copied first, so it has moved) and
     *  description: a held tensor still as the launch saw it. */
    bool Matches(const at::Tensor& t) const { return t.data_ptr() == data && SameDescription(t); }
    /** The storage address that puts element 0 of the tensor the launch described at t's first
     *  element (aclSet*TensorAddr set a storage address; the offset stays the launch's). */
    void* StorageAddressOf(const at::Tensor& t) const
    {
        return static_cast<char*>(t.data_ptr()) -
               storageOffset * static_cast<int64_t>(t.itemsize());
    }
};

}  // namespace ascend_ema_adam::ops

#endif  // ASCEND_EMA_ADAM_OPS_TENSOR_IDENTITY_H
