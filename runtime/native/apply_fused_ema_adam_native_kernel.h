/**
 * @file native_kernel.h
 * @brief Internal interface between the native CPU kernel's driver (apply_fused_ema_adam_native.cpp)
 *        and its per-ISA loops (native_update_{avx512,avx2,generic}.cpp). Plain structs only: the
 *        ISA translation units are compiled with wider instruction sets and must not share inline
 *        library code with the rest of the program.
 */
#ifndef ASCEND_EMA_ADAM_NATIVE_KERNEL_H
#define ASCEND_EMA_ADAM_NATIVE_KERNEL_H

#include <cstdint>

namespace ascend_ema_adam::native {

enum class Dtype : uint32_t { kFloat32, kFloat16, kBFloat16 };

/** The fp32 scalars of one launch, folded like the AscendC kernel's InitScalars. */
struct Scalars {
    float lr;
    float beta1;
    float beta2;
    float oneMinusBeta1;
    float oneMinusBeta2;
    float eps;
    float weightDecay;
    float decay;
    float oneMinusDecay;
    float invC1;
    float invC2;
    uint32_t mode;
};

/** One update: five inputs (grad, var, m, v, s) and four outputs (var, m, v, s) of one dtype.
 *  An output either is its input (in place) or overlaps no input. */
struct Job {
    Scalars k;
    Dtype dtype;
    const void* in[5];
    void* out[4];
};

/** Streaming-bandwidth probes on fp32 arrays (the benchmark's roofline). */
enum class Probe : uint32_t { kCopy, kTriad, kUpdate };
struct ProbeJob {
    Probe kind;
    bool streamingStores;  // copy and triad: store around the caches
    float* x[5];  // copy: x0 = x1; triad: x0 = x1 + scalar * x2; update: xk += x0, k = 1..4
    float scalar;
};

/** One instruction set's loops: elements [begin, end) of a job. */
struct IsaKernels {
    const char* name;
    void (*update)(const Job& job, uint64_t begin, uint64_t end);
    void (*probe)(const ProbeJob& job, uint64_t begin, uint64_t end);
};

// Defined in native_update_<isa>.cpp. The AVX ones are null on other architectures.
const IsaKernels* Avx512Kernels();  // AVX-512 F/BW/VL + F16C: 16 lanes, masked tails
const IsaKernels* Avx2Kernels();    // AVX2 + F16C: 8 lanes, scalar tails
const IsaKernels* GenericKernels(); // portable C++, one element at a time

}  // namespace ascend_ema_adam::native

#endif  // ASCEND_EMA_ADAM_NATIVE_KERNEL_H
