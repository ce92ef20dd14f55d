/**
 * @file native_stream_probe.h
 * @brief Streaming-bandwidth probes on fp32 arrays, split over threads like the native kernels
 *        (Parallel): the benchmark's roofline (ascend_ema_adam bench, through _twin). Bench only:
 *        the CPU device never links it. Bytes moved per element: copy 8 (x0 = x1), triad 12
 *        (x0 = x1 + scalar * x2), the *Nt variants storing around the caches (no write-allocate
 *        read); update 36 (xk += x0 for k = 1..4, in place: ApplyFusedEmaAdam's access pattern).
 */
#ifndef ASCEND_EMA_ADAM_NATIVE_STREAM_PROBE_H
#define ASCEND_EMA_ADAM_NATIVE_STREAM_PROBE_H

#include <cstdint>

namespace ascend_ema_adam {

enum class StreamProbe { kCopy, kCopyNt, kTriad, kTriadNt, kUpdate };

/** Arrays needed by a probe: 2, 3 or 5. */
int StreamProbeArrays(StreamProbe kind);

/** Runs a probe over n elements of each of `arrays` (StreamProbeArrays(kind) of them) with the
 *  best instruction set; `threads` as in NativeOptions. Returns the threads used. */
uint32_t RunStreamProbe(StreamProbe kind, float* const* arrays, float scalar, uint64_t n,
                        uint32_t threads = 0);

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_NATIVE_STREAM_PROBE_H
