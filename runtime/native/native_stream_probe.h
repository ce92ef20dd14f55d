/**
 * @file native_stream_probe.h
 * @brief Streaming-bandwidth probes on fp32 arrays, split over threads like the native kernels
 *        (Parallel): the benchmark's roofline (ascend_ema_adam bench, through _kernels). Bench
 *        only: the CPU device never links it. Bytes moved per element: copy 8 (x0 = x1), triad 12
 *        (x0 = x1 + scalar * x2), the *Nt variants storing around the caches (no write-allocate
 *        read); update 36 (xk += x0 for k = 1..4, in place: ApplyFusedEmaAdam's access pattern);
 *        update8bit 24 (x1 += x0 and x2 += x1 on fp32, in place, and two streams of one byte per
 *        element read and written in place: ApplyFusedEmaAdam8bitList's pattern with an EMA).
 */
#ifndef ASCEND_EMA_ADAM_NATIVE_STREAM_PROBE_H
#define ASCEND_EMA_ADAM_NATIVE_STREAM_PROBE_H

#include <cstdint>

namespace ascend_ema_adam {

enum class StreamProbe { kCopy, kCopyNt, kTriad, kTriadNt, kUpdate, kUpdate8bit };

/** Arrays needed by a probe: 2, 3 or 5. */
int StreamProbeArrays(StreamProbe kind);

/** Bytes per element of a probe's array `i`: 4 (fp32), or 1 for update8bit's code streams 3
 *  and 4 (buffers of n bytes holding normal floats, e.g. ones). */
int StreamProbeElementBytes(StreamProbe kind, int i);

/** Runs a probe over n elements of each of `arrays` (StreamProbeArrays(kind) of them) with the
 *  kernels' instruction set (NativeIsa: ASCEND_EMA_ADAM_ISA, as `bench --isa` sets it, else the
 *  best); `threads` as in NativeOptions. Returns the threads used. Throws
 *  std::invalid_argument for an update8bit n that is not whole grains (multiples of 64: each
 *  thread's range then holds whole floats of the code streams). */
uint32_t RunStreamProbe(StreamProbe kind, float* const* arrays, float scalar, uint64_t n,
                        uint32_t threads = 0);

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_NATIVE_STREAM_PROBE_H
