/**
 * @file native_runtime.h
 * @brief What every operator's native CPU kernel runs on: the thread count, the instruction-set
 *        choice, and ParallelChunks/Parallel, which hand a launch's work in contiguous chunks to
 *        the calling thread and the persistent pool (native_thread_pool.h) or a host's threads
 *        (SetNativeParallelFor). No operator, tiling or twin in here: an operator's kernel brings
 *        its loops per instruction set (native_simd*.h has the vector backends they are written
 *        over).
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
 * the host's default (SetNativeDefaultThreads: the torch op passes torch.get_num_threads()), else
 * every CPU the process may run on; never more than that. Throws std::invalid_argument if the
 * variable is not a positive integer.
 */
uint32_t NativeThreads();

/** The host's default thread count for later launches (0: none, every CPU). */
void SetNativeDefaultThreads(uint32_t threads);

/** The threads the last launch of the CPU device's kernels used (0 before any), as its executor
 *  notes them. */
void NoteNativeLaunchThreads(uint32_t used);
uint32_t LastNativeLaunchThreads();

/** Threads for n elements: `requested` (0: NativeThreads()), fewer for small n, at least 1. */
uint32_t NativeThreadsFor(uint64_t n, uint32_t requested, uint64_t minElemsPerThread);

/** The instruction sets of the native kernels, widest first within an architecture (x86-64:
 *  avx512, avx2, generic; aarch64: neon, generic): a CPU that runs one runs the later ones of its
 *  architecture. */
enum class Isa : uint32_t { kAvx512, kAvx2, kNeon, kGeneric };
constexpr uint32_t kIsaCount = 4;

/** "avx512", "avx2", "neon", "generic". */
const char* IsaName(Isa isa);
/** The widest instruction set this CPU runs (AVX-512 F/BW/VL + F16C, AVX2 + F16C, NEON on
 *  aarch64, or portable). */
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
/** Whether this CPU has AVX-512 VBMI (byte permutes across a register pair), which the 8-bit
 *  AVX-512 loops use where they may (NativeOptions::bytePlanes). */
bool CpuHasAvx512Vbmi();

/** Work is handed out in whole multiples of this many elements (>= 64 B for every dtype), so no
 *  two threads write the same cache line of a 64-B aligned tensor. */
constexpr uint64_t kNativeGrain = 64;

/** Launches of fewer than this many times minElemsPerThread elements leave sleeping workers be. */
constexpr uint64_t kNativeWakeFactor = 16;

/** Launches of one thread that start within this of the previous one's start form a burst. */
constexpr uint64_t kNativeBurstGapNs = 2'000'000;

/** The first launch of a burst after one that woke the workers wakes them from this fraction of
 *  the threshold on (2^18 elements by default: the next optimizer step's first launch). */
constexpr uint64_t kNativeBurstStartDivisor = 4;

/**
 * Whether a launch of n elements wakes sleeping pool workers: from kNativeWakeFactor x
 * minElemsPerThread elements (2^20 by default, where a cold start breaks even on a 2-vCPU VM whose
 * sleeping vCPU takes 80-100 us to start a worker: longer than a whole 2^17-element update), in
 * one launch or in a burst of the calling thread's launches (each starting within
 * kNativeBurstGapNs of the one before: an optimizer step's launches of 256 tensors each, or a
 * loop of per-tensor calls); and the first launch of a burst from 1/kNativeBurstStartDivisor of
 * that if the thread's previous burst reached it (the next step's: its first launch would
 * otherwise run alone). Smaller launches take the workers still spinning after an earlier
 * launch, or run on the caller alone: never slower than one thread (a worker that starts late
 * leaves its share to the caller).
 */
bool NativeWakes(uint64_t n, uint64_t minElemsPerThread);

/**
 * A host's parallel-for, on whose threads launches run instead of the pool's: it calls
 * task(ctx, slot) once for every slot in [0, threads), on up to `threads` of its threads at once
 * (the calling thread among them), and returns, after every call has returned, the number of
 * threads that made them. The torch op sets torch's (at::parallel_for: its OpenMP threads, which
 * torch's own ops have just left spinning), so a process has one set of compute threads.
 */
using NativeParallelFor = uint32_t (*)(void* host, uint32_t threads, native::ThreadPool::Task task,
                                       const void* ctx);

/** The parallel-for later launches run on (null: the pool, native_thread_pool.h). */
void SetNativeParallelFor(NativeParallelFor run, void* host);

/**
 * Runs task on `threads` threads (ThreadPool::Task's contract): on the host's parallel-for if one
 * is set, else on the pool. `wake` false, which leaves the pool's sleeping workers asleep, keeps a
 * launch on the calling thread with a host's parallel-for (whose threads cannot be asked whether
 * they are awake: waking one costs more than such a launch saves).
 */
uint32_t RunNativeTask(uint32_t threads, native::ThreadPool::Task task, const void* ctx, bool wake);

/** Launches moving at least this many bytes stream from memory (more than a server L3 holds). */
constexpr uint64_t kNativeStreamingBytes = uint64_t{32} << 20;

