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
/** IsaName(BestIsa()). */
const char* NativeIsa();
/**
 * The instruction set named `name`: null or "" for BestIsa(), else a narrower one this CPU also
 * runs (tests run every instruction set this way). Throws std::invalid_argument otherwise.
 */
Isa ResolveIsa(const char* name);

/** Work is handed out in whole multiples of this many elements (>= 64 B for every dtype), so no
 *  two threads write the same cache line of a 64-B aligned tensor. */
constexpr uint64_t kNativeGrain = 64;

/**
 * Runs body(begin, end) over [0, n) and returns the threads that took part. With more than one
 * thread, the elements are handed out in contiguous chunks (16 per thread, whole grains) from an
 * atomic counter: the caller starts at once, and a worker that wakes late takes fewer chunks
 * instead of holding everyone up. Small launches stay on the calling thread.
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
    ctx.chunk = (target + kNativeGrain - 1U) / kNativeGrain * kNativeGrain;
    ctx.chunk = ctx.chunk > kNativeGrain ? ctx.chunk : kNativeGrain;
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

/** How one launch of a native kernel runs (every op's native kernel takes it). */
struct NativeOptions {
    uint32_t threads = 0;  // 0: NativeThreads()
    uint64_t minElemsPerThread = kNativeMinElemsPerThread;  // smaller launches use fewer threads
    const char* isa = nullptr;  // nullptr: NativeIsa(); else a narrower one the CPU supports
};

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_NATIVE_RUNTIME_H
