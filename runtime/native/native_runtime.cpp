/**
 * @file native_runtime.cpp
 * @brief Thread count and instruction-set choice of the native kernels (see the header).
 */
#include "native_runtime.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace ascend_ema_adam {

namespace {

constexpr const char* kIsaNames[kIsaCount] = {"avx512", "avx2", "neon", "generic"};

/** Whether instruction set `isa` belongs to the architecture this library was built for. */
constexpr bool IsaOfThisArchitecture(Isa isa)
{
#if defined(__x86_64__)
    return isa != Isa::kNeon;
#elif defined(__aarch64__)
    return isa == Isa::kNeon || isa == Isa::kGeneric;
#else
    return isa == Isa::kGeneric;
#endif
}

uint32_t ProcessCpusCached()
{
    static const uint32_t cpus = native::ProcessCpus();
    return cpus;
}

}  // namespace

bool NativeWakes(uint64_t n, uint64_t minElemsPerThread)
{
    const uint64_t threshold = kNativeWakeFactor * minElemsPerThread;
    // The calling thread's current burst: its launches' elements since the first of a run of
    // launches that each started within kNativeBurstGapNs of the one before; and whether its
    // previous burst reached the threshold (an optimizer's step before this one).
    thread_local uint64_t burst = 0;
    thread_local bool previousBurstWoke = false;
    thread_local int64_t lastStartNs = 0;
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    const bool continues = lastStartNs != 0 && now - lastStartNs <= static_cast<int64_t>(kNativeBurstGapNs);
    if (!continues) previousBurstWoke = burst >= threshold;
    burst = continues ? burst + n : n;
    lastStartNs = now;
    const bool likeThePreviousBurst =
        !continues && previousBurstWoke && n >= threshold / kNativeBurstStartDivisor;
    return n >= threshold || burst >= threshold || likeThePreviousBurst;
}

namespace {
std::atomic<uint32_t> g_defaultThreads{0};
std::atomic<uint32_t> g_lastLaunchThreads{0};
}  // namespace

void SetNativeDefaultThreads(uint32_t threads)
{
    g_defaultThreads.store(threads, std::memory_order_relaxed);
}

void NoteNativeLaunchThreads(uint32_t used)
{
    g_lastLaunchThreads.store(used, std::memory_order_relaxed);
}

uint32_t LastNativeLaunchThreads()
{
    return g_lastLaunchThreads.load(std::memory_order_relaxed);
}

uint32_t NativeThreads()
{
    const uint32_t cpus = ProcessCpusCached();
    const char* env = std::getenv("ASCEND_EMA_ADAM_NUM_THREADS");
    if (env == nullptr || *env == '\0') {
        const uint32_t host = g_defaultThreads.load(std::memory_order_relaxed);
        return host != 0 && host < cpus ? host : cpus;
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

namespace {

/** The host's parallel-for and its argument, set together (a launch reads both at once). */
struct HostParallelFor {
    NativeParallelFor run;
    void* host;
};
std::atomic<const HostParallelFor*> g_hostParallelFor{nullptr};

}  // namespace

void SetNativeParallelFor(NativeParallelFor run, void* host)
{
    // Never freed: a launch on another thread may still hold the previous one (a few bytes per
    // change; hosts set theirs once).
    g_hostParallelFor.store(run != nullptr ? new HostParallelFor{run, host} : nullptr,
                            std::memory_order_release);
}

uint32_t RunNativeTask(uint32_t threads, native::ThreadPool::Task task, const void* ctx, bool wake)
{
    const HostParallelFor* host = g_hostParallelFor.load(std::memory_order_acquire);
    if (host == nullptr) {
        return native::ThreadPool::Get().Run(threads, task, ctx, wake);
    }
    if (threads <= 1U || !wake) {
        task(ctx, 0);
        return 1;
    }
    return host->run(host->host, threads, task, ctx);
}

uint32_t NativeThreadsFor(uint64_t n, uint32_t requested, uint64_t minElemsPerThread)
{
    uint64_t threads = requested != 0 ? requested : NativeThreads();
    const uint64_t useful = minElemsPerThread != 0 ? n / minElemsPerThread : n;
    threads = threads < useful ? threads : useful;
    return threads > 1U ? static_cast<uint32_t>(threads) : 1U;
}

const char* IsaName(Isa isa)
{
    return kIsaNames[static_cast<uint32_t>(isa)];
}

Isa BestIsa()
{
    static const Isa best = [] {
#if defined(__x86_64__)
        __builtin_cpu_init();
        // F16C by CPUID leaf 1 (ECX bit 29): clang before 16 has no "f16c" for __builtin_cpu_supports.
        unsigned a = 0, b = 0, c = 0, d = 0;
        const bool f16c = __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
        if (f16c && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl")) {
            return Isa::kAvx512;
        }
        if (f16c && __builtin_cpu_supports("avx2")) {
            return Isa::kAvx2;
        }
#elif defined(__aarch64__) && defined(__ARM_NEON)
        return Isa::kNeon;  // Advanced SIMD is mandatory in ARMv8-A
#endif
        return Isa::kGeneric;
    }();
    return best;
}

bool CpuHasAvx512Vbmi()
{
    static const bool has = [] {
#if defined(__x86_64__)
        __builtin_cpu_init();
        return BestIsa() == Isa::kAvx512 && __builtin_cpu_supports("avx512vbmi");
#else
        return false;
#endif
    }();
    return has;
}

namespace {

/** The named instruction set if this CPU runs it; throws std::invalid_argument. */
Isa SupportedIsa(const char* name, const char* what)
{
    const Isa best = BestIsa();
    for (uint32_t i = static_cast<uint32_t>(best); i < kIsaCount; ++i) {
        if (IsaOfThisArchitecture(static_cast<Isa>(i)) && std::strcmp(kIsaNames[i], name) == 0) {
            return static_cast<Isa>(i);
        }
    }
    throw std::invalid_argument(std::string(what) + "instruction set '" + name +
                                "' is unknown or not supported by this CPU (best: " +
                                IsaName(best) + ")");
}

}  // namespace

const char* NativeIsa()
{
    const char* env = std::getenv("ASCEND_EMA_ADAM_ISA");
    if (env == nullptr || *env == '\0') {
        return IsaName(BestIsa());
    }
    return IsaName(SupportedIsa(env, "ASCEND_EMA_ADAM_ISA: "));
}

Isa ResolveIsa(const char* name)
{
    if (name == nullptr || *name == '\0') {
        return SupportedIsa(NativeIsa(), "");
    }
    return SupportedIsa(name, "native kernel: ");
}

}  // namespace ascend_ema_adam
