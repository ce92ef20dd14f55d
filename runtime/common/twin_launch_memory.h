/**
 * @file twin_launch_memory.h
 * @brief What every operator's launch on the twin (runtime/<op>/<op>_twin_run.cpp) builds: the
 *        launch's GM (each tensor, list descriptor and scalar registered once as a GM region; list
 *        arguments encoded as CANN's launcher writes a DYNAMIC input or output) and its
 *        configuration.
 */
#ifndef ASCEND_EMA_ADAM_TWIN_LAUNCH_MEMORY_H
#define ASCEND_EMA_ADAM_TWIN_LAUNCH_MEMORY_H

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "platform.h"
#include "twin_launch.h"
#include "twin_list_launch.h"

namespace ascend_ema_adam {

/** A host pointer as a kernel entry's GM_ADDR argument. */
inline GM_ADDR GmAddr(const void* p)
{
    return reinterpret_cast<GM_ADDR>(const_cast<void*>(p));
}

/** The GM of one launch on the twin. */
class TwinLaunchMemory {
public:
    /** A launch whose lists hold `n` entries of numels[i] elements (none for the single op). */
    explicit TwinLaunchMemory(const uint64_t* numels = nullptr, size_t n = 0)
        : numels_(numels), n_(n)
    {
    }

    /** Entry i of `list` as a 1-D tensor of numels[i] elements, as List below. */
    GM_ADDR List(const void* const* list, uint32_t elemBytes)
    {
        return List(list, numels_, n_, elemBytes);
    }

    /** Entry i of `list` as a 1-D tensor of counts[i] elements (kFramework layout), i < n; null:
     *  an absent list, which the launcher passes as an empty one (the lone word 8). With
     *  `elemBytes` nonzero the tensors become GM regions (once per tensor: an in-place output list
     *  repeats its input list's tensors, as on the device). */
    GM_ADDR List(const void* const* list, const uint64_t* counts, size_t n, uint32_t elemBytes);

    /** A tensor of `bytes` bytes, or an absent one (null). */
    GM_ADDR Tensor(const void* p, size_t bytes);

    /** The launch's configuration: these regions and the tiling data's (`tilingData`, the
     *  launch's own copy, which must outlive the launch). */
    template <class TilingData>
    twin::LaunchConfig Config(uint32_t blockDim, uint64_t tilingKey, const Platform& platform,
                              uint32_t threads, twin::FloatOverflowMode overflowMode,
                              const TilingData* tilingData)
    {
        twin::LaunchConfig cfg;
        cfg.blockDim = blockDim;
        cfg.tilingKey = tilingKey;
        cfg.ubBytes = platform.ubSize;
        cfg.threads = threads;
        cfg.overflowMode = overflowMode;
        cfg.gm = std::move(regions_);
        cfg.gm.push_back({tilingData, sizeof(TilingData)});
        return cfg;
    }

private:
    const uint64_t* numels_;
    size_t n_;
    std::deque<twin::EncodedList> lists_;  // a deque: the kernel holds the descriptors' addresses
    std::vector<twin::GmRegion> regions_;
};

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_TWIN_LAUNCH_MEMORY_H
