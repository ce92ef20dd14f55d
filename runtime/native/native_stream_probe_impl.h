/**
 * @file native_stream_probe_impl.h
 * @brief The bandwidth probes' loops, written once over a vector backend `A` (native_simd.h) and
 *        instantiated by each ISA translation unit (native_stream_probe_<isa>.cpp). Internal
 *        linkage only (see native_simd.h).
 */
#ifndef ASCEND_EMA_ADAM_NATIVE_STREAM_PROBE_IMPL_H
#define ASCEND_EMA_ADAM_NATIVE_STREAM_PROBE_IMPL_H

#include <cstdint>

#include "native_simd.h"

namespace ascend_ema_adam::native {

/** Streaming-bandwidth probes on fp32 arrays. Plain struct: shared with the ISA units. */
enum class Probe : uint32_t { kCopy, kTriad, kUpdate };
struct ProbeJob {
    Probe kind;
    bool streamingStores;  // copy and triad: store around the caches
    float* x[5];  // copy: x0 = x1; triad: x0 = x1 + scalar * x2; update: xk += x0, k = 1..4
    float scalar;
};

/** One instruction set's loop: elements [begin, end) of a probe. */
using StreamProbeLoop = void (*)(const ProbeJob& job, uint64_t begin, uint64_t end);

// Defined in native_stream_probe_<isa>.cpp; the AVX ones are null on other architectures.
StreamProbeLoop StreamProbeAvx512();
StreamProbeLoop StreamProbeAvx2();
StreamProbeLoop StreamProbeGeneric();

namespace {

/** Element(s) i of the copy or triad probe (fp32). */
template <class A>
inline typename A::V ProbeValue(const ProbeJob& job, typename A::V scalar, uint64_t i)
{
    const typename A::V b = A::LoadFloat(job.x[1] + i);
    return job.kind == Probe::kCopy ? b : A::Add(b, A::Mul(scalar, A::LoadFloat(job.x[2] + i)));
}

/** The update probe: the kernel's access pattern (five loads, four in-place stores) with one add
 *  per output instead of the update's arithmetic. */
template <class A, class Mem>
inline void UpdatePatternStep(const ProbeJob& job, uint64_t i, const Mem& mem)
{
    const auto g = mem.Load(job.x[0] + i);
    for (int t = 1; t < 5; ++t) {
        auto y = mem.Load(job.x[t] + i);
        for (int k = 0; k < Mem::kVecs; ++k) {
            y.v[k] = A::Add(y.v[k], g.v[k]);
        }
        mem.Store(job.x[t] + i, y);
    }
}

/**
 * The StreamProbeLoop of backend A. With streamingStores, copy and triad store around the caches
 * (A::Stream) once the destination is aligned, so it is not read first (write-allocate): what a
 * large copy can reach. Cached stores are what a copy that fits in the caches can reach. The
 * update probe stores like the kernel (in place, through the caches).
 */
template <class A>
void ProbeRange(const ProbeJob& job, uint64_t begin, uint64_t end)
{
    uint64_t i = begin;
    if (job.kind == Probe::kUpdate) {
        using Full = typename A::template Full<float>;
        for (; i + A::kLanes <= end; i += A::kLanes) {
            UpdatePatternStep<A>(job, i, Full{});
        }
        for (; i < end; ++i) {
            UpdatePatternStep<Scalar>(job, i, Scalar::Full<float>{});
        }
        return;
    }
    constexpr uint64_t kAlign = A::kLanes * sizeof(float);
    const typename A::V scalar = A::Set1(job.scalar);
    float* a = job.x[0];
    for (; i < end && reinterpret_cast<uintptr_t>(a + i) % kAlign != 0; ++i) {
        a[i] = ProbeValue<Scalar>(job, job.scalar, i);
    }
    if (job.streamingStores) {
        for (; i + A::kLanes <= end; i += A::kLanes) {
            A::Stream(a + i, ProbeValue<A>(job, scalar, i));
        }
        A::StreamFence();
    } else {
        using Full = typename A::template Full<float>;
        for (; i + A::kLanes <= end; i += A::kLanes) {
            Full::Store(a + i, {{ProbeValue<A>(job, scalar, i)}});
        }
    }
    for (; i < end; ++i) {
        a[i] = ProbeValue<Scalar>(job, job.scalar, i);
    }
}

}  // namespace
}  // namespace ascend_ema_adam::native

#endif  // ASCEND_EMA_ADAM_NATIVE_STREAM_PROBE_IMPL_H
