/**
 * @file native_stream_probe.cpp
 * @brief RunStreamProbe (see the header).
 */
#include "native_stream_probe.h"

#include <stdexcept>
#include <string>

#include "native_runtime.h"
#include "native_stream_probe_impl.h"

namespace ascend_ema_adam {

int StreamProbeArrays(StreamProbe kind)
{
    switch (kind) {
        case StreamProbe::kCopy:
        case StreamProbe::kCopyNt: return 2;
        case StreamProbe::kTriad:
        case StreamProbe::kTriadNt: return 3;
        case StreamProbe::kUpdate:
        case StreamProbe::kUpdate8bit: break;
    }
    return 5;
}

int StreamProbeElementBytes(StreamProbe kind, int i)
{
    return kind == StreamProbe::kUpdate8bit && i >= 3 ? 1 : 4;
}

uint32_t RunStreamProbe(StreamProbe kind, float* const* arrays, float scalar, uint64_t n,
                        uint32_t threads)
{
    const native::StreamProbeLoop byIsa[kIsaCount] = {
        native::StreamProbeAvx512(), native::StreamProbeAvx2(), native::StreamProbeNeon(),
        native::StreamProbeGeneric()};
    // Parallel's chunks are whole grains, and a grain is whole steps of every backend's 8-bit loop
    if (kind == StreamProbe::kUpdate8bit && n % kNativeGrain != 0) {
        throw std::invalid_argument("stream probe update8bit: n must be a multiple of " +
                                    std::to_string(kNativeGrain));
    }
    native::StreamProbeLoop loop = byIsa[static_cast<uint32_t>(ResolveIsa(nullptr))];
    loop = loop != nullptr ? loop : native::StreamProbeGeneric();
    native::ProbeJob job{};
    const bool copy = kind == StreamProbe::kCopy || kind == StreamProbe::kCopyNt;
    const bool triad = kind == StreamProbe::kTriad || kind == StreamProbe::kTriadNt;
    job.kind = copy                            ? native::Probe::kCopy
               : triad                         ? native::Probe::kTriad
               : kind == StreamProbe::kUpdate8bit ? native::Probe::kUpdate8bit
                                               : native::Probe::kUpdate;
    job.streamingStores = kind == StreamProbe::kCopyNt || kind == StreamProbe::kTriadNt;
    for (int i = 0; i < StreamProbeArrays(kind); ++i) {
        job.x[i] = arrays[i];
    }
    job.scalar = scalar;
    return Parallel(n, NativeThreadsFor(n, threads, kNativeMinElemsPerThread),
                    NativeWakes(n, kNativeMinElemsPerThread),
                    [&](uint64_t begin, uint64_t end) { loop(job, begin, end); });
}

}  // namespace ascend_ema_adam
