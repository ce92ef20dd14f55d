/**
 * @file acl_view.cpp
 * @brief Views, overlap and staging (see the header).
 */
#include "acl_view.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "data_type.h"

namespace ascend_ema_adam::acl {

namespace {

constexpr uint64_t kStagingAlign = 64;  // each staged copy starts on a cache line

/** Addresses [begin, end) from a view's first to past its last byte (empty for an empty view). */
std::pair<uintptr_t, uintptr_t> ByteRange(const aclTensor* t)
{
    if (Numel(t->viewDims) == 0) {
        return {0, 0};
    }
    int64_t lastIndex = 0;
    for (size_t i = 0; i < t->viewDims.size(); ++i) {
        lastIndex += (t->viewDims[i] - 1) * t->strides[i];
    }
    const auto begin = reinterpret_cast<uintptr_t>(FirstElement(t));
    return {begin, begin + static_cast<uintptr_t>(lastIndex + 1) * ElemBytes(t->dataType)};
}

/** Copies a view to or from its row-major packed copy; innermost unit-stride runs as one block. */
void CopyView(const View& view, char* packed, bool toPacked)
{
    const uint32_t elemBytes = view.elemBytes;
    const size_t rank = view.sizes.size();
    const int64_t inner = rank ? view.sizes[rank - 1] : 1;
    const int64_t innerStride = rank ? view.strides[rank - 1] : 1;
    const int64_t outer = inner ? Numel(view.sizes) / inner : 0;
    std::vector<int64_t> index(rank ? rank - 1 : 0, 0);
    int64_t base = 0;  // element offset of the current inner row
    for (int64_t row = 0; row < outer; ++row) {
        char* elem = view.first + base * elemBytes;
        if (innerStride == 1) {
            const size_t bytes = static_cast<size_t>(inner) * elemBytes;
            toPacked ? std::memcpy(packed, elem, bytes) : std::memcpy(elem, packed, bytes);
            packed += bytes;
        } else {
            for (int64_t k = 0; k < inner; ++k, packed += elemBytes) {
                char* e = elem + k * innerStride * elemBytes;
                toPacked ? std::memcpy(packed, e, elemBytes) : std::memcpy(e, packed, elemBytes);
            }
        }
        for (size_t d = index.size(); d-- > 0;) {  // odometer over the outer dims
            base += view.strides[d];
            if (++index[d] < view.sizes[d]) {
                break;
            }
            base -= view.sizes[d] * view.strides[d];
            index[d] = 0;
        }
    }
}

/**
 * Sorts spans by start, cheaply when they come in a few ascending runs: the tensors of one list
 * often lie in address order (parameters and gradients in a framework's flat buffers, or
 * allocated one after the other), so the runs are merged (O(n log runs)); many runs get a plain
 * sort.
 */
void SortByStart(std::vector<MemorySpan>* spans)
{
    const auto byStart = [](const MemorySpan& a, const MemorySpan& b) { return a.begin < b.begin; };
    constexpr size_t kMaxRuns = 64;
    std::vector<size_t> bounds = {0};  // the runs are [bounds[k], bounds[k + 1])
    for (size_t i = 1; i < spans->size() && bounds.size() <= kMaxRuns; ++i) {
        if ((*spans)[i].begin < (*spans)[i - 1].begin) {
            bounds.push_back(i);
        }
    }
    if (bounds.size() > kMaxRuns) {
        std::sort(spans->begin(), spans->end(), byStart);
        return;
    }
    bounds.push_back(spans->size());
    while (bounds.size() > 2) {  // merge neighbouring runs until one is left
        std::vector<size_t> merged = {0};
        for (size_t k = 0; k + 2 < bounds.size(); k += 2) {
            std::inplace_merge(spans->begin() + bounds[k], spans->begin() + bounds[k + 1],
                               spans->begin() + bounds[k + 2], byStart);
            merged.push_back(bounds[k + 2]);
        }
        if (bounds.size() % 2 == 0) {  // an odd number of runs: the last one stays as it is
            merged.push_back(bounds.back());
        }
        bounds.swap(merged);
    }
}

}  // namespace

uint32_t ElemBytes(aclDataType dtype)
{
    const DataTypeInfo* info = FindDataTypeByCode(static_cast<int32_t>(dtype));
    if (info == nullptr) {
        throw std::logic_error("no element size for dtype " + DataTypeToString(dtype));
    }
    return info->size;
}

char* FirstElement(const aclTensor* t)
{
    char* data = static_cast<char*>(t->data);
    return data == nullptr ? nullptr
                           : data + t->offset * static_cast<int64_t>(ElemBytes(t->dataType));
}

bool IsContiguous(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides)
{
    int64_t expected = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
        if (sizes[i] != 1 && strides[i] != expected) {
            return false;
        }
        expected *= sizes[i];
    }
    return true;
}

