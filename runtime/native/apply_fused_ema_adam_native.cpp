/**
 * @file apply_fused_ema_adam_native.cpp
 * @brief RunNative: folds the launch scalars like the kernel's InitScalars, picks the instruction
 *        set once, and hands the elements to the calling thread and the pool in contiguous
 *        chunks.
 */
#include "apply_fused_ema_adam_native.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "../op_kernel/apply_fused_ema_adam_tiling_key.h"
#include "native_kernel.h"
#include "native_thread_pool.h"

namespace ascend_ema_adam {

namespace {

using native::IsaKernels;

/** Work is handed out in whole multiples of this many elements (>= 64 B for every dtype), so no
 *  two threads write the same cache line of a 64-B aligned tensor. */
constexpr uint64_t kGrain = 64;

/** The best loops this CPU can run. */
const IsaKernels& BestKernels()
{
    static const IsaKernels* const best = [] {
#if defined(__x86_64__)
        __builtin_cpu_init();
        const bool f16c = __builtin_cpu_supports("f16c");
        if (native::Avx512Kernels() != nullptr && f16c && __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
            return native::Avx512Kernels();
        }
        if (native::Avx2Kernels() != nullptr && f16c && __builtin_cpu_supports("avx2")) {
            return native::Avx2Kernels();
        }
#endif
        return native::GenericKernels();
    }();
    return *best;
}

/** The loops for NativeOptions::isa: the best, or a named one the CPU also supports (tests run
 *  every instruction set this way). */
const IsaKernels& KernelsFor(const char* isa)
{
    const IsaKernels& best = BestKernels();
    if (isa == nullptr || *isa == '\0') {
        return best;
    }
    // Ordered widest first: a CPU that runs one runs those after it.
    const IsaKernels* const all[] = {native::Avx512Kernels(), native::Avx2Kernels(),
                                     native::GenericKernels()};
    bool supported = false;
    for (const IsaKernels* k : all) {
        supported = supported || k == &best;
        if (k != nullptr && std::strcmp(k->name, isa) == 0) {
            if (!supported) {
                break;
            }
            return *k;
        }
    }
    throw std::invalid_argument(std::string("native kernel: instruction set '") + isa +
                                "' is unknown or not supported by this CPU (best: " + best.name +
                                ")");
}

uint32_t ProcessCpusCached()
{
    static const uint32_t cpus = native::ProcessCpus();
    return cpus;
}

/** Threads for n elements: the request (0: NativeThreads()), fewer for small n, at least 1. */
uint32_t ThreadsFor(uint64_t n, uint32_t requested, uint64_t minElemsPerThread)
{
    uint64_t threads = requested != 0 ? requested : NativeThreads();
    const uint64_t useful = minElemsPerThread != 0 ? n / minElemsPerThread : n;
    threads = threads < useful ? threads : useful;
    return threads > 1U ? static_cast<uint32_t>(threads) : 1U;
}

/**
 * Runs body(begin, end) over [0, n) and returns the threads that took part. With more than one
 * thread, the elements are handed out in contiguous chunks (kChunksPerThread per thread, whole
 * grains) from an atomic counter: the caller starts at once, and a worker that wakes late takes
 * fewer chunks instead of holding everyone up. Small launches stay on the calling thread.
 */
template <class Body>
uint32_t Parallel(uint64_t n, uint32_t threads, const Body& body)
{
    if (threads <= 1U) {
        body(0, n);  // no pool for launches that never need it
        return 1;
    }
    constexpr uint64_t kChunksPerThread = 16;
    struct Ctx {
        const Body* body;
        uint64_t n;
        uint64_t chunk;
        uint64_t chunks;
        std::atomic<uint64_t> next{0};
    } ctx;
    ctx.body = &body;
    ctx.n = n;
    const uint64_t target = n / (threads * kChunksPerThread);
    ctx.chunk = (target + kGrain - 1U) / kGrain * kGrain;
    ctx.chunk = ctx.chunk > kGrain ? ctx.chunk : kGrain;
    ctx.chunks = (n + ctx.chunk - 1U) / ctx.chunk;
    const auto task = [](const void* p) {
        Ctx& c = *static_cast<Ctx*>(const_cast<void*>(p));
        for (uint64_t i = c.next.fetch_add(1, std::memory_order_relaxed); i < c.chunks;
             i = c.next.fetch_add(1, std::memory_order_relaxed)) {
            const uint64_t end = (i + 1U) * c.chunk;
            (*c.body)(i * c.chunk, end < c.n ? end : c.n);
        }
    };
    return native::ThreadPool::Get().Run(threads, task, &ctx);
}

native::Dtype DtypeOf(uint64_t tilingKey)
{
    switch (tilingKey) {
        case APPLY_FUSED_EMA_ADAM_KEY_FP32: return native::Dtype::kFloat32;
        case APPLY_FUSED_EMA_ADAM_KEY_FP16: return native::Dtype::kFloat16;
        case APPLY_FUSED_EMA_ADAM_KEY_BF16: return native::Dtype::kBFloat16;
        default: break;
    }
    throw std::invalid_argument("native kernel: unknown tiling key " + std::to_string(tilingKey));
}

/** The kernel's InitScalars: every fold is one fp32 operation. */
native::Scalars FoldScalars(const ApplyFusedEmaAdamTilingData& t, const int64_t* step)
{
    native::Scalars k{};
    k.lr = t.lr;
    k.beta1 = t.beta1;
    k.beta2 = t.beta2;
    k.oneMinusBeta1 = 1.0F - t.beta1;
    k.oneMinusBeta2 = 1.0F - t.beta2;
    k.eps = t.eps;
    k.weightDecay = t.weightDecay;
    k.decay = t.emaDecay;
    k.oneMinusDecay = 1.0F - t.emaDecay;
    k.mode = t.mode;
    k.invC1 = 1.0F;
    k.invC2 = 1.0F;
    if (t.biasCorrection != 0U) {  // like the kernel, step is read only when it is used
        k.invC1 = 1.0F / NativeBiasCorrection(t.beta1, *step);
        k.invC2 = 1.0F / NativeBiasCorrection(t.beta2, *step);
    }
    return k;
}

}  // namespace

float NativeBiasCorrection(float beta, int64_t step)
{
    float a = 0.0F;  // 1 - beta^n
    float p = 1.0F;  // beta^n
    if (step <= 0) {
        return a;
    }
    const float q = 1.0F - beta;
    int32_t bit = 62;
    while (((static_cast<uint64_t>(step) >> bit) & 1U) == 0U) {
        --bit;
    }
    for (; bit >= 0; --bit) {
        a = a * (2.0F - a);  // n -> 2n
        p = p * p;
        if (((static_cast<uint64_t>(step) >> bit) & 1U) != 0U) {
            a = a + p * q;  // n -> n + 1
            p = p * beta;
        }
    }
    return a;
}

uint32_t NativeThreads()
{
    const uint32_t cpus = ProcessCpusCached();
    const char* env = std::getenv("ASCEND_EMA_ADAM_NUM_THREADS");
    if (env == nullptr || *env == '\0') {
        return cpus;
    }
    char* rest = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(env, &rest, 10);
    if (errno != 0 || *rest != '\0' || value == 0 || *env == '-') {
        throw std::invalid_argument(std::string("ASCEND_EMA_ADAM_NUM_THREADS is '") + env +
                                    "', expected a positive integer");
    }
    return value < cpus ? static_cast<uint32_t>(value) : cpus;
}

const char* NativeIsa()
{
    return BestKernels().name;
}

CpuKernel SelectedCpuKernel()
{
    const char* env = std::getenv("ASCEND_EMA_ADAM_CPU_KERNEL");
    if (env == nullptr || *env == '\0' || std::strcmp(env, "native") == 0) {
        return CpuKernel::kNative;
    }
    if (std::strcmp(env, "twin") == 0) {
        return CpuKernel::kTwin;
    }
    throw std::invalid_argument(std::string("ASCEND_EMA_ADAM_CPU_KERNEL is '") + env +
                                "', expected 'native' (the default) or 'twin'");
}

uint32_t RunNative(const TilingResult& tiling, const KernelBuffers& b, const NativeOptions& options)
{
    const uint64_t n = tiling.data.totalLength;
    const IsaKernels& kernels = KernelsFor(options.isa);
    native::Job job{};
    job.dtype = DtypeOf(tiling.tilingKey);
    if (n == 0) {
        return 0;
    }
    job.k = FoldScalars(tiling.data, b.step);
    const void* in[] = {b.grad, b.var, b.m, b.v, b.s};
    void* out[] = {b.varOut, b.mOut, b.vOut, b.sOut};
    std::memcpy(job.in, in, sizeof in);
    std::memcpy(job.out, out, sizeof out);
    return Parallel(n, ThreadsFor(n, options.threads, options.minElemsPerThread),
                    [&](uint64_t begin, uint64_t end) { kernels.update(job, begin, end); });
}

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
    const IsaKernels& kernels = BestKernels();
    native::ProbeJob job{};
    const bool copy = kind == StreamProbe::kCopy || kind == StreamProbe::kCopyNt;
    const bool triad = kind == StreamProbe::kTriad || kind == StreamProbe::kTriadNt;
    job.kind = copy ? native::Probe::kCopy : triad ? native::Probe::kTriad : native::Probe::kUpdate;
    job.streamingStores = kind == StreamProbe::kCopyNt || kind == StreamProbe::kTriadNt;
    for (int i = 0; i < StreamProbeArrays(kind); ++i) {
        job.x[i] = arrays[i];
    }
    job.scalar = scalar;
    return Parallel(n, ThreadsFor(n, threads, kNativeMinElemsPerThread),
                    [&](uint64_t begin, uint64_t end) { kernels.probe(job, begin, end); });
}

}  // namespace ascend_ema_adam
