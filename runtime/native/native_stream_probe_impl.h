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
enum class Probe : uint32_t { kCopy, kTriad, kUpdate, kUpdate8bit };
struct ProbeJob {
    Probe kind;
    bool streamingStores;  // copy and triad: store around the caches
    float* x[5];  // copy: x0 = x1; triad: x0 = x1 + scalar * x2; update: xk += x0, k = 1..4;
                  // update8bit: x1 += x0, x2 += x1, and x3, x4 of n bytes (Update8bitPatternStep)
    float scalar;
};

/** One instruction set's loop: elements [begin, end) of a probe. */
using StreamProbeLoop = void (*)(const ProbeJob& job, uint64_t begin, uint64_t end);

// Defined in native_stream_probe_<isa>.cpp; the AVX ones are null on other architectures.
StreamProbeLoop StreamProbeAvx512();
StreamProbeLoop StreamProbeAvx2();
StreamProbeLoop StreamProbeNeon();
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

/** Elements per step of the 8-bit probe: four packs of its fp32 streams, one of each code stream
 *  (a pack of floats is the bytes of four packs of one-byte codes). */
template <class A>
constexpr uint64_t kUpdate8bitStep = 4U * A::template Full<float>::kVecs * A::kLanes;

/** The 8-bit probe: the 8-bit kernel's access pattern with one add per output. Elements i ..
 *  i + kUpdate8bitStep - 1 of the fp32 streams (gradient x0 read, parameter x1 and EMA x2 in
 *  place) and their bytes of the code streams x3, x4 (m and v: read and written in place, as
 *  floats: their buffers hold normal floats, so the adds never take a subnormal's slow path). */
template <class A>
inline void Update8bitPatternStep(const ProbeJob& job, uint64_t i)
{
    using Full = typename A::template Full<float>;
    constexpr uint64_t kPack = Full::kVecs * A::kLanes;
    decltype(Full::Load(job.x[0])) g{};
    for (uint64_t j = i; j < i + 4U * kPack; j += kPack) {
        g = Full::Load(job.x[0] + j);
        auto p = Full::Load(job.x[1] + j);
        auto s = Full::Load(job.x[2] + j);
        for (int k = 0; k < Full::kVecs; ++k) {
            p.v[k] = A::Add(p.v[k], g.v[k]);
            s.v[k] = A::Add(s.v[k], p.v[k]);
        }
        Full::Store(job.x[1] + j, p);
        Full::Store(job.x[2] + j, s);
    }
    for (int t = 3; t < 5; ++t) {
        float* codes = job.x[t] + i / 4U;
        auto c = Full::Load(codes);
        for (int k = 0; k < Full::kVecs; ++k) {
            c.v[k] = A::Add(c.v[k], g.v[k]);
        }
        Full::Store(codes, c);
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
    if (job.kind == Probe::kUpdate8bit) {  // [begin, end): whole steps (RunStreamProbe)
        for (; i < end; i += kUpdate8bitStep<A>) {
            Update8bitPatternStep<A>(job, i);
        }
        return;
    }
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