bool HasDistinctElements(const aclTensor* t)
{
    if (IsContiguous(t->viewDims, t->strides) || Numel(t->viewDims) == 0) {
        return true;  // the common case, without the sort below
    }
    std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of dims that repeat
    for (size_t i = 0; i < t->viewDims.size(); ++i) {
        if (t->viewDims[i] > 1) {
            dims.emplace_back(t->strides[i], t->viewDims[i]);
        }
    }
    std::sort(dims.begin(), dims.end());
    int64_t span = 1;  // elements covered by the dims seen so far
    for (const auto& [stride, size] : dims) {
        if (stride < span) {
            return false;
        }
        span += (size - 1) * stride;
    }
    return true;
}

bool Overlap(const aclTensor* a, const aclTensor* b)
{
    const auto [aBegin, aEnd] = ByteRange(a);
    const auto [bBegin, bEnd] = ByteRange(b);
    return aBegin != aEnd && bBegin != bEnd && aBegin < bEnd && bBegin < aEnd;
}

MemorySpan SpanOf(const aclTensor* t, uint64_t owner, bool updated)
{
    const auto [begin, end] = ByteRange(t);
    MemorySpan span;
    span.begin = begin;
    span.end = end;
    span.owner = owner;
    span.updated = updated;
    return span;
}

bool FindUpdatedOverlap(std::vector<MemorySpan>* spans, uint64_t* first, uint64_t* second)
{
    SortByStart(spans);
    // Every span seen before x starts at or before x.begin, so it intersects x exactly when it
    // ends after x.begin: the furthest-reaching earlier span (of any kind, or updated) decides.
    const MemorySpan* reachAny = nullptr;
    const MemorySpan* reachUpdated = nullptr;
    for (const MemorySpan& x : *spans) {
        if (x.begin == x.end) {
            continue;
        }
        const MemorySpan* hit = x.updated ? reachAny : reachUpdated;
        if (hit != nullptr && x.begin < hit->end) {
            const bool xFirst = !hit->updated || (x.updated && x.owner < hit->owner);
            *first = xFirst ? x.owner : hit->owner;
            *second = xFirst ? hit->owner : x.owner;
            return true;
        }
        if (reachAny == nullptr || x.end > reachAny->end) {
            reachAny = &x;
        }
        if (x.updated && (reachUpdated == nullptr || x.end > reachUpdated->end)) {
            reachUpdated = &x;
        }
    }
    return false;
}

View MakeView(const aclTensor* t, uint64_t* workspaceBytes)
{
    View v;
    v.first = FirstElement(t);
    v.sizes = t->viewDims;
    v.strides = t->strides;
    v.elemBytes = ElemBytes(t->dataType);
    const uint64_t numel = static_cast<uint64_t>(Numel(v.sizes));
    v.contiguous = numel == 0 || IsContiguous(v.sizes, v.strides);
    if (!v.contiguous) {
        v.stagingOffset = *workspaceBytes;
        *workspaceBytes +=
            (numel * v.elemBytes + kStagingAlign - 1) / kStagingAlign * kStagingAlign;
    }
    return v;
}

char* StageIn(const View& view, char* workspace)
{
    if (view.contiguous) {
        return view.first;
    }
    char* staged = workspace + view.stagingOffset;
    CopyView(view, staged, true);
    return staged;
}

void StageOut(const View& view, char* workspace)
{
    if (!view.contiguous) {
        CopyView(view, workspace + view.stagingOffset, false);
    }
}

}  // namespace ascend_ema_adam::acl
