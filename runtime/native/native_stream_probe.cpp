/**
 * @file native_stream_probe.cpp
 * @brief RunStreamProbe (see the header).
 */
#include "native_stream_probe.h"

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
        case StreamProbe::kUpdate: break;
    }
    return 5;
}

uint32_t RunStreamProbe(StreamProbe kind, float* const* arrays, float scalar, uint64_t n,
                        uint32_t threads)
{
    const native::StreamProbeLoop byIsa[kIsaCount] = {
        native::StreamProbeAvx512(), native::StreamProbeAvx2(), native::StreamProbeGeneric()};
    native::StreamProbeLoop loop = byIsa[static_cast<uint32_t>(BestIsa())];
    loop = loop != nullptr ? loop : native::StreamProbeGeneric();
    native::ProbeJob job{};
    const bool copy = kind == StreamProbe::kCopy || kind == StreamProbe::kCopyNt;
    const bool triad = kind == StreamProbe::kTriad || kind == StreamProbe::kTriadNt;
    job.kind = copy ? native::Probe::kCopy : triad ? native::Probe::kTriad : native::Probe::kUpdate;
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
