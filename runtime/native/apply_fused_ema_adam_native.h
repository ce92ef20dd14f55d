/**
 * @file apply_fused_ema_adam_native.h
 * @brief The native CPU kernel of ApplyFusedEmaAdam: the CPU device's fast implementation, beside
 *        the AscendC kernel run on the twin (RunOnTwin), which stays the verification path.
 *
 * One pass over memory: each element of each input is loaded once and each output stored once
 * (36 B/elem fp32, 18 B/elem fp16/bf16), in SIMD vectors chosen at run time (AVX-512, AVX2, or
 * portable C++), by the calling thread and a persistent pool taking contiguous chunks. The
 * arithmetic is the kernel's fp32 operation order with one IEEE rounding per operation, so the
 * results equal the twin's and golden.emulate_update's bit for bit, for any split.
 */
#ifndef APPLY_FUSED_EMA_ADAM_NATIVE_H
#define APPLY_FUSED_EMA_ADAM_NATIVE_H

#include <cstdint>

#include "../op_host/apply_fused_ema_adam_tiling.h"
#include "apply_fused_ema_adam_twin_run.h"  // KernelBuffers

namespace ascend_ema_adam {

/**
 * c = 1 - beta^step in fp32: the host copy of the kernel's BiasCorrection (op_kernel/ can only be
 * compiled against AscendC or the twin), the same operation sequence and so the same result.
 * Tested bit-equal to golden.bias_correction_f32. step <= 0 yields 0.
 */
float NativeBiasCorrection(float beta, int64_t step);

/** Below this many elements per thread, extra threads cost more to wake than they save
 *  (measured on a 2-vCPU VM where a sleeping worker takes 50-100+ us to start). */
constexpr uint64_t kNativeMinElemsPerThread = 1U << 16;

struct NativeOptions {
    uint32_t threads = 0;  // 0: NativeThreads()
    uint64_t minElemsPerThread = kNativeMinElemsPerThread;  // smaller launches use fewer threads
    const char* isa = nullptr;  // nullptr: NativeIsa(); else a narrower one the CPU supports
};

/**
 * Runs the update of tiling.data.totalLength elements (dtype from the tiling key, scalars from the
 * tiling) on the calling thread and the pool. Each output buffer is its input (in place) or overlaps
 * no input. Returns the threads used (0 for an empty tensor). Throws std::invalid_argument for an
 * unknown tiling key or an unsupported isa.
 */
uint32_t RunNative(const TilingResult& tiling, const KernelBuffers& buffers,
                   const NativeOptions& options = {});

/**
 * Threads a launch uses by default: ASCEND_EMA_ADAM_NUM_THREADS if set (read at every call), else
 * every CPU the process may run on; never more than that. Throws std::invalid_argument if the
 * variable is not a positive integer.
 */
uint32_t NativeThreads();

/** The instruction set the native kernel runs with on this CPU: "avx512", "avx2" or "generic". */
const char* NativeIsa();

/** Which kernel the CPU device runs. */
enum class CpuKernel { kNative, kTwin };

/**
 * ASCEND_EMA_ADAM_CPU_KERNEL, read at every call: unset, empty or "native" selects the native kernel,
 * "twin" the AscendC kernel on the twin. Throws std::invalid_argument for any other value.
 */
CpuKernel SelectedCpuKernel();

/**
 * Streaming-bandwidth probes on fp32 arrays, split over threads like RunNative (the benchmark's
 * roofline). Bytes moved per element: copy 8 (x0 = x1), triad 12 (x0 = x1 + scalar * x2), the
 * *Nt variants storing around the caches (no write-allocate read); update 36 (xk += x0 for
 * k = 1..4, in place: the kernel's access pattern).
 */
enum class StreamProbe { kCopy, kCopyNt, kTriad, kTriadNt, kUpdate };

/** Arrays needed by a probe: 2, 3 or 5. */
int StreamProbeArrays(StreamProbe kind);

/** Runs a probe over n elements of each of `arrays` (StreamProbeArrays(kind) of them); `threads`
 *  as in NativeOptions. Returns the threads used. */
uint32_t RunStreamProbe(StreamProbe kind, float* const* arrays, float scalar, uint64_t n,
                        uint32_t threads = 0);

}  // namespace ascend_ema_adam

#endif  // APPLY_FUSED_EMA_ADAM_NATIVE_H