/**
 * Runs body(i) for every i in [0, chunks) and returns the threads that took part. Thread slot s
 * (0: the caller, s: pool worker s - 1) owns the s-th of `threads` contiguous ranges of chunks
 * and takes its own first, so with the same split each thread touches the same data launch after
 * launch (it stays in that core's caches); then it takes what is left of the others' ranges, so
 * a worker that wakes late, or not at all, only leaves its range to the caller. One
 * RunNativeTask (none with one thread or one chunk).
 */
template <class Body>
uint32_t ParallelChunks(uint64_t chunks, uint32_t threads, bool wake, const Body& body)
{
    if (threads <= 1U || chunks <= 1U) {
        for (uint64_t i = 0; i < chunks; ++i) {
            body(i);
        }
        return 1;
    }
    constexpr uint32_t kMaxRanges = 64;  // slots beyond share ranges (and their counters)
    struct alignas(64) Range {
        std::atomic<uint64_t> next;  // chunks of the range taken so far
        uint64_t begin;
        uint64_t count;
    };
    struct Ctx {
        const Body* body;
        uint32_t ranges;
        Range range[kMaxRanges];
    } ctx;
    ctx.body = &body;
    ctx.ranges = threads < kMaxRanges ? threads : kMaxRanges;
    ctx.ranges = chunks < ctx.ranges ? static_cast<uint32_t>(chunks) : ctx.ranges;
    for (uint32_t r = 0; r < ctx.ranges; ++r) {
        const uint64_t begin = chunks * r / ctx.ranges;
        ctx.range[r].next.store(0, std::memory_order_relaxed);
        ctx.range[r].begin = begin;
        ctx.range[r].count = chunks * (r + 1U) / ctx.ranges - begin;
    }
    const auto task = [](const void* p, uint32_t slot) {
        Ctx& c = *static_cast<Ctx*>(const_cast<void*>(p));
        for (uint32_t k = 0; k < c.ranges; ++k) {  // own range first, then the others'
            Range& r = c.range[(slot + k) % c.ranges];
            for (uint64_t i = r.next.fetch_add(1, std::memory_order_relaxed); i < r.count;
                 i = r.next.fetch_add(1, std::memory_order_relaxed)) {
                (*c.body)(r.begin + i);
            }
        }
    };
    return RunNativeTask(threads, task, &ctx, wake);
}

/** Chunks per thread of a parallel launch: enough for stealing to even out a late worker. */
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
uint32_t Parallel(uint64_t n, uint32_t threads, bool wake, const Body& body)
{
    if (threads <= 1U) {
        body(0, n);  // no pool for launches that never need it
        return 1;
    }
    const uint64_t chunk = NativeChunkElems(n, threads);
    return ParallelChunks((n + chunk - 1U) / chunk, threads, wake, [&](uint64_t i) {
        const uint64_t end = (i + 1U) * chunk;
        body(i * chunk, end < n ? end : n);
    });
}

/** How the 8-bit loops encode moments into codes (NativeOptions::encode8bit); every way gives the
 *  same codes. */
enum class Adam8bitEncode : uint8_t {
    kAuto,    // ASCEND_EMA_ADAM_8BIT_ENCODE if set and not empty, else the faster here (measured)
    kTable,   // a lookup in the map's encode table: one gather per vector
    kPlanes,  // the AVX-512 VBMI loops: the encode table in two levels of byte planes, looked up
              // by byte permutes 64 lanes at a time (no gather); elsewhere refused
    kSearch,  // the binary search over the thresholds: permutes on AVX-512, no gather
};

/** "table", "planes", "search" ("auto" for kAuto): ASCEND_EMA_ADAM_8BIT_ENCODE's values. */
inline const char* Adam8bitEncodeName(Adam8bitEncode e)
{
    return e == Adam8bitEncode::kTable    ? "table"
           : e == Adam8bitEncode::kPlanes ? "planes"
           : e == Adam8bitEncode::kSearch ? "search"
                                          : "auto";
}

/** The encode whose Adam8bitEncodeName is `name` ("table", "planes", "search"): false for any other
 *  text. */
inline bool Adam8bitEncodeOfName(const char* name, Adam8bitEncode& out)
{
    for (const Adam8bitEncode e :
         {Adam8bitEncode::kTable, Adam8bitEncode::kPlanes, Adam8bitEncode::kSearch}) {
        if (__builtin_strcmp(name, Adam8bitEncodeName(e)) == 0) {
            out = e;
            return true;
        }
    }
    return false;
}

/** How one launch of a native kernel runs (every op's native kernel takes it). */
struct NativeOptions {
    uint32_t threads = 0;  // 0: NativeThreads()
    uint64_t minElemsPerThread = kNativeMinElemsPerThread;  // smaller launches use fewer threads
    const char* isa = nullptr;  // nullptr: NativeIsa(); else a narrower one the CPU supports
    uint64_t streamingBytes = kNativeStreamingBytes;  // launches moving as many bytes stream
    bool bytePlanes = true;  // 8-bit AVX-512 loops: decode by VBMI byte planes where the CPU has
                             // VBMI (false: by gathers, as without it)
    Adam8bitEncode encode8bit = Adam8bitEncode::kAuto;
};

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_NATIVE_RUNTIME_H
