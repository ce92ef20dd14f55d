/**
 * @file native_runtime.h
 * @brief What every operator's native CPU kernel runs on: the thread count, the instruction-set
 *        choice, and Parallel, which hands a launch's elements to the calling thread and the
 *        persistent pool (native_thread_pool.h) in contiguous chunks. No operator, tiling or twin
 *        in here: an operator's kernel brings its loops per instruction set (native_simd*.h has
 *        the vector backends they are written over).
 */
#ifndef ASCEND_EMA_ADAM_NATIVE_RUNTIME_H
#define ASCEND_EMA_ADAM_NATIVE_RUNTIME_H

#include <atomic>
#include <cstdint>

#include "native_thread_pool.h"

namespace ascend_ema_adam {

/** Below this many elements per thread, extra threads cost more to wake than they save
 *  (measured on a 2-vCPU VM where a sleeping worker takes 50-100+ us to start). */
constexpr uint64_t kNativeMinElemsPerThread = 1U << 16;

/**
 * Threads a launch uses by default: ASCEND_EMA_ADAM_NUM_THREADS if set (read at every call), else
 * every CPU the process may run on; never more than that. Throws std::invalid_argument if the
 * variable is not a positive integer.
 */
uint32_t NativeThreads();

/** Threads for n elements: `requested` (0: NativeThreads()), fewer for small n, at least 1. */
uint32_t NativeThreadsFor(uint64_t n, uint32_t requested, uint64_t minElemsPerThread);

/** The instruction sets of the native kernels, widest first: a CPU that runs one runs the later. */
enum class Isa : uint32_t { kAvx512, kAvx2, kGeneric };
constexpr uint32_t kIsaCount = 3;

/** "avx512", "avx2", "generic". */
const char* IsaName(Isa isa);
/** The widest instruction set this CPU runs (AVX-512 F/BW/VL + F16C, AVX2 + F16C, or portable). */
Isa BestIsa();
/**
 * The instruction set launches use by default: ASCEND_EMA_ADAM_ISA if set and not empty (read at
 * every call: "avx2" measures the AVX2 loops on an AVX-512 machine), else IsaName(BestIsa()).
 * Throws std::invalid_argument if the variable names no instruction set this CPU runs.
 */
const char* NativeIsa();
/**
 * The instruction set named `name`: null or "" for NativeIsa(), else a narrower one than
 * BestIsa() this CPU also runs (tests run every instruction set this way). Throws
 * std::invalid_argument otherwise.
 */
Isa ResolveIsa(const char* name);

/** Work is handed out in whole multiples of this many elements (>= 64 B for every dtype), so no
 *  two threads write the same cache line of a 64-B aligned tensor. */
constexpr uint64_t kNativeGrain = 64;

/**
 * Runs body(i) for every i in [0, chunks) and returns the threads that took part: the calling
 * thread and up to threads - 1 pool workers claim the chunks from an atomic counter, so the
 * caller starts at once and a worker that wakes late takes fewer chunks instead of holding
 * everyone up. One pool launch (none with one thread or one chunk).
 */
template <class Body>
uint32_t ParallelChunks(uint64_t chunks, uint32_t threads, const Body& body)
{
    if (threads <= 1U || chunks <= 1U) {
        for (uint64_t i = 0; i < chunks; ++i) {
            body(i);
        }
        return 1;
    }
    struct Ctx {
        const Body* body;
        uint64_t chunks;
        std::atomic<uint64_t> next{0};
    } ctx;
    ctx.body = &body;
    ctx.chunks = chunks;
    const auto task = [](const void* p) {
        Ctx& c = *static_cast<Ctx*>(const_cast<void*>(p));
        for (uint64_t i = c.next.fetch_add(1, std::memory_order_relaxed); i < c.chunks;
             i = c.next.fetch_add(1, std::memory_order_relaxed)) {
            (*c.body)(i);
        }
    };
    return native::ThreadPool::Get().Run(threads, task, &ctx);
}

/** Chunks per thread of a parallel launch: enough for a late worker to find work. */
constexpr uint64_t kNativeChunksPerThread = 16;

/** Elements per chunk when `n` elements are split for `threads` threads: whole grains. */
inline uint64_t NativeChunkElems(uint64_t n, uint32_t threads)
{
    const uint64_t target = n / (threads * kNativeChunksPerThread);
    const uint64_t chunk = (target + kNativeGrain - 1U) / kNativeGrain * kNativeGrain;
    return chunk > kNativeGrain ? chunk : kNativeGrain;
}

/**
 * Runs body(begin, end) over [0, n) and returns the threads that took part: with more than one
 * thread, ParallelChunks over contiguous chunks (NativeChunkElems); small launches stay on the
 * calling thread.
 */
template <class Body>
uint32_t Parallel(uint64_t n, uint32_t threads, const Body& body)
{
    if (threads <= 1U) {
        body(0, n);  // no pool for launches that never need it
        return 1;
    }
    const uint64_t chunk = NativeChunkElems(n, threads);
    return ParallelChunks((n + chunk - 1U) / chunk, threads, [&](uint64_t i) {
        const uint64_t end = (i + 1U) * chunk;
        body(i * chunk, end < n ? end : n);
    });
}

/** How one launch of a native kernel runs (every op's native kernel takes it). */
struct NativeOptions {
    uint32_t threads = 0;  // 0: NativeThreads()
    uint64_t minElemsPerThread = kNativeMinElemsPerThread;  // smaller launches use fewer threads
    const char* isa = nullptr;  // nullptr: NativeIsa(); else a narrower one the CPU supports
};

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_NATIVE_RUNTIME_H
