/**
 * @file twin_launch.h
 * @brief Host-side launcher of the AscendC CPU twin (twin-only API: kernels never include it).
 *
 *   twin::LaunchConfig cfg;
 *   cfg.blockDim = 40;
 *   cfg.tilingKey = APPLY_FUSED_EMA_ADAM_KEY_FP32;
 *   cfg.gm = {{x, xBytes}, {y, yBytes}, {tiling, sizeof(tilingData)}};
 *   twin::LaunchResult r = twin::Launch(my_kernel, cfg, xGm, yGm, tilingGm);
 *
 * Blocks run in parallel on min(blockDim, threads) host threads (blockDim 1 runs inline on the caller).
 * Each block gets its own UB arena of ubBytes (every byte InitBuffer hands out starts as 0xFF, a NaN in
 * every float format), its own TPipe/queue/event state and its own counters. Every GM buffer the kernel touches, the tiling buffer included, must be
 * registered in cfg.gm. Launch is re-entrant: concurrent calls from different threads are independent.
 */
#ifndef ASCEND_EMA_ADAM_TWIN_LAUNCH_H
#define ASCEND_EMA_ADAM_TWIN_LAUNCH_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "twin_context.h"

namespace twin {

// The float-overflow mode a launch runs in: what the runtime loads into CTRL[48] from the device's
// mode (aclrtSetDeviceSatMode; same values as aclrtFloatOverflowMode). InfNan, the A2/A3 default,
// keeps inf and NaN (IEEE); Saturation makes every half/bf16 result and every conversion to
// half/bf16 saturate: +-inf becomes +-MAX, NaN becomes 0. fp32 results are IEEE in both.
enum class FloatOverflowMode : uint8_t { Saturation = 0, InfNan = 1 };

struct LaunchConfig {
    uint32_t blockDim = 1;
    uint64_t tilingKey = 0;
    uint32_t ubBytes = 196608;  // UB per AIV core on 910B; a positive multiple of 32
    uint32_t threads = 0;       // 0 = std::thread::hardware_concurrency()
    FloatOverflowMode overflowMode = FloatOverflowMode::InfNan;
    std::vector<GmRegion> gm;
};

struct LaunchResult {
    std::vector<BlockCounters> blocks;  // indexed by block
    BlockCounters total() const;        // sums, except ubBytesUsed which is the maximum
};

namespace detail {

using KernelThunk = void (*)(const void* closure);
LaunchResult RunLaunch(const LaunchConfig& cfg, KernelThunk thunk, const void* closure);

template <class T>
struct Identity {
    using type = T;
};

}  // namespace detail

// Runs kernel(args...) once per block. The arguments are deduced from the kernel alone, so they convert
// implicitly (nullptr, derived pointers) as in a direct call.
template <class... Args>
LaunchResult Launch(void (*kernel)(Args...), const LaunchConfig& cfg, typename detail::Identity<Args>::type... args) {
    auto call = [&] { kernel(args...); };
    using Call = decltype(call);
    return detail::RunLaunch(cfg, [](const void* closure) { (*static_cast<const Call*>(closure))(); }, &call);
}

}  // namespace twin

#endif  // ASCEND_EMA_ADAM_TWIN_LAUNCH_H
