/**
 * @file memory_layout.cpp
 * @brief Contiguity, distinct elements and overlap of views (see the header).
 */
#include "memory_layout.h"

#include <algorithm>
#include <string>
#include <utility>

namespace ascend_ema_adam {

namespace {

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

int64_t NumelOf(const ViewLayout& view)
{
    int64_t n = 1;
    for (size_t d = 0; d < view.rank; ++d) n *= view.sizes[d];
    return n;
}

std::string DimsToString(const int64_t* dims, size_t rank)
{
    return ShapeToString(std::vector<int64_t>(dims, dims + rank));
}

}  // namespace

bool IsContiguous(const ViewLayout& view)
{
    int64_t expected = 1;
    for (size_t i = view.rank; i-- > 0;) {
        if (view.sizes[i] != 1 && view.strides[i] != expected) {
            return false;
        }
        expected *= view.sizes[i];
    }
    return true;
}

bool HasDistinctElements(const ViewLayout& view)
{
    if (IsContiguous(view) || NumelOf(view) == 0) {
        return true;  // the common case, without the sort below
    }
    std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of dims that repeat
    for (size_t i = 0; i < view.rank; ++i) {
        if (view.sizes[i] > 1) {
            dims.emplace_back(view.strides[i], view.sizes[i]);
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

MemorySpan SpanOfView(uintptr_t first, const ViewLayout& view, uint32_t elemBytes,
                      uint64_t owner, bool updated)
{
    MemorySpan span;
    span.owner = owner;
    span.updated = updated;
    if (NumelOf(view) == 0) {
        return span;
    }
    int64_t lastIndex = 0;
    for (size_t d = 0; d < view.rank; ++d) {
        lastIndex += (view.sizes[d] - 1) * view.strides[d];
    }
    span.begin = first;
    span.end = first + static_cast<uintptr_t>(lastIndex + 1) * elemBytes;
    return span;
}

bool SpansOverlap(const MemorySpan& a, const MemorySpan& b)
{
    return a.begin != a.end && b.begin != b.end && a.begin < b.end && b.begin < a.end;
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

Refusal RepeatedElementsRefusal(const char* name, const ViewLayout& view)
{
    return std::string(name) + " (shape " + DimsToString(view.sizes, view.rank) + ", stride " +
           DimsToString(view.strides, view.rank) +
           ") addresses some elements more than once; an updated tensor must not";
}

Refusal OverlapRefusal(const char* name, const char* otherName)
{
    return std::string(name) + " and " + otherName +
           " overlap in memory; an updated tensor must not overlap any other tensor of the call";
}

}  // namespace ascend_ema_adam
