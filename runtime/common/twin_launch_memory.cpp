/**
 * @file twin_launch_memory.cpp
 * @brief TwinLaunchMemory (see the header).
 */
#include "twin_launch_memory.h"

namespace ascend_ema_adam {

GM_ADDR TwinLaunchMemory::List(const void* const* list, const uint64_t* counts, size_t n,
                               uint32_t elemBytes)
{
    std::vector<twin::ListEntry> entries;
    if (list != nullptr) {
        entries.reserve(n);
        for (size_t i = 0; i < n; ++i) {
            entries.push_back({list[i], {static_cast<int64_t>(counts[i])}});
            if (elemBytes != 0 && list[i] != nullptr && counts[i] != 0) {
                regions_.push_back({list[i], counts[i] * elemBytes});
            }
        }
    }
    lists_.push_back(twin::EncodeList(entries, twin::ListLayout::kFramework));
    regions_.push_back(lists_.back().Region());
    return lists_.back().Addr();
}

GM_ADDR TwinLaunchMemory::Tensor(const void* p, size_t bytes)
{
    if (p != nullptr) {
        regions_.push_back({p, bytes});
    }
    return GmAddr(p);
}

}  // namespace ascend_ema_adam
