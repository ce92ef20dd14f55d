/**
 * @file repeated_launch.cpp
 * @brief RepeatedLaunchTensors: the comparisons of a repeated prepared launch (repeated_launch.h).
 */
#include "repeated_launch.h"

#include <algorithm>
#include <cstring>

namespace ascend_ema_adam::ops {

namespace {

MemorySpan SpanOf(const at::Tensor& t, bool updated)
{
    const ViewLayout layout{t.sizes().data(), t.strides().data(), static_cast<size_t>(t.dim())};
    return SpanOfView(reinterpret_cast<uintptr_t>(t.data_ptr()), layout,
                      static_cast<uint32_t>(t.itemsize()), 0, updated);
}

}  // namespace

void RepeatedLaunchTensors::Remember(const at::TensorList* lists, size_t count, size_t grads,
                                     const bool* updated,
                                     std::initializer_list<const at::Tensor*> maps)
{
    for (size_t l = 0; l < count; ++l) {
        for (const at::Tensor& t : lists[l]) {
            if (l == grads) {
                seenGrads_.emplace_back(t);
                continue;
            }
            held_.push_back(t);
            seenHeld_.emplace_back(t);
            if (updated[l]) {
                const MemorySpan span = SpanOf(t, true);
                if (span.begin != span.end) updatedSpans_.push_back(span);
            }
        }
    }
    std::sort(updatedSpans_.begin(), updatedSpans_.end(),
              [](const MemorySpan& a, const MemorySpan& b) { return a.begin < b.begin; });
    for (const at::Tensor* map : maps) {
        maps_.emplace_back(*map, map->_version());
        seenMaps_.emplace_back(*map);
    }
}

bool RepeatedLaunchTensors::HeldUnchanged(bool listsChecked) const
{
    for (size_t i = 0; i < maps_.size(); ++i) {
        const at::Tensor& map = maps_[i].first;
        if (!seenMaps_[i].Matches(map) || map._version() != maps_[i].second) return false;
    }
    if (listsChecked) return true;
    for (size_t i = 0; i < held_.size(); ++i) {
        PrefetchAhead(i, held_.size(), [&](size_t j) -> const at::Tensor& { return held_[j]; });
        if (!seenHeld_[i].Matches(held_[i])) return false;
    }
    return true;
}

bool RepeatedLaunchTensors::GradsFit(const BorrowedTensors& grads,
                                     std::vector<size_t>* moved) const
{
    if (grads.size() != seenGrads_.size()) return false;
    for (size_t i = 0; i < grads.size(); ++i) {
        PrefetchAhead(i, grads.size(), [&](size_t j) -> const at::Tensor& { return *grads[j]; });
        const at::Tensor& grad = *grads[i];
        if (!seenGrads_[i].SameDescription(grad)) return false;
        if (grad.data_ptr() != seenGrads_[i].data) {
            if (!OverlapsNoUpdated(grad)) return false;
            moved->push_back(i);
        }
    }
    return true;
}

bool RepeatedLaunchTensors::OverlapsNoUpdated(const at::Tensor& t) const
{
    return !TouchesSortedSpans(updatedSpans_, SpanOf(t, false));  // (an empty span touches none)
}

bool FitsOneElement(const at::Tensor& given, const at::Tensor& owned)
{
    return given.defined() && given.layout() == at::kStrided && given.device().is_cpu() &&
           given.numel() == 1 && given.scalar_type() == owned.scalar_type();
}

void CopyOneElement(const at::Tensor& given, at::Tensor& owned)
{
    std::memcpy(owned.data_ptr(), given.data_ptr(), owned.itemsize());
}

}  // namespace ascend_ema_adam::ops
